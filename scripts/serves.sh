#!/usr/bin/env bash
# CI's first step: the README's first command (`bash scripts/run.sh`), from this clone, until it serves —
# the start page, /healthz and an admin login with the password it made (scripts/serve_probe.py).
# Fails if run.sh exits or does not serve within DUET_SERVE_DEADLINE seconds (default 45 min: a fresh
# machine installs R and the model groups first). Then stops everything it started, detached model runs too.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
port="${DUET_SERVE_PORT:-8765}"
deadline=$(( SECONDS + ${DUET_SERVE_DEADLINE:-2700} ))
mkdir -p var
log="$ROOT/var/serves.log"
echo "==> bash scripts/run.sh --addrport 127.0.0.1:$port (log: var/serves.log)"
setsid bash scripts/run.sh --addrport "127.0.0.1:$port" >"$log" 2>&1 &
pid=$!
stop() {
  kill -TERM -- "-$pid" 2>/dev/null || true
  # the embedded mode's model runs and reports are detached (own session): stop this clone's ones too
  pkill -TERM -f -- "$ROOT/manage.py" 2>/dev/null || true
  sleep 2
  kill -KILL -- "-$pid" 2>/dev/null || true
  pkill -KILL -f -- "$ROOT/manage.py" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
}
trap stop EXIT
started=$SECONDS
while :; do
  if ! kill -0 "$pid" 2>/dev/null; then
    echo "run.sh exited before it served; its output:" >&2; cat "$log" >&2; exit 1
  fi
  if [ -x .venv/bin/python ] && .venv/bin/python scripts/serve_probe.py "http://127.0.0.1:$port" 2>/dev/null; then
    echo "==> run.sh serves: start page, /healthz and admin login answered $(( SECONDS - started )) s after the start"
    .venv/bin/python scripts/serve_probe.py "http://127.0.0.1:$port" --verbose
    exit 0
  fi
  if [ "$SECONDS" -ge "$deadline" ]; then
    echo "run.sh did not serve within ${DUET_SERVE_DEADLINE:-2700} s; its output:" >&2; cat "$log" >&2; exit 1
  fi
  sleep 3
done
