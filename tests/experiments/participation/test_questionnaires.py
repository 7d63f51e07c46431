"""Questionnaires before and after the items (issue 47 item 2): the defaults, the flow's steps, each answer
saved once through re-sends, every refusal with nothing saved, resuming a page, and the pages over HTTP
(CSRF enforced)."""
from __future__ import annotations

import json

import pytest
from django.test import Client

from experiments.models import (
    ParticipantStatus, Question, Questionnaire, QuestionnaireAnswer, QuestionnaireCompletion,
)
from experiments.participation import flow, questionnaires, services, trials
from experiments.participation.payload import parse_trial
from experiments.participation.services import FlowError
from logic.questions import AID_USE_KEY, AnswerError, PREFER_NOT

from .conftest import trial_data

pytestmark = pytest.mark.django_db


def switch_on(study, *, likert: bool = True):
    """The study's default questionnaires switched on, with a 1–5 Likert item, a number, and a capped text
    question added after the aid-use question."""
    arm = study.human_arm
    arm.questionnaires.update(enabled=True)
    after = arm.questionnaires.get(placement="after")
    if likert:
        Question.objects.create(questionnaire=after, position=1, key="confidence", kind="likert", scale_points=5,
                                scale_low_label="Not at all", scale_high_label="Completely", required=True,
                                text="How confident are you in your answers?")
        Question.objects.create(questionnaire=after, position=2, key="hours_sleep", kind="number", number_min=0,
                                number_max=24, text="How many hours did you sleep last night?")
        Question.objects.create(questionnaire=after, position=3, key="comments", kind="long_text", max_length=50,
                                text="Any comments?")
    return arm


def question(study, key):
    return Question.objects.get(questionnaire__arm=study.human_arm, key=key)


def start(study, n=1):
    participant, _ = services.participant_start(study=study, prolific_pid=f"pid{n:021d}", prolific_session_id=f"s{n}")
    return participant


def fresh(participant):
    participant.refresh_from_db()
    return participant


def answer_trials(participant):
    participant = fresh(participant)
    participant.study.refresh_from_db()
    for index in range(len(participant.plan)):
        trials.trial_record(participant=participant, payload=parse_trial(trial_data(participant, index)))


def test_a_new_study_has_the_default_questionnaires_switched_off(open_study):
    study = open_study()
    pages = list(study.human_arm.questionnaires.order_by("placement", "position"))
    assert [(p.placement, p.enabled) for p in pages] == [("after", False), ("before", False)]
    keys = {q.key: q for q in Question.objects.filter(questionnaire__arm=study.human_arm)}
    assert set(keys) == {"age_band", "first_language", AID_USE_KEY}
    assert keys[AID_USE_KEY].required and not keys["age_band"].required
    assert PREFER_NOT in keys["age_band"].choices
    participant = start(study)
    services.participant_consent(participant=participant, agree=True)
    assert flow.current_step(fresh(participant), study.human_arm).name == "instructions"  # off: no page


def test_the_steps_come_before_and_after_the_items_and_the_finish_waits_for_the_last_page(open_study):
    study = open_study(attention_checks=[], practice=[])
    arm = switch_on(study)
    participant = start(study)
    services.participant_consent(participant=participant, agree=True)
    arm = type(arm).objects.get(pk=arm.pk)
    assert flow.current_step(fresh(participant), arm).name == "questions_before"
    with pytest.raises(FlowError, match="previous page"):  # the instructions wait for the questionnaire
        services.participant_instructions_done(participant=participant)
    before = arm.questionnaires.get(placement="before")
    questionnaires.questionnaire_submit(participant=fresh(participant), questionnaire_id=before.pk, answers={})
    assert fresh(participant).questions_before_done_at is not None  # every question optional: none needed
    services.participant_instructions_done(participant=participant)
    answer_trials(participant)
    done = services.participant_finish(participant=fresh(participant))
    assert done.status == ParticipantStatus.STARTED and done.trials_done_at is not None
    arm = type(arm).objects.get(pk=arm.pk)
    assert flow.current_step(fresh(participant), arm).name == "questions_after"
    after = arm.questionnaires.get(placement="after")
    aid, confidence = question(study, AID_USE_KEY), question(study, "confidence")
    with pytest.raises(questionnaires.AnswersRefused) as refused:
        questionnaires.questionnaire_submit(participant=fresh(participant), questionnaire_id=after.pk,
                                            answers={aid.pk: "No"})
    assert refused.value.errors == {confidence.pk: "This question needs an answer."}
    assert not QuestionnaireAnswer.objects.filter(participant=participant).exists()  # nothing saved
    questionnaires.questionnaire_submit(participant=fresh(participant), questionnaire_id=after.pk,
                                        answers={aid.pk: "No", confidence.pk: "4"})
    assert fresh(participant).status == ParticipantStatus.COMPLETED
    assert dict(QuestionnaireAnswer.objects.filter(participant=participant).values_list("question__key", "value")) == {
        AID_USE_KEY: "No", "confidence": "4"}


def on_after_page(study):
    arm = switch_on(study)
    arm.questionnaires.filter(placement="before").update(enabled=False)
    participant = start(study)
    services.participant_consent(participant=participant, agree=True)
    services.participant_instructions_done(participant=participant)
    services.participant_practice_done(participant=participant)
    answer_trials(participant)
    services.participant_finish(participant=fresh(participant))
    return fresh(participant)


def test_an_answer_is_saved_once_through_re_sends_and_a_change_replaces_it(open_study):
    study = open_study(attention_checks=[])
    participant = on_after_page(study)
    confidence = question(study, "confidence")
    first = questionnaires.answer_record(participant=participant, question_id=confidence.pk, value="2",
                                         idempotency_key="k1")
    again = questionnaires.answer_record(participant=participant, question_id=confidence.pk, value="2",
                                         idempotency_key="k1")
    assert first.created and not first.duplicate and again.duplicate and not again.created
    changed = questionnaires.answer_record(participant=participant, question_id=confidence.pk, value="5",
                                           idempotency_key="k2")
    late = questionnaires.answer_record(participant=participant, question_id=confidence.pk, value="5",
                                        idempotency_key="k2")
    assert changed.created and late.duplicate
    assert list(QuestionnaireAnswer.objects.filter(participant=participant).values_list("value", flat=True)) == ["5"]
    # an optional answer cleared is no answer
    comments = question(study, "comments")
    questionnaires.answer_record(participant=participant, question_id=comments.pk, value="fine", idempotency_key="k3")
    questionnaires.answer_record(participant=participant, question_id=comments.pk, value="  ", idempotency_key="k4")
    assert not QuestionnaireAnswer.objects.filter(participant=participant, question=comments).exists()


@pytest.mark.parametrize(("key", "value", "message"), [
    (AID_USE_KEY, "Sometimes", "choose one of the answers"),
    (AID_USE_KEY, "", "needs an answer"),
    ("confidence", "6", "1 to 5"),
    ("hours_sleep", "25", "from 0 to 24"),
    ("hours_sleep", "lots", "enter a number"),
    ("comments", "x" * 51, "at most 50 characters"),
])
def test_each_refusal_says_why_and_saves_nothing(open_study, key, value, message):
    study = open_study(attention_checks=[])
    participant = on_after_page(study)
    with pytest.raises(AnswerError, match=message):
        questionnaires.answer_record(participant=participant, question_id=question(study, key).pk, value=value,
                                     idempotency_key="k")
    assert not QuestionnaireAnswer.objects.filter(participant=participant).exists()


def test_a_question_not_on_the_current_page_is_refused(open_study):
    study = open_study(attention_checks=[])
    switch_on(study)
    participant = start(study)
    services.participant_consent(participant=participant, agree=True)
    with pytest.raises(FlowError, match="not open now"):  # the after page, while the before page is current
        questionnaires.answer_record(participant=fresh(participant), question_id=question(study, AID_USE_KEY).pk,
                                     value="No")
    other = start(open_study(attention_checks=[]), n=2)
    with pytest.raises(FlowError, match="not part of this study"):
        questionnaires.answer_record(participant=fresh(other), question_id=question(study, "age_band").pk, value="18–24")
    assert not QuestionnaireAnswer.objects.exists()


def test_a_completed_page_keeps_its_answers(open_study):
    study = open_study(attention_checks=[])
    participant = on_after_page(study)
    aid, confidence = question(study, AID_USE_KEY), question(study, "confidence")
    questionnaires.answer_record(participant=participant, question_id=aid.pk, value="Yes", idempotency_key="a")
    questionnaires.questionnaire_submit(participant=fresh(participant), questionnaire_id=aid.questionnaire_id,
                                        answers={confidence.pk: "3"})
    assert QuestionnaireCompletion.objects.filter(participant=participant).count() == 1
    assert questionnaires.answer_record(participant=fresh(participant), question_id=aid.pk, value="Yes",
                                        idempotency_key="a").duplicate  # a late re-send: fine, unchanged
    with pytest.raises(FlowError):
        questionnaires.answer_record(participant=fresh(participant), question_id=aid.pk, value="No",
                                     idempotency_key="b")
    assert QuestionnaireAnswer.objects.get(participant=participant, question=aid).value == "Yes"


# --- over HTTP -----------------------------------------------------------------------------------------

DESKTOP = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36"


def csrf(client):
    return client.cookies["csrftoken"].value


def test_the_pages_over_http_resume_with_answers_kept_and_refuse_with_messages(open_study):
    study = open_study(attention_checks=[])
    switch_on(study)
    client = Client(enforce_csrf_checks=True, HTTP_USER_AGENT=DESKTOP)
    response = client.get(f"/s/{study.slug}/", {"PROLIFIC_PID": "5f1a2b3c4d5e6f7a8b9c0d1e", "STUDY_ID": "st",
                                                "SESSION_ID": "sess-1"})
    session = response["Location"]
    client.get(session)
    client.post(session + "consent", {"agree": "yes", "csrfmiddlewaretoken": csrf(client)})
    page = client.get(session).content.decode()
    assert 'data-step="questions_before"' in page and "What is your age?" in page and "Prefer not to say" in page
    age = question(study, "age_band")
    body = {"question": age.pk, "value": "25–34", "idempotency_key": "abc"}
    sent = client.post(session + "answer", json.dumps(body), content_type="application/json",
                       HTTP_X_CSRFTOKEN=csrf(client))
    assert sent.status_code == 201
    resent = client.post(session + "answer", json.dumps(body), content_type="application/json",
                         HTTP_X_CSRFTOKEN=csrf(client))
    assert resent.status_code == 200 and resent.json()["duplicate"]
    bad = client.post(session + "answer", json.dumps({**body, "value": "200", "idempotency_key": "x"}),
                      content_type="application/json", HTTP_X_CSRFTOKEN=csrf(client))
    assert bad.status_code == 400 and "choose one of the answers" in bad.json()["error"]
    assert client.post(session + "answer", json.dumps(body), content_type="application/json").status_code == 403  # CSRF
    reloaded = client.get(session).content.decode()  # resumed: the saved answer is checked
    assert 'value="25–34" checked' in reloaded
    assert QuestionnaireAnswer.objects.get().value == "25–34"
    before = question(study, "first_language").questionnaire
    refused = client.post(session + "questionnaire", {"questionnaire": before.pk, f"q{age.pk}": "nonsense",
                                                      "csrfmiddlewaretoken": csrf(client)})
    assert refused.status_code == 400 and "choose one of the answers" in refused.content.decode()
    assert QuestionnaireAnswer.objects.get().value == "25–34"  # nothing saved
    done = client.post(session + "questionnaire", {"questionnaire": before.pk, f"q{age.pk}": "35–44",
                                                   "csrfmiddlewaretoken": csrf(client)})
    assert done.status_code == 302
    assert 'data-step="instructions"' in client.get(session).content.decode()
    assert QuestionnaireAnswer.objects.get().value == "35–44"
