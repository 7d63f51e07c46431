#!/usr/bin/env bash
# The whole test suite: installs what it needs (PostgreSQL included), then runs pytest twice —
# against the embedded SQLite default and against a real PostgreSQL server it starts itself.
source "$(dirname "$0")/common.sh"
install_system_packages "$ROOT/scripts/apt/test"  # PostgreSQL, browsers, R: whatever the tests need
ensure_venv test e2e inference analysis
cd "$ROOT"
source "$ROOT/scripts/postgres.sh"
start_postgres

export DUET_VAR_DIR="$ROOT/var/test"
echo "==> pytest on SQLite"
# (the integration tests start real servers against PostgreSQL: they run in the second pass only)
env -u DATABASE_URL DUET_EXPECT_DB=sqlite "$VENV/bin/python" -m pytest -m "not postgres_only" "$@"
echo "==> pytest on PostgreSQL"
# Everything that touches the database runs again on PostgreSQL; pure-Python tests run once.
DATABASE_URL="$PG_URL" DUET_EXPECT_DB=postgresql "$VENV/bin/python" -m pytest -m "not db_independent" "$@"
