"""The Content-Security-Policy in a real Chromium: no page of the participant flow or of the admin
reports a violation, the page module still works (a phone is sent to the incompatible-device page,
the ended page goes on to Prolific), and an injected inline script really is blocked."""
from __future__ import annotations

from urllib.parse import urlsplit

import pytest
from django.contrib.auth import get_user_model

from experiments.models import ParticipantStatus
from experiments.participation import services
from tests.e2e.chromium import PAGE_MS, chromium
from tests.experiments.participation.conftest import make_open_study

COMPLETION = "https://app.prolific.com/submissions/complete?cc=C0MPLETE"


@pytest.mark.django_db(transaction=True)
def test_no_csp_violation_on_participant_pages_and_the_admin(live_server, monkeypatch):
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    study = make_open_study(interpretations=6, items_per_participant=3, attention_checks=[], practice=[])
    ended, _ = services.participant_start(study=study, prolific_pid="ended", prolific_session_id="s-ended")
    services.participant_transition(participant=ended, to=ParticipantStatus.COMPLETED)  # the ended page, with its redirect
    get_user_model().objects.create_superuser("boss", password="a-long-password-1")
    server = urlsplit(live_server.url).netloc
    entry = f"{live_server.url}/s/{study.slug}/?PROLIFIC_PID=csp0000000001&STUDY_ID=st&SESSION_ID=se"

    def guard(route):
        if urlsplit(route.request.url).netloc == server:
            return route.continue_()
        return route.fulfill(status=200, content_type="text/html", body="<p>outside (intercepted)</p>")

    with chromium(guard, width=1280, height=800) as (browser, _, page):
        violations = []
        page.on("console", lambda m: violations.append(m.text) if "Content Security Policy" in m.text else None)

        page.goto(entry)
        page.wait_for_selector("#consent-text")
        page.click("#agree")
        page.wait_for_selector("#instructions-text")
        page.goto(f"{live_server.url}/s/{study.slug}/p/{ended.token}/")
        page.wait_for_url("https://app.prolific.com/**")  # page.js, loaded as a file, redirected
        page.goto(f"{live_server.url}/admin/login/")
        page.fill("#id_username", "boss")
        page.fill("#id_password", "a-long-password-1")
        page.click("input[type=submit]")
        page.wait_for_selector("#content-main")
        page.goto(f"{live_server.url}/admin/experiments/study/{study.pk}/change/")
        page.wait_for_selector("#study_form")
        page.goto(f"{live_server.url}/admin/experiments/item/")
        page.wait_for_selector("#changelist")
        assert violations == []
        # the control: inline script is refused on a participant page
        page.goto(entry)
        page.wait_for_selector("#instructions-text")  # the same participant, back at its current step
        page.evaluate("() => { const s = document.createElement('script'); s.textContent = 'window.ran = 1';"
                      " document.body.appendChild(s); }")
        assert page.evaluate("() => window.ran") is None
        page.wait_for_function("() => true")
        assert any("script-src" in v for v in violations)

        phone = browser.new_context(viewport={"width": 390, "height": 844}, has_touch=True, is_mobile=True)
        phone.route("**/*", guard)
        mobile = phone.new_page()
        mobile.set_default_timeout(PAGE_MS)
        mobile.goto(entry.replace("csp0000000001", "csp0000000002").replace("SESSION_ID=se", "SESSION_ID=sf"))
        mobile.wait_for_url("**/incompatible/")  # user agent says desktop, the pointer says phone: page.js
