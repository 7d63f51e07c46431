#!/usr/bin/env bash
# The whole test suite: installs what it needs (PostgreSQL included), then runs pytest twice —
# against the embedded SQLite default and against a real PostgreSQL server it starts itself. Each test runs
# once (a database test on PostgreSQL), except those tests/conftest.py's ENGINES runs on both engines.
# Each pass runs its tests on every core (pytest-xdist: DUET_TEST_WORKERS, default one worker per
# CPU, at most 4), after the tests marked `serial`, which run one at a time (a pass of their own only where a
# test file names the marker).
source "$(dirname "$0")/common.sh"
install_system_packages "$ROOT/scripts/apt/test"  # PostgreSQL, browsers, R: whatever the tests need
ensure_venv test e2e inference analysis server
cd "$ROOT"
source "$ROOT/scripts/postgres.sh"
start_postgres

export DUET_VAR_DIR="$ROOT/var/test"
cpus="$(nproc 2>/dev/null || echo 1)"
workers="${DUET_TEST_WORKERS:-$(( cpus < 4 ? cpus : 4 ))}"
# Each worker has its own var/ folder and its own test database (tests/conftest.py); the
# integration tests share one stack of servers, so --dist loadgroup keeps them on one worker.
parallel=(-n "$workers" --dist loadgroup)
[ "$workers" -ge 1 ] 2>/dev/null || parallel=()
# One thread per process for torch, NumPy and R's BLAS: the workers already fill the cores, and
# threads waiting on a busy core only spin (a model test took 2.4× the CPU time with two threads).
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}"
# Bytecode caches on, whatever the environment says: with PYTHONDONTWRITEBYTECODE set every pytest process
# rewrites the asserts of every test module again (collection 17 s of CPU instead of 10 s per process).
unset PYTHONDONTWRITEBYTECODE

pass() {  # pass NAME MARKERS [PYTEST ARGS...]: the tests marked serial one at a time, then the rest in parallel
  local name="$1" markers="$2" status=0
  shift 2
  # Only where a test file names the marker: collecting the whole suite to select none took 10-20 s a pass.
  if grep -rqw serial "$ROOT/tests" --include='*.py'; then
    echo "==> pytest on $name: the tests marked serial, one at a time"
    "$VENV/bin/python" -m pytest -m "($markers) and serial" "$@" || status=$?
    [ "$status" -eq 0 ] || [ "$status" -eq 5 ] || return "$status"  # 5: none selected
  fi
  echo "==> pytest on $name, ${workers} workers"
  "$VENV/bin/python" -m pytest -m "($markers) and not serial" "${parallel[@]}" --durations=30 "$@"
}

echo "==> pytest on SQLite"
# The tests without a database, the embedded default's and R-bound ones (sqlite_only), and those that speak
# to each engine in its own way (ENGINES "both").
(unset DATABASE_URL; DUET_EXPECT_DB=sqlite pass SQLite "not postgres_only" "$@")
echo "==> pytest on PostgreSQL"
# Every other database test (production's engine), the engine-specific ones again, the real-server
# integration tests and the Chromium tests.
DATABASE_URL="$PG_URL" DUET_EXPECT_DB=postgresql pass PostgreSQL "not db_independent and not sqlite_only" "$@"
