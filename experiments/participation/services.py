"""Writes of the participant flow: start, consent, trials, heartbeat, finish, expiry, exclusion.

Every function takes keyword-only arguments and checks its rules; a refusal raises FlowError (or
PayloadError) with a clear message and changes nothing.
"""
from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import timedelta

from django.db import IntegrityError, transaction
from django.utils import timezone

from ..models import (
    Answer, Condition, HumanArm, Item, KeyMapping, Participant, ParticipantStatus, Study, StudyStatus,
    Trial,
)
from . import lists
from .payload import PayloadError, TrialPayload

ATTENTION_DESIGN = "attention-check"
KEY_ANSWERS = {
    KeyMapping.F_YES: {"f": Answer.YES, "j": Answer.NO},
    KeyMapping.J_YES: {"f": Answer.NO, "j": Answer.YES},
}


class FlowError(Exception):
    """A refused step. `reason` is a short machine name; the message is for people."""

    def __init__(self, reason: str, message: str, status: int = 409):
        super().__init__(message)
        self.reason, self.message, self.status = reason, message, status


def human_arm_ensure(*, study: Study) -> HumanArm:
    arm, _ = HumanArm.objects.get_or_create(study=study)
    return arm


def _holding(study: Study):
    return Participant.objects.filter(
        study=study, is_preview=False, status__in=ParticipantStatus.holding()
    )


def participants_expire(*, study: Study, now=None) -> int:
    """In-progress sessions silent for longer than the arm allows become 'returned'."""
    arm = human_arm_ensure(study=study)
    cutoff = (now or timezone.now()) - timedelta(minutes=arm.abandon_after_minutes)
    stale = Participant.objects.filter(study=study, status=ParticipantStatus.STARTED, is_preview=False)
    stale = stale.filter(last_seen_at__lt=cutoff) | stale.filter(last_seen_at__isnull=True, started_at__lt=cutoff)
    return stale.update(status=ParticipantStatus.RETURNED, finished_at=now or timezone.now())


def _attention_items(study: Study, arm: HumanArm) -> list[int]:
    """The study's catch items, created from the arm's settings the first time they are needed."""
    existing = {item.code: item.pk for item in study.items.filter(design=ATTENTION_DESIGN)}
    ids = []
    for n, check in enumerate(arm.attention_checks, 1):
        code = f"attention-check.{n}"
        if code not in existing:
            item = Item.objects.create(
                study=study, code=code, design=ATTENTION_DESIGN, form_id=ATTENTION_DESIGN,
                gold_answer=check["answer"], premises=list(check["premises"]), question=check["question"],
                prompt="\n".join([*check["premises"], check["question"]]),
                attributes={"attention_check": True},
            )
            existing[code] = item.pk
        ids.append(existing[code])
    return ids


def _grid(study: Study, arm: HumanArm) -> lists.Grid:
    pool = study.items.exclude(design=ATTENTION_DESIGN)
    if not arm.include_nonsense:
        pool = pool.filter(condition=Condition.REAL)
    rows = list(pool.order_by("id").values_list("id", "form_id", "interpretation_id"))
    grid = lists.Grid.from_cells(
        lists.Cell(item_id=pk, form=form or "", row=interp if interp is not None else ("item", pk))
        for pk, form, interp in rows
    )
    if not grid.rows:  # items without interpretations (a CSV bank): one column of items
        grid = lists.Grid.from_cells(lists.Cell(item_id=pk, form="*", row=pk) for pk, _, _ in rows)
    return grid


def _plan(study: Study, arm: HumanArm, holders) -> tuple[int, int, list[int]]:
    grid = _grid(study, arm)
    try:
        total = grid.list_count(arm.items_per_participant)
    except lists.ListError as exc:
        raise FlowError("misconfigured", f"This study is not set up correctly: {exc}", 503) from exc
    counts: dict[int, int] = {}
    for number in holders.values_list("list_number", flat=True):
        if number is not None:
            counts[number] = counts.get(number, 0) + 1
    number = lists.least_used(counts, total)
    seed = secrets.randbits(48)
    ids = lists.shuffled(grid.latin_square_list(number, arm.items_per_participant), seed)
    return number, seed, lists.with_checks(ids, _attention_items(study, arm), seed)


@transaction.atomic
def participant_start(
    *, study: Study, prolific_pid: str, prolific_study_id: str = "", prolific_session_id: str = "",
    preview: bool = False,
) -> tuple[Participant, bool]:
    """Start (or resume) one participation; returns (participant, created)."""
    study = Study.objects.select_for_update().get(pk=study.pk)
    arm = human_arm_ensure(study=study)
    if not preview:
        by_pid = Participant.objects.filter(study=study, prolific_pid=prolific_pid, is_preview=False).first()
        if by_pid is not None:
            return by_pid, False
        if prolific_session_id:
            by_session = Participant.objects.filter(
                study=study, prolific_session_id=prolific_session_id, is_preview=False
            ).first()
            if by_session is not None:
                raise FlowError(
                    "session_taken", "This Prolific session has already been used by another participant.", 409
                )
        if study.status != StudyStatus.OPEN:
            raise FlowError("not_open", "This study is not accepting participants at the moment.", 403)
        participants_expire(study=study)
        if _holding(study).count() >= arm.target_sample_size:
            raise FlowError("full", "This study is full: it has all the participants it needs. Thank you!", 403)
    holders = _holding(study) if not preview else Participant.objects.none()
    number, seed, plan = _plan(study, arm, holders)
    mapping_counts = {m: holders.filter(key_mapping=m).count() for m in KeyMapping.values}
    mapping = lists.balanced_choice(mapping_counts, KeyMapping.values, seed)
    participant = Participant(
        study=study, prolific_pid=prolific_pid, prolific_study_id=prolific_study_id,
        prolific_session_id=prolific_session_id, key_mapping=mapping, is_preview=preview,
        token=secrets.token_urlsafe(32), list_number=number, list_seed=seed, plan=plan,
        last_seen_at=timezone.now(),
    )
    try:
        with transaction.atomic():
            participant.save()
    except IntegrityError as exc:  # a concurrent first visit with the same PID or session won
        winner = Participant.objects.filter(study=study, prolific_pid=prolific_pid, is_preview=False).first()
        if winner is not None:
            return winner, False
        raise FlowError("duplicate", "This participation has just been started; reload the page.", 409) from exc
    return participant, True


def _locked(participant: Participant) -> Participant:
    return Participant.objects.select_for_update().get(pk=participant.pk)


def _require_in_progress(participant: Participant) -> None:
    if participant.status != ParticipantStatus.STARTED:
        raise FlowError(
            "ended", f"This participation has ended ({participant.get_status_display()}).", 409
        )


def participant_transition(*, participant: Participant, to: str) -> Participant:
    if not ParticipantStatus.can_move(participant.status, to):
        raise FlowError(
            "bad_transition", f"A participant cannot go from {participant.status} to {to}.", 409
        )
    participant.status = to
    if to != ParticipantStatus.EXCLUDED:
        participant.finished_at = timezone.now()
    participant.save(update_fields=["status", "finished_at"])
    return participant


@transaction.atomic
def participant_consent(*, participant: Participant, agree: bool) -> Participant:
    participant = _locked(participant)
    _require_in_progress(participant)
    if participant.consented_at is not None:
        return participant
    if not agree:
        return participant_transition(participant=participant, to=ParticipantStatus.NO_CONSENT)
    participant.consented_at = timezone.now()
    participant.save(update_fields=["consented_at"])
    return participant


def _mark(participant: Participant, field: str, after: str | None) -> Participant:
    with transaction.atomic():
        participant = _locked(participant)
        _require_in_progress(participant)
        if after and getattr(participant, after) is None:
            raise FlowError("out_of_order", "Please complete the previous page first.", 409)
        if getattr(participant, field) is None:
            setattr(participant, field, timezone.now())
            participant.save(update_fields=[field])
    return participant


def participant_instructions_done(*, participant: Participant) -> Participant:
    return _mark(participant, "instructions_done_at", "consented_at")


def participant_practice_done(*, participant: Participant) -> Participant:
    return _mark(participant, "practice_done_at", "instructions_done_at")


def participant_heartbeat(*, participant: Participant) -> Participant:
    Participant.objects.filter(pk=participant.pk).update(last_seen_at=timezone.now())
    return participant


@dataclass(frozen=True)
class TrialReceipt:
    trial: Trial
    created: bool
    participant: Participant


@transaction.atomic
def trial_record(*, participant: Participant, payload: TrialPayload, user_agent: str = "") -> TrialReceipt:
    """Save one answer. A re-sent trial (same idempotency key) returns the saved row, never a second."""
    participant = _locked(participant)
    same = participant.trials.filter(idempotency_key=payload.idempotency_key).first()
    if same is not None:
        if same.index != payload.index or same.item_id != payload.item:
            raise PayloadError("This idempotency key was already used for another trial.")
        return TrialReceipt(trial=same, created=False, participant=participant)
    _require_in_progress(participant)
    practice_pending = bool(participant.study.human_arm.practice) and participant.practice_done_at is None
    if participant.consented_at is None or participant.instructions_done_at is None or practice_pending:
        raise FlowError("out_of_order", "Trials start after the consent, instructions and practice pages.", 409)
    plan = participant.plan
    if payload.index >= len(plan) or plan[payload.index] != payload.item:
        raise PayloadError(f"Item {payload.item} is not trial {payload.index} of this participant's list.")
    if participant.trials.filter(index=payload.index).exists():
        raise FlowError("answered", f"Trial {payload.index} has already been answered.", 409)
    item = Item.objects.filter(pk=payload.item, study_id=participant.study_id).first()
    if item is None:
        raise FlowError("misconfigured", "This item no longer exists; please contact the researcher.", 409)
    if payload.timed_out:
        answer, correct = "", False
    else:
        answer = KEY_ANSWERS[participant.key_mapping][payload.letter]
        correct = answer == item.gold_answer
    is_check = item.design == ATTENTION_DESIGN
    trial = Trial.objects.create(
        participant=participant, item=item, index=payload.index, key=payload.key,
        key_code=payload.code, answer=answer, correct=correct, rt_ms=payload.rt_ms,
        idempotency_key=payload.idempotency_key, timed_out=payload.timed_out,
        is_attention_check=is_check, client_onset_ms=payload.onset_ms,
        client_response_ms=payload.response_ms, user_agent=user_agent[:400],
        viewport_width=payload.viewport_width, viewport_height=payload.viewport_height,
        focus_lost=payload.focus_lost, visibility_lost=payload.visibility_lost,
    )
    participant.last_seen_at = timezone.now()
    fields = ["last_seen_at"]
    if is_check and not correct:
        participant.attention_failures += 1
        fields.append("attention_failures")
    participant.save(update_fields=fields)
    limit = participant.study.human_arm.attention_failures_to_end
    if is_check and not correct and limit and participant.attention_failures >= limit:
        participant_transition(participant=participant, to=ParticipantStatus.FAILED_ATTENTION)
    return TrialReceipt(trial=trial, created=True, participant=participant)


@transaction.atomic
def participant_finish(*, participant: Participant) -> Participant:
    """Completion: only once the server holds an answer for every trial of the list."""
    participant = _locked(participant)
    if participant.status == ParticipantStatus.COMPLETED:
        return participant
    _require_in_progress(participant)
    answered = set(participant.trials.values_list("index", flat=True))
    missing = [i for i in range(len(participant.plan)) if i not in answered]
    if missing:
        raise FlowError(
            "incomplete", f"{len(missing)} answer(s) not saved yet (trials {missing[:10]}).", 409
        )
    return participant_transition(participant=participant, to=ParticipantStatus.COMPLETED)


def participant_exclude(*, participant: Participant) -> Participant:
    with transaction.atomic():
        return participant_transition(participant=_locked(participant), to=ParticipantStatus.EXCLUDED)
