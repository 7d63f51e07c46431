#!/usr/bin/env bash
# The embedded default: SQLite under var/, no services to start. Sets up, then serves the demo.
source "$(dirname "$0")/common.sh"
ensure_venv inference analysis
cd "$ROOT"
exec "$VENV/bin/python" manage.py demo "$@"
