"""Load: N participants take a study at once through gunicorn + PostgreSQL on this machine.

    .venv/bin/python bench/participants.py [--participants 300] [--max-seconds 900] [--workers 4]

It starts everything itself, on loopback only: a dedicated database on the PostgreSQL server of
--database-url (else DATABASE_URL, else the test cluster that scripts/postgres.sh starts), Redis as
the cache the rate limits count in (persisted as in docker/compose: append-only file, fsync once a
second; local memory if redis-server is missing),
and gunicorn serving studyserver.wsgi (tests/integration/servers.py's process handling) with the
production default of persistent database connections. Default: the production image's server
(docker/web.Dockerfile): 4 workers x 4 threads (gthread, keep-alive); --threads 1 measures sync
workers (a new connection per request). Servers, database and folders are removed at the end. A
database host that is not loopback is refused: the bench creates a database there and floods its
server. Only the per-IP entry limit is raised, for this gunicorn only: every simulated participant
comes from 127.0.0.1.

Phase 1, the study (correctness under load). Every participant does what the browser does: the
Prolific link (PROLIFIC_PID, STUDY_ID, SESSION_ID), consent, instructions, the practice page, every
trial POSTed as JSON with the CSRF token and its own idempotency key, a heartbeat every ~30 s of
answering, and finish (granted only once the server holds every answer). Pauses are paper-like
(reading, a log-normal answer time with a 7 s median, the blank between trials) times --time-scale;
arrivals are spread over --arrival-seconds. Some answers are re-sent with the same payload and key
(a response lost on its way back: the server must say "duplicate"), some participants reload the
session page mid-study and go on from the answers the server says it holds; network errors, 5xx
and 429 answers are retried with backoff and the same key, as experiments/static/sender.js does.

Phase 2, throughput, like for like. Two endpoints' throughputs compare only at the same offered
load; here both are driven to saturation: --concurrency clients (default: --participants) send
requests back to back with no pause, each client as many to the bare endpoint as trial saves
(--saturation-requests), over the same connection pool, in --rounds alternating bursts each (bare,
trial, bare, trial, ...) so that drift on a shared machine hits both alike; each burst's requests
are built before it starts, so that the client's own work takes as little as it can of the CPU.
Bare endpoint: GET /healthz (the full middleware stack and one `SELECT 1`). Trial save: the first
save of an answer by a started participant (fresh key; the whole check-lock-insert path).
Throughput = requests / seconds the bursts took. Latency is per request, client side (connect,
send, server, read); p50/p95/p99 are linearly interpolated percentiles. With closed-loop clients at
saturation, latency is mostly the
queue (Little's law: about clients / throughput), so the p99 ratio tracks the throughput ratio.
Also printed: CPU milliseconds per request of each endpoint, by process group (this client, the
gunicorn master and workers, every postgres process, Redis) and for the whole machine, read from
/proc around each burst; at saturation the throughput ratio is close to the inverse of the
whole-machine ratio, so this table says where a save costs more than the bare request. And the
trials/s that N real participants (no time scale) would ask for, against the measured capacity.

Phase 0, the launch-day burst (issue 38 item 7), run first, on a study of its own sized like 003's demo
(--burst-interpretations x 24 forms, real and nonsense: 1,000 -> 48,000 items): --burst arrivals
(default 300) follow the Prolific link at random moments over --burst-seconds (default 5), and only
the entry page is asked for (its redirect to the session page is the answer). Latency is per arrival,
client side, from its first try to the redirect (retries included); before it, every server thread
answers the entry page (without ids: no participant) and /healthz a few times, untimed, as a server
that is already up would. Afterwards the database says
which arrivals were lost (no participant for their Prolific id, or not the one they were sent to)
and which doubled (two participants for one id, one session sent to two arrivals, or a participant no
arrival made). Printed beside the trial-save p99 of phase 1 (phase 2's when phase 1 did not run).
Targets: entry p99 <= 500 ms, 0 lost and 0 doubled.

Afterwards the database is read directly: phase 1 participants owe their whole plan, phase 2 ones
the trials they were sent; "lost" is an owed index with no row, "duplicated" two rows for one
index, and an acknowledged answer whose row holds another key is counted too. Targets (issue 8):
zero lost and zero duplicated; every phase 1 participant completed; trial-save throughput >= 0.5 x
the bare endpoint's; trial-save p99 < 10 x the bare p99. Exit status 1 when a target is missed,
2 when the bench cannot run (bad arguments, a server, past --max-seconds).
"""
from __future__ import annotations

import argparse
import asyncio
import importlib.util
import math
import os
import sys
import time
from collections import Counter  # noqa: F401  (the tests count CPU ticks with it)
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a script: bench/load/ is imported as the package bench.load
    sys.path.insert(0, str(ROOT))

# The parts, under bench/load/ (tests/bench/test_participants_bench.py reads them through this module).
from bench.load.burst import Burst, burst, burst_alone, burst_found, burst_now, burst_report  # noqa: E402,F401
from bench.load.client import Load, Person, Reply, seconds_per_answer  # noqa: E402,F401
from bench.load.common import BURST_SLUG, DESKTOP, SLUG, BenchError, expect, progress  # noqa: E402,F401
from bench.load.cpu import (  # noqa: E402,F401
    CPU_GROUPS, CpuMeter, cpu_table, group_ticks, machine_cpu, process_ticks, stolen_share,
)
from bench.load.figures import (  # noqa: E402,F401
    TARGET_BURST_P99_MS, TARGET_P99, TARGET_THROUGHPUT, Audit, BurstAudit, Figures, Target, audit, burst_audit,
    figures, percentile, targets,
)
from bench.load.stack import ENTRY_LIMIT_ENV, Stack, is_loopback, postgres_server, require_loopback  # noqa: E402,F401
from bench.load.study import Outcome, database_audit, report, run, saturate  # noqa: E402,F401

BOUNDS = {"participants": (1, 1000), "concurrency": (1, 1000), "items": (1, 200), "saturation_requests": (1, 200),
          "rounds": (1, 200),
          "workers": (1, 16), "threads": (1, 16), "max_seconds": (10, 3600), "time_scale": (0.0, 1.0),
          "arrival_seconds": (0.0, 600.0), "retry_rate": (0.0, 1.0), "reload_rate": (0.0, 1.0),
          "burst": (0, 1000), "burst_seconds": (0.1, 600.0), "burst_interpretations": (24, 2000)}


def check_args(args: argparse.Namespace) -> None:
    """Every bound of BOUNDS, and a pool of database connections PostgreSQL's default allows."""
    problems = [f"--{name.replace('_', '-')} must be within {low}..{high}, not {getattr(args, name)}"
                for name, (low, high) in BOUNDS.items() if not low <= getattr(args, name) <= high]
    if args.rounds > args.saturation_requests:
        problems.append(f"--rounds ({args.rounds}) cannot exceed --saturation-requests ({args.saturation_requests})")
    if args.saturation_requests > args.items:
        problems.append(f"--saturation-requests ({args.saturation_requests}) cannot exceed --items ({args.items})")
    if args.workers * args.threads > 64:
        problems.append(f"--workers x --threads is {args.workers * args.threads}: at most 64 database connections")
    if getattr(args, "burst_only", False) and not args.burst:
        problems.append("--burst-only needs --burst above 0")
    if problems:
        raise BenchError("; ".join(problems))


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--participants", type=int, default=300, help="participants in phase 1 (default 300)")
    p.add_argument("--concurrency", type=int, default=None, help="clients in phase 2 (default: --participants)")
    p.add_argument("--items", type=int, default=24, help="items per participant (plus the 2 attention checks)")
    p.add_argument("--saturation-requests", type=int, default=24,
                   help="phase 2: requests per client to each endpoint (default 24; at most --items)")
    p.add_argument("--rounds", type=int, default=4,
                   help="phase 2: bursts per endpoint, alternating (default 4; at most --saturation-requests)")
    p.add_argument("--workers", type=int, default=4, help="gunicorn worker processes (default 4, as in production)")
    p.add_argument("--threads", type=int, default=4,
                   help="threads per worker; >1 means gthread (default 4, as in production; 1: sync workers)")
    p.add_argument("--time-scale", type=float, default=0.25, help="pause multiplier (default 0.25: 7 s -> 1.75 s)")
    p.add_argument("--arrival-seconds", type=float, default=5.0, help="arrivals spread over this (default 5)")
    p.add_argument("--retry-rate", type=float, default=0.05, help="share of answers re-sent (default 0.05)")
    p.add_argument("--reload-rate", type=float, default=0.03, help="reload chance after each answer (0.03)")
    p.add_argument("--max-seconds", type=float, default=900, help="hard bound on the whole run (default 900)")
    p.add_argument("--database-url", default=None, help="PostgreSQL server (loopback) to create the database on")
    p.add_argument("--burst", type=int, default=300, help="phase 0: arrivals on the entry page (default 300; 0: none)")
    p.add_argument("--burst-seconds", type=float, default=5.0, help="phase 0: arrivals spread over this (default 5)")
    p.add_argument("--burst-interpretations", type=int, default=1000,
                   help="phase 0: the burst study's interpretations, 48 items each (default 1000: 48,000 items)")
    p.add_argument("--burst-only", action="store_true", help="run phase 0 alone (no trial-save figures beside it)")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    if args.concurrency is None:
        args.concurrency = args.participants
    check_args(args)
    return args



def main(argv=None) -> int:
    started = time.monotonic()
    try:
        args = parse_args(argv)
    except BenchError as exc:
        print(f"participants.py: {exc}", file=sys.stderr)
        return 2
    if importlib.util.find_spec("aiohttp") is None:
        print("participants.py: aiohttp is missing: .venv/bin/pip install --group pyproject.toml:bench "
              "(or just 'aiohttp>=3.9,<4')", file=sys.stderr)
        return 2
    stack = None
    try:
        stack = Stack(args)
        print(f"gunicorn: {args.workers} workers x {args.threads} thread(s) "
              f"({'gthread' if args.threads > 1 else 'sync'}) on {os.cpu_count()} cores; PostgreSQL "
              f"{urlsplit(stack.db.server_url).hostname}, database {stack.db.name}, persistent connections; "
              f"rate-limit cache: {'Redis' if stack.redis else 'local memory (no redis-server)'}")
        print(f"raised for this gunicorn only: {', '.join(f'{k}={v}' for k, v in ENTRY_LIMIT_ENV.items())} "
              f"(all {args.burst if args.burst_only else args.burst + args.participants + args.concurrency} "
              "simulated participants share 127.0.0.1); "
              "the per-participant trial and session limits are left as configured")
        stack.start()
        left = args.max_seconds - (time.monotonic() - started)
        print(f"{args.participants} participants x {args.items} items (+ attention checks); max {args.max_seconds:g} s")
        try:
            roots = {"client": os.getpid(), "web": stack.web.proc.pid,
                     "Redis": stack.redis.proc.pid if stack.redis else None}
            meter = CpuMeter(roots, stack.db.name) if Path("/proc/stat").exists() else None
            if args.burst_only:
                alone = asyncio.run(asyncio.wait_for(burst_alone(args, stack.web.base, meter), timeout=max(1.0, left)))
                checks = burst_report(stack, alone, math.nan, args)
                for check in checks:
                    print(check.line())
                ok = all(c.ok for c in checks)
                print(f"verdict: burst entry p99 {checks[0].value:.1f} ms against {TARGET_BURST_P99_MS:g} ms, "
                      f"lost + doubled {checks[1].value:g}: {'MET' if ok else 'MISSED'} (load average now: "
                      f"{', '.join(f'{v:.2f}' for v in os.getloadavg())}; {time.monotonic() - started:.0f} s in all)")
                return 0 if ok else 1
            outcome = asyncio.run(asyncio.wait_for(run(args, stack.web.base, meter, lambda b: burst_now(stack, b)),
                                                   timeout=max(1.0, left)))
        except asyncio.TimeoutError:
            raise BenchError(f"stopped: the run went past --max-seconds {args.max_seconds:g}") from None
        return report(args, stack, outcome)
    except Exception as exc:  # noqa: BLE001 — a server, the database, the time bound: say which, exit 2
        print(f"participants.py: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 2
    finally:
        if stack is not None:
            stack.close()


if __name__ == "__main__":
    sys.exit(main())
