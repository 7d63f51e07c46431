"""Issue 47 items 1 and 3: the researcher's texts (consent, instructions, debrief, end page) and the answer input
(keys; keys or clicks; keys, clicks or taps) on the human arm — checked as item wording is, shown by the flow,
covered by the consent review once the study opens — and the device and answer channel of every trial, checked
by the server, stored, exported and split by in the report. The browser side: tests/e2e/test_answer_input.py."""
from __future__ import annotations

import html
import json

import pandas as pd
import pytest
from django.core.exceptions import ValidationError
from django.test import Client

from analysis import answering
from analysis.services import report_provenance
from experiments import design_registry as registry
from experiments.design_registry import Wording, model_instruction_in
from experiments.models import AnswerInput, HumanArm, Participant, Trial
from experiments.participation import consent, overview, services, texts
from experiments.participation.payload import PayloadError, parse_trial
from experiments.participation.selectors import EXPORT_COLUMNS, trial_records, trials_for_export
from tests.admin_form import change_form

from .conftest import trial_data
from .test_views import DESKTOP, PHONE, entry, post_form, post_json

pytestmark = pytest.mark.django_db

INSTRUCTION = "Thanks for taking part. Answer yes or no ONLY."  # 003's model instruction, cased otherwise


# --- one check for item wording and the researcher's texts -----------------------------------------------------

@pytest.mark.db_independent
def test_the_models_answer_instruction_is_found_by_one_check_for_items_and_texts():
    assert model_instruction_in(INSTRUCTION).rstrip(".") == "Answer Yes or No only"  # RULEBREAKERS' or 003's
    assert model_instruction_in("Answer   True or False only") == "Answer True or False only."  # a design's own
    assert model_instruction_in("Thank you! Your answers help us study reasoning.") is None
    with pytest.raises(ValueError, match="must not read the model's answer instruction"):
        Wording(participant="Does it follow? answer yes or no only", model="Q: A:", answer_cue="A:", source="-")
    problems = texts.text_problems({"debrief_text": INSTRUCTION, "end_text": "Thank you!",
                                    "instructions_text": "Press {yes_key} for Yes; {nonsense}"})
    assert set(problems) == {"debrief_text", "instructions_text"}
    assert "model's answer instruction" in problems["debrief_text"] and "Answer Yes or No only" in problems["debrief_text"]
    assert "{nonsense}" in problems["instructions_text"] and "{yes_key}" in problems["instructions_text"]


def test_the_model_refuses_a_placeholder_the_flow_does_not_fill(open_study):
    arm = open_study().human_arm
    arm.end_text = "Thank you, {name}!"
    with pytest.raises(ValidationError) as refused:
        arm.full_clean()
    assert "end_text" in refused.value.message_dict and "{name}" in str(refused.value)


def _arm_page(client, study):
    return change_form(client, f"/admin/experiments/study/{study.pk}/change/")


def test_the_admin_refuses_a_text_with_the_models_instruction_and_saves_nothing(admin_client, open_study):
    study = open_study()
    url, _, data = _arm_page(admin_client, study)
    data.update({"human_arm-0-debrief_text": INSTRUCTION, "human_arm-0-instructions_text": "Go {fast}"})
    response = admin_client.post(url, data)
    assert response.status_code == 200  # the form again, with its errors
    page = html.unescape(response.content.decode())
    assert "Participants must not read a model's answer instruction" in page and "Answer Yes or No only" in page
    assert "Unknown placeholder {fast}" in page
    arm = HumanArm.objects.get(study=study)
    assert (arm.debrief_text, arm.instructions_text) == ("", "")  # nothing saved


def test_a_text_changed_after_opening_needs_a_new_review_before_anyone_new_starts(admin_client, open_study):
    study = open_study()
    assert consent.consent_problem(study.human_arm) is None
    url, page, data = _arm_page(admin_client, study)
    assert 'name="human_arm-0-answer_input"' in page and "You have completed this study" in page  # the preview
    data.update({"human_arm-0-debrief_text": "We study how people reason about possibility.",
                 "human_arm-0-end_text": "Done, thank you.", "human_arm-0-answer_input": "buttons_touch"})
    assert admin_client.post(url, data).status_code == 302
    arm = HumanArm.objects.get(study=study)
    assert (arm.debrief_text, arm.end_text, arm.answer_input) == (
        "We study how people reason about possibility.", "Done, thank you.", "buttons_touch")
    assert "has changed since" in consent.consent_problem(arm)  # frozen as reviewed: a new review is needed
    with pytest.raises(services.FlowError):
        services.participant_start(study=study, prolific_pid="new-after-change", prolific_session_id="s-new")
    consent.consent_review(arm=arm)
    assert consent.consent_problem(arm) is None
    services.participant_start(study=study, prolific_pid="new-after-review", prolific_session_id="s-rev")


@pytest.mark.parametrize("field, value", [("instructions_text", "Read {statements} carefully."),
                                          ("debrief_text", "About this study."), ("end_text", "Thanks."),
                                          ("answer_input", AnswerInput.KEYS_BUTTONS)])
def test_each_text_and_the_answer_input_are_in_the_reviewed_fingerprint(open_study, field, value):
    arm = open_study().human_arm
    reviewed = consent.consent_digest(arm)
    assert consent.texts_digest_part(arm) == []  # the defaults add nothing: the consent page's fingerprint alone
    before = getattr(arm, field)
    setattr(arm, field, value)
    assert consent.consent_digest(arm) != reviewed
    setattr(arm, field, before)
    assert consent.consent_digest(arm) == reviewed


# --- the flow shows the texts ------------------------------------------------------------------------------------

def _walk(client, study, pid, session, *, agree=True):
    response = entry(client, study, pid=pid, session=session)
    assert response.status_code == 302, response
    url = response["Location"]
    client.get(url)
    if agree:
        post_form(client, url + "consent", {"agree": "yes"})
    return url, Participant.objects.get(prolific_pid=pid)


def test_the_pages_show_the_researchers_texts_with_placeholders_filled(open_study):
    study = open_study(items_per_participant=4, attention_checks=[], practice=[],
                       instructions_text="You will see {statements}; {questions} in all. Yes is {yes_key}.",
                       debrief_text="This study compares people with language models.", end_text="All done!")
    consent.consent_review(arm=study.human_arm)
    browser = Client(enforce_csrf_checks=True, HTTP_USER_AGENT=DESKTOP)
    url, participant = _walk(browser, study, "texts-1", "s1")
    page = html.unescape(browser.get(url).content.decode())
    yes = "F" if participant.key_mapping == "f_yes" else "J"
    told = overview.session_overview(participant=participant, arm=study.human_arm).statements
    assert f"You will see {told}; 4 in all. Yes is {yes}." in page
    assert "Keep your fingers on the" in page and 'id="no-keyboard"' in page  # keys only: no buttons, no phones
    post_form(browser, url + "instructions")
    trials_page = browser.get(url).content.decode()
    config = json.loads(trials_page.split('id="runner-config" type="application/json">')[1].split("</script>")[0])
    assert (config["buttons"], config["end_text"], config["debrief"]) == (False, "All done!", True)
    assert 'class="answer"' not in trials_page
    for index in range(4):
        assert post_json(browser, url + "trial", trial_data(participant, index)).status_code == 201
    assert post_json(browser, url + "finish", {}).json()["status"] == "completed"
    ended = browser.get(url).content.decode()
    assert "All done!" in ended and "This study compares people with language models." in ended
    assert 'id="page-config"' not in ended  # no automatic redirect while a debrief is there to read
    assert 'id="redirect"' in ended  # the participant follows the link when done reading


def test_the_default_texts_are_the_pages_wording_before(open_study):
    study = open_study(items_per_participant=2, attention_checks=[], practice=[])
    browser = Client(enforce_csrf_checks=True, HTTP_USER_AGENT=DESKTOP)
    url, participant = _walk(browser, study, "texts-2", "s2")
    page = html.unescape(browser.get(url).content.decode())
    keys = '"F" for Yes, and "J" for No' if participant.key_mapping == "f_yes" else '"F" for No, and "J" for Yes'
    told = overview.session_overview(participant=participant, arm=study.human_arm)  # "two statements", or "a …"
    word = "statement" if told.single_statement else "statements"
    assert (f"In this study, you will be presented with {told.statements} followed by a question. Your task is to "
            f"answer either Yes or No to the question, based on the information provided in the {word}. Please "
            f"respond quickly and accurately by pressing {keys}.") in page


# --- the answer input: who may enter, what the server takes -----------------------------------------------------

def test_phones_are_turned_away_only_where_the_study_does_not_take_touch(open_study):
    keys_only = open_study(items_per_participant=2, attention_checks=[])
    phone = Client(enforce_csrf_checks=True, HTTP_USER_AGENT=PHONE)
    assert "incompatible" in entry(phone, keys_only, pid="phone-1", session="p1")["Location"]
    touch = open_study(items_per_participant=2, attention_checks=[], answer_input=AnswerInput.BUTTONS_TOUCH)
    url, participant = _walk(phone, touch, "phone-2", "p2", agree=False)
    consent_page = phone.get(url).content.decode()
    assert 'id="no-keyboard"' not in consent_page  # the page does not screen the phone out either
    post_form(phone, url + "no_keyboard")  # and a screen-out sent anyway changes nothing
    participant.refresh_from_db()
    assert participant.status == "started"
    post_form(phone, url + "consent", {"agree": "yes"})
    assert "Tap (or click) the Yes or No button" in html.unescape(phone.get(url).content.decode())
    post_form(phone, url + "instructions")
    trials_page = phone.get(url).content.decode()
    assert trials_page.count('class="answer"') == 2 and 'id="start-button"' in trials_page
    first = trials_page.index('data-letter="f"')
    assert first < trials_page.index('data-letter="j"')  # F's answer on the left, as the key order


def _channel(participant, index, channel, device="desktop", **extra):
    return {**trial_data(participant, index, **extra), "channel": channel, "device": device}


@pytest.mark.parametrize("mode, allowed", [(AnswerInput.KEYS, {"key"}), (AnswerInput.KEYS_BUTTONS, {"key", "click"}),
                                           (AnswerInput.BUTTONS_TOUCH, {"key", "click", "touch"})])
def test_the_server_takes_only_the_channels_the_study_allows_and_stores_channel_and_device(open_study, mode, allowed):
    study = open_study(items_per_participant=4, attention_checks=[], practice=[], answer_input=mode)
    browser = Client(enforce_csrf_checks=True, HTTP_USER_AGENT=DESKTOP)
    url, participant = _walk(browser, study, f"chan-{mode}", f"s-{mode}")
    post_form(browser, url + "instructions")
    index = 0
    for channel, device in (("key", "desktop"), ("click", "desktop"), ("touch", "phone")):
        body = _channel(participant, index, channel, device)
        response = post_json(browser, url + "trial", body)
        if channel in allowed:
            assert response.status_code == 201, response.content
            again = post_json(browser, url + "trial", body)  # a re-send: the same row, never a second
            assert again.status_code == 200 and again.json()["duplicate"]
            index += 1
        else:
            assert response.status_code == 400 and response.json()["final"]
            assert f"an answer by {channel} is refused" in response.json()["error"]
    stored = list(Trial.objects.filter(participant=participant).order_by("index")
                  .values_list("answer_channel", "device"))
    expected = [(c, d) for c, d in (("key", "desktop"), ("click", "desktop"), ("touch", "phone")) if c in allowed]
    assert stored == expected
    rows = [dict(zip(EXPORT_COLUMNS, row)) for row in trial_records(trials_for_export(study=study))]
    assert [(row["answer_channel"], row["device"]) for row in rows] == expected  # the data files' columns


@pytest.mark.db_independent
@pytest.mark.parametrize("change, message", [
    ({"channel": "voice"}, "'channel' must be one of key, click, touch"),
    ({"device": "watch"}, "'device' must be one of desktop, phone, tablet"),
    ({"timed_out": True, "key": "", "code": "", "channel": "key"}, "A timed-out trial has no answer channel"),
])
def test_unknown_channels_and_devices_are_refused(change, message):
    body = {"index": 0, "item": 1, "code": "KeyF", "key": "f", "idempotency_key": "k" * 16, "onset_ms": 1.0,
            "response_ms": 2.0, "timed_out": False, **change}
    with pytest.raises(PayloadError, match=message):
        parse_trial(body)
    assert parse_trial({**body, **{k: v for k, v in change.items() if k in ("timed_out", "key", "code")},
                        "channel": "" if change.get("timed_out") else "key", "device": ""}).device == ""


# --- the report: what went in, and the split --------------------------------------------------------------------

@pytest.mark.db_independent
def test_the_report_splits_peoples_answers_by_device_and_channel():
    kept = pd.DataFrame({
        "participant": ["P1", "P1", "P2", "P2", "P2"], "device": ["desktop", "desktop", "phone", "phone", "phone"],
        "answer_channel": ["key", "key", "touch", "touch", ""], "correct": [1, 0, 1, 1, 0],
        "rt_ms": [500.0, 700.0, 900.0, 1100.0, 3000.0], "timed_out": [False, False, False, False, True],
        "is_attention_check": [False, False, False, False, False],
    })
    table = answering.table(kept)
    assert list(table.columns) == list(answering.GLOSSARY)
    rows = {(r.device, r.answer_channel): r for r in table.itertuples()}
    assert rows[("desktop", "key")].trials == 2 and rows[("desktop", "key")].proportion_correct == 0.5
    assert rows[("phone", "touch")].median_rt_ms == 1000.0 and rows[("phone", "timed out")].trials == 1


def test_the_reports_provenance_lists_the_texts_participants_read(open_study):
    study = open_study(debrief_text="About this study.", answer_input=AnswerInput.KEYS_BUTTONS)
    written = report_provenance(study=study, run_ids=[])["study"]["participant_texts"]
    assert written["debrief"] == "About this study." and written["answer_input"] == "keys_buttons"
    assert written["end"] == "You have completed this study. Thank you!" and "{answer_how}" in written["instructions"]
    assert registry.GENERIC_INSTRUCTION not in json.dumps(written)


@pytest.mark.db_independent
@pytest.mark.parametrize("mode, said", [
    (AnswerInput.KEYS, 'by pressing "F" for No, and "J" for Yes'),
    (AnswerInput.KEYS_BUTTONS, 'by pressing "F" for No, and "J" for Yes, or by clicking the Yes or No button on the '
                               "screen"),
    (AnswerInput.BUTTONS_TOUCH, 'by tapping or clicking the Yes or No button on the screen (or, on a keyboard, by '
                                'pressing "F" for No, and "J" for Yes)'),
])
def test_answer_how_says_the_participants_own_keys_and_the_studys_input(mode, said):
    arm = HumanArm(answer_input=mode)
    assert texts.answer_how(arm, {"f": "no", "j": "yes"}) == said
    four = [{"letter": x, "label": k} for x, k in zip("ABCD", "DFJK")]
    assert texts.answer_how(arm, {"f": "no", "j": "yes"}, four) == 'by pressing "D" for A, "F" for B, "J" for C and "K" for D'
