"""The one rule for tests that measure PostgreSQL itself (locks, plans, prepared statements): they run in
the PostgreSQL pass of scripts/test.sh (marked postgres_only); there, or anywhere CI=true, they fail rather
than skip when the database is not PostgreSQL; elsewhere they skip."""
from __future__ import annotations

import os

import pytest
from django.db import connection


def require_postgres(why: str = "needs DATABASE_URL on PostgreSQL (the PostgreSQL pass of scripts/test.sh)") -> None:
    if connection.vendor != "postgresql":
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(why, pytrace=False)
        pytest.skip(why)
