"""Writes of the participant flow: start, consent, trials, heartbeat, finish, expiry, exclusion.

Every function takes keyword-only arguments and checks its rules; a refusal raises FlowError (or
PayloadError) with a clear message and changes nothing.
"""
from __future__ import annotations

import json
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from ..models import (
    Answer, Condition, HumanArm, Item, ItemKind, KeyMapping, Participant, ParticipantStatus, Study, StudyStatus,
    Trial,
)
from . import choice, consent, fastsave, lists, paired, practice
from .arm import PairedPresentation, default_attention_checks_for
from .fastsave import ATTENTION_DESIGN
from .payload import KEYS, PayloadError, TrialPayload, parse_trial
from .selectors import participant_by_token

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
    """The study's human arm; a new one practises on its design's default set (practice.py) and gets
    its design's default catch items (one statement each where the design's items have one)."""
    arm, _ = HumanArm.objects.get_or_create(study=study, defaults={
        "practice": practice.default_for(study.design),
        "attention_checks": default_attention_checks_for(study.design),
    })
    return arm


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
    arm = human_arm_ensure(study=study)
    cutoff = (now or timezone.now()) - timedelta(minutes=arm.abandon_after_minutes)
    stale = Participant.objects.filter(study=study, status=ParticipantStatus.STARTED, is_preview=False)
    unconsented = (now or timezone.now()) - timedelta(minutes=UNCONSENTED_MINUTES)
    stale = (stale.filter(last_seen_at__lt=cutoff) | stale.filter(last_seen_at__isnull=True, started_at__lt=cutoff)
             | stale.filter(consented_at__isnull=True, started_at__lt=unconsented))
    return stale.update(status=ParticipantStatus.RETURNED, finished_at=now or timezone.now())


def _attention_items(study: Study, arm: HumanArm) -> list[int]:
    """The study's catch items, created from the arm's settings the first time they are needed."""
    existing = {item.code: item.pk for item in study.items.filter(design=ATTENTION_DESIGN)}
    ids = []
    for n, check in enumerate(arm.attention_checks, 1):
        code = f"attention-check.{n}"
        if code not in existing:
            four = {"kind": ItemKind.MULTIPLE_CHOICE, "options": list(check["options"])} if "options" in check else {}
            item = Item.objects.create(
                study=study, code=code, design=ATTENTION_DESIGN, form_id=ATTENTION_DESIGN,
                gold_answer=check["answer"], premises=list(check["premises"]), question=check["question"],
                prompt="\n".join([*check["premises"], check["question"], *check.get("options", [])]),
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
        grid = lists.Grid.from_cells(lists.Cell(item_id=pk, form="*", row=pk) for pk, _, _ in rows)
    return grid


def _within(grid, arm: HumanArm) -> bool:
    return isinstance(grid, lists.PairGrid) and arm.paired_presentation == PairedPresentation.WITHIN


def _list_total(study: Study, arm: HumanArm, grid) -> int:
    """How many distinct lists the arm's settings draw from the study's items (ListError or
    ValidationError saying why none can be drawn)."""
    length = arm.items_per_participant
    if _within(grid, arm):
        return lists.within_pairs_count(grid, length, arm.paired_min_gap)
    return lists.full_rows_count(grid, length) if choice.all_mutants(study) else grid.list_count(length)


def lists_problem(*, study: Study, arm: HumanArm) -> str | None:
    """Why participants' lists cannot be drawn with the arm's settings (None when they can)."""
    try:
        _list_total(study, arm, _grid(study, arm))
    except ValidationError as exc:
        return " ".join(exc.messages)
    except lists.ListError as exc:
        return str(exc)
    return None


def _plan(study: Study, arm: HumanArm, holders) -> tuple[int, int, list[int]]:
    grid = _grid(study, arm)
    length = arm.items_per_participant
    within = _within(grid, arm)
    try:
        every_form = choice.all_mutants(study)
        total = _list_total(study, arm, grid)
    except ValidationError as exc:
        raise FlowError("misconfigured", f"This study is not set up correctly: {' '.join(exc.messages)}", 503) from exc
    except lists.ListError as exc:
        raise FlowError("misconfigured", f"This study is not set up correctly: {exc}", 503) from exc
    counts: dict[int, int] = {}
    for number in holders.values_list("list_number", flat=True):
        if number is not None:
            counts[number] = counts.get(number, 0) + 1
    number = lists.least_used(counts, total)
    seed = secrets.randbits(48)
    if within:  # both members of each pair, spaced and in counterbalanced order (not shuffled again)
        ids = lists.within_pairs_list(grid, number, length, seed=seed, min_gap=arm.paired_min_gap)
    else:
        picked = lists.full_rows_list(grid, number, length) if every_form else grid.latin_square_list(number, length)
        ids = lists.shuffled(picked, seed)
    return number, seed, lists.with_checks(ids, _attention_items(study, arm), seed)


@transaction.atomic
def participant_start(
    *, study: Study, prolific_pid: str, prolific_study_id: str = "", prolific_session_id: str = "",
    preview: bool = False, simulated: bool = False,
) -> tuple[Participant, bool]:
    """Start (or resume) one participation; returns (participant, created). A simulated participant
    (a pilot's bot, participation/pilot.py) may start on a study that is not open, holds no place of
    the sample, and is balanced over lists and keys among the study's other simulated participants."""
    study = Study.objects.select_for_update().get(pk=study.pk)
    arm = human_arm_ensure(study=study)
    if not preview and not simulated:
        by_pid = Participant.objects.filter(study=study, prolific_pid=prolific_pid, is_preview=False).first()
        if by_pid is not None:
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
        participants_expire(study=study)
        if _holding(study).count() >= arm.target_sample_size:
            raise FlowError("full", "This study is full: it has all the participants it needs. Thank you!", 403)
    if simulated:
        holders = Participant.objects.filter(study=study, is_simulated=True, status__in=ParticipantStatus.holding())
    else:
        holders = _holding(study) if not preview else Participant.objects.none()
    number, seed, plan = _plan(study, arm, holders)
    mapping_counts = {m: holders.filter(key_mapping=m).count() for m in KeyMapping.values}
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
        winner = Participant.objects.filter(study=study, prolific_pid=prolific_pid, is_preview=False).first()
        if winner is not None:
            return winner, False
        raise FlowError("duplicate", "This participation has just been started; reload the page.", 409) from exc
    return participant, True


def _locked(participant: Participant) -> Participant:
    """The participant's row, locked; a clear 410 when it was erased meanwhile (a request that read
    the participant before an erasure must not end in a 500)."""
    row = Participant.objects.select_for_update().filter(pk=participant.pk).first()
    if row is None:
        raise FlowError("erased", "This session no longer exists: its data were erased.", 410)
    return row


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


def trial_record(*, participant: Participant, payload: TrialPayload, user_agent: str = "") -> TrialReceipt:
    """Save one answer. A re-sent trial (same idempotency key) returns the saved row, never a second.

    The common case — a participant in progress answering the next regular trial — takes the fast
    path: checks against the participant already read, then one atomic write that locks the
    participant's row (re-checking under the lock that the participation has not ended meanwhile),
    refreshes its last-seen time when that is 30 s old or more, and inserts the trial, guarded by the unique constraints (participant × index,
    × item, × idempotency key): fastsave.insert. Anything else (a re-sent or clashing answer, an
    ended participation, an attention check, a step out of order) takes the locked path, which
    serialises on the participant row and says exactly what is wrong.
    """
    receipt = _trial_fast(participant=participant, flow_done=_flow_done(participant), payload=payload,
                          user_agent=user_agent, seen_at=participant.last_seen_at)
    if receipt is None:
        receipt = _trial_locked(participant=participant, payload=payload, user_agent=user_agent)
    return receipt


def trial_submit(*, slug: str, token: str, data: object, user_agent: str = "",
                 admit: Callable[[], None] = lambda: None) -> TrialReceipt:
    """The trial endpoint's service: save the answer `data` (decoded JSON) sent to a session URL.

    On PostgreSQL a regular answer (F/J, not timed out) is read and written by one statement
    (fastsave.save); otherwise one read (fastsave.hot) finds the participant, its arm and the
    submitted item and one write saves a regular answer (fastsave.insert). Four-option studies (their
    keys come from the study's settings), attention checks on SQLite, re-sent or clashing answers,
    ended participations and unknown sessions go through the locked path, which re-reads under the
    participant's row lock and says exactly what happened.

    `admit` is the rate limit (it raises to refuse): called once, before anything but the fast save
    of a new answer. New answers are not counted — a participant has at most as many as its list has
    trials, each saved once, so they cannot flood the server and a genuine answer is never refused
    for speed — while everything else (re-sent, refused, malformed or unusual requests, unknown
    sessions) is. FlowError('unknown_session', 404) when no participant has this study and token;
    PayloadError for a malformed answer.
    """
    attempt = _trial_one_statement(slug, token, data, user_agent) if fastsave.one_statement() else None
    if attempt is not None:
        hot, receipt = attempt
        if receipt is not None:
            return receipt
    else:
        hot = fastsave.hot(slug=slug, token=token, item_id=data.get("item") if isinstance(data, dict) else None)
        if hot is not None and hot.has_arm and not hot.multiple_choice:
            try:
                payload = parse_trial(data, time_limit_ms=hot.time_limit_ms)
            except PayloadError:
                payload = None  # said below, once the request is counted
            if payload is not None:
                receipt = _trial_fast(participant=hot.participant, flow_done=hot.flow_done, payload=payload,
                                      user_agent=user_agent, item=hot.item, seen_at=hot.seen_at)
                if receipt is not None:
                    return receipt
    admit()
    if hot is None:
        raise FlowError("unknown_session", "No such session.", 404)
    if hot.multiple_choice or not hot.has_arm:
        participant = _by_token(slug, token)
        payload = parse_trial(data, time_limit_ms=participant.study.human_arm.time_limit_ms,
                              keys=choice.accepted_keys(participant.study))
        return trial_record(participant=participant, payload=payload, user_agent=user_agent)
    payload = parse_trial(data, time_limit_ms=hot.time_limit_ms)
    return _trial_locked(participant=_by_token(slug, token), payload=payload, user_agent=user_agent)


# The answer each F/J key means under each key mapping, as the one-statement save takes it (JSON text).
_ANSWERS_BY_LETTER = {
    letter: json.dumps({mapping.value: answers[letter].value for mapping, answers in KEY_ANSWERS.items()})
    for letter in KEYS.values()
}


def _trial_one_statement(slug: str, token: str, data: object, user_agent: str):
    """(hot, receipt) of a regular F/J answer read and written at once (fastsave.save): hot None when
    there is no such session, receipt None when nothing was written. None when not tried: the payload
    does not parse without the arm's settings (timed out, another key, a malformed body: the caller
    re-parses with them and answers precisely) or its numbers are out of the statement's range."""
    try:
        payload = parse_trial(data)  # no time limit known yet: the statement checks the arm's own
    except PayloadError:
        return None
    if payload.letter not in _ANSWERS_BY_LETTER or payload.index > fastsave.MAX_INDEX or payload.item > fastsave.MAX_ID:
        return None
    trial = Trial(item_id=payload.item, **_payload_fields(payload, user_agent))
    hot = fastsave.save(slug=slug, token=token, trial=trial, answers=_ANSWERS_BY_LETTER[payload.letter],
                        now=timezone.now())
    if hot is None or trial.pk is None:
        return hot, None
    return hot, TrialReceipt(trial=trial, created=True, participant=hot.participant)


def _by_token(slug: str, token: str) -> Participant:
    participant = participant_by_token(slug=slug, token=token)
    if participant is None:  # erased between two reads
        raise FlowError("unknown_session", "No such session.", 404)
    return participant


def _flow_done(participant: Participant) -> bool:
    practice_pending = bool(participant.study.human_arm.practice) and participant.practice_done_at is None
    return participant.consented_at is not None and participant.instructions_done_at is not None and not practice_pending


def _answer(participant: Participant, item: Item, payload: TrialPayload) -> tuple[str, bool]:
    if payload.timed_out:
        return "", False
    if item.kind == ItemKind.MULTIPLE_CHOICE:  # the option letter at the pressed key's position
        answer = choice.option_answer(participant.study, payload)
        return answer, answer == item.gold_answer
    answer = KEY_ANSWERS[participant.key_mapping].get(payload.letter)
    if answer is None:
        raise PayloadError("A yes/no question is answered with the F and J keys.")
    return answer, answer == item.gold_answer


def _payload_fields(payload: TrialPayload, user_agent: str) -> dict:
    """A trial's columns that come from what the browser sent."""
    return dict(
        index=payload.index, key=payload.key, key_code=payload.code, rt_ms=payload.rt_ms,
        idempotency_key=payload.idempotency_key, timed_out=payload.timed_out, client_onset_ms=payload.onset_ms,
        client_response_ms=payload.response_ms, user_agent=user_agent[:400],
        viewport_width=payload.viewport_width, viewport_height=payload.viewport_height,
        focus_lost=payload.focus_lost, visibility_lost=payload.visibility_lost,
    )


def _trial_fields(participant: Participant, item: Item, payload: TrialPayload, user_agent: str) -> dict:
    answer, correct = _answer(participant, item, payload)
    return dict(participant=participant, item=item, answer=answer, correct=correct,
                is_attention_check=item.design == ATTENTION_DESIGN, **_payload_fields(payload, user_agent))


_LOOKUP = object()


def _trial_fast(*, participant: Participant, flow_done: bool, payload: TrialPayload, user_agent: str,
                item: Item | None | object = _LOOKUP, seen_at=None) -> TrialReceipt | None:
    """The next regular answer of a participant in progress, or None for the locked path to decide.
    `item` is the submitted item when the caller has read it already (None: not this study's);
    `seen_at` the participant's last-seen time as read (None: unknown, refresh it)."""
    plan = participant.plan
    if participant.status != ParticipantStatus.STARTED or not flow_done:
        return None
    if payload.index >= len(plan) or plan[payload.index] != payload.item:
        return None
    if item is _LOOKUP:
        item = (Item.objects.filter(pk=payload.item, study_id=participant.study_id)
                .only("id", "kind", "gold_answer", "design", "study_id").first())
    if item is None or item.design == ATTENTION_DESIGN:
        return None
    trial = Trial(**_trial_fields(participant, item, payload, user_agent))
    now = timezone.now()
    refresh = fastsave.needs_refresh(seen_at, now)
    # Still in progress? The write locks the participant's row, so an ending (which locks it too)
    # either waits for this answer or wins and sends it to the locked path.
    if not fastsave.insert(trial=trial, now=now, refresh_seen=refresh):
        return None
    if refresh:
        participant.last_seen_at = now
    return TrialReceipt(trial=trial, created=True, participant=participant)


@transaction.atomic
def _trial_locked(*, participant: Participant, payload: TrialPayload, user_agent: str = "") -> TrialReceipt:
    study = participant.study  # read by the view with its human arm; not re-read under the lock
    participant = _locked(participant)
    participant.study = study
    same = participant.trials.filter(idempotency_key=payload.idempotency_key).first()
    if same is not None:
        if same.index != payload.index or same.item_id != payload.item:
            raise PayloadError("This idempotency key was already used for another trial.")
        return TrialReceipt(trial=same, created=False, participant=participant)
    _require_in_progress(participant)
    if not _flow_done(participant):
        raise FlowError("out_of_order", "Trials start after the consent, instructions and practice pages.", 409)
    plan = participant.plan
    if payload.index >= len(plan) or plan[payload.index] != payload.item:
        raise PayloadError(f"Item {payload.item} is not trial {payload.index} of this participant's list.")
    if participant.trials.filter(index=payload.index).exists():
        raise FlowError("answered", f"Trial {payload.index} has already been answered.", 409)
    item = Item.objects.filter(pk=payload.item, study_id=participant.study_id).first()
    if item is None:
        raise FlowError("misconfigured", "This item no longer exists; please contact the researcher.", 409)
    fields = _trial_fields(participant, item, payload, user_agent)
    correct, is_check = fields["correct"], fields["is_attention_check"]
    trial = Trial.objects.create(**fields)
    participant.last_seen_at = timezone.now()
    fields = ["last_seen_at"]
    if is_check and not correct:
        participant.attention_failures += 1
        fields.append("attention_failures")
    participant.save(update_fields=fields)
    rule = participant.study.human_arm.attention_rule()
    if is_check and not correct and rule.ends(failures=participant.attention_failures):
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
