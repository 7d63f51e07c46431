"""One participant completes a four-option study (seed 001) in a real headless Chromium, by keys.

Consent, the four-key instructions, a practice question with feedback, four trials answered with
D, F, J and K (options shown in the mutant's order, each led by its key), a reload mid-study, and the
completion redirect (intercepted). The database must then hold one trial per item shown, the letter
at the pressed key's position as the answer, correct = (letter = gold), one mutant per question.
"""
from __future__ import annotations

from urllib.parse import urlsplit

import pytest

from experiments.models import Item, Participant, Trial
from tests.e2e.chromium import COMPLETION, chromium, offline_guard, press_to_start
from tests.experiments.participation.test_multiple_choice_trials import make_mc_study

PRACTICE = [{"premises": ["Mia is painting a fence. Leo is washing a car."], "question": "Which is stated above?",
             "options": ["Mia is washing a car.", "Leo is painting a fence.", "Leo is washing a car.", "Mia is reading."],
             "answer": "C"}]


@pytest.mark.django_db(transaction=True)
def test_a_participant_completes_a_four_option_study_with_the_keys_in_chromium(live_server, monkeypatch):
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")  # Playwright's loop shares the test thread
    study = make_mc_study(questions=8, items_per_participant=4, attention_checks=[], blank_ms=50, practice=PRACTICE)
    server = urlsplit(live_server.url).netloc
    entry = f"{live_server.url}/s/{study.slug}/?PROLIFIC_PID=mc0000000000000000000001&STUDY_ID=st&SESSION_ID=se1"
    external = []

    guard = offline_guard(server, external)

    shown_options = []
    with chromium(guard, width=1280, height=800) as (_, _, page):
        console = []
        page.on("console", lambda message: console.append(f"{message.type}: {message.text}"))

        page.goto(entry)
        page.click("#agree")
        assert '"D" for A, "F" for B, "J" for C and "K" for D' in " ".join(page.inner_text("#instructions-text").split())
        page.click("#continue")

        def answer(code: str) -> int:
            try:
                page.wait_for_selector("#stage[data-state=armed]")
            except Exception as exc:
                raise AssertionError(f"no armed trial: {page.url}; console: {console}") from exc
            index = int(page.get_attribute("#stage", "data-index"))
            options = page.eval_on_selector_all("#options li", "els => els.map(e => [e.dataset.letter, "
                                                "e.querySelector('kbd').textContent, e.querySelector('span').textContent])")
            shown_options.append(options)
            assert page.is_visible("#option-reminder") and not page.is_visible("#reminder")
            page.keyboard.press("KeyA")  # not an option key: ignored
            page.keyboard.press(code)
            return index

        press_to_start(page, "KeyK")
        assert answer("KeyD") == 0  # practice: the right option is C (key J)
        page.wait_for_selector("#feedback:not([hidden])")
        assert page.inner_text("#feedback") == "Not quite: the answer is J (option C)."
        page.keyboard.press("KeyD")  # go on
        assert [o[1] for o in shown_options[0]] == ["D", "F", "J", "K"]
        assert [o[2] for o in shown_options[0]] == PRACTICE[0]["options"]
        page.wait_for_selector("#phase-note", state="detached")

        def confirmed() -> None:
            page.wait_for_function(
                "() => Object.keys(localStorage).some((k) => k.endsWith(':queue'))"
                " && Object.keys(localStorage).filter((k) => k.endsWith(':queue'))"
                ".every((k) => JSON.parse(localStorage.getItem(k)).length === 0)"
            )

        press_to_start(page, "KeyJ")
        indices = [answer("KeyD"), answer("KeyF")]
        confirmed()
        page.reload()  # resumes at the first unanswered trial
        press_to_start(page, "KeyD")
        indices += [answer("KeyJ"), answer("KeyK")]
        page.wait_for_url(COMPLETION)

    assert indices == [0, 1, 2, 3] and external == []
    participant = Participant.objects.get(prolific_pid="mc0000000000000000000001")
    assert participant.status == "completed"
    trials = list(Trial.objects.filter(participant=participant).order_by("index").select_related("item"))
    assert [t.item_id for t in trials] == participant.plan
    assert [t.key_code for t in trials] == ["KeyD", "KeyF", "KeyJ", "KeyK"]
    assert [t.answer for t in trials] == ["A", "B", "C", "D"]
    assert all(t.correct == (t.answer == t.item.gold_answer) and t.rt_ms > 0 for t in trials)
    assert len({t.item.pair_id for t in trials}) == 4  # one mutant per question
    items = Item.objects.in_bulk(participant.plan)
    trial_options = shown_options[1:]
    assert [[o[2] for o in shown] for shown in trial_options] == [items[pk].options for pk in participant.plan]
