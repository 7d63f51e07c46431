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

from tests.factories import review_consent

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
    review_consent(study)  # switching a questionnaire on adds its answers to the consent's list: reviewed again
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


def test_a_pilot_walks_its_bots_through_the_questionnaires(capsys):
    from django.core.management import call_command

    from tests.experiments.participation.test_pilot import draft_study

    study = draft_study()
    switch_on(study)
    call_command("simulate_participants", study.slug, "--n", "2", "--accuracy", "1", "--seed", "3")
    assert "2 simulated participants, 2 completed" in capsys.readouterr().out
    answers = QuestionnaireAnswer.objects.filter(participant__study=study)
    # the required questions answered (a valid answer each), the optional ones left blank
    assert sorted(answers.values_list("question__key", "value")) == [
        (AID_USE_KEY, "Yes"), (AID_USE_KEY, "Yes"), ("confidence", "3"), ("confidence", "3")]
    assert all(p.questions_before_done_at and p.questions_after_done_at
               for p in study.participants.all())


# --- the data files, the codebook and the report's frames ----------------------------------------------------

def completed_with_answers(study, n, aid, confidence):
    participant = start(study, n)
    services.participant_consent(participant=participant, agree=True)
    arm = type(study.human_arm).objects.get(pk=study.human_arm.pk)
    before = arm.questionnaires.get(placement="before")
    questionnaires.questionnaire_submit(participant=fresh(participant), questionnaire_id=before.pk,
                                        answers={question(study, "age_band").pk: "25–34"})
    services.participant_instructions_done(participant=participant)
    services.participant_practice_done(participant=participant)
    answer_trials(participant)
    services.participant_finish(participant=fresh(participant))
    after = arm.questionnaires.get(placement="after")
    questionnaires.questionnaire_submit(participant=fresh(participant), questionnaire_id=after.pk, answers={
        question(study, AID_USE_KEY).pk: aid, question(study, "confidence").pk: confidence})
    return fresh(participant)


def test_the_answers_file_has_a_row_per_participant_and_the_codebook_says_each_question(open_study, tmp_path):
    from analysis import codebook
    from experiments.participation import questionnaire_export
    from experiments.schema import pseudonym

    study = open_study(attention_checks=[])
    switch_on(study)
    a = completed_with_answers(study, 1, "No", "4")
    b = completed_with_answers(study, 2, PREFER_NOT, "2")
    header, rows = questionnaire_export.rows(study)
    assert header == ["participant", "age_band", "first_language", AID_USE_KEY, "confidence", "hours_sleep",
                      "comments"]
    assert rows == [[pseudonym(a.pk), "25–34", "", "No", "4", "", ""],
                    [pseudonym(b.pk), "25–34", "", PREFER_NOT, "2", "", ""]]
    frame, described = questionnaire_export.frame(study)
    assert str(frame["confidence"].dtype) == "Int64" and list(frame["confidence"]) == [4, 2]
    assert described[AID_USE_KEY][3] == f"Yes | No | {PREFER_NOT}"
    assert described["confidence"][0] == "integer" and described["confidence"][3] == "1 | 2 | 3 | 4 | 5"
    assert "1 = Not at all, 5 = Completely" in described["confidence"][2]
    assert "ChatGPT" in described[AID_USE_KEY][2] and "required" in described[AID_USE_KEY][2]
    (tmp_path / "data").mkdir()
    frame.to_csv(tmp_path / "data" / "questionnaire.csv", index=False)
    book = codebook.write_codebook(tmp_path, factors=(AID_USE_KEY,), described={"data/questionnaire.csv": described})
    rows = book[book["file"] == "data/questionnaire.csv"].set_index("column")
    assert list(rows.index) == header
    assert rows.loc["age_band", "allowed_values"].endswith(PREFER_NOT)
    assert "What is your age?" in rows.loc["age_band", "description"]
    assert "ChatGPT" in rows.loc[AID_USE_KEY, "description"]  # its own words, though it is a declared factor


def test_the_admin_exports_the_answers_and_lists_the_questionnaires(open_study, admin_client):
    study = open_study(attention_checks=[])
    switch_on(study)
    completed_with_answers(study, 1, "Yes", "5")
    from django.urls import reverse

    csv_text = b"".join(admin_client.get(reverse("admin:experiments_study_questionnaire_csv",
                                                 args=[study.pk])).streaming_content).decode()
    assert csv_text.splitlines()[0].startswith("participant,age_band,first_language,aid_use,confidence")
    assert ",Yes,5," in csv_text.splitlines()[1]
    page = admin_client.get(reverse("admin:experiments_study_change", args=[study.pk])).content.decode()
    assert "id='questionnaires'" in page and "About you" in page and "Add a questionnaire" in page
    edit = admin_client.get(reverse("admin:experiments_questionnaire_change",
                                    args=[study.human_arm.questionnaires.get(placement="after").pk]))
    assert edit.status_code == 200 and b"confidence" in edit.content


def test_a_participant_factor_is_declared_by_question_key_and_joined_into_the_peoples_frames(open_study):
    import pandas as pd

    from analysis import participant_factors
    from analysis.frames import trials_frame
    from analysis.sections import StudyFrames
    from experiments.factors import check_participant, participant_factors as declared
    from experiments.participation import questionnaire_export

    study = open_study(attention_checks=[])
    switch_on(study)
    completed_with_answers(study, 1, "Yes", "4")
    completed_with_answers(study, 2, "No", "2")
    study.settings = {"participant_factors": [AID_USE_KEY]}
    assert declared(study) == [AID_USE_KEY]
    with pytest.raises(ValueError, match="'comments' is not a multiple-choice or Likert question"):
        check_participant(["comments"], {"comments": "long_text", AID_USE_KEY: "choice"})
    # a key that is also a column of the study's items: the answers would replace it in the people's frames
    with pytest.raises(ValueError, match=r"'domain' is also a column of the study's items.*another key"):
        check_participant(["domain"], {"domain": "choice"}, {"domain", "topic"})
    # a study whose bank has such a column, declared before its items came: refused when the report reads it
    from experiments import services as study_services
    from experiments.models import Item

    other = study_services.study_create(slug="bank-with-aid-use", title="Bank", design="csv-import")
    Item.objects.create(study=other, code="b1", design="csv-import", gold_answer="yes", question="q", prompt="p",
                        attributes={AID_USE_KEY: "the item's own"})
    other.settings = {"participant_factors": [AID_USE_KEY]}
    with pytest.raises(ValueError, match=f"'{AID_USE_KEY}' is also a column of the study's items"):
        declared(other)
    trials = trials_frame(study)
    answers, _ = questionnaire_export.frame(study)
    kept = participant_factors.join(trials, answers, [AID_USE_KEY])
    assert len(kept) == len(trials) and set(kept[AID_USE_KEY]) == {"Yes", "No"}
    per_person = kept.groupby("participant")[AID_USE_KEY].nunique()
    assert (per_person == 1).all()
    frames = StudyFrames(scores=pd.DataFrame(), kept=kept)
    spec = participant_factors.spec(frames, AID_USE_KEY)
    data = spec.frame(frames)
    assert list(data.columns) == ["correct", AID_USE_KEY, "participant", "item"] and len(data) == len(trials)
    assert spec.formula == "correct ~ aid_use + (1 | participant) + (1 | item)"
    table = participant_factors.by_level(frames, AID_USE_KEY)
    assert dict(zip(table["level"], table["participants"])) == {"No": 1, "Yes": 1}


def test_the_trials_wait_for_the_questionnaire_before_them_on_either_save_path(open_study):
    """trial_submit: PostgreSQL's one-statement save (flow.trials_open_sql) and the locked path alike."""
    study = open_study(attention_checks=[], practice=[])
    switch_on(study)
    participant = start(study)
    services.participant_consent(participant=participant, agree=True)
    participant = fresh(participant)
    participant.instructions_done_at = participant.consented_at  # as if the pages were out of order
    participant.save(update_fields=["instructions_done_at"])
    payload = parse_trial(trial_data(participant, 0))
    with pytest.raises(FlowError, match="Trials start after"):
        trials.trial_submit(slug=study.slug, token=participant.token, payload=payload)
    before = study.human_arm.questionnaires.get(placement="before")
    questionnaires.questionnaire_submit(participant=fresh(participant), questionnaire_id=before.pk, answers={})
    assert trials.trial_submit(slug=study.slug, token=participant.token, payload=payload).created


def test_the_settings_editor_stores_participant_factors_by_question_key_and_refuses_others(open_study, admin_client):
    from django.urls import reverse

    from tests.admin_form import change_form

    study = open_study(attention_checks=[])
    switch_on(study)
    url, _, data = change_form(admin_client, reverse("admin:experiments_study_change", args=[study.pk]))
    assert data["participant_factors"] == ""
    data["participant_factors"] = "comments"  # a long-text question cannot be a factor
    response = admin_client.post(url, data)
    assert response.status_code == 200 and "not a multiple-choice or Likert question" in response.content.decode()
    study.refresh_from_db()
    assert "participant_factors" not in (study.settings or {})
    data["participant_factors"] = "aid_use confidence"
    assert admin_client.post(url, data).status_code == 302
    study.refresh_from_db()
    assert study.settings["participant_factors"] == [AID_USE_KEY, "confidence"]


def test_a_question_is_checked_when_saved_in_the_admin(open_study):
    from django.core.exceptions import ValidationError

    study = open_study(attention_checks=[])
    after = study.human_arm.questionnaires.get(placement="after")
    duplicate = Question(questionnaire=after, key="age_band", kind="short_text", text="Again?")
    with pytest.raises(ValidationError, match="Another questionnaire of this study has a question 'age_band'"):
        duplicate.full_clean()
    with pytest.raises(ValidationError, match="number of scale points from 2 to 11"):
        Question(questionnaire=after, key="scale", kind="likert", scale_points=12, text="How?").full_clean()
    with pytest.raises(ValidationError, match="at least two choices"):
        Question(questionnaire=after, key="pick", kind="choice", choices="Only one", text="Which?").full_clean()
    Question(questionnaire=after, key="fine", kind="likert", scale_points=7, text="How much?").full_clean()


def test_switching_a_questionnaire_on_adds_its_answers_to_the_consent_and_needs_a_new_review(open_study):
    from experiments.models import HumanArm
    from experiments.participation import consent

    study = open_study(attention_checks=[])
    arm = HumanArm.objects.get(study=study)
    assert consent.consent_problem(arm) is None
    assert consent.QUESTIONNAIRES not in {k.key for k in consent.consent_page(arm).data}
    arm.questionnaires.filter(placement="after").update(enabled=True)
    arm = HumanArm.objects.get(study=study)
    assert consent.QUESTIONNAIRES in {k.key for k in consent.consent_page(arm).data}
    assert "has changed since" in consent.consent_problem(arm)
    with pytest.raises(FlowError, match="not accepting participants"):
        start(study, n=5)
    review_consent(study)
    assert start(study, n=5).pk


def test_a_participants_answers_are_erased_with_the_participant(open_study):
    from django.contrib.auth import get_user_model

    from experiments.participation.erasure import participant_erase

    study = open_study(attention_checks=[])
    switch_on(study)
    person = completed_with_answers(study, 1, "No", "3")
    assert QuestionnaireAnswer.objects.filter(participant=person).count() == 3
    staff = get_user_model().objects.create_user("eraser", password="x-" * 8, is_staff=True)
    participant_erase(participant=person, by=staff)
    assert not QuestionnaireAnswer.objects.exists() and not QuestionnaireCompletion.objects.exists()


def test_the_questionnaires_are_locked_in_the_admin_once_the_study_has_responses(open_study, admin_client):
    from django.urls import reverse

    study = open_study(attention_checks=[])
    switch_on(study)
    after = study.human_arm.questionnaires.get(placement="after")
    url = reverse("admin:experiments_questionnaire_change", args=[after.pk])
    assert b'name="title"' in admin_client.get(url).content  # editable before any response
    completed_with_answers(study, 1, "No", "3")
    page = admin_client.get(url).content.decode()
    assert 'name="title"' not in page and 'name="questions-0-text"' not in page  # read-only now
    assert admin_client.post(reverse("admin:experiments_questionnaire_delete", args=[after.pk]),
                             {"post": "yes"}).status_code == 403
    assert Questionnaire.objects.filter(pk=after.pk).exists()
