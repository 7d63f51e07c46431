"""The participant page as people on Prolific meet it (issue 16), in a real headless Chromium.

Practice (the design's default set, feedback under the question) → the start screen "The real
questions start now", left by a key press → the trials with the progress line advancing "1 of 4",
"2 of 4", … → completion. And the decline path: the page tells the participant to return the study
on Prolific and offers the no-consent code.
"""
from __future__ import annotations

from urllib.parse import urlsplit

import pytest

from experiments.models import Participant, ParticipantStatus
from experiments.participation.practice import default_for
from tests.e2e.chromium import COMPLETION, chromium, offline_guard, press_to_start
from tests.experiments.participation.conftest import make_open_study


@pytest.mark.django_db(transaction=True)
def test_practice_start_screen_progress_and_the_decline_page_in_chromium(live_server, monkeypatch):
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")  # Playwright's loop shares the test thread
    study = make_open_study(interpretations=6, items_per_participant=3, blank_ms=50,
                            attention_checks=[{"premises": ["Anna is reading a book.", "Tom is baking bread."],
                                               "question": "Can we infer that Anna is reading a book?", "answer": "yes"}])
    practice = study.human_arm.practice
    assert practice == default_for("modal-syllogisms")  # the design's own practice: no tested form
    server = urlsplit(live_server.url).netloc
    link = f"{live_server.url}/s/{study.slug}/?STUDY_ID=st&PROLIFIC_PID="
    external = []

    with chromium(offline_guard(server, external), width=1280, height=800) as (_, _, page):

        page.goto(link + "page0000000000000000000a1&SESSION_ID=se1")
        assert page.inner_text("#consent-duration").startswith("The study takes about ")
        page.click("#agree")
        length = " ".join(page.inner_text("#instructions-length").split())
        assert length.startswith("First come 2 practice questions with feedback") and "there are 4 questions" in length
        page.click("#continue")

        def armed() -> tuple[int, str]:
            page.wait_for_selector("#stage[data-state=armed]")
            return int(page.get_attribute("#stage", "data-index")), page.inner_text("#progress")

        assert "2 practice questions" in press_to_start(page)
        for n, question in enumerate(practice):
            assert armed() == (n, f"Practice {n + 1} of 2")
            assert page.inner_text("#question") == question["question"]
            page.keyboard.press("KeyF")
            page.wait_for_selector("#stage[data-state=feedback]")
            assert page.is_visible("#feedback") and page.is_visible("#go-on")
            assert page.inner_text("#question") == question["question"]  # still on screen under the feedback
            page.keyboard.press("KeyJ")

        assert "The real questions start now: 4 questions" in press_to_start(page)
        seen = []
        for _ in range(4):
            index, line = armed()
            seen.append(line)
            page.keyboard.press("KeyF")
        page.wait_for_url(COMPLETION)
        assert seen == ["1 of 4", "2 of 4", "3 of 4", "4 of 4"]

        page.goto(link + "page0000000000000000000b2&SESSION_ID=se2")
        page.click("#decline")
        page.wait_for_selector("#return-instruction")
        assert "return the study on Prolific" in page.inner_text("#return-instruction")
        assert page.inner_text("#code") == "NOCONSENT"
        assert page.get_attribute("#redirect", "href").endswith("cc=NOCONSENT")
        page.wait_for_timeout(4000)  # no automatic jump: the participant reads the instruction first
        assert page.url.startswith(live_server.url)

    assert external == []
    statuses = dict(Participant.objects.values_list("prolific_pid", "status"))
    assert statuses == {"page0000000000000000000a1": ParticipantStatus.COMPLETED,
                        "page0000000000000000000b2": ParticipantStatus.NO_CONSENT}


@pytest.mark.django_db(transaction=True)
def test_a_tablet_that_says_it_is_a_desktop_is_caught_by_the_page_and_its_session_ends_returned(live_server,
                                                                                                 monkeypatch):
    """iPadOS's browser sends a desktop user agent, so the entry lets it in; the consent page's own check (a
    coarse pointer and no fine one) sends the no-keyboard form: the participant sees the page that asks for a
    keyboard, with the code, and the session ends as returned (it stayed "in progress" before)."""
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    study = make_open_study(interpretations=6, items_per_participant=3)
    server = urlsplit(live_server.url).netloc
    desktop = ("Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) "
               "Version/17.0 Safari/605.1.15")
    external = []
    with chromium(offline_guard(server, external), width=1280, height=800) as (browser, _, _page):
        tablet = browser.new_context(viewport={"width": 1024, "height": 1366}, has_touch=True, is_mobile=True,
                                     user_agent=desktop)
        tablet.route("**/*", offline_guard(server, external))
        page = tablet.new_page()
        assert page.evaluate("matchMedia('(pointer: coarse)').matches && !matchMedia('(any-pointer: fine)').matches")
        page.goto(f"{live_server.url}/s/{study.slug}/?STUDY_ID=st&PROLIFIC_PID=tablet00000000000000000a1&SESSION_ID=t1")
        page.wait_for_url(f"**/s/{study.slug}/incompatible/")
        assert "A keyboard is needed" in page.inner_text("h1") and page.inner_text("#code") == "NODEVICE"
        tablet.close()
    assert external == []
    assert Participant.objects.get(prolific_pid="tablet00000000000000000a1").status == ParticipantStatus.RETURNED
