"""One participant, end to end, in a real headless Chromium (Debian's /usr/bin/chromium via Playwright).

Consent, instructions, the start screen, a practice question, the start screen of the real questions,
six trials answered by key, a reload mid-study (back to a start screen), one trial answered while
offline, completion and the Prolific redirect (intercepted: nothing leaves the machine). Then the database must hold exactly one trial per item shown, all with positive response
times, and — this participant being in the reversed-mapping group — F must have meant No.
"""
from __future__ import annotations

from urllib.parse import urlsplit

import pytest

from experiments.models import KeyMapping, Participant, Trial
from experiments.participation import services
from tests.e2e.chromium import COMPLETION, chromium, offline_guard, press_to_start
from tests.experiments.participation.conftest import make_open_study


@pytest.mark.django_db(transaction=True)
def test_a_participant_completes_the_study_in_chromium(live_server, monkeypatch):
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")  # Playwright's loop shares the test thread
    study = make_open_study(
        interpretations=6, items_per_participant=6, attention_checks=[], blank_ms=50,
        practice=[{"premises": ["Mia is painting a fence.", "Leo is washing a car."],
                   "question": "Can we infer that Mia is painting a fence?", "answer": "yes"}],
    )
    earlier, _ = services.participant_start(study=study, prolific_pid="earlier", prolific_session_id="s0")
    services.participant_consent(participant=earlier, agree=True)  # a consented participant counts for the balance
    Participant.objects.filter(pk=earlier.pk).update(key_mapping=KeyMapping.F_YES)  # so ours gets J = Yes
    server = urlsplit(live_server.url).netloc
    entry = f"{live_server.url}/s/{study.slug}/?PROLIFIC_PID=e2e0000000000000000000a1&STUDY_ID=st&SESSION_ID=se1"
    external = []

    guard = offline_guard(server, external)

    with chromium(guard, width=1280, height=800) as (_, context, page):
        page.goto(entry)
        assert "scientific research project" in page.inner_text("#consent-text")
        page.click("#agree")
        assert '"F" for No' in page.inner_text("#instructions-text")
        page.click("#continue")

        console = []
        page.on("console", lambda message: console.append(f"{message.type}: {message.text}"))

        def answer(key: str) -> int:
            try:
                page.wait_for_selector("#stage[data-state=armed]")
            except Exception as exc:  # say where the page was, not only that it timed out
                state = page.evaluate(
                    "() => [location.href, document.getElementById('stage')?.outerHTML.slice(0, 300),"
                    " document.getElementById('problem')?.textContent]"
                )
                raise AssertionError(f"no armed trial: {state}; console: {console}") from exc
            index = int(page.get_attribute("#stage", "data-index"))
            page.keyboard.press("KeyK")  # ignored: not an answer key
            page.keyboard.press(key)
            return index

        assert "practice question" in press_to_start(page)
        assert answer("KeyF") == 0  # the practice question
        page.wait_for_selector("#feedback:not([hidden])")
        assert "Not quite" in page.inner_text("#feedback")  # F means No here
        assert page.is_visible("#question")  # the feedback keeps the question on screen
        page.keyboard.press("KeyJ")  # go on
        page.wait_for_selector("#phase-note", state="detached")  # the practice page is gone
        assert "The real questions start now" in press_to_start(page, "KeyJ")

        def unconfirmed() -> int:  # answers the browser still holds in localStorage
            return page.evaluate(
                "() => Object.keys(localStorage).filter((k) => k.endsWith(':queue'))"
                ".reduce((n, k) => n + JSON.parse(localStorage.getItem(k)).length, 0)"
            )

        def confirmed() -> None:  # wait until the server has confirmed every answer given so far
            page.wait_for_function(
                "() => Object.keys(localStorage).some((k) => k.endsWith(':queue'))"
                " && Object.keys(localStorage).filter((k) => k.endsWith(':queue'))"
                ".every((k) => JSON.parse(localStorage.getItem(k)).length === 0)"
            )

        shown = [answer("KeyF"), answer("KeyJ")]
        confirmed()  # SQLite's in-memory test database cannot serve a page while another thread writes
        page.reload()  # resumes at the first unanswered trial, after a start screen
        assert "Welcome back: 2 of 6" in press_to_start(page)
        shown.append(answer("KeyF"))
        confirmed()
        context.set_offline(True)
        shown.append(answer("KeyJ"))
        page.wait_for_selector("#connection:not([hidden])")  # the participant is told
        assert unconfirmed() == 1  # the offline answer waits in localStorage
        context.set_offline(False)
        page.wait_for_selector("#connection", state="hidden")
        assert unconfirmed() == 0
        shown += [answer("KeyF"), answer("KeyJ")]
        page.wait_for_selector("#done:not([hidden])")  # the completion screen: no "F = Yes / J = No" on it
        assert page.locator("#reminder").is_hidden()
        page.wait_for_url(COMPLETION)

    assert shown == [0, 1, 2, 3, 4, 5]
    assert external == []
    participant = Participant.objects.get(prolific_pid="e2e0000000000000000000a1")
    assert participant.status == "completed" and participant.key_mapping == KeyMapping.J_YES
    trials = list(Trial.objects.filter(participant=participant).order_by("index"))
    assert [t.index for t in trials] == list(range(6))
    assert [t.item_id for t in trials] == participant.plan
    assert all(t.rt_ms > 0 and t.client_response_ms > t.client_onset_ms for t in trials)
    assert [t.key_code for t in trials] == ["KeyF", "KeyJ"] * 3
    assert [t.answer for t in trials] == ["no", "yes"] * 3
    assert all(t.correct == (t.answer == t.item.gold_answer) for t in trials)
    assert all("Chrome" in t.user_agent and t.viewport_width == 1280 for t in trials)
