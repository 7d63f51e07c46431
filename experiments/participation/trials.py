"""Saving one answer: the rulebook.

There are exactly two ways an answer reaches the trial table:

- `trial_record`, the locked ORM path, which is the truth: under a lock on the participant's row it
  checks every rule below and says exactly what is wrong when one fails;
- on PostgreSQL, fastsave.save, one statement that saves a regular answer (F/J by key press, not timed
  out, a yes/no study) in one round trip and leaves everything else to `trial_record`. Its rules are
  generated from the declarations `trial_record` reads (fastsave's docstring lists them), and a
  state-machine test drives both with the same random sequences and compares every row.

The rules, in the order they are checked:
1. the answer is the study's to take: a known key of the study, by a channel (key, click, touch) its
   answer input accepts, a timeout only at the arm's time limit, a response time within the ceiling
   (TrialPayload.for_arm);
2. a re-sent answer (same idempotency key) returns the saved row, never a second one; the same key
   for another trial is refused;
3. the participation is in progress, and the pages before the trials are behind (flow.trials_open);
4. the item is the one at this index of the participant's list, and the index is not answered yet;
5. the answer is what the pressed key means under the participant's key mapping (or the option at
   the key's position, for a four-option trial), correct when it is the item's gold answer;
6. a wrong answer to a catch item counts, and ends the session when the arm's attention rule says so
   (attention.py); the participant's last-seen time is refreshed.

The payload is parsed once per request, by the view (payload.parse_trial); the view also keeps the
rate limit (a new answer is never counted).
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from django.db import transaction
from django.utils import timezone

from ..design_registry import is_catch_item
from ..models import Answer, AnswerChannel, Item, ItemKind, KeyMapping, Participant, ParticipantStatus, Trial
from . import choice, fastsave, flow
from .payload import KEYS, PayloadError, TrialPayload
from .selectors import participant_by_token
from .services import FlowError, locked, participant_transition, require_in_progress

KEY_ANSWERS = {
    KeyMapping.F_YES: {"f": Answer.YES, "j": Answer.NO},
    KeyMapping.J_YES: {"f": Answer.NO, "j": Answer.YES},
}
# The answer each F/J key means under each key mapping, as the one-statement save takes it.
_ANSWERS_BY_CODE = {code: {mapping.value: answers[letter].value for mapping, answers in KEY_ANSWERS.items()}
                    for code, letter in KEYS.items()}


@dataclass(frozen=True)
class TrialReceipt:
    trial: Trial
    created: bool
    participant: Participant


def trial_submit(*, slug: str, token: str, payload: TrialPayload, user_agent: str = "") -> TrialReceipt:
    """The trial endpoint's save of `payload` (parsed, not yet checked against the study) sent to a
    session URL. FlowError('unknown_session', 404) when no participant has this study and token."""
    if (fastsave.available() and payload.code in _ANSWERS_BY_CODE and not payload.timed_out
            and payload.channel == AnswerChannel.KEY  # every study takes keys; a click or tap: the arm decides
            and payload.index <= fastsave.MAX_INDEX and payload.item <= fastsave.MAX_ID):
        written = fastsave.save(slug=slug, token=token, index=payload.index, answers=_ANSWERS_BY_CODE[payload.code],
                                trial=Trial(item_id=payload.item, **_from_browser(replace(payload, key=KEYS[payload.code]), user_agent)),
                                now=timezone.now())
        if written is None:
            raise FlowError("unknown_session", "No such session.", 404)
        if written is not fastsave.NOT_WRITTEN:
            return TrialReceipt(trial=written.trial, created=True, participant=written.participant)
    participant = participant_by_token(slug=slug, token=token)
    if participant is None:
        raise FlowError("unknown_session", "No such session.", 404)
    return trial_record(participant=participant, payload=payload, user_agent=user_agent)


@transaction.atomic
def trial_record(*, participant: Participant, payload: TrialPayload, user_agent: str = "") -> TrialReceipt:
    """Save one answer under the participant's row lock, checking every rule (the module's list)."""
    study = participant.study
    arm = study.human_arm  # read by participant_by_token with the study
    payload = payload.for_arm(time_limit_ms=arm.time_limit_ms, keys=choice.accepted_keys(study),  # rule 1
                              channels=arm.input_mode().channels())
    participant = locked(participant)
    participant.study = study
    same = participant.trials.filter(idempotency_key=payload.idempotency_key).first()  # rule 2
    if same is not None:
        if same.index != payload.index or same.item_id != payload.item:
            raise PayloadError("This idempotency key was already used for another trial.")
        return TrialReceipt(trial=same, created=False, participant=participant)
    require_in_progress(participant)  # rule 3
    if not flow.trials_open(participant, arm):
        raise FlowError("out_of_order", "Trials start after the consent, instructions and practice pages.", 409)
    plan = participant.plan  # rule 4
    if payload.index >= len(plan) or plan[payload.index] != payload.item:
        raise PayloadError(f"Item {payload.item} is not trial {payload.index} of this participant's list.")
    if participant.trials.filter(index=payload.index).exists():
        raise FlowError("answered", f"Trial {payload.index} has already been answered.", 409)
    item = Item.objects.filter(pk=payload.item, study_id=participant.study_id).first()
    if item is None:
        raise FlowError("misconfigured", "This item no longer exists; please contact the researcher.", 409)
    answer, correct = _answer(participant, item, payload)  # rule 5
    is_check = is_catch_item(item)
    trial = Trial.objects.create(participant=participant, item=item, answer=answer, correct=correct,
                                 is_attention_check=is_check, **_from_browser(payload, user_agent))
    participant.last_seen_at = timezone.now()  # rule 6
    changed = ["last_seen_at"]
    if is_check and not correct:
        participant.attention_failures += 1
        changed.append("attention_failures")
    participant.save(update_fields=changed)
    if is_check and not correct and arm.attention_rule().ends(failures=participant.attention_failures):
        participant_transition(participant=participant, to=ParticipantStatus.FAILED_ATTENTION)
    return TrialReceipt(trial=trial, created=True, participant=participant)


def _answer(participant: Participant, item: Item, payload: TrialPayload) -> tuple[str, bool]:
    if payload.timed_out:
        return "", False
    if item.kind == ItemKind.MULTIPLE_CHOICE:  # the option letter at the pressed key's position
        answer = choice.option_answer(participant.study, payload)
        return answer, answer == item.gold_answer
    answer = KEY_ANSWERS[participant.key_mapping].get(payload.key)
    if answer is None:
        raise PayloadError("A yes/no question is answered with the F and J keys.")
    return answer, answer == item.gold_answer


def _from_browser(payload: TrialPayload, user_agent: str) -> dict:
    """A trial's columns that come from what the browser sent (the rest are decided by the rules)."""
    return dict(
        index=payload.index, key=payload.key, key_code=payload.code, rt_ms=payload.rt_ms,
        idempotency_key=payload.idempotency_key, timed_out=payload.timed_out, client_onset_ms=payload.onset_ms,
        client_response_ms=payload.response_ms, user_agent=user_agent[:400],
        viewport_width=payload.viewport_width, viewport_height=payload.viewport_height,
        focus_lost=payload.focus_lost, visibility_lost=payload.visibility_lost,
        answer_channel=payload.channel, device=payload.device,
    )
