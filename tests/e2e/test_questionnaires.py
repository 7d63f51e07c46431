"""Questionnaires in a real headless Chromium (issue 47 item 2): a participant answers the demographics page
(each answer saved as it is given; a reload keeps them), the items, and the page after them — the aid-use
question and a Likert item — where a number out of range and a missing required answer are refused with a
message and nothing saved; then the completion code. Each answer is stored once."""
from __future__ import annotations

from urllib.parse import urlsplit

import pytest

from experiments.models import Participant, Question, QuestionnaireAnswer, Trial
from logic.questions import AID_USE_KEY
from tests.factories import review_consent
from tests.e2e.chromium import COMPLETION, chromium, offline_guard, press_to_start
from tests.experiments.participation.conftest import make_open_study


RESPONSES: list[str] = []  # the answer endpoint's replies, for a failure's message


def saved(page, key: str) -> None:
    try:
        page.wait_for_selector(f"#question-{key}[data-saved=yes]")
    except Exception as error:  # say what the server answered
        raise AssertionError(f"answer {key} not saved; the answer endpoint replied: {RESPONSES}") from error


@pytest.mark.django_db(transaction=True)
def test_a_participant_answers_the_questionnaires_before_and_after_the_items(live_server, monkeypatch):
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    study = make_open_study(interpretations=6, items_per_participant=3, blank_ms=50, attention_checks=[], practice=[])
    arm = study.human_arm
    arm.questionnaires.update(enabled=True)  # the defaults, switched on, and a Likert item and a number added
    after = arm.questionnaires.get(placement="after")
    Question.objects.create(questionnaire=after, position=1, key="confidence", kind="likert", scale_points=5,
                            scale_low_label="Not at all", scale_high_label="Completely", required=True,
                            text="How confident are you in your answers?")
    Question.objects.create(questionnaire=after, position=2, key="hours_sleep", kind="number", number_min=0,
                            number_max=24, text="How many hours did you sleep last night?")
    review_consent(study)  # the consent now lists the questionnaires' answers: reviewed again
    server = urlsplit(live_server.url).netloc
    external: list[str] = []
    answers_sent: list[str] = []

    def route(request_route):
        if request_route.request.url.endswith("/answer"):
            answers_sent.append(request_route.request.post_data_json["idempotency_key"])
        return offline_guard(server, external)(request_route)

    with chromium(route, width=1280, height=800) as (_, _, page):
        page.on("response", lambda r: RESPONSES.append(f"{r.status} {r.text()[:200]}") if r.url.endswith("/answer")
                else None)
        page.goto(f"{live_server.url}/s/{study.slug}/?STUDY_ID=st&PROLIFIC_PID=quest00000000000000000a1&SESSION_ID=q1")
        page.click("#agree")
        page.wait_for_selector("body[data-step=questions_before] #questionnaire[data-ready=yes]")
        assert "Prefer not to say" in page.inner_text("#question-age_band")
        page.check("#question-age_band input[value='25–34']")
        saved(page, "age_band")
        page.reload()  # resumed: the answer given is kept
        page.wait_for_selector("#questionnaire[data-ready=yes]")
        assert page.is_checked("#question-age_band input[value='25–34']")
        page.check("#question-first_language input[value='No']")
        saved(page, "first_language")
        page.click("#continue")
        page.wait_for_selector("body[data-step=instructions]")
        page.click("#continue")
        press_to_start(page)
        for _ in range(3):
            page.wait_for_selector("#stage[data-state=armed]")
            page.keyboard.press("KeyF")
        page.wait_for_selector("body[data-step=questions_after] #questionnaire[data-ready=yes]")  # after the items
        assert "ChatGPT" in page.inner_text("#question-aid_use")
        page.fill("#question-hours_sleep input", "25")
        page.keyboard.press("Tab")  # the answer is sent when given: refused, with the reason at the question
        page.wait_for_selector("#question-hours_sleep .answer-error:not([hidden])")
        assert "from 0 to 24" in page.inner_text("#question-hours_sleep .answer-error")
        page.click("#continue")  # the required questions unanswered: the page again, nothing saved
        page.wait_for_selector("#problem")
        page.wait_for_selector("#questionnaire[data-ready=yes]")
        assert "needs an answer" in page.inner_text("#question-aid_use .answer-error")
        assert "needs an answer" in page.inner_text("#question-confidence .answer-error")
        page.check("#question-aid_use input[value='No']")
        saved(page, AID_USE_KEY)
        page.check("#question-confidence input[value='4']")
        saved(page, "confidence")
        page.fill("#question-hours_sleep input", "7")
        page.keyboard.press("Tab")
        saved(page, "hours_sleep")
        page.click("#continue")
        page.wait_for_url(COMPLETION)

    person = Participant.objects.get()
    assert person.status == "completed" and external == []
    assert sorted(Trial.objects.filter(participant=person).values_list("index", flat=True)) == [0, 1, 2]
    stored = dict(QuestionnaireAnswer.objects.filter(participant=person).values_list("question__key", "value"))
    assert stored == {"age_band": "25–34", "first_language": "No", AID_USE_KEY: "No", "confidence": "4",
                      "hours_sleep": "7"}
    assert QuestionnaireAnswer.objects.count() == 5  # each answer once
    assert len(answers_sent) >= 5
