"""The Prolific tests: a stand-in server on loopback (standin.py), the client pointed at it through the
environment, and a study whose launch checklist is green."""
from __future__ import annotations

import pytest

from tests.prolific.standin import StandIn


@pytest.fixture
def standin(monkeypatch):
    server = StandIn()
    monkeypatch.setenv("PROLIFIC_API_URL", server.url)
    monkeypatch.setenv("PROLIFIC_API_TOKEN", server.state.token)
    monkeypatch.setattr("prolific.client.BACKOFF", 0.0)
    yield server
    server.close()


@pytest.fixture
def ready_study():
    from tests.experiments.participation.test_pilot import draft_study
    from tests.factories import review_consent

    study = draft_study(failed_attention_code="FAILEDAC", prolific_min_hourly="9.00")
    review_consent(study)
    return study


@pytest.fixture
def touch_study():
    """A ready study whose participants may answer by taps (answer input buttons_touch): Prolific may offer it on
    tablets and phones (a keys-only study is offered on desktops only: services.devices_problem)."""
    from tests.experiments.participation.test_pilot import draft_study
    from tests.factories import review_consent

    study = draft_study(failed_attention_code="FAILEDAC", prolific_min_hourly="9.00", answer_input="buttons_touch")
    review_consent(study)
    return study
