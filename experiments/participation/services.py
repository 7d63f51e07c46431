"""Writes of the participant flow: start, consent, the pages before the trials, heartbeat, finish,
expiry, exclusion. Saving an answer has its own rulebook: trials.py.

Every function takes keyword-only arguments and checks its rules; a refusal raises FlowError (or
PayloadError) with a clear message and changes nothing.
"""
from __future__ import annotations

import secrets
from collections import Counter
from datetime import timedelta

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from ..models import (
    Condition, HumanArm, Item, ItemKind, KeyMapping, Participant, ParticipantStatus, Study, StudyStatus,
)
from . import choice, consent, flow, list_store, lists, paired, practice
from logic import human_defaults
from ..designs.arm_defaults import human_arm_ensure  # noqa: F401  (the arm's maker, below the flow)
from ..models import PairedPresentation
from .fastsave import ATTENTION_DESIGN
from .item_summary import item_summary

class FlowError(Exception):
    """A refused step. `reason` is a short machine name; the message is for people."""

    def __init__(self, reason: str, message: str, status: int = 409):
        super().__init__(message)
        self.reason, self.message, self.status = reason, message, status


# An entry that has not consented yet holds no place of the sample and counts for no list or key
# balance (made-up Prolific ids must not fill a study or skew its balance: issue 17 hole 3), and it
# is let go this long after it started, whatever its heartbeats say.
UNCONSENTED_MINUTES = 15


def _holding(study: Study):
    """The participants who hold a place: consented and in progress, or completed."""
    return Participant.objects.filter(
        study=study, is_preview=False, is_simulated=False, status__in=ParticipantStatus.holding(),
    ).filter(Q(consented_at__isnull=False) | Q(status=ParticipantStatus.COMPLETED))


def participants_expire(*, study: Study, now=None) -> int:
    """In-progress sessions silent for longer than the arm allows become 'returned'."""
    return _expire(study, human_arm_ensure(study=study), now)


def _expire(study: Study, arm: HumanArm, now=None) -> int:
    cutoff = (now or timezone.now()) - timedelta(minutes=arm.abandon_after_minutes)
    stale = Participant.objects.filter(study=study, status=ParticipantStatus.STARTED, is_preview=False)
    unconsented = (now or timezone.now()) - timedelta(minutes=UNCONSENTED_MINUTES)
    stale = (stale.filter(last_seen_at__lt=cutoff) | stale.filter(last_seen_at__isnull=True, started_at__lt=cutoff)
             | stale.filter(consented_at__isnull=True, started_at__lt=unconsented))
    return stale.update(status=ParticipantStatus.RETURNED, finished_at=now or timezone.now())


def _attention_items(study: Study, arm: HumanArm) -> list[int]:
    """The study's catch items, created from the arm's settings the first time they are needed."""
    existing = dict(Item.objects.filter(study=study, design=ATTENTION_DESIGN).order_by().values_list("code", "pk"))
    ids = []
    for n, check in enumerate(arm.attention_checks, 1):
        code = f"attention-check.{n}"
        if code not in existing:
            four = {"kind": ItemKind.MULTIPLE_CHOICE, "options": list(check["options"])} if "options" in check else {}
            item = Item.objects.create(
                study=study, code=code, design=ATTENTION_DESIGN, form_id=ATTENTION_DESIGN,
                gold_answer=check["answer"], premises=list(check["premises"]), question=check["question"],
                prompt=human_defaults.catch_item_prompt(check),
                attributes={"attention_check": True}, **four,
            )
            existing[code] = item.pk
        ids.append(existing[code])
    return ids


def _grid(study: Study, arm: HumanArm) -> lists.Grid:
    pool = study.items.exclude(design=ATTENTION_DESIGN)
    if choice.is_mc_study(study):  # questions × circular mutants (seed 001)
        return choice.mc_grid(pool)
    pairs = paired.paired_grid(study, include_perturbed=arm.include_nonsense, exclude_design=ATTENTION_DESIGN)
    if pairs is not None:  # linked pairs (issue 6): at most one member of a pair per participant
        return pairs
    if not arm.include_nonsense:
        pool = pool.filter(condition=Condition.REAL)
    rows = list(pool.order_by("id").values_list("id", "form_id", "interpretation_id"))
    grid = lists.Grid.from_cells(
        lists.Cell(item_id=pk, form=form or "", row=interp if interp is not None else ("item", pk))
        for pk, form, interp in rows
    )
    if not grid.rows:  # items without interpretations (a CSV bank): one column of items
        grid = lists.Grid.from_cells((lists.Cell(item_id=pk, form="*", row=pk) for pk, _, _ in rows),
                                     words=lists.ITEM_WORDS)
    return grid


def _within(grid, arm: HumanArm) -> bool:
    return grid.shape.paired and arm.paired_presentation == PairedPresentation.WITHIN


def _list_total(study: Study, arm: HumanArm, grid) -> int:
    """How many distinct lists the arm's settings draw from the study's items (ListError or
    ValidationError saying why none can be drawn); `grid` is the grid or its shape (shapes.py). The rule
    test_stored_lists.py holds the stored lists to."""
    length = arm.items_per_participant
    if _within(grid, arm):
        return lists.within_pairs_count(grid, length, arm.paired_min_gap)
    return lists.full_rows_count(grid, length) if choice.all_mutants(study) else grid.shape.list_count(length)


def lists_scheme(*, study: Study, arm: HumanArm, fresh: bool = False) -> str:
    """How participants' lists are drawn from the study's items, in words for the launch panel: a
    study whose items form no interpretation × form grid (a CSV bank, or generated items mixed with
    imported ones) gets one shuffled column of items, without the Latin square, and is told so.
    From the grid's shape in the study's item summary (item_summary.py; fresh: computed now by the
    aggregate queries of shapes.py), never by loading the items."""
    summary = item_summary(study=study, fresh=fresh)
    shape = summary.shape(arm)
    if shape.paired:
        how = "within" if _within(shape, arm) else "at most one member of a pair per participant"
        return f"linked pairs ({how}), members rotated across lists"
    if summary.multiple_choice:
        return f"{shape.row_count} questions × {len(shape.forms)} circular mutants, rotated across lists (seed 001)"
    if shape.forms == ("*",):
        return (f"one column of {shape.row_count} items, each participant's drawn in turn and shuffled — no Latin "
                f"square, since the items form no interpretation × form grid (designs: {', '.join(summary.designs)})")
    return (f"Latin square over {shape.row_count} interpretations × {len(shape.forms)} forms: every form equally "
            "often in a list, no interpretation twice")


def lists_problem(*, study: Study, arm: HumanArm, summary=None) -> str | None:
    """Why participants' lists cannot be drawn with the arm's settings (None when they can), from the
    grid's shape in the study's item summary (`summary`: one in hand, e.g. computed now by opening)."""
    try:
        _list_total(study, arm, (summary or item_summary(study=study)).shape(arm))
    except ValidationError as exc:
        return " ".join(exc.messages)
    except lists.ListError as exc:
        return str(exc)
    return None


def lists_prepare(*, study: Study, arm: HumanArm) -> None:
    """Store the lists the arm's settings draw (list_store.py) unless they are current: done when the
    study opens, so the first arrivals after a launch find them (an entry builds them otherwise)."""
    list_store.stored_lists_current(study=study, arm=arm, build=lambda: _every_list(study, arm))


def _every_list(study: Study, arm: HumanArm) -> tuple[bool, list[list]]:
    """Every list the arm's settings draw from the study's items (list_store keeps them)."""
    grid = _grid(study, arm)
    within = _within(grid, arm)
    every = lists.every_list(grid, arm.items_per_participant, within=within, every_form=choice.all_mutants(study),
                             min_gap=arm.paired_min_gap)
    return within, every


def _stored(study: Study, arm: HumanArm) -> list_store.StoredLists:
    """The study's stored lists, current (FlowError saying why none can be drawn)."""
    try:
        return list_store.stored_lists_current(study=study, arm=arm, build=lambda: _every_list(study, arm))
    except ValidationError as exc:
        raise FlowError("misconfigured", f"This study is not set up correctly: {' '.join(exc.messages)}", 503) from exc
    except lists.ListError as exc:
        raise FlowError("misconfigured", f"This study is not set up correctly: {exc}", 503) from exc


def _plan(study: Study, arm: HumanArm, stored: list_store.StoredLists, held) -> tuple[int, int, list[int]]:
    """The least-used list among those `held` (list number, key mapping) by the participants who count,
    read from the stored lists, shuffled by a fresh seed, with the catch items spread through it."""
    counts: dict[int, int] = {}
    for number, _ in held:
        if number is not None:
            counts[number] = counts.get(number, 0) + 1
    number = lists.least_used(counts, stored.total)
    seed = secrets.randbits(48)
    picked = list_store.stored_list(header=stored, number=number)
    ids = lists.drawn(picked, within=stored.within, seed=seed, min_gap=arm.paired_min_gap)
    return number, seed, lists.with_checks(ids, _attention_items(study, arm), seed)


# Simulated participants (a pilot's bots, participation/pilot.py) have ids in a namespace of their own:
# random, unguessable, and outside the alphabet the entry link accepts (views.PROLIFIC_ID), so no
# entry link can name one; a real participant and a bot never share a row (issue 26 item 1: a real
# participant whose Prolific id was a pilot's guessable SIM… id got the bots' answers).
SIMULATED_PREFIX = "sim:"


def simulated_ids() -> tuple[str, str]:
    """A fresh (Prolific id, session id) pair for one simulated participant."""
    return SIMULATED_PREFIX + secrets.token_hex(16), SIMULATED_PREFIX + secrets.token_hex(16)


def is_simulated_id(value: str) -> bool:
    return value.startswith(SIMULATED_PREFIX)


NOT_FOR_PARTICIPANTS = "This link cannot be used to take part in the study."


@transaction.atomic
def participant_start(
    *, study: Study, prolific_pid: str, prolific_study_id: str = "", prolific_session_id: str = "",
    preview: bool = False, simulated: bool = False,
) -> tuple[Participant, bool]:
    """Start (or resume) one participation; returns (participant, created). A simulated participant
    (a pilot's bot, participation/pilot.py) may start on a study that is not open, holds no place of
    the sample, and is balanced over lists and keys among the study's other simulated participants.
    Its ids come from simulated_ids(); it never resumes or adopts an existing participant, and a real
    or preview start never resumes or adopts a simulated one."""
    if simulated:
        if not is_simulated_id(prolific_pid) or (prolific_session_id and not is_simulated_id(prolific_session_id)):
            raise ValueError(f"A simulated participant's ids come from simulated_ids() (they start with "
                             f"{SIMULATED_PREFIX!r}); got {prolific_pid!r}, {prolific_session_id!r}.")
    elif is_simulated_id(prolific_pid) or is_simulated_id(prolific_session_id):
        raise FlowError("simulated_id", NOT_FOR_PARTICIPANTS, 400)
    # Read before the study's lock, which every entry of a launch-day burst waits on: the arm, and the
    # stored lists (a rebuild takes the lock itself). Under the lock: the checks, the balance, the insert.
    arm = human_arm_ensure(study=study)
    try:
        stored: list_store.StoredLists | FlowError = _stored(study, arm)
    except FlowError as exc:
        stored = exc
    study = Study.objects.select_for_update().get(pk=study.pk)
    if not preview and not simulated:
        by_pid = Participant.objects.filter(study=study, prolific_pid=prolific_pid, is_preview=False).first()
        if by_pid is not None:
            if by_pid.is_simulated:  # a bot's row (ids from before the namespace): never a person's session
                raise FlowError("simulated_id", NOT_FOR_PARTICIPANTS, 409)
            # Resume only from the same Prolific session: knowing someone's Prolific id must not be
            # enough to take over their session (issue 17 hole 8).
            if by_pid.prolific_session_id and prolific_session_id != by_pid.prolific_session_id:
                raise FlowError("other_session", "This Prolific ID already has a session in this study, started from "
                                "another Prolific session. Please go back to the study from the Prolific page you "
                                "started it from, or contact the researcher.", 409)
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
        if consent.consent_problem(arm) is not None:  # its consent changed after it opened: reviewed again first
            raise FlowError("consent_unreviewed", "This study is not accepting participants at the moment.", 403)
        _expire(study, arm)
    # (list number, key mapping) of the participants who count for the balance, in one query
    if simulated:
        holders = Participant.objects.filter(study=study, is_simulated=True, status__in=ParticipantStatus.holding())
    else:
        holders = _holding(study) if not preview else Participant.objects.none()
    held = list(holders.values_list("list_number", "key_mapping")) if not preview else []
    if not preview and not simulated and len(held) >= arm.target_sample_size:
        raise FlowError("full", "This study is full: it has all the participants it needs. Thank you!", 403)
    if isinstance(stored, FlowError):
        raise stored
    try:
        number, seed, plan = _plan(study, arm, stored, held)
    except list_store.StoredList.DoesNotExist:  # rebuilt meanwhile by another request
        number, seed, plan = _plan(study, arm, _stored(study, arm), held)
    mapping_counts = Counter(mapping for _, mapping in held)
    mapping = lists.balanced_choice(mapping_counts, KeyMapping.values, seed)
    participant = Participant(
        study=study, prolific_pid=prolific_pid, prolific_study_id=prolific_study_id,
        prolific_session_id=prolific_session_id, key_mapping=mapping, is_preview=preview, is_simulated=simulated,
        token=secrets.token_urlsafe(32), list_number=number, list_seed=seed, plan=plan,
        last_seen_at=timezone.now(),
    )
    try:
        with transaction.atomic():
            participant.save()
    except IntegrityError as exc:  # a concurrent first visit with the same PID or session won
        # only a real participant's own concurrent first visit is resumed: never a bot's row, and a bot
        # never takes over anyone's
        winner = None if simulated else Participant.objects.filter(
            study=study, prolific_pid=prolific_pid, is_preview=False, is_simulated=False).first()
        if winner is not None and (not winner.prolific_session_id or winner.prolific_session_id == prolific_session_id):
            return winner, False
        raise FlowError("duplicate", "This participation has just been started; reload the page.", 409) from exc
    return participant, True


def locked(participant: Participant) -> Participant:
    """The participant's row, locked; a clear 410 when it was erased meanwhile (a request that read
    the participant before an erasure must not end in a 500)."""
    row = Participant.objects.select_for_update().filter(pk=participant.pk).first()
    if row is None:
        raise FlowError("erased", "This session no longer exists: its data were erased.", 410)
    return row


def require_in_progress(participant: Participant) -> None:
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
    participant = locked(participant)
    require_in_progress(participant)
    if participant.consented_at is not None:
        return participant
    if not agree:
        return participant_transition(participant=participant, to=ParticipantStatus.NO_CONSENT)
    participant.consented_at = timezone.now()
    participant.save(update_fields=["consented_at"])
    return participant


def participant_step_done(*, participant: Participant, step: str) -> Participant:
    """Mark a page before the trials done (flow.BEFORE_TRIALS: instructions, practice), once the
    step before it is done."""
    field, after = flow.step_named(step).done_at, flow.step_done_after(step)
    with transaction.atomic():
        participant = locked(participant)
        require_in_progress(participant)
        if after and getattr(participant, after) is None:
            raise FlowError("out_of_order", "Please complete the previous page first.", 409)
        if getattr(participant, field) is None:
            setattr(participant, field, timezone.now())
            participant.save(update_fields=[field])
    return participant


def participant_instructions_done(*, participant: Participant) -> Participant:
    return participant_step_done(participant=participant, step="instructions")


def participant_practice_done(*, participant: Participant) -> Participant:
    return participant_step_done(participant=participant, step="practice")


def participant_heartbeat(*, participant: Participant) -> Participant:
    Participant.objects.filter(pk=participant.pk).update(last_seen_at=timezone.now())
    return participant


@transaction.atomic
def participant_finish(*, participant: Participant) -> Participant:
    """Completion: only once the server holds an answer for every trial of the list."""
    participant = locked(participant)
    if participant.status == ParticipantStatus.COMPLETED:
        return participant
    require_in_progress(participant)
    answered = set(participant.trials.values_list("index", flat=True))
    missing = [i for i in range(len(participant.plan)) if i not in answered]
    if missing:
        raise FlowError(
            "incomplete", f"{len(missing)} answer(s) not saved yet (trials {missing[:10]}).", 409
        )
    return participant_transition(participant=participant, to=ParticipantStatus.COMPLETED)


def participant_exclude(*, participant: Participant) -> Participant:
    with transaction.atomic():
        return participant_transition(participant=locked(participant), to=ParticipantStatus.EXCLUDED)
