"""Four-option trials (seed 001) in the participant flow: lists over mutants, keys, answers, the page."""
from __future__ import annotations

import json
from collections import Counter

import pytest
from django.core.exceptions import ValidationError
from django.test import Client

from designs.multiple_choice import items as mc_items
from experiments.models import Item, Participant, StudyStatus, Trial
from experiments.participation import trials
from experiments.participation import services
from experiments.participation.payload import PayloadError, parse_trial
from experiments.services import study_transition
from tests.factories import StudyFactory, review_consent

from .conftest import trial_data

pytestmark = pytest.mark.django_db

DESKTOP = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36"


def mc_bank(questions: int) -> str:
    rows = [f'q{n:02d},"Mia{n} is painting a fence or Leo{n} is washing a car. Mia{n} isn\'t painting a fence.",'
            f'Which conclusion follows?,Leo{n} is washing a car.,Leo{n} is reading.,Mia{n} is painting a fence.,'
            f'Mia{n} is reading.,{"ABCD"[n % 4]},{("3e1c", "3c1e", "missing")[n % 3]}' for n in range(questions)]
    return "id,context,question,option_a,option_b,option_c,option_d,answer,type\n" + "\n".join(rows) + "\n"


def make_mc_study(*, questions: int = 8, keys: str | None = None, all_mutants: bool | None = None, **arm_settings):
    """An open multiple-choice study: `questions` questions, four mutants each."""
    settings = {}
    if keys is not None:
        settings["keys"] = keys
    if all_mutants is not None:
        settings["all_mutants"] = all_mutants
    study = StudyFactory(design="multiple-choice", settings={"multiple_choice": settings} if settings else {})
    mc_items.items_import_multiple_choice(study=study, data=mc_bank(questions))
    arm = services.human_arm_ensure(study=study)
    values = {"items_per_participant": 8, "completion_code": "C0MPLETE", **arm_settings}
    for name, value in values.items():
        setattr(arm, name, value)
    arm.full_clean()
    arm.save()
    review_consent(study)
    study_transition(study=study, to=StudyStatus.OPEN)
    study.refresh_from_db()
    return study


def _start(study, n):
    """A participant who arrives and agrees (only consented participants count for the balance)."""
    participant, _ = services.participant_start(study=study, prolific_pid=f"pid{n:04d}", prolific_session_id=f"s{n}")
    return services.participant_consent(participant=participant, agree=True)


def _items(participant):
    items = Item.objects.in_bulk(participant.plan)
    return [items[pk] for pk in participant.plan if items[pk].design != "attention-check"]


def test_each_participant_sees_one_mutant_per_question_and_rotations_are_balanced():
    study = make_mc_study(questions=8, attention_checks=[])
    seen: Counter = Counter()
    for n in range(4):
        items = _items(_start(study, n))
        assert len(items) == 8 and len({i.pair_id for i in items}) == 8  # no question twice
        assert Counter(i.pair_role for i in items) == {"rot0": 2, "rot1": 2, "rot2": 2, "rot3": 2}
        seen.update(i.code for i in items)
    assert len(seen) == 32 and set(seen.values()) == {1}  # four participants: every mutant exactly once


def test_a_study_can_ask_for_every_mutant_of_each_question():
    study = make_mc_study(questions=8, all_mutants=True, attention_checks=[])
    first, second = _items(_start(study, 0)), _items(_start(study, 1))
    assert Counter(i.pair_id for i in first) == {"q00": 4, "q01": 4}
    assert Counter(i.pair_id for i in second) == {"q02": 4, "q03": 4}
    arm = study.human_arm
    arm.items_per_participant = 6
    arm.save()
    with pytest.raises(services.FlowError, match="must be a multiple of 4"):
        _start(study, 2)


def test_bad_settings_are_refused_with_a_clear_message():
    with pytest.raises(ValidationError, match="cannot open. Participants' lists cannot be drawn: The four-option keys"):
        make_mc_study(keys="asdf")
    study = make_mc_study()  # settings spoiled after opening: the participant is refused, nothing stored
    study.settings = {"multiple_choice": {"keys": "asdf"}}
    study.save()
    with pytest.raises(services.FlowError, match="keys must be one of dfjk, 1234"):
        _start(study, 0)


def _ready(participant):
    participant.consented_at = participant.instructions_done_at = participant.practice_done_at = participant.started_at
    participant.save()
    return participant


def test_the_pressed_position_is_the_answer_letter_and_correct_is_letter_equals_gold():
    study = make_mc_study(questions=8, attention_checks=[])
    participant = _ready(_start(study, 0))
    keys = services.choice.accepted_keys(study)
    assert keys == {"KeyF": "f", "KeyJ": "j", "KeyD": "d", "KeyK": "k"}
    for index, code in enumerate(["KeyD", "KeyF", "KeyJ", "KeyK"]):
        payload = parse_trial(trial_data(participant, index, code=code)).for_arm(time_limit_ms=None, keys=keys)
        trial = trials.trial_record(participant=participant, payload=payload).trial
        assert trial.answer == "ABCD"[index] and trial.key_code == code
        assert trial.correct == (trial.answer == trial.item.gold_answer)
    with pytest.raises(PayloadError, match="Only the F, J, D or K keys"):
        parse_trial(trial_data(participant, 4, code="KeyA")).for_arm(time_limit_ms=None, keys=keys)


def test_digit_keys_and_a_yes_no_attention_check_in_a_four_option_study():
    checks = [{"premises": ["Anna is reading a book."], "question": "Can we infer that Anna is reading a book?",
               "answer": "yes"}]
    study = make_mc_study(questions=8, keys="1234", attention_checks=checks)
    participant = _ready(_start(study, 0))
    keys = services.choice.accepted_keys(study)
    items = Item.objects.in_bulk(participant.plan)
    for index, pk in enumerate(participant.plan):
        item = items[pk]
        if item.design == "attention-check":
            assert item.kind == "yes_no"
            with pytest.raises(PayloadError, match="answered with the F and J keys"):
                trials.trial_record(participant=participant,
                                      payload=parse_trial(trial_data(participant, index, code="Digit1")).for_arm(time_limit_ms=None, keys=keys))
            yes = "KeyF" if participant.key_mapping == "f_yes" else "KeyJ"
            trial = trials.trial_record(participant=participant,
                                          payload=parse_trial(trial_data(participant, index, code=yes)).for_arm(time_limit_ms=None, keys=keys)).trial
            assert trial.answer == "yes" and trial.correct and trial.is_attention_check
        else:
            with pytest.raises(PayloadError, match="keys 1, 2, 3, 4"):
                trials.trial_record(participant=participant,
                                      payload=parse_trial(trial_data(participant, index, code="KeyF")).for_arm(time_limit_ms=None, keys=keys))
            payload = parse_trial(trial_data(participant, index, code="Digit3")).for_arm(time_limit_ms=None, keys=keys)
            assert trials.trial_record(participant=participant, payload=payload).trial.answer == "C"
    assert Trial.objects.filter(participant=participant).count() == len(participant.plan)


def test_four_option_attention_checks_become_four_option_items():
    study = make_mc_study(questions=8)  # the import gave the arm four-option practice and checks
    participant = _start(study, 0)
    checks = Item.objects.filter(pk__in=participant.plan, design="attention-check")
    assert checks.count() == 2 and all(c.kind == "multiple_choice" and len(c.options) == 4 for c in checks)


def test_the_page_gets_the_options_in_the_mutants_order_and_the_keys_and_a_key_press_saves_the_letter():
    study = make_mc_study(questions=8, attention_checks=[], practice=[])
    client = Client(enforce_csrf_checks=True, HTTP_USER_AGENT=DESKTOP)
    url = client.get(f"/s/{study.slug}/", {"PROLIFIC_PID": "abc123", "STUDY_ID": "st", "SESSION_ID": "se"})["Location"]
    client.get(url)
    csrf = client.cookies["csrftoken"].value
    client.post(url + "consent", {"agree": "yes", "csrfmiddlewaretoken": csrf})
    page = client.get(url).content.decode()
    assert 'id="instructions-text"' in page and '"D" for A, "F" for B, "J" for C and "K" for D' in page
    client.post(url + "instructions", {"csrfmiddlewaretoken": csrf})
    page = client.get(url)
    config = json.loads(page.content.decode().split('id="runner-config" type="application/json">')[1].split("</script>")[0])
    participant = Participant.objects.get(prolific_pid="abc123")
    first = Item.objects.get(pk=participant.plan[0])
    assert config["trials"][0]["options"] == first.options and config["trials"][0]["kind"] == "multiple_choice"
    assert [k["label"] for k in config["option_keys"]] == ["D", "F", "J", "K"]
    assert 'id="options"' in page.content.decode() and 'id="option-reminder"' in page.content.decode()
    body = trial_data(participant, 0, code="KeyK")
    response = client.post(url + "trial", json.dumps(body), content_type="application/json", HTTP_X_CSRFTOKEN=csrf)
    assert response.status_code == 201
    trial = Trial.objects.get(participant=participant, index=0)
    assert trial.answer == "D" and trial.correct == (first.gold_answer == "D")
    bad = trial_data(participant, 1, code="Digit1")
    response = client.post(url + "trial", json.dumps(bad), content_type="application/json", HTTP_X_CSRFTOKEN=csrf)
    assert response.status_code == 400 and "Only the F, J, D or K keys" in response.json()["error"]


def test_settings_broken_after_the_start_refuse_a_trial_with_a_message_not_a_crash():
    study = make_mc_study(questions=8, attention_checks=[])
    participant = _ready(_start(study, 0))
    study.settings = {"multiple_choice": {"keys": "qwer"}}
    study.save()
    with pytest.raises(PayloadError, match="not set up correctly: The four-option keys must be one of"):
        parse_trial(trial_data(participant, 0, code="KeyD")).for_arm(time_limit_ms=None, keys=services.choice.accepted_keys(study))


def test_too_long_lists_are_refused_in_the_multiple_choice_designs_own_words():
    """Issue 37 item 5: a four-option (LogiQA) study is told about its questions and their circular
    orders, never 003's interpretations and forms."""
    with pytest.raises(ValidationError) as refused:
        make_mc_study(questions=4, items_per_participant=8)
    message = " ".join(refused.value.messages)
    assert ("Items per participant (8) exceeds the 4 questions that have an item for every one of the 4 circular "
            "orders of its options; a question may not repeat within a participant.") in message, message
    assert "interpretation" not in message and " forms" not in message
