"""Reads for the participant flow and for researchers (progress, pay, the tidy trial export)."""
from __future__ import annotations

import statistics
from dataclasses import dataclass
from decimal import ROUND_UP, Decimal

from django.db.models import QuerySet

from . import attention
from ..models import Participant, ParticipantStatus, Study, Trial


def pseudonym(participant_id: int) -> str:
    """The participant's pseudonymous label, as the analysis names it (P<id>)."""
    return f"P{participant_id}"


def participant_by_token(*, slug: str, token: str) -> Participant | None:
    if not token or len(token) > 64:
        return None
    return (
        Participant.objects.select_related("study", "study__human_arm")
        .filter(study__slug=slug, token=token).first()
    )


def answered_indices(*, participant: Participant) -> list[int]:
    return sorted(participant.trials.values_list("index", flat=True))


@dataclass(frozen=True)
class Progress:
    started: int
    in_progress: int
    completed: int
    returned: int
    excluded: int
    no_consent: int
    failed_attention: int  # by the arm's attention rule (attention.py), whatever the status
    failed_attention_ended: int  # of those, sessions that ended there (status failed_attention)
    usable: int  # completed and not failed: the participants the report analyses
    attention_rule: str
    simulated: int  # a pilot's bots (participation/pilot.py), counted apart from everything above
    median_minutes: float | None
    suggested_pay: Decimal | None
    hourly_rate: Decimal
    currency: str
    last_seen: list[tuple[str, object]]


def study_progress(*, study: Study) -> Progress:
    from .services import human_arm_ensure

    arm = human_arm_ensure(study=study)
    real = Participant.objects.filter(study=study, is_preview=False, is_simulated=False)
    counts = {s: 0 for s in ParticipantStatus.values}
    for status in real.values_list("status", flat=True):
        counts[status] += 1
    durations = [
        (finished - started).total_seconds() / 60
        for started, finished in real.filter(status=ParticipantStatus.COMPLETED).values_list(
            "started_at", "finished_at"
        )
        if finished
    ]
    median = statistics.median(durations) if durations else None
    rule = arm.attention_rule()
    failed = real.filter(attention.failed_q())
    pay = None
    if median is not None:
        pay = (arm.hourly_rate() * Decimal(str(median)) / 60).quantize(Decimal("0.01"), rounding=ROUND_UP)
    last_seen = [  # pseudonyms: the study page is for anyone who may view the study (Prolific ids need a permission)
        (pseudonym(pk), when) for pk, when in
        real.filter(status=ParticipantStatus.STARTED).order_by("-last_seen_at").values_list("pk", "last_seen_at")[:20]
    ]
    return Progress(
        started=real.count(), in_progress=counts[ParticipantStatus.STARTED],
        completed=counts[ParticipantStatus.COMPLETED], returned=counts[ParticipantStatus.RETURNED],
        excluded=counts[ParticipantStatus.EXCLUDED], no_consent=counts[ParticipantStatus.NO_CONSENT],
        failed_attention=failed.count(), failed_attention_ended=counts[ParticipantStatus.FAILED_ATTENTION],
        usable=real.filter(status=ParticipantStatus.COMPLETED).exclude(attention.failed_q()).count(),
        attention_rule=rule.describe(), median_minutes=median,
        simulated=Participant.objects.filter(study=study, is_simulated=True).count(),
        suggested_pay=pay, hourly_rate=arm.hourly_rate(), currency=arm.currency, last_seen=last_seen,
    )


EXPORT_COLUMNS = (
    "study", "participant", "participant_status", "key_mapping", "list_number", "list_seed",
    "trial_index", "item_code", "design", "form_id", "modality", "argument_form", "condition",
    "interpretation", "attention_check", "gold_answer", "key", "key_code", "answer", "correct",
    "timed_out", "rt_ms", "client_onset_ms", "client_response_ms", "received_at", "focus_lost",
    "visibility_lost", "viewport_width", "viewport_height", "user_agent",
)


def trials_for_export(*, study: Study) -> QuerySet[Trial]:
    return (
        Trial.objects.filter(participant__study=study, participant__is_preview=False, participant__is_simulated=False)
        .select_related("participant", "item", "item__interpretation")
        .order_by("participant_id", "index")
    )


def export_row(trial: Trial, study: Study, *, prolific_ids: bool = True) -> list:
    """prolific_ids=False names the participant by the analysis's pseudonymous label P<id> instead."""
    p, item = trial.participant, trial.item
    return [
        study.slug, p.prolific_pid if prolific_ids else pseudonym(p.pk), p.status, p.key_mapping, p.list_number,
        p.list_seed,
        trial.index, item.code, item.design, item.form_id, item.modality, item.argument_form,
        item.condition, item.interpretation.index if item.interpretation else "",
        int(trial.is_attention_check), item.gold_answer, trial.key, trial.key_code, trial.answer,
        int(trial.correct), int(trial.timed_out), f"{trial.rt_ms:.3f}",
        "" if trial.client_onset_ms is None else f"{trial.client_onset_ms:.3f}",
        "" if trial.client_response_ms is None else f"{trial.client_response_ms:.3f}",
        trial.received_at.isoformat(), int(trial.focus_lost), int(trial.visibility_lost),
        trial.viewport_width or "", trial.viewport_height or "", trial.user_agent,
    ]

