"""The browser keeps an answer the server did not refuse for good (issue 17 hole 7), in a real
headless Chromium: the first trial's request is answered with a 403 page that is not Duet's JSON (as
a CSRF failure or a proxy would answer); the page keeps the answer, tries again, and the server ends
up with it once, while the participant goes on. Before, any 4xx but 408/429 dropped the answer."""
from __future__ import annotations

from urllib.parse import urlsplit

import pytest

from experiments.models import Participant, Trial
from tests.e2e.chromium import COMPLETION, chromium, offline_guard, press_to_start
from tests.experiments.participation.conftest import make_open_study


@pytest.mark.django_db(transaction=True)
def test_an_answer_refused_by_a_transient_4xx_is_kept_and_delivered(live_server, monkeypatch):
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    study = make_open_study(interpretations=6, items_per_participant=3, blank_ms=50, attention_checks=[], practice=[])
    server = urlsplit(live_server.url).netloc
    external, refused = [], []
    guard = offline_guard(server, external)

    def flaky(route):
        if route.request.url.endswith("/trial") and route.request.method == "POST" and len(refused) < 2:
            refused.append(route.request.post_data_json["index"])
            return route.fulfill(status=403, content_type="text/html", body="<h1>Forbidden</h1>")
        return guard(route)

    with chromium(flaky, width=1280, height=800) as (_, _, page):
        page.goto(f"{live_server.url}/s/{study.slug}/?STUDY_ID=st&PROLIFIC_PID=kept000000000000000000a1&SESSION_ID=k1")
        page.click("#agree")
        page.click("#continue")
        press_to_start(page)
        for _ in range(3):
            page.wait_for_selector("#stage[data-state=armed]")
            page.keyboard.press("KeyF")
        page.wait_for_url(COMPLETION)
        assert not page.is_visible("#problem")  # nothing was reported as refused

    assert refused == [0, 0]  # the first answer was refused twice, then delivered
    person = Participant.objects.get()
    assert sorted(Trial.objects.filter(participant=person).values_list("index", flat=True)) == [0, 1, 2]
    assert person.status == "completed" and external == []
