"""Two participants of one study that takes keys, clicks and taps (HumanArm.answer_input "buttons_touch", issue 47
item 3), in a real headless Chromium: one on a desktop window answering with the F and J keys, one on a phone
(a Playwright context with is_mobile, has_touch and a 390 × 844 window, an iPhone's user agent) tapping the
on-screen buttons — the start button, a practice question, the go-on button and every trial. The study has its own
instructions, end page and debrief (item 1), which both read. The first answer of each is saved on the server
while its reply is lost on the way back, so the page sends it again: every answer must be stored once, with the
device and the channel it came by."""
from __future__ import annotations

from urllib.parse import urlsplit

import pytest

from experiments.models import AnswerInput, Participant, Trial
from tests.e2e.chromium import ARGS, CHROMIUM, COMPLETION, LAUNCH_MS, PAGE_MS, offline_guard, playwright_or_skip
from tests.experiments.participation.conftest import make_open_study

IPHONE = ("Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) "
          "Version/17.0 Mobile/15E148 Safari/604.1")
TRIALS = 4


def _lose_the_first_reply(dropped: list):
    """A route for the trial endpoint: the first answer reaches the server, its reply is dropped (a network
    failure as the browser sees it), so the page re-sends it; the rest go through."""

    def route(route):
        if route.request.method == "POST" and not dropped:
            response = route.fetch()  # saved on the server
            dropped.append(response.status)
            return route.abort("connectionreset")
        return route.continue_()

    return route


def _walk(page, entry: str, press) -> None:
    """Consent and instructions, each left with `press` (a click or a tap on the page's button)."""
    page.goto(entry)
    assert "scientific research project" in page.inner_text("#consent-text")
    press(page.locator("#agree"))
    assert "Your task, in our own words" in page.inner_text("#instructions-text")
    press(page.locator("#continue"))


def _armed_index(page) -> int:
    page.wait_for_selector("#stage[data-state=armed]")
    return int(page.get_attribute("#stage", "data-index"))


@pytest.mark.django_db(transaction=True)
def test_keys_on_a_desktop_and_taps_on_a_phone_are_each_saved_once_with_device_and_channel(live_server, monkeypatch):
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")  # Playwright's loop shares the test thread
    study = make_open_study(
        interpretations=6, items_per_participant=TRIALS, attention_checks=[], blank_ms=50,
        answer_input=AnswerInput.BUTTONS_TOUCH,
        instructions_text="Your task, in our own words: read {statements}, then answer {answer_how}.",
        end_text="Finished: thank you for your help.",
        debrief_text="This study compares how people and language models reason about possibility.",
        practice=[{"premises": ["Mia is painting a fence.", "Leo is washing a car."],
                   "question": "Can we infer that Mia is painting a fence?", "answer": "yes"}],
    )
    server = urlsplit(live_server.url).netloc
    external: list = []
    sync_playwright = playwright_or_skip()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=ARGS, timeout=LAUNCH_MS)
        desktop = browser.new_context(viewport={"width": 1280, "height": 800})
        phone = browser.new_context(viewport={"width": 390, "height": 844}, screen={"width": 390, "height": 844},
                                    is_mobile=True, has_touch=True, device_scale_factor=3, user_agent=IPHONE)
        dropped = {"desktop": [], "phone": []}
        for name, context in (("desktop", desktop), ("phone", phone)):
            context.route("**/*", offline_guard(server, external))
            context.route("**/trial", _lose_the_first_reply(dropped[name]))  # the later route is asked first

        # the desktop participant: keys only
        page = desktop.new_page()
        page.set_default_timeout(PAGE_MS)
        _walk(page, f"{live_server.url}/s/{study.slug}/?PROLIFIC_PID=e2edesk&STUDY_ID=st&SESSION_ID=sd", lambda b: b.click())
        page.wait_for_selector("#stage[data-state=intro]")
        assert page.locator("#reminder button.answer").count() == 2  # the buttons are there; keys answer too
        page.keyboard.press("KeyF")
        _armed_index(page)
        page.keyboard.press("KeyF")  # the practice question
        page.wait_for_selector("#feedback:not([hidden])")
        page.keyboard.press("KeyJ")  # go on
        page.wait_for_selector("#phase-note", state="detached")
        page.wait_for_selector("#stage[data-state=intro]")
        page.keyboard.press("KeyJ")
        desk_shown = []
        for key in ("KeyF", "KeyJ") * (TRIALS // 2):
            desk_shown.append(_armed_index(page))
            page.keyboard.press(key)
        page.wait_for_selector("#done:not([hidden])")
        page.wait_for_selector("#debrief")  # the debrief is read on the end page, not skipped by the redirect
        assert "Finished: thank you for your help." in page.inner_text("#ended")
        assert "reason about possibility" in page.inner_text("#debrief")
        page.click("#redirect")
        page.wait_for_url(COMPLETION)

        # the phone participant: taps only
        page = phone.new_page()
        page.set_default_timeout(PAGE_MS)
        _walk(page, f"{live_server.url}/s/{study.slug}/?PROLIFIC_PID=e2ephone&STUDY_ID=st&SESSION_ID=sp",
              lambda b: b.tap())
        page.wait_for_selector("#stage[data-state=intro]")
        assert page.evaluate("() => matchMedia('(pointer: coarse)').matches")  # the page sees a touch screen
        page.locator("#start-button").tap()
        _armed_index(page)
        page.locator("#answer-f").tap()  # the practice question
        page.wait_for_selector("#feedback:not([hidden])")
        page.locator("#go-on button.go").tap()
        page.wait_for_selector("#phase-note", state="detached")
        page.wait_for_selector("#stage[data-state=intro]")
        page.locator("#start-button").tap()
        phone_shown = []
        for button in ("#answer-j", "#answer-f") * (TRIALS // 2):
            phone_shown.append(_armed_index(page))
            page.locator(button).tap()
        page.wait_for_selector("#debrief")
        assert "reason about possibility" in page.inner_text("#debrief")
        browser.close()

    assert external == []
    assert dropped == {"desktop": [201], "phone": [201]}  # each first answer was saved, its reply lost, then re-sent
    assert desk_shown == phone_shown == list(range(TRIALS))
    for pid, device, channel, codes in (("e2edesk", "desktop", "key", ["KeyF", "KeyJ"]),
                                        ("e2ephone", "phone", "touch", ["KeyJ", "KeyF"])):
        participant = Participant.objects.get(prolific_pid=pid)
        assert participant.status == "completed"
        trials = list(Trial.objects.filter(participant=participant).order_by("index"))
        assert len(trials) == TRIALS == len({t.idempotency_key for t in trials})  # each answer once
        assert [t.index for t in trials] == list(range(TRIALS)) and [t.item_id for t in trials] == participant.plan
        assert {(t.device, t.answer_channel) for t in trials} == {(device, channel)}
        assert [t.key_code for t in trials] == codes * (TRIALS // 2)  # a button answers as its position's key
        mapping = {"f": "yes", "j": "no"} if participant.key_mapping == "f_yes" else {"f": "no", "j": "yes"}
        assert [t.answer for t in trials] == [mapping[t.key] for t in trials]
        assert all(t.rt_ms > 0 and t.correct == (t.answer == t.item.gold_answer) for t in trials)
    assert all(t.viewport_width == 390 for t in Trial.objects.filter(participant__prolific_pid="e2ephone"))
