"""The questionnaires of the participant flow (issue 47 item 2): which page a participant is on, and the two
writes, each under the participant's row lock and refusing with a clear message and nothing saved:

- `answer_record`: one answer as the page sends it when it is given (saved answer by answer, like trials). At
  most one row per (participant, question): a re-send with the same resend key returns the saved row, a new
  answer to the same question replaces it until the page is completed; an empty answer to an optional
  question clears it. Refused: a session not in progress, a question not on the participant's current page,
  an answer the question does not accept (logic/questions.py: an unknown choice, a number out of range, a
  text over the cap, no answer to a required question).
- `questionnaire_submit`: the page's Continue, with every answer on the page (the form carries them, so the
  page works without its script): all are checked first and none is saved when one is refused; then every
  required question must have an answer; the page is recorded completed, and after the last page of its
  placement the flow's step is done (the participation completes after the last page after the items).

The flow (flow.py) decides when the pages come: "questions_before" after the consent, "questions_after" once
the finish recorded the end of the trials (services.participant_finish)."""
from __future__ import annotations

from dataclasses import dataclass, field

from django.db import transaction
from django.utils import timezone

from logic.questions import AnswerError, answer_value

from ..models import (
    HumanArm, Participant, ParticipantStatus, Question, Questionnaire, QuestionnaireAnswer, QuestionnaireCompletion,
)
from . import flow
from .services import FlowError, locked, participant_transition, require_in_progress

MAX_KEY = 64


class AnswersRefused(Exception):
    """Answers a page cannot take: `errors` maps each refused question's id to the message for the participant."""

    def __init__(self, errors: dict[int, str]):
        super().__init__("; ".join(errors.values()))
        self.errors = errors


@dataclass(frozen=True)
class AnswerReceipt:
    question: Question
    value: str
    created: bool  # a new row, or a changed answer
    duplicate: bool = False  # a re-send of the saved answer (the same resend key)


@dataclass
class Page:
    """A participant's current questionnaire page: the questionnaire, its questions in order, the answers saved,
    which page of how many of its placement it is, and any messages (question id → text)."""

    questionnaire: Questionnaire
    questions: list[Question]
    answers: dict[int, str]
    number: int
    of: int
    errors: dict[int, str] = field(default_factory=dict)


def shown(arm: HumanArm, placement: str) -> list[Questionnaire]:
    """The questionnaires participants see at `placement`, in order, their questions loaded."""
    return list(Questionnaire.objects.filter(arm=arm, placement=placement).shown().prefetch_related("questions"))


def _current(participant: Participant, arm: HumanArm, placement: str) -> tuple[Questionnaire | None, int, int]:
    pages = shown(arm, placement)
    done = set(QuestionnaireCompletion.objects.filter(participant=participant, questionnaire__in=pages)
               .values_list("questionnaire_id", flat=True))
    for n, questionnaire in enumerate(pages, 1):
        if questionnaire.pk not in done:
            return questionnaire, n, len(pages)
    return None, len(pages), len(pages)


def current_page(*, participant: Participant, arm: HumanArm, placement: str) -> Page | None:
    """The page the participant answers now at `placement` (None: every page done)."""
    questionnaire, number, of = _current(participant, arm, placement)
    if questionnaire is None:
        return None
    questions = list(questionnaire.questions.all())
    answers = dict(QuestionnaireAnswer.objects.filter(participant=participant, question__in=questions)
                   .values_list("question_id", "value"))
    return Page(questionnaire=questionnaire, questions=questions, answers=answers, number=number, of=of)


def _on_page(participant: Participant, arm: HumanArm, questionnaire_id: int) -> Questionnaire:
    """The questionnaire `questionnaire_id` if it is the participant's current page (FlowError otherwise)."""
    require_in_progress(participant)
    step = flow.current_step(participant, arm)
    if step.questionnaire is None:
        raise FlowError("out_of_order", "This questionnaire is not open now; please reload the page.", 409)
    questionnaire, _, _ = _current(participant, arm, step.questionnaire)
    if questionnaire is None or questionnaire.pk != questionnaire_id:
        raise FlowError("out_of_order", "This questionnaire is not open now; please reload the page.", 409)
    return questionnaire


def _clean_key(key: str) -> str:
    if not isinstance(key, str) or len(key) > MAX_KEY or not key.isprintable():
        raise AnswerError(f"The resend key must be text of at most {MAX_KEY} characters.")
    return key


@transaction.atomic
def answer_record(*, participant: Participant, question_id: int, value, idempotency_key: str = "") -> AnswerReceipt:
    """Save one answer as given (the module's rules). AnswerError: the answer is refused (nothing saved);
    FlowError: the question is not the participant's to answer now."""
    key = _clean_key(idempotency_key)
    arm = participant.study.human_arm
    participant = locked(participant)
    question = Question.objects.filter(pk=question_id, questionnaire__arm=arm).select_related("questionnaire").first()
    if question is None:
        raise FlowError("unknown_question", "This question is not part of this study.", 404)
    saved = QuestionnaireAnswer.objects.filter(participant=participant, question=question).first()
    if key and saved is not None and saved.idempotency_key == key:  # a re-send: the answer stands as saved
        return AnswerReceipt(question=question, value=saved.value, created=False, duplicate=True)
    _on_page(participant, arm, question.questionnaire_id)
    stored = answer_value(question.rule(), value)
    if stored == "":  # an optional question left blank: no answer (a saved one is cleared)
        if saved is not None:
            saved.delete()
        return AnswerReceipt(question=question, value="", created=saved is not None)
    if saved is not None and saved.value == stored:
        if key and key != saved.idempotency_key:
            saved.idempotency_key = key
            saved.save(update_fields=["idempotency_key"])
        return AnswerReceipt(question=question, value=stored, created=False)
    if saved is None:
        QuestionnaireAnswer.objects.create(participant=participant, question=question, value=stored,
                                           idempotency_key=key)
    else:
        saved.value, saved.idempotency_key = stored, key
        saved.save(update_fields=["value", "idempotency_key", "answered_at"])
    participant.last_seen_at = timezone.now()
    participant.save(update_fields=["last_seen_at"])
    return AnswerReceipt(question=question, value=stored, created=True)


@transaction.atomic
def questionnaire_submit(*, participant: Participant, questionnaire_id: int, answers: dict[int, object]) -> Participant:
    """The page's Continue with the answers on it (question id → answer as given; a question left out keeps its
    saved answer). AnswersRefused (nothing saved) naming each question refused, a missing required answer
    included; FlowError when the page is not the participant's current one. Returns the participant, its
    step done after the last page of the placement (completed after the last page after the items)."""
    arm = participant.study.human_arm
    participant = locked(participant)
    participant.study = arm.study
    questionnaire = _on_page(participant, arm, questionnaire_id)
    questions = list(questionnaire.questions.all())
    saved = {a.question_id: a for a in QuestionnaireAnswer.objects.filter(participant=participant,
                                                                          question__in=questions)}
    errors, values = {}, {}
    for question in questions:
        try:
            if question.pk in answers:
                values[question.pk] = answer_value(question.rule(), answers[question.pk])
            elif question.required and question.pk not in saved:
                raise AnswerError("This question needs an answer.")
        except AnswerError as exc:
            errors[question.pk] = str(exc)
    if errors:
        raise AnswersRefused(errors)
    for question in questions:
        if question.pk not in values:
            continue
        value, row = values[question.pk], saved.get(question.pk)
        if value == "":
            if row is not None:
                row.delete()
        elif row is None:
            QuestionnaireAnswer.objects.create(participant=participant, question=question, value=value)
        elif row.value != value:
            row.value = value
            row.save(update_fields=["value", "answered_at"])
    QuestionnaireCompletion.objects.get_or_create(participant=participant, questionnaire=questionnaire)
    placement = questionnaire.placement
    if _current(participant, arm, placement)[0] is None:  # the placement's last page
        step = flow.QUESTIONNAIRE_STEPS[placement]
        setattr(participant, step.done_at, timezone.now())
        participant.last_seen_at = timezone.now()
        participant.save(update_fields=[step.done_at, "last_seen_at"])
        if step.name == "questions_after":
            participant_transition(participant=participant, to=ParticipantStatus.COMPLETED)
    return participant
