"""The consent page's facts, and the researcher's review of its text.

Paper 003's A.2 wording says the only information held is Prolific's demographics and the
completion time; this platform stores more (Prolific, study and session ids, the browser's user agent
and window size, focus and visibility changes, response times, …). So the page states what is stored
from one list, STORED_DATA, which names the model fields behind each kind of data: a test checks that
every field of Participant and Trial is in it (or in NOT_ABOUT_THE_PARTICIPANT, with the reason) and
that the page shows every kind. The researcher's text stays editable per study (HumanArm.consent_text);
the list, the expected duration and the contact are shown below it whatever the text says.

A study opens only once a researcher has marked its consent reviewed (consent_review, from the study's
admin page). The review is of the consent as participants read it: the text, the institution, the
contact and the list of stored data, fingerprinted (consent_digest); a later change to any of them
needs a new review before the study opens again or takes new participants.

The attention rule (experiments/models/attention.py) is stated on the page in the rule's own words
(`attention_told`, AttentionRule.told) whenever the arm has check questions, and is part of the reviewed
fingerprint: changing when a participant fails the checks changes what the page says, so it needs a new
review. So are the researcher's instructions, debrief and end page and the study's answer input (texts.py):
a study that has opened keeps what its participants read until someone reviews a change.
`attention_rule_shown` says whether a participant agreed to the page as it now stands — what Prolific review asks before it rejects anyone for failed checks (prolific/rules.py).
"""
from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass

from django.core.exceptions import ValidationError
from django.utils import timezone

from ..models.human_arm import DEFAULT_CONSENT, PAPER_CONSENT  # noqa: F401  (models/human_arm.py)
from ..models import AnswerInput
from ..models.human_arm import TEXT_PLACEHOLDERS
from .flow import shown_placements


@dataclass(frozen=True)
class DataKind:
    key: str
    label: str  # as the participant reads it under "What we store"
    fields: tuple[str, ...]  # "Model.field" of every column that holds it


STORED_DATA: tuple[DataKind, ...] = (
    DataKind("prolific_ids", "your Prolific ID, and the IDs of this Prolific study and of your session",
             ("Participant.prolific_pid", "Participant.prolific_study_id", "Participant.prolific_session_id")),
    DataKind("answers", "your answer to each question: the key you pressed (or the on-screen button you clicked or "
             "tapped, where the study offers buttons), the answer it gave, whether it was right, or that the time ran out",
             ("Trial.key", "Trial.key_code", "Trial.answer", "Trial.correct", "Trial.timed_out",
              "Trial.answer_channel")),
    DataKind("questions", "which questions you were shown, in which order, and which were check questions",
             ("Participant.list_number", "Participant.list_seed", "Participant.plan", "Trial.item", "Trial.index",
              "Trial.is_attention_check")),
    DataKind("response_times", "how long you took to answer each question, as your browser measured it",
             ("Trial.rt_ms", "Trial.client_onset_ms", "Trial.client_response_ms")),
    DataKind("key_mapping", "which key meant which answer for you", ("Participant.key_mapping",)),
    DataKind("timestamps", "when you started, agreed, read the instructions, finished the practice, answered "
             "each question and finished, and when your page was last open",
             ("Participant.started_at", "Participant.consented_at", "Participant.instructions_done_at",
              "Participant.practice_done_at", "Participant.last_seen_at", "Participant.finished_at",
              "Trial.received_at")),
    DataKind("user_agent", "your browser's user agent: the name and version of your browser and operating system",
             ("Trial.user_agent",)),
    DataKind("viewport", "the size of your browser window, and whether your device is a computer, a phone or a "
             "tablet (judged from its screen and pointer)",
             ("Trial.viewport_width", "Trial.viewport_height", "Trial.device")),
    DataKind("focus", "whether you switched to another window or tab while a question was shown",
             ("Trial.focus_lost", "Trial.visibility_lost")),
    DataKind("status", "whether you completed the study, stopped or declined, and how many check questions "
             "you answered wrongly", ("Participant.status", "Participant.attention_failures")),
    # Only where the study shows questionnaires (stored_data): their answers, and when their pages were done.
    DataKind("questionnaires", "your answers to this study's questionnaires (the questions on their own pages before "
             "or after the main questions), and when you finished those pages",
             ("Participant.questions_before_done_at", "Participant.trials_done_at",
              "Participant.questions_after_done_at")),
    # Outside the database: the web server's access log (studyserver/gunicorn_conf.py, logredact.py;
    # docs/production.md, "What the logs hold").
    DataKind("server_log", "the web server's log of each page your browser requested: the time, the page (with "
             "your session's key replaced by a code, and without your Prolific ID) and the server's reply; it holds "
             "no IP address and is kept only until newer entries replace it", ()),
)

QUESTIONNAIRES = "questionnaires"  # the kind listed only where the arm shows questionnaires


def stored_data(arm) -> tuple[DataKind, ...]:
    """The kinds of data the consent page lists for `arm`: every kind, the questionnaires' only where the arm
    shows a questionnaire (flow.shown_placements: switched on, holding a question)."""
    shown = bool(shown_placements(arm)) if arm.pk else False
    return tuple(kind for kind in STORED_DATA if kind.key != QUESTIONNAIRES or shown)


# Columns that say nothing about the participant, and why.
NOT_ABOUT_THE_PARTICIPANT = {
    "Participant.id": "a row number",
    "Participant.study": "the study this page belongs to",
    "Participant.token": "a random key that names the session in its links",
    "Participant.is_preview": "marks the staff's own previews",
    "Participant.is_simulated": "marks the researcher's simulated pilot sessions (bots, not people)",
    "Trial.id": "a row number",
    "Trial.participant": "links an answer to its session",
    "Trial.idempotency_key": "a random key that stops an answer being saved twice",
}

# The expected duration: every question (practice included) at the arm's seconds_per_question, plus
# this for the consent page, the instructions, the start screen and the completion page.
OVERHEAD_SECONDS = 120


def expected_minutes(*, questions: int, practice: int, seconds_per_question: int) -> int:
    """Whole minutes, rounded up: (questions + practice) × seconds per question + OVERHEAD_SECONDS."""
    seconds = (questions + practice) * seconds_per_question + OVERHEAD_SECONDS
    return max(1, math.ceil(seconds / 60))


def planned_questions(arm) -> int:
    """The trials of one participant's list as the arm is set (the list's items and the catch items);
    a started participant's own count is len(participant.plan)."""
    return arm.items_per_participant + len(arm.attention_checks or [])


@dataclass(frozen=True)
class ConsentPage:
    text: str
    data: tuple[DataKind, ...]
    questions: int
    practice: int
    minutes: int
    contact: str
    institution: str
    attention: str  # the attention rule as participants read it; '' when the arm has no check questions


def attention_told(arm) -> str:
    """The attention rule's sentence as participants read it on the consent page and in the instructions ('' when
    the arm asks no check questions): AttentionRule.told, the one source of the words."""
    return arm.attention_rule().told() if arm.attention_checks else ""


def attention_rule_shown(arm, participant) -> bool:
    """Did `participant` agree to a consent page that stated the attention rule as it now stands? Only when the
    arm asks check questions, its consent as it stands (rule sentence included) was reviewed, and the participant
    agreed after that review: a participant who agreed to an earlier page may not have read this sentence."""
    reviewed = arm.consent_reviewed_at
    return bool(attention_told(arm) and reviewed and arm.consent_reviewed_digest == consent_digest(arm)
                and participant is not None and participant.consented_at and participant.consented_at >= reviewed)


def consent_page(arm, *, questions: int | None = None) -> ConsentPage:
    """What the consent page shows for `arm`; `questions` is the participant's list length (default:
    the arm's planned length, as in the admin's preview)."""
    questions = planned_questions(arm) if questions is None else questions
    practice = len(arm.practice or [])
    return ConsentPage(
        text=arm.consent(), data=stored_data(arm), questions=questions, practice=practice,
        minutes=expected_minutes(questions=questions, practice=practice, seconds_per_question=arm.seconds_per_question),
        contact=arm.contact.strip(), institution=arm.institution, attention=attention_told(arm),
    )


def consent_digest(arm) -> str:
    """The fingerprint of the consent as participants read it (text, institution, contact, the stored
    data list, the attention rule's sentence), and of the researcher's other texts and the answer input
    (texts_digest_part: the instructions, debrief and end page as written); the duration is left out: it follows
    the list length, which is not consent wording. Switching a questionnaire on adds its kind to the list: the
    consent is reviewed again."""
    body = json.dumps([arm.consent(), arm.institution, arm.contact.strip(), [k.label for k in stored_data(arm)],
                       attention_told(arm), *texts_digest_part(arm)])
    return hashlib.sha256(body.encode("utf-8")).hexdigest()


def texts_digest_part(arm) -> list:
    """What the consent review's fingerprint adds for the researcher's other texts (texts.py): empty while the
    instructions, debrief and end page are the defaults and the answer is by keys (the fingerprint is then the
    consent page's alone), else each text as written and the answer input."""
    written = [getattr(arm, field) for field in TEXT_PLACEHOLDERS if field != "consent_text"]
    if not any(written) and arm.answer_input == AnswerInput.KEYS:
        return []
    return [*written, arm.answer_input]


def consent_problem(arm) -> str | None:
    """Why the consent cannot be shown to participants yet, or None when it is reviewed as it stands."""
    if not arm.contact.strip():
        return ("Its consent page names no contact: enter one under Human arm › Consent (a name and an e-mail "
                "address), then review the consent text.")
    if arm.consent_reviewed_at is None:
        return ("Nobody has reviewed its consent text yet: preview the participant flow, check that the consent "
                "page is true for this study, then tick 'Consent reviewed' under Human arm › Consent and save.")
    if arm.consent_reviewed_digest != consent_digest(arm):
        return (f"Its consent text, institution, contact, attention rule, instructions, debrief, end page or answer "
                f"input has changed since {reviewer(arm)} reviewed "
                f"it on {arm.consent_reviewed_at:%Y-%m-%d %H:%M} UTC: review it again (tick 'Consent reviewed' and save).")
    return None


def reviewer(arm) -> str:
    user = arm.consent_reviewed_by
    return user.get_username() if user is not None else "someone"


def consent_review(*, arm, by=None):
    """Record that `by` (a user; None from code) has read the consent as it stands and finds it true.
    Refused (ValidationError) while the page names no contact."""
    if not arm.contact.strip():
        raise ValidationError("Enter a contact (a name and an e-mail address) before marking the consent reviewed: "
                              "the consent page must say whom participants can ask.")
    arm.consent_reviewed_at = timezone.now()
    arm.consent_reviewed_by = by
    arm.consent_reviewed_digest = consent_digest(arm)
    arm.save(update_fields=["consent_reviewed_at", "consent_reviewed_by", "consent_reviewed_digest"])
    return arm
