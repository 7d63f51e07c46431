"""Reads for the participant flow and for researchers (progress, pay, the tidy trial export, the items people
could be shown)."""
from __future__ import annotations

import statistics
from dataclasses import dataclass
from decimal import Decimal

from django.core.exceptions import ValidationError
from django.db.models import BooleanField, ExpressionWrapper, Q, QuerySet

from logic.shown_items import ItemsShown

from ..models import attention
from .. import schema
from ..models import HumanArm, Participant, ParticipantStatus, StoredList, Study, StudyStatus, Trial
from ..models.questionnaires import shows_annotations
from ..report_rules import Excluded, Exclusions, exclusion_settings
from . import lists, paired
from .compiled import CompiledRead, instance
from .fastsave import ATTENTION_DESIGN
from .services import human_arm_ensure, lists_prepare


pseudonym = schema.pseudonym  # the participant's pseudonymous label, as the analysis names it (P<id>)


def _study_and_arm_rows(slug):
    names = [f"study__{f.name}" for f in Study._meta.concrete_fields] + [f.name for f in HumanArm._meta.concrete_fields]
    shows = shows_annotations()  # whether the arm shows a questionnaire before / after the items, in the same read
    return HumanArm.objects.filter(study__slug=slug).annotate(**shows).values_list(*names, *shows)


_STUDY_AND_ARM = CompiledRead(_study_and_arm_rows, prepared=True, slug=str)  # the entry link's first read (compiled.py)


def study_and_arm(*, slug: str) -> tuple[Study, HumanArm] | None:
    """The study `slug` and its human arm in one query; None when there is no such study or its arm is not
    made yet (human_arm_ensure makes it)."""
    rows = _STUDY_AND_ARM.rows(slug=slug)
    if not rows:
        return None
    n, m = len(Study._meta.concrete_fields), len(HumanArm._meta.concrete_fields)
    study, arm = instance(Study, rows[0][:n]), instance(HumanArm, rows[0][n:n + m])
    for name, shows in zip(shows_annotations(), rows[0][n + m:]):  # flow.shown_placements reads them
        setattr(arm, name, shows)
    arm.study = study
    return study, arm


def participant_by_token(*, slug: str, token: str) -> Participant | None:
    if not token or len(token) > 64:
        return None
    return (
        Participant.objects.select_related("study", "study__human_arm")
        .filter(study__slug=slug, token=token).first()
    )


def token_known(*, slug: str, token: str) -> bool:
    """Whether `token` names a session of the study `slug` (one read of the token's unique index)."""
    if not token or len(token) > 64:
        return False
    return Participant.objects.filter(token=token, study__slug=slug).exists()


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
    usable: int | None  # the participants the report analyses, by the study's exclusions (None: unreadable)
    usable_rule: str  # what decides them: the exclusions' words, or why they could not be read
    attention_rule: str
    simulated: int  # a pilot's bots (participation/pilot.py), counted apart from everything above
    median_minutes: float | None
    suggested_pay: Decimal | None
    hourly_rate: Decimal
    currency: str
    last_seen: list[tuple[str, object]]


def study_progress(*, study: Study) -> Progress:
    arm = human_arm_ensure(study=study)
    real = Participant.objects.filter(study=study).real()
    counts = {s: 0 for s in ParticipantStatus.values}
    for status in real.values_list("status", flat=True):
        counts[status] += 1
    durations = [
        (finished - started).total_seconds() / 60
        for started, finished in real.completed().values_list(
            "started_at", "finished_at"
        )
        if finished
    ]
    median = statistics.median(durations) if durations else None
    rule = arm.attention_rule()
    failed = real.filter(attention.failed_q())
    pay = None
    if median is not None:
        pay = arm.pay_for(median)
    try:
        rules = analysed_rules(study=study)
        usable, usable_rule = analysed_participants(study=study, rules=rules).count(), "; ".join(rules.describe())
    except (TypeError, ValueError) as error:  # the settings editor says what is wrong with them
        usable, usable_rule = None, f"the study's analysis_exclusions cannot be read: {error}"
    last_seen = [  # pseudonyms: the study page is for anyone who may view the study (Prolific ids need a permission)
        (pseudonym(pk), when) for pk, when in
        real.filter(status=ParticipantStatus.STARTED).order_by("-last_seen_at").values_list("pk", "last_seen_at")[:20]
    ]
    return Progress(
        started=real.count(), in_progress=counts[ParticipantStatus.STARTED],
        completed=counts[ParticipantStatus.COMPLETED], returned=counts[ParticipantStatus.RETURNED],
        excluded=counts[ParticipantStatus.EXCLUDED], no_consent=counts[ParticipantStatus.NO_CONSENT],
        failed_attention=failed.count(), failed_attention_ended=counts[ParticipantStatus.FAILED_ATTENTION],
        usable=usable, usable_rule=usable_rule, attention_rule=rule.describe(), median_minutes=median,
        simulated=Participant.objects.filter(study=study).simulated().count(),
        suggested_pay=pay, hourly_rate=arm.hourly_rate(), currency=arm.currency, last_seen=last_seen,
    )


EXPORT_COLUMNS = schema.names(schema.TRIAL)  # the report's data/trials.csv has exactly these columns
_ROWS = schema.Rows(schema.TRIAL)  # how each column is read from a Trial: experiments/schema.py
_ROWS_WITH_PROLIFIC_IDS = schema.Rows(schema.TRIAL, given={"participant": (("participant__prolific_pid",), str)})


def trials_for_export(*, study: Study, include_simulated: bool = False, include_preview: bool = False
                      ) -> QuerySet[Trial]:
    rows = Trial.objects.filter(participant__study=study).by_audience(include_preview=include_preview,
                                                                      include_simulated=include_simulated)
    return rows.order_by("participant_id", "index").annotate(
        failed_attention=ExpressionWrapper(attention.failed_q("participant__"), BooleanField()))


def analysed_rules(*, study: Study) -> Exclusions:
    """The study's exclusion rules, as its report applies them (analysis.services.exclusions_for adds the
    attention rule's words); a bad setting raises ValueError naming it."""
    return Exclusions(**exclusion_settings(study.settings))


_LOOKUP = {column.name: column.source for column in schema.TRIAL if column.source}  # trials_for_export's rows


def _excluded_q(step: Excluded) -> Q:
    """An exclusion step (report_rules.Excluded) over the rows of trials_for_export, in the database."""
    q = Q()
    for column, test, value in step.when:
        lookup = _LOOKUP[column]
        q |= {"is": Q(**{lookup: value}), "is not": ~Q(**{lookup: value}),
              "below": Q(**{f"{lookup}__lt": value})}[test]
    return q


def analysed_participants(*, study: Study, rules: Exclusions | None = None) -> QuerySet[Participant]:
    """The participants a study's report analyses (DESIGN.md rule 22): those with an answer left after the
    report's exclusions (`rules`, default the study's own), read from the rows the report's frame reads
    (analysis.frames.trials_frame: every real participant's and preview's trials) with each of the rules over
    one row (Exclusions.steps) applied as analysis.prep.apply_exclusions applies it. The relative RT cut never
    leaves a participant without answers (Exclusions.steps says why), so it is not needed here. A pilot's bots
    are never among them (a pilot report is not the study's report)."""
    rules = rules or analysed_rules(study=study)
    rows = trials_for_export(study=study, include_preview=True)
    for step in rules.steps():
        rows = rows.exclude(_excluded_q(step))
    return Participant.objects.filter(pk__in=rows.order_by().values("participant_id"))


def trial_records(trials: QuerySet[Trial], *, prolific_ids: bool = False):
    """One tuple per trial in schema.TRIAL's order, Python values (None where blank), each column
    read as schema.TRIAL declares: the admin's export writes them, analysis.frames.trials_frame reads
    them (one source for both). prolific_ids=False names the participant by the analysis's
    pseudonymous label P<id>."""
    rows = _ROWS_WITH_PROLIFIC_IDS if prolific_ids else _ROWS
    return rows.from_values(trials.values_list(*rows.lookups).iterator(chunk_size=2000))


def items_people_can_be_shown(study: Study, *, include_simulated: bool = False) -> ItemsShown:
    """The items people could be shown (issue 44 item 2; DESIGN.md rules 19 and 22), the one definition every
    human/model contrast, the power analysis, human-likeness and the model runs' scope read: the items in the
    study's stored lists (built first if they are not current: list_store.py), with any item people answered
    outside them (lists rebuilt after answers were given); for a closed study the items people answered. Where
    no lists can be drawn, the items people answered. People: participants other than staff previews, and
    simulated ones only with `include_simulated` (a pilot's report). Catch items are never among them."""
    answers = Trial.objects.filter(participant__study=study).by_real(include_simulated=include_simulated)
    answered = frozenset(answers.exclude(item__design=ATTENTION_DESIGN).order_by().values_list("item_id", flat=True)
                         .distinct())
    arm = human_arm_ensure(study=study)
    pool = paired.list_pool(study, arm)
    if study.status == StudyStatus.CLOSED and answered:
        return ItemsShown(item_ids=answered, source="the items people answered (the study is closed)", pool=pool)
    try:
        header = lists_prepare(study=study, arm=arm)
    except (lists.ListError, ValidationError) as exc:
        why = " ".join(exc.messages) if isinstance(exc, ValidationError) else str(exc)
        return ItemsShown(item_ids=answered, source=f"the items people answered (no lists can be drawn: {why})",
                          pool=pool)
    listed: set[int] = set()
    for ids in StoredList.objects.filter(owner=header).values_list("items", flat=True).iterator(chunk_size=500):
        listed.update(i for member in ids for i in (member if isinstance(member, list) else [member]))
    outside = answered - listed
    source = f"the study's {header.total} participant lists"
    if outside:
        source += f" and {len(outside)} items people answered outside them"
    return ItemsShown(item_ids=frozenset(listed | answered), source=source, pool=pool)
