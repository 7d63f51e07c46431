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


@pytest.fixture(autouse=True)
def _empty_cache():
    """Every test starts with an empty cache, so rate-limit counters (and the refusals a process
    remembers) never carry over between tests."""
    from django.core.cache import caches

    from studyserver import ratelimit

    for cache in caches.all():
        cache.clear()
    ratelimit._blocked.clear()


@pytest.fixture
def expect_db() -> str | None:
    """Which database scripts/test.sh meant this run to use (sqlite or postgresql)."""
    return os.environ.get("DUET_EXPECT_DB")


_DB_FIXTURES = {"db", "transactional_db", "django_db_setup", "client", "admin_client", "live_server", "django_user_model"}


def pytest_collection_modifyitems(items):
    """Tests that touch no database run once; scripts/test.sh re-runs the rest on PostgreSQL."""
    for item in items:
        if "/tests/integration/" in str(item.path):
            item.add_marker(pytest.mark.postgres_only)
        uses_db = item.get_closest_marker("django_db") is not None or bool(
            _DB_FIXTURES & set(getattr(item, "fixturenames", ()))
        )
        if not uses_db:
            item.add_marker(pytest.mark.db_independent)
