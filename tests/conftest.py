import os

import pytest


@pytest.fixture(autouse=True, scope="session")
def _hypothesis_profile():
    try:
        from hypothesis import HealthCheck, settings
    except ImportError:  # pragma: no cover
        return
    settings.register_profile("duet", deadline=None, suppress_health_check=[HealthCheck.too_slow])
    settings.load_profile("duet")


@pytest.fixture
def expect_db() -> str | None:
    """Which database scripts/test.sh meant this run to use (sqlite or postgresql)."""
    return os.environ.get("DUET_EXPECT_DB")
