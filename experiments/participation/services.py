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
from django.db import IntegrityError, connection, transaction
from django.db.models import Count, Q
from django.utils import timezone

from ..models import HumanArm, KeyMapping, Participant, ParticipantStatus, Study, StudyStatus
from . import choice, consent, flow, list_store, lists, practice  # noqa: F401  (choice, practice: read as services.X)
from .compiled import CompiledRead, field_names, instance
from ..items.arm_defaults import human_arm_ensure  # noqa: F401  (the arm's maker, below the flow)
from .fastsave import ATTENTION_DESIGN  # noqa: F401  (read as services.ATTENTION_DESIGN)
from .drawing import (  # noqa: F401  (how lists are drawn: re-exported for the launch panel, readiness, tests)
    _attention_items, _every_list, _grid, _list_total, _within, lists_prepare, lists_problem, lists_scheme,
    lists_hold, lists_shortfall,
)


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
    return Participant.objects.filter(study=study).real().holding().filter(
        Q(consented_at__isnull=False) | Q(status=ParticipantStatus.COMPLETED))


def participants_expire(*, study: Study, now=None) -> int:
    """In-progress sessions silent for longer than the arm allows become 'returned'."""
    return _expire(study, human_arm_ensure(study=study), now)


def _expire(study: Study, arm: HumanArm, now=None) -> int:
    cutoff = (now or timezone.now()) - timedelta(minutes=arm.abandon_after_minutes)
    stale = Participant.objects.filter(study=study, status=ParticipantStatus.STARTED).real(include_simulated=True)
    unconsented = (now or timezone.now()) - timedelta(minutes=UNCONSENTED_MINUTES)
    stale = (stale.filter(last_seen_at__lt=cutoff) | stale.filter(last_seen_at__isnull=True, started_at__lt=cutoff)
             | stale.filter(consented_at__isnull=True, started_at__lt=unconsented))
    return stale.update(status=ParticipantStatus.RETURNED, finished_at=now or timezone.now())


def _stored(study: Study, arm: HumanArm) -> list_store.StoredLists:
    """The study's stored lists, current (FlowError saying why none can be drawn)."""
    try:
        return list_store.stored_lists_current(study=study, arm=arm, build=lambda: _every_list(study, arm))
    except ValidationError as exc:
        raise FlowError("misconfigured", f"This study is not set up correctly: {' '.join(exc.messages)}", 503) from exc
    except lists.ListError as exc:
        raise FlowError("misconfigured", f"This study is not set up correctly: {exc}", 503) from exc


def _plan(arm: HumanArm, stored: list_store.StoredLists, held, checks: list[int],
          pending: dict[int, int] | None = None) -> tuple[int, int, list[int]]:
    """The least-used list among those `held` ((list number, key mapping, how many) of the participants who count),
    ties going to the list fewest `pending` entries were given, read from the stored lists, shuffled by a
    fresh seed, with the catch items spread through it."""
    counts: dict[int, int] = {}
    for number, _, n in held:
        if number is not None:
            counts[number] = counts.get(number, 0) + n
    number = lists.least_used(counts, stored.total, then=pending)
    seed = secrets.randbits(48)
    picked = list_store.stored_list(header=stored, number=number)
    ids = lists.drawn(picked, within=stored.within, seed=seed, min_gap=arm.paired_min_gap)
    return number, seed, lists.with_checks(ids, checks, seed)


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


# An entry runs the expiry of silent sessions at most this often per study (a launch-day burst would
# otherwise run the same UPDATE hundreds of times a second), and always when the study looks full (so
# a place freed by a silent session is never refused): see _expire_due.
EXPIRE_EVERY_SECONDS = 10


def _expire_due(study: Study, arm: HumanArm) -> None:
    """Expire the study's silent sessions in a short transaction of its own, unless an entry of this
    study did it in the last EXPIRE_EVERY_SECONDS (the cache, shared by every web process in
    production, says; `add` is atomic, so one entry per period runs it). Correct outside the study's
    lock: expiry only moves sessions silent for abandon_after_minutes (or unconsented for
    UNCONSENTED_MINUTES) from started to returned, a conditional UPDATE that PostgreSQL re-checks on
    each row it changes, so a heartbeat or a consent that lands meanwhile keeps its session; running it
    a few seconds late only leaves a place held that long, and the full check expires again first."""
    from common.ratelimit import first_in_period

    if first_in_period(f"duet:participants-expired:{study.pk}", EXPIRE_EVERY_SECONDS):
        with transaction.atomic():
            _expire(study, arm)


def participant_resume(*, study: Study, prolific_pid: str, prolific_session_id: str = "") -> Participant | None:
    """A real participant's own earlier session, None when the ids are new (FlowError when they belong to
    someone else's), in one query. The entry view asks first (a new participation counts against the
    address's limits, a resumed one does not), then starts with `looked_up=True`."""
    if is_simulated_id(prolific_pid) or is_simulated_id(prolific_session_id):
        raise FlowError("simulated_id", NOT_FOR_PARTICIPANTS, 400)
    return _resumed(study, prolific_pid, prolific_session_id)


def _resumable(study, pid: str, session: str | None = None):
    """The rows with this Prolific id or this Prolific session id (at most one each), every field."""
    either = Q(prolific_pid=pid) | Q(prolific_session_id=session) if session is not None else Q(prolific_pid=pid)
    rows = Participant.objects.filter(either, study=study).real(include_simulated=True)
    return rows.order_by().values_list(*field_names(Participant))[:2]


# the entry's reads, compiled once (compiled.py)
_RESUMABLE_BY_PID = CompiledRead(_resumable, study=int, pid=str)
_RESUMABLE = CompiledRead(_resumable, study=int, pid=str, session=str)


def _resumed(study: Study, prolific_pid: str, prolific_session_id: str) -> Participant | None:
    """A real participant's own earlier session (FlowError when the ids belong to someone else's), in one
    query: the rows with this Prolific id or this Prolific session id (at most one each)."""
    if prolific_session_id:
        found = _RESUMABLE.rows(study=study.pk, pid=prolific_pid, session=prolific_session_id)
    else:
        found = _RESUMABLE_BY_PID.rows(study=study.pk, pid=prolific_pid)
    rows = [instance(Participant, row) for row in found]
    by_pid = next((row for row in rows if row.prolific_pid == prolific_pid), None)
    if by_pid is not None:
        if by_pid.is_simulated:  # a bot's row (ids from before the namespace): never a person's session
            raise FlowError("simulated_id", NOT_FOR_PARTICIPANTS, 409)
        # Resume only from the same Prolific session: knowing someone's Prolific id must not be
        # enough to take over their session (issue 17 hole 8).
        if by_pid.prolific_session_id and prolific_session_id != by_pid.prolific_session_id:
            raise FlowError("other_session", "This Prolific ID already has a session in this study, started from "
                            "another Prolific session. Please go back to the study from the Prolific page you "
                            "started it from, or contact the researcher.", 409)
        return by_pid
    if rows:  # its session id is another participant's
        raise FlowError("session_taken", "This Prolific session has already been used by another participant.", 409)
    return None


def _require_open(study: Study) -> None:
    if study.status != StudyStatus.OPEN:
        raise FlowError("not_open", "This study is not accepting participants at the moment.", 403)


def participant_start(
    *, study: Study, prolific_pid: str, prolific_study_id: str = "", prolific_session_id: str = "",
    preview: bool = False, simulated: bool = False, arm: HumanArm | None = None, looked_up: bool = False,
) -> tuple[Participant, bool]:
    """Start (or resume) one participation; returns (participant, created); `arm`: the study's human arm
    when the caller has read it already, `looked_up`: participant_resume has just found no session for
    these ids (the entry view: the lookup is not made twice; a concurrent first visit still meets this one
    at the insert). A simulated participant
    (a pilot's bot, participation/pilot.py) may start on a study that is not open, holds no place of
    the sample, and is balanced over lists and keys among the study's other simulated participants.
    Its ids come from simulated_ids(); it never resumes or adopts an existing participant, and a real
    or preview start never resumes or adopts a simulated one.

    A launch sends a burst of entries at once (issue 38 item 7), so only what the rules need runs in the
    entry's transaction, the study's row locked (_study_status: shared by real entries, which do not
    wait for each other; exclusive for simulated ones): the status, the holders' (list, key mapping,
    count), the plan and the insert. Before it, each in its own statement: the arm, the stored lists (a
    rebuild locks the study itself), the catch items, the resume lookup, the consent check and the
    expiry of silent sessions (_expire_due). A resume looked up before the insert cannot double anyone:
    two first visits with one Prolific id (or session id) that both find none meet at the insert, where
    the unique constraints (participant_unique_pid, participant_unique_session) let one in and the
    other resumes the winner or is refused."""
    if simulated:
        if not is_simulated_id(prolific_pid) or (prolific_session_id and not is_simulated_id(prolific_session_id)):
            raise ValueError(f"A simulated participant's ids come from simulated_ids() (they start with "
                             f"{SIMULATED_PREFIX!r}); got {prolific_pid!r}, {prolific_session_id!r}.")
    elif is_simulated_id(prolific_pid) or is_simulated_id(prolific_session_id):
        raise FlowError("simulated_id", NOT_FOR_PARTICIPANTS, 400)
    real = not preview and not simulated
    arm = arm if arm is not None and arm.study_id == study.pk else human_arm_ensure(study=study)
    if real:
        resumed = None if looked_up else _resumed(study, prolific_pid, prolific_session_id)
        if resumed is not None:
            return resumed, False
        _require_open(study)
        if consent.consent_problem(arm) is not None:  # its consent changed after it opened: reviewed again first
            raise FlowError("consent_unreviewed", "This study is not accepting participants at the moment.", 403)
        _expire_due(study, arm)
    try:
        stored: list_store.StoredLists | FlowError = _stored(study, arm)
    except FlowError as exc:
        stored = exc
    checks = _attention_items(study, arm) if not isinstance(stored, FlowError) else []
    pending = _pending(study) if real else {}
    try:
        with transaction.atomic():
            return _start_locked(study=study, arm=arm, stored=stored, checks=checks, real=real, pending=pending,
                                 participant=Participant(
                                     study=study, prolific_pid=prolific_pid, prolific_study_id=prolific_study_id,
                                     prolific_session_id=prolific_session_id, is_preview=preview,
                                     is_simulated=simulated, token=secrets.token_urlsafe(32)))
    except IntegrityError as exc:  # a concurrent first visit with the same PID or session won
        # only a real participant's own concurrent first visit is resumed: never a bot's row, and a bot
        # never takes over anyone's
        winner = None if simulated else Participant.objects.filter(
            study=study, prolific_pid=prolific_pid).real().first()
        if winner is not None and (not winner.prolific_session_id or winner.prolific_session_id == prolific_session_id):
            return winner, False
        raise FlowError("duplicate", "This participation has just been started; reload the page.", 409) from exc


def _pending_rows(study):
    rows = Participant.objects.filter(study=study, status=ParticipantStatus.STARTED,
                                      consented_at__isnull=True).real()
    return rows.order_by().values_list("list_number").annotate(n=Count("pk")).values_list("list_number", "n")


_PENDING = CompiledRead(_pending_rows, study=int)


def _pending(study: Study) -> dict[int, int]:
    """{list number: how many} of the real entries that hold no place yet (started, not consented): a
    launch's burst arrives before anyone consents, so the balance alone would give every arrival the same
    list; they spread over the lists the balance ties (lists.least_used). Read before the entry's
    transaction: a concurrent entry missed here costs a tie-break, never a rule."""
    return dict(_PENDING.rows(study=study.pk))


def _held_rows(holders):
    return holders.order_by().values_list("list_number", "key_mapping").annotate(n=Count("pk"))


def _held(holders) -> list[tuple[int | None, str, int]]:
    """(list number, key mapping, how many) over `holders`: a row per pair, however many hold a place."""
    return list(_held_rows(holders))


_HELD_REAL = CompiledRead(lambda study: _held_rows(_holding(study)), study=int)  # a real entry's holders


def _study_status(study: Study, *, exclusive: bool) -> str:
    """The study's status, its row locked until the transaction ends. Exclusively (FOR UPDATE) for an
    entry whose insert changes what the next one reads: a simulated participant holds a place and counts
    for the balance from its start, so those entries go one at a time. Shared on PostgreSQL (FOR SHARE)
    for the others: a real participant holds no place and counts for no balance until it consents
    (_holding), so its insert changes nothing another entry reads, and entries need not wait for each
    other; a change of status (closing, pausing) still waits for the entries in flight, as it did, and
    the item generators' FOR UPDATE still keeps entries out while they run. SQLite runs one writer at
    a time by itself (and has no row locks)."""
    if exclusive:
        return Study.objects.select_for_update().values_list("status", flat=True).get(pk=study.pk)
    table = connection.ops.quote_name(Study._meta.db_table)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT status FROM {table} WHERE id = %s"
                       + (" FOR SHARE" if connection.vendor == "postgresql" else ""), [study.pk])
        row = cursor.fetchone()
    if row is None:
        raise Study.DoesNotExist(f"Study {study.pk} no longer exists.")
    return row[0]


def _start_locked(*, study: Study, arm: HumanArm, stored, checks: list[int], real: bool, pending: dict[int, int],
                  participant: Participant) -> tuple[Participant, bool]:
    """In one short transaction, the study's row locked (_study_status): the status, the cap, the
    balance, the plan, the insert."""
    preview, simulated = participant.is_preview, participant.is_simulated
    if not preview:
        status = _study_status(study, exclusive=simulated)
        if real and status != StudyStatus.OPEN:
            raise FlowError("not_open", "This study is not accepting participants at the moment.", 403)
    # (list number, key mapping, how many) of the participants who count for the balance, in one query
    if real:  # _holding(study)'s rows, read by its compiled read
        held = _HELD_REAL.rows(study=study.pk)
    elif simulated:
        held = _held(Participant.objects.filter(study=study).simulated().holding())
    else:
        held = []
    if real and sum(n for *_, n in held) >= arm.target_sample_size:  # silent sessions may free places
        _expire(study, arm)  # (a concurrent entry's expiry: this one waits for its rows, then counts anew)
        held = _HELD_REAL.rows(study=study.pk)
    if real and sum(n for *_, n in held) >= arm.target_sample_size:
        raise FlowError("full", "This study is full: it has all the participants it needs. Thank you!", 403)
    if isinstance(stored, FlowError):
        raise stored
    try:
        number, seed, plan = _plan(arm, stored, held, checks, pending)
    except list_store.StoredList.DoesNotExist:  # rebuilt meanwhile by another request
        number, seed, plan = _plan(arm, _stored(study, arm), held, checks, pending)
    mappings: Counter = Counter()
    for _, mapping, n in held:
        mappings[mapping] += n
    participant.key_mapping = lists.balanced_choice(mappings, KeyMapping.values, seed)
    participant.list_number, participant.list_seed, participant.plan = number, seed, plan
    participant.last_seen_at = timezone.now()
    participant.save(force_insert=True)
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
    steps before it that apply are done."""
    field = flow.step_named(step).done_at
    with transaction.atomic():
        participant = locked(participant)
        require_in_progress(participant)
        if not flow.steps_behind(participant, participant.study.human_arm, step):
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
    """Completion: only once the server holds an answer for every trial of the list. Where questionnaires
    follow the items (flow's "questions_after"), the end of the trials is recorded instead (trials_done_at; the
    participation stays in progress) and the questionnaires' last page completes it
    (participation/questionnaires.py)."""
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
    after = flow.step_named("questions_after")
    if participant.questions_after_done_at is None and after.applies(participant, participant.study.human_arm):
        if participant.trials_done_at is None:
            participant.trials_done_at = timezone.now()
            participant.save(update_fields=["trials_done_at"])
        return participant
    return participant_transition(participant=participant, to=ParticipantStatus.COMPLETED)


@transaction.atomic
def participant_screen_out(*, participant: Participant) -> Participant:
    """A device without a keyboard found by the page itself (a tablet whose browser says it is a desktop:
    the entry's user-agent check let it in): the session ends as returned, before any answer; the page
    then asks the participant to return the study on Prolific. Refused once an answer is saved (the
    trials have begun on a keyboard after all) and for a session that has ended."""
    participant = locked(participant)
    require_in_progress(participant)
    if participant.trials.exists():
        raise FlowError("trials_begun", "This session has answers already; it goes on.", 409)
    return participant_transition(participant=participant, to=ParticipantStatus.RETURNED)


def participant_exclude(*, participant: Participant) -> Participant:
    with transaction.atomic():
        return participant_transition(participant=locked(participant), to=ParticipantStatus.EXCLUDED)
