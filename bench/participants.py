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
send, server, read); p50/p95/p99 are linearly interpolated percentiles. With closed-loop clients at saturation, latency is mostly the
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
import html
import importlib.util
import ipaddress
import json
import math
import os
import random
import re
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from http.cookies import SimpleCookie
from pathlib import Path
from urllib.parse import urlencode, urlsplit

ROOT = Path(__file__).resolve().parents[1]
SLUG = "bench-load"
BURST_SLUG = "bench-burst"
DESKTOP = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36"
# Unscaled pauses of one participant, in seconds (multiplied by --time-scale).
CONSENT_S, INSTRUCTIONS_S, PRACTICE_S, HEARTBEAT_S = 25.0, 40.0, 6.0, 30.0
ANSWER_MEDIAN_S, ANSWER_SIGMA = 7.0, 0.5  # log-normal answer times (median 7 s)
# Raised for the bench's own gunicorn only: every simulated participant comes from 127.0.0.1.
# every simulated participant comes from 127.0.0.1: the per-address limits on the entry link and on
# new participations are raised for this gunicorn only (the per-token limits stay as in production)
ENTRY_LIMIT_ENV = {"DUET_RATELIMIT_ENTRY": "1000000/m", "DUET_RATELIMIT_ENTRY_IP": "1000000/m",
                   "DUET_RATELIMIT_NEW_PARTICIPANT": "1000000/h"}
BOUNDS = {"participants": (1, 1000), "concurrency": (1, 1000), "items": (1, 200), "saturation_requests": (1, 200),
          "rounds": (1, 200),
          "workers": (1, 16), "threads": (1, 16), "max_seconds": (10, 3600), "time_scale": (0.0, 1.0),
          "arrival_seconds": (0.0, 600.0), "retry_rate": (0.0, 1.0), "reload_rate": (0.0, 1.0),
          "burst": (0, 1000), "burst_seconds": (0.1, 600.0), "burst_interpretations": (24, 2000)}
TARGET_THROUGHPUT, TARGET_P99 = 0.5, 10.0
TARGET_BURST_P99_MS = 500.0


class BenchError(RuntimeError):
    """The bench cannot run as asked (bad argument, non-loopback target, a server, the time bound)."""


# --- pure helpers -----------------------------------------------------------------------------
def percentile(values, q: float) -> float:
    """The q-th percentile (0–100), linear between closest ranks (numpy's default, R's type 7)."""
    data = sorted(values)
    if not data:
        raise ValueError("percentile of no values")
    if not 0 <= q <= 100:
        raise ValueError(f"percentile q must be within 0..100, not {q}")
    pos = (len(data) - 1) * q / 100
    low = math.floor(pos)
    high = min(low + 1, len(data) - 1)
    return data[low] + (data[high] - data[low]) * (pos - low)


@dataclass(frozen=True)
class Figures:
    count: int
    seconds: float
    p50_ms: float
    p95_ms: float
    p99_ms: float

    @property
    def per_second(self) -> float:
        return self.count / self.seconds if self.seconds > 0 else 0.0

    def line(self) -> str:
        return (f"{self.count} requests, {self.per_second:7.1f}/s; latency p50 {self.p50_ms:7.1f} ms, "
                f"p95 {self.p95_ms:7.1f} ms, p99 {self.p99_ms:7.1f} ms")


def figures(latencies_s, seconds: float) -> Figures:
    ms = [value * 1000 for value in latencies_s]
    if not ms:
        return Figures(0, seconds, math.nan, math.nan, math.nan)
    return Figures(len(ms), seconds, percentile(ms, 50), percentile(ms, 95), percentile(ms, 99))


@dataclass(frozen=True)
class Target:
    name: str
    value: float
    limit: float
    ok: bool

    def line(self) -> str:
        return f"[{'met ' if self.ok else 'MISS'}] {self.name}: {self.value:.3g} (target {self.limit:g})"


def targets(trial: Figures, bare: Figures) -> list[Target]:
    tput = trial.per_second / bare.per_second if bare.per_second else math.nan
    p99 = trial.p99_ms / bare.p99_ms if bare.p99_ms else math.nan
    return [Target("trial-save throughput / bare throughput", tput, TARGET_THROUGHPUT, tput >= TARGET_THROUGHPUT),
            Target("trial-save p99 / bare p99", p99, TARGET_P99, p99 < TARGET_P99)]


@dataclass(frozen=True)
class Audit:
    expected: int
    saved: int
    lost: int
    duplicated: int
    mismatched: int  # acknowledged answers whose row carries another idempotency key
    unexpected: int  # rows for an index outside the participant's plan

    @property
    def clean(self) -> bool:
        return not (self.lost or self.duplicated or self.mismatched or self.unexpected)


def audit(plans: dict[str, int], acked: dict[tuple[str, int], str], rows) -> Audit:
    """plans: token -> plan length; acked: (token, index) -> key the server confirmed; rows: the DB's
    (token, index, idempotency_key) trials."""
    rows = list(rows)
    keys: dict[tuple[str, int], list[str]] = defaultdict(list)
    for token, index, key in rows:
        keys[(token, index)].append(key)
    expected = {(token, i) for token, n in plans.items() for i in range(n)}
    mismatched = sum(1 for pair, key in acked.items() if keys.get(pair) and key not in keys[pair])
    return Audit(expected=len(expected), saved=len(rows), lost=len(expected - keys.keys()),
                 duplicated=len(rows) - len(keys), mismatched=mismatched, unexpected=len(keys.keys() - expected))


@dataclass(frozen=True)
class BurstAudit:
    arrivals: int
    lost: int  # an arrival with no participant for its Prolific id, or sent to another one's session
    doubled: int  # a second participant for one id, one session sent to two arrivals, a row no arrival made


def burst_audit(sent: dict[str, str | None], rows) -> BurstAudit:
    """sent: Prolific id -> the session token its redirect named (None: no redirect); rows: the DB's
    (Prolific id, token) participants of the burst study."""
    rows = list(rows)
    tokens: dict[str, list[str]] = defaultdict(list)
    for pid, token in rows:
        tokens[pid].append(token)
    lost = sum(1 for pid, token in sent.items() if token is None or token not in tokens.get(pid, ()))
    shared = sum(n - 1 for n in Counter(t for t in sent.values() if t is not None).values() if n > 1)
    doubled = sum(len(t) - 1 for t in tokens.values()) + shared + sum(1 for pid in tokens if pid not in sent)
    return BurstAudit(arrivals=len(sent), lost=lost, doubled=doubled)


def is_loopback(host: str | None) -> bool:
    host = (host or "").strip("[]").lower()
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def require_loopback(url: str, what: str) -> str:
    host = urlsplit(url).hostname
    if not is_loopback(host):
        raise BenchError(f"{what} must be on this machine (127.0.0.1, ::1 or localhost), not {host or url!r}: "
                         "the bench floods what it targets and refuses anything else.")
    return url


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


# --- servers ----------------------------------------------------------------------------------
def postgres_server(arg: str | None) -> str:
    url = arg or os.environ.get("DATABASE_URL", "")
    if not url.startswith(("postgres://", "postgresql://")):
        done = subprocess.run(["bash", "-c", "source scripts/common.sh && source scripts/postgres.sh && "
                               "start_postgres >&2 && printf %s \"$PG_URL\""], cwd=ROOT, capture_output=True,
                              text=True, timeout=300)
        if done.returncode != 0 or not done.stdout:
            raise BenchError(f"could not start PostgreSQL through scripts/postgres.sh:\n{done.stderr[-2000:]}")
        url = done.stdout.strip()
    return require_loopback(url, "the PostgreSQL server")


SEED = """
from experiments import designs, services
from logic.modal_forms import SYLLOGISMS
from experiments.models import Study, StudyStatus
from experiments.participation.consent import consent_review
from experiments.participation.services import human_arm_ensure
study = services.study_create(slug=SLUG, title="Load bench", design=SYLLOGISMS)
designs.items_generate(study=study, design=SYLLOGISMS, interpretations=INTERPRETATIONS, seed=0, nonsense=NONSENSE)
arm = human_arm_ensure(study=study)
arm.items_per_participant, arm.target_sample_size, arm.completion_code = ITEMS, 100000, "BENCHDONE"
arm.contact = "bench"
arm.full_clean()
arm.save()
consent_review(arm=arm)
services.study_transition(study=study, to=StudyStatus.OPEN)
print(study.items.count())
"""


class Stack:
    def __init__(self, args):
        from tests.integration import servers  # the integration tests' process handling, reused

        self.servers, self.args = servers, args
        self.folder = Path(tempfile.mkdtemp(prefix="duet-load-"))
        self.db = servers.Database(postgres_server(args.database_url))
        self.redis = servers.Redis(self.folder / "redis") if shutil.which("redis-server") else None
        if self.redis:  # docker/compose's persistence (appendonly, fsync once a second), not the fault tests' fsync-always
            self.redis.argv[self.redis.argv.index("--appendfsync") + 1] = "everysec"
        self.web = None
        self.env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "CACHE_URL", "DB_CONN_MAX_AGE")}
        self.env.update({"DATABASE_URL": self.db.url, "SECRET_KEY": secrets.token_urlsafe(40), "LOG_LEVEL": "WARNING",
                         "DUET_VAR_DIR": str(self.folder / "var"), "DJANGO_SETTINGS_MODULE": "studyserver.settings",
                         "PYTHONPATH": str(ROOT), **ENTRY_LIMIT_ENV})
        if self.redis:
            self.env["CACHE_URL"] = self.redis.url

    def start(self) -> None:
        s = self.servers
        self.db.create()
        if self.redis:
            self.redis.start()
        s.manage(self.env, "migrate", "--no-input", "-v", "0", timeout=300)
        s.script(self.env, f"SLUG, NONSENSE = {SLUG!r}, False\n"
                 f"INTERPRETATIONS, ITEMS = {max(24, self.args.items)}, {self.args.items}\n" + SEED)
        if self.args.burst:  # 003's demo size: every interpretation real and nonsense
            s.script(self.env, f"SLUG, NONSENSE = {BURST_SLUG!r}, True\n"
                     f"INTERPRETATIONS, ITEMS = {self.args.burst_interpretations}, {self.args.items}\n" + SEED)
        self.web = s.Gunicorn(self.folder, self.env, workers=self.args.workers)
        if self.args.threads > 1:
            self.web.argv += ["--worker-class", "gthread", "--threads", str(self.args.threads)]
        self.web.start()
        require_loopback(self.web.base, "the web server")

    def close(self) -> None:
        for process in (self.web, self.redis):
            if process is not None:
                process.stop()
        try:
            self.db.drop()
        finally:
            shutil.rmtree(self.folder, ignore_errors=True)


# --- clients ----------------------------------------------------------------------------------
RUNNER = re.compile(rb'<script id="runner-config" type="application/json">(.*?)</script>', re.S)
RETRY_STATUSES = {408, 429, 500, 502, 503, 504}


@dataclass
class Reply:
    status: int
    body: bytes
    headers: dict
    seconds: float

    def json(self) -> dict:
        return json.loads(self.body)


@dataclass
class Person:
    pid: str
    session: str = ""  # the session page's path
    csrf: str = ""
    config: dict = field(default_factory=dict)

    @property
    def token(self) -> str:
        return self.session.rstrip("/").rsplit("/", 1)[-1]


class Load:
    """One aiohttp session for every simulated participant (each keeps its own CSRF cookie)."""

    def __init__(self, base: str, http, rng: random.Random, scale: float):
        self.base, self.http, self.rng, self.scale = base, http, rng, scale
        self.lat: dict[str, list[float]] = defaultdict(list)
        self.count: Counter = Counter()
        self.acked: dict[tuple[str, int], str] = {}
        self.failures: list[str] = []

    @staticmethod
    def request(person: Person | None = None, *, form=None, body=None) -> tuple[bytes | None, dict]:
        """A request's body (encoded) and headers, as a browser sends them."""
        headers = {"User-Agent": DESKTOP}
        data = None
        if person is not None and person.csrf:
            headers["Cookie"] = f"csrftoken={person.csrf}"
        if form is not None:
            data = urlencode({**form, "csrfmiddlewaretoken": person.csrf}).encode()
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        elif body is not None:
            data = json.dumps(body).encode()
            headers.update({"Content-Type": "application/json", "X-CSRFToken": person.csrf})
        return data, headers

    async def call(self, method: str, path: str, person: Person | None = None, *, form=None, body=None,
                   built: tuple[bytes | None, dict] | None = None) -> Reply:
        """One request; `built` is one made beforehand by request() (phase 2 builds them before a burst)."""
        data, headers = built if built is not None else self.request(person, form=form, body=body)
        t0 = time.perf_counter()
        async with self.http.request(method, self.base + path, data=data, headers=headers, allow_redirects=False) as r:
            content = await r.read()
            cookies = r.headers.getall("Set-Cookie", [])
        reply = Reply(r.status, content, dict(r.headers), time.perf_counter() - t0)
        for raw in cookies:
            jar = SimpleCookie(raw)
            if person is not None and "csrftoken" in jar:
                person.csrf = jar["csrftoken"].value
        return reply

    async def send(self, method: str, path: str, person: Person | None = None, **kw) -> Reply:
        """A request retried with backoff on network errors, 5xx and 429 (Retry-After), like sender.js."""
        import aiohttp

        delay = 0.1
        for _ in range(12):
            try:
                reply = await self.call(method, path, person, **kw)
            except (aiohttp.ClientError, asyncio.TimeoutError):
                self.count["network retries"] += 1
            else:
                if reply.status not in RETRY_STATUSES:
                    return reply
                self.count[f"{reply.status} answers retried"] += 1
                if reply.status == 429:
                    delay = max(delay, float(reply.headers.get("Retry-After", 1)))
            await asyncio.sleep(delay * (0.5 + self.rng.random()))
            delay = min(delay * 2, 5.0)
        raise BenchError(f"{method} {path}: no answer after 12 tries")

    async def pause(self, seconds: float) -> None:
        if self.scale:
            await asyncio.sleep(seconds * self.scale)

    def answer_s(self) -> float:
        return self.rng.lognormvariate(math.log(ANSWER_MEDIAN_S), ANSWER_SIGMA)

    # --- the flow ---
    async def load(self, person: Person) -> dict:
        page = await self.send("GET", person.session, person)
        expect(page.status == 200, f"session page answered {page.status}")
        found = RUNNER.search(page.body)
        person.config = json.loads(html.unescape(found.group(1).decode())) if found else {}
        return person.config

    async def step(self, person: Person, name: str, form: dict | None = None) -> dict:
        reply = await self.send("POST", person.session + name, person, form=form or {})
        expect(reply.status == 302, f"{name} answered {reply.status}")
        return await self.load(person)

    async def enter(self, person: Person, *, pauses: bool) -> None:
        query = urlencode({"PROLIFIC_PID": person.pid, "STUDY_ID": "bench-study", "SESSION_ID": f"s-{person.pid}"})
        entry = await self.send("GET", f"/s/{SLUG}/?{query}", person)
        expect(entry.status == 302 and "/p/" in entry.headers.get("Location", ""), f"entry answered {entry.status}")
        if pauses:  # phase 1
            self.lat["entry"].append(entry.seconds)
        person.session = urlsplit(entry.headers["Location"]).path
        await self.load(person)
        expect(bool(person.csrf), "the session page set no csrftoken cookie")
        await self.pause(CONSENT_S if pauses else 0)
        await self.step(person, "consent", {"agree": "yes"})
        await self.pause(INSTRUCTIONS_S if pauses else 0)
        config = await self.step(person, "instructions")
        expect(config.get("phase") == "practice", f"after instructions: phase {config.get('phase')!r}")
        for _ in config["trials"]:
            await self.pause(PRACTICE_S if pauses else 0)
        config = await self.step(person, "practice")
        expect(config.get("phase") == "trials", f"after practice: phase {config.get('phase')!r}")

    def answer(self, trial: dict) -> dict:
        onset, code = time.time() * 1000, self.rng.choice(["KeyF", "KeyJ"])
        return {"index": trial["index"], "item": trial["item"], "code": code, "key": code[-1].lower(),
                "idempotency_key": str(uuid.uuid4()), "onset_ms": onset,
                "response_ms": onset + self.answer_s() * 1000, "timed_out": False, "viewport_width": 1280,
                "viewport_height": 800, "focus_lost": False, "visibility_lost": False}

    async def save(self, person: Person, body: dict, kind: str) -> None:
        reply = await self.send("POST", person.session + "trial", person, body=body)
        first = kind != "resend"
        expect(reply.status == (201 if first else 200), f"trial {body['index']} ({kind}) answered {reply.status}: "
               f"{reply.body[:200]!r}")
        expect(reply.json().get("duplicate") is (not first), f"trial {body['index']} ({kind}): wrong duplicate flag")
        self.lat[kind].append(reply.seconds)
        self.acked[(person.token, body["index"])] = body["idempotency_key"]

    async def finish(self, person: Person) -> None:
        reply = await self.send("POST", person.session + "finish", person, body={})
        expect(reply.status == 200 and reply.json().get("status") == "completed", f"finish answered {reply.status}")

    async def take_study(self, person: Person, arrival: float, retry_rate: float, reload_rate: float) -> None:
        await asyncio.sleep(arrival)
        await self.enter(person, pauses=True)
        done = set(person.config["answered"])
        every = max(1, round(HEARTBEAT_S / seconds_per_answer()))  # the browser's beat, in answers
        while pending := [t for t in person.config["trials"] if t["index"] not in done]:
            await self.pause(person.config["blank_ms"] / 1000)
            body = self.answer(pending[0])
            await self.pause(body["response_ms"] / 1000 - body["onset_ms"] / 1000)
            await self.save(person, body, "trial")
            done.add(body["index"])
            if self.rng.random() < retry_rate:
                await self.save(person, dict(body), "resend")
                self.count["re-sent answers (same key)"] += 1
            if len(done) % every == 0:
                reply = await self.send("POST", person.session + "heartbeat", person, body={})
                expect(reply.status == 200, f"heartbeat answered {reply.status}")
                self.count["heartbeats"] += 1
            if self.rng.random() < reload_rate:
                done = set((await self.load(person))["answered"])
                self.count["reloads mid-study"] += 1
        await self.finish(person)
        self.count["completed"] += 1

    async def guarded(self, coro) -> None:
        try:
            await coro
        except BenchError as exc:
            self.failures.append(str(exc))
        except Exception as exc:  # noqa: BLE001 — one participant's surprise is reported, the others go on
            self.failures.append(f"{type(exc).__name__}: {exc}")


def progress(message: str) -> None:
    print(f"  .. {message}", file=sys.stderr, flush=True)


def expect(ok: bool, message: str) -> None:
    if not ok:
        raise BenchError(message)


async def saturate(load: Load, people: list[Person], per_client: int, meter: CpuMeter | None = None,
                   rounds: int = 4) -> dict[str, tuple[list, float]]:
    """Alternating bursts at saturation: every client sends its share back to back, no pause; each
    client sends as many requests to the bare endpoint as trial saves (its participant's first
    `per_client` trials, in order). Every request of a burst is built before it starts, so that the
    client's own work (answers, JSON, headers) takes as little as it can of the CPU the server is
    measured on, alike for both endpoints."""
    results = {"bare": ([], 0.0), "trial": ([], 0.0)}
    share = math.ceil(per_client / rounds)
    bare_request = load.request()

    async def bare_client(n: int, lat: list) -> None:
        for _ in range(n):
            reply = await load.call("GET", "/healthz", built=bare_request)
            expect(reply.status == 200, f"/healthz answered {reply.status}")
            lat.append(reply.seconds)

    async def trial_client(person: Person, answers: list[tuple[dict, tuple]], lat: list) -> None:
        path = person.session + "trial"
        for body, built in answers:
            reply = await load.call("POST", path, person, built=built)
            expect(reply.status == 201, f"trial answered {reply.status}: {reply.body[:200]!r}")
            lat.append(reply.seconds)
            load.acked[(person.token, body["index"])] = body["idempotency_key"]

    def answers(person: Person, trials: list) -> list[tuple[dict, tuple]]:
        return [(body, load.request(person, body=body)) for body in map(load.answer, trials)]

    for r in range(rounds):
        slices = [p.config["trials"][:per_client][r * share:(r + 1) * share] for p in people]
        built = [answers(person, trials) for person, trials in zip(people, slices)]
        for name, make in (("bare", lambda i, lat: bare_client(len(slices[i]), lat)),
                           ("trial", lambda i, lat: trial_client(people[i], built[i], lat))):
            lat: list[float] = []
            cpu0 = meter.snapshot() if meter else None
            t0 = time.perf_counter()
            await asyncio.gather(*(make(i, lat) for i in range(len(people))))
            if meter:
                meter.add(name, cpu0, meter.snapshot(), len(lat))
            total, seconds = results[name]
            results[name] = (total + lat, seconds + time.perf_counter() - t0)
            progress(f"burst {r + 1}/{rounds} {name}: {len(lat)} requests in {time.perf_counter() - t0:.1f} s")
    return results


@dataclass
class Burst:
    """Phase 0: what each arrival was sent to, its latency, and the load average when it started."""
    load: Load
    sent: dict[str, str | None]
    latencies: list[float]
    seconds: float
    loadavg: tuple[float, float, float] | None


async def burst(load: Load, n: int, seconds: float) -> Burst:
    """n arrivals at random moments over `seconds`, each asking only for the entry page."""
    people = [Person(pid=f"burst{k:05d}x{secrets.token_hex(3)}") for k in range(n)]
    sent: dict[str, str | None] = dict.fromkeys((p.pid for p in people), None)
    latencies: list[float] = []

    async def arrive(person: Person, at: float) -> None:
        await asyncio.sleep(at)
        query = urlencode({"PROLIFIC_PID": person.pid, "STUDY_ID": "bench-burst", "SESSION_ID": f"s-{person.pid}"})
        t0 = time.perf_counter()
        entry = await load.send("GET", f"/s/{BURST_SLUG}/?{query}", person)
        latencies.append(time.perf_counter() - t0)
        location = entry.headers.get("Location", "")
        expect(entry.status == 302 and "/p/" in location, f"burst entry answered {entry.status}")
        sent[person.pid] = urlsplit(location).path.rstrip("/").rsplit("/", 1)[-1]

    # a launch meets a server that is already up: every worker thread first answers the entry page once
    # (a link without ids: the 400 page, no participant made) and /healthz, untimed
    for _ in range(4):
        await asyncio.gather(*(load.call("GET", path) for path in (f"/s/{BURST_SLUG}/", "/healthz") * 16))
    loadavg = os.getloadavg() if hasattr(os, "getloadavg") else None
    t0 = time.perf_counter()
    await asyncio.gather(*(load.guarded(arrive(p, load.rng.uniform(0, seconds))) for p in people))
    return Burst(load, sent, latencies, time.perf_counter() - t0, loadavg)


async def tick(load: Load, t0: float) -> None:
    while True:
        await asyncio.sleep(30)
        progress(f"phase 1, {time.perf_counter() - t0:.0f} s: {len(load.lat['trial'])} answers saved, "
                 f"{load.count['completed']} participants completed")


@dataclass
class Outcome:
    load: Load
    study: list[Person]
    crowd: list[Person]
    results: dict
    study_seconds: float
    client_cpu: float
    stolen: float | None  # share of the machine's CPU time taken by the hypervisor during phase 2
    cpu: CpuMeter | None = None  # CPU time per request of each process group (Linux only)
    burst: Burst | None = None  # phase 0


async def run(args, base: str, meter: CpuMeter | None = None, burst_done=None) -> Outcome:
    import aiohttp

    rng = random.Random(args.seed)
    connector = aiohttp.TCPConnector(limit=max(args.participants, args.concurrency))
    timeout = aiohttp.ClientTimeout(total=120)
    async with aiohttp.ClientSession(connector=connector, timeout=timeout, cookie_jar=aiohttp.DummyCookieJar()) as http:
        arrivals = None
        if args.burst:
            progress(f"phase 0: {args.burst} arrivals over {args.burst_seconds:g} s on the entry page")
            arrivals = await burst(Load(base, http, random.Random(args.seed + 1), 0.0), args.burst,
                                   args.burst_seconds)
            if burst_done is not None:
                burst_done(arrivals)
        load = Load(base, http, rng, args.time_scale)
        study = [Person(pid=f"bench{n:05d}x{secrets.token_hex(3)}") for n in range(args.participants)]
        t0 = time.perf_counter()
        ticker = asyncio.create_task(tick(load, t0))
        await asyncio.gather(*(load.guarded(load.take_study(p, rng.uniform(0, args.arrival_seconds), args.retry_rate,
                                                            args.reload_rate)) for p in study))
        study_seconds = time.perf_counter() - t0
        ticker.cancel()
        progress(f"phase 1 done in {study_seconds:.1f} s; starting {args.concurrency} participants for phase 2")
        # phase 2: fresh participants, brought to their first trial without pauses (not timed)
        load.scale = 0.0
        crowd = [Person(pid=f"sat{n:05d}x{secrets.token_hex(3)}") for n in range(args.concurrency)]
        await asyncio.gather(*(load.enter(p, pauses=False) for p in crowd))
        cpu0, w0, machine0 = time.process_time(), time.perf_counter(), machine_cpu()
        results = await saturate(load, crowd, args.saturation_requests, meter, rounds=args.rounds)
        client_cpu = (time.process_time() - cpu0) / (time.perf_counter() - w0)
        stolen = stolen_share(machine0, machine_cpu())
    return Outcome(load, study, crowd, results, study_seconds, client_cpu, stolen, meter, arrivals)


def database_audit(stack: Stack, out: Outcome) -> tuple[Audit, Counter]:
    """Phase 1 participants owe their whole plan; phase 2 ones the trials they were sent (a prefix)."""
    q = stack.db.query
    people = q("SELECT p.token, jsonb_array_length(p.plan), p.status FROM experiments_participant p JOIN "
               "experiments_study s ON s.id = p.study_id WHERE s.slug = %s AND NOT p.is_preview", (SLUG,))
    rows = q("SELECT p.token, t.index, t.idempotency_key FROM experiments_trial t JOIN experiments_participant p "
             "ON p.id = t.participant_id JOIN experiments_study s ON s.id = p.study_id WHERE s.slug = %s", (SLUG,))
    sent = Counter(token for token, _ in out.load.acked)
    crowd = {p.token for p in out.crowd}
    plans = {token: sent[token] if token in crowd else n for token, n, _ in people}
    study = {p.token for p in out.study}
    return audit(plans, out.load.acked, rows), Counter(status for token, _, status in people if token in study)


def burst_found(stack: Stack, b: Burst) -> tuple[Figures, BurstAudit, int]:
    """Phase 0's latencies, its database audit and the burst study's size."""
    rows = stack.db.query("SELECT p.prolific_pid, p.token FROM experiments_participant p JOIN experiments_study s "
                          "ON s.id = p.study_id WHERE s.slug = %s AND NOT p.is_preview", (BURST_SLUG,))
    items = stack.db.query("SELECT count(*) FROM experiments_item i JOIN experiments_study s ON s.id = i.study_id "
                           "WHERE s.slug = %s", (BURST_SLUG,))[0][0]
    return figures(b.latencies, b.seconds), burst_audit(b.sent, rows), items


def burst_now(stack: Stack, b: Burst) -> None:
    """Phase 0's figures as soon as it ends (a later phase past --max-seconds loses nothing of it)."""
    entry, found, items = burst_found(stack, b)
    print(f"phase 0 done: {items:,}-item study, {entry.line()}; lost {found.lost}, doubled {found.doubled}", flush=True)


async def burst_alone(args, base: str) -> Burst:
    import aiohttp

    connector = aiohttp.TCPConnector(limit=args.burst)
    async with aiohttp.ClientSession(connector=connector, timeout=aiohttp.ClientTimeout(total=120),
                                     cookie_jar=aiohttp.DummyCookieJar()) as http:
        return await burst(Load(base, http, random.Random(args.seed + 1), 0.0), args.burst, args.burst_seconds)


def burst_report(stack: Stack, out: Outcome, trial_p99_ms: float, args) -> list[Target]:
    """Phase 0's figures beside the trial-save p99, from the client and the database."""
    b = out.burst
    entry, found, items = burst_found(stack, b)
    load = ", ".join(f"{v:.2f}" for v in b.loadavg) if b.loadavg else "unknown"
    print(f"\nphase 0, launch-day burst: {args.burst} arrivals over {args.burst_seconds:g} s on the entry page of a "
          f"{items:,}-item study (load average before: {load})")
    print(f"  entry: {entry.line()}")
    if not math.isnan(trial_p99_ms):
        print(f"  entry p99 {entry.p99_ms:.1f} ms vs trial-save p99 {trial_p99_ms:.1f} ms: "
              f"{entry.p99_ms / trial_p99_ms if trial_p99_ms else math.nan:.1f}x")
    for name, n in sorted(b.load.count.items()):
        print(f"  {name}: {n}")
    for failure in b.load.failures[:10]:
        print(f"  FAILED: {failure}")
    print(f"  database: {found.arrivals} arrivals: lost {found.lost}, "
          f"doubled {found.doubled}")
    return [Target("burst entry p99 (ms)", entry.p99_ms, TARGET_BURST_P99_MS, entry.p99_ms <= TARGET_BURST_P99_MS),
            Target("burst arrivals lost + doubled", found.lost + found.doubled, 0,
                   not (found.lost or found.doubled or b.load.failures))]


def seconds_per_answer() -> float:
    """Mean seconds between two answers of one participant in real time: the answer, then the blank."""
    return ANSWER_MEDIAN_S * math.exp(ANSWER_SIGMA ** 2 / 2) + 0.5


def machine_cpu() -> list[int] | None:
    """The machine's CPU time counters (/proc/stat's first line: user … steal), or None off Linux."""
    try:
        with open("/proc/stat") as f:
            return [int(v) for v in f.readline().split()[1:9]]
    except (OSError, ValueError):
        return None


def stolen_share(before, after) -> float | None:
    """Steal time (a virtual machine's CPU taken by its host) as a share of all CPU time between two
    readings: on a shared VM it shrinks every throughput alike and moves from run to run."""
    if not before or not after:
        return None
    delta = [b - a for a, b in zip(before, after)]
    return delta[7] / sum(delta) if sum(delta) else None


CPU_GROUPS = ("client", "web", "PostgreSQL", "Redis")


def process_ticks() -> dict[int, tuple[int, str, int]]:
    """Every process's (parent pid, command name, user + system CPU ticks), from /proc (Linux)."""
    table = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat") as f:
                raw = f.read()
        except OSError:  # gone meanwhile
            continue
        comm, rest = raw[raw.index("(") + 1:raw.rindex(")")], raw[raw.rindex(")") + 2:].split()
        table[int(entry.name)] = (int(rest[1]), comm, int(rest[11]) + int(rest[12]))
    return table


def group_ticks(table: dict[int, tuple[int, str, int]], roots: dict[str, int | None]) -> dict[str, int]:
    """CPU ticks per group: a group is a root process and its descendants (roots: name -> pid); every
    process named postgres counts as PostgreSQL (its server need not be our child)."""
    totals = dict.fromkeys(CPU_GROUPS, 0)
    owner = {pid: name for name, pid in roots.items() if pid is not None}
    for pid, (ppid, comm, ticks) in table.items():
        name, up, seen = owner.get(pid), ppid, 0
        while name is None and up in table and seen < 64:  # walk up to a root (bounded)
            name, up, seen = owner.get(up), table[up][0], seen + 1
        if name is None and comm.startswith("postgres"):
            name = "PostgreSQL"
        if name is not None:
            totals[name] = totals.get(name, 0) + ticks
    return totals


class CpuMeter:
    """CPU time per request of each burst kind, by process group and for the whole machine."""

    def __init__(self, roots: dict[str, int | None]):
        self.roots, self.tick_s = roots, 1 / os.sysconf("SC_CLK_TCK")
        self.ticks: dict[str, Counter] = defaultdict(Counter)
        self.requests: Counter = Counter()

    def snapshot(self) -> Counter:
        counts = Counter(group_ticks(process_ticks(), self.roots))
        machine = machine_cpu()
        if machine:  # user, nice, system, irq, softirq: time this machine's CPUs worked for us
            counts["machine"] = sum(machine[i] for i in (0, 1, 2, 5, 6))
        return counts

    def add(self, kind: str, before: Counter, after: Counter, requests: int) -> None:
        self.ticks[kind].update({k: after[k] - before[k] for k in after})
        self.requests[kind] += requests

    def per_request_ms(self, kind: str) -> dict[str, float]:
        n = self.requests[kind]
        return {k: v * self.tick_s * 1000 / n for k, v in self.ticks[kind].items()} if n else {}


def cpu_table(meter: CpuMeter) -> str:
    """CPU milliseconds per request by process group, bare vs trial save, and their ratio."""
    columns = [*CPU_GROUPS, "machine"]
    rows = {kind: meter.per_request_ms(kind) for kind in ("bare", "trial")}
    lines = ["  CPU ms per request " + "".join(f"{c:>12}" for c in columns)]
    for kind, label in (("bare", "bare"), ("trial", "trial save")):
        lines.append(f"    {label:<17}" + "".join(f"{rows[kind].get(c, math.nan):12.2f}" for c in columns))
    ratio = [rows["trial"].get(c, math.nan) / rows["bare"][c] if rows["bare"].get(c) else math.nan for c in columns]
    lines.append(f"    {'trial / bare':<17}" + "".join(f"{r:12.2f}" for r in ratio))
    return "\n".join(lines)


def report(args, stack: Stack, out: Outcome) -> int:
    found, statuses = database_audit(stack, out)
    load = out.load
    bare, trial = (figures(*out.results[name]) for name in ("bare", "trial"))
    gap = seconds_per_answer()
    real, paced = args.participants / gap, args.participants / (gap * args.time_scale or math.nan)
    print(f"\nphase 1, the study: {load.count['completed']}/{args.participants} participants completed in "
          f"{out.study_seconds:.1f} s (pauses x{args.time_scale:g}, arrivals over {args.arrival_seconds:g} s; "
          f"at most {paced:.0f} trials/s asked for)")
    for name in ("trial", "resend", "entry"):
        if load.lat[name]:
            print(f"  {name:>6}: {figures(load.lat[name], out.study_seconds).line()}")
    for name, n in sorted(load.count.items()):
        if name != "completed":
            print(f"  {name}: {n}")
    for failure in load.failures[:10]:
        print(f"  FAILED: {failure}")
    print(f"\nphase 2, saturation: {args.concurrency} clients, {args.saturation_requests} requests each per endpoint, "
          f"back to back, alternating bursts (the client used {out.client_cpu:.0%} of one core"
          + (f"; the hypervisor took {out.stolen:.0%} of the machine's CPU time" if out.stolen is not None else "")
          + ")")
    print(f"  bare GET /healthz: {bare.line()}")
    print(f"  trial save:        {trial.line()}")
    if out.cpu is not None:
        print(cpu_table(out.cpu))
    print(f"  {args.participants} real participants (an answer every {gap:.1f} s) would ask "
          f"for {real:.1f} trials/s: trial-save capacity is {trial.per_second / real:.1f}x that")
    print(f"\ndatabase (read directly): phase 1 participants {dict(statuses)}")
    print(f"  trials expected {found.expected}, saved {found.saved}: lost {found.lost}, duplicated {found.duplicated}, "
          f"acknowledged-but-different {found.mismatched}, outside a plan {found.unexpected}")
    completed = statuses.get("completed", 0)
    phase1 = figures(load.lat["trial"], out.study_seconds) if load.lat["trial"] else trial
    burst_checks = burst_report(stack, out, phase1.p99_ms, args) if out.burst is not None else []
    checks = [*burst_checks,
              Target("lost + duplicated trials", found.lost + found.duplicated + found.mismatched + found.unexpected,
                     0, found.clean),
              Target("phase 1 participants not completed", args.participants - completed, 0,
                     completed == args.participants and not load.failures),
              *targets(trial, bare)]
    print()
    for check in checks:
        print(check.line())
    return 0 if all(c.ok for c in checks) else 1


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
    sys.path.insert(0, str(ROOT))
    stack = None
    try:
        stack = Stack(args)
        print(f"gunicorn: {args.workers} workers x {args.threads} thread(s) "
              f"({'gthread' if args.threads > 1 else 'sync'}) on {os.cpu_count()} cores; PostgreSQL "
              f"{urlsplit(stack.db.server_url).hostname}, database {stack.db.name}, persistent connections; "
              f"rate-limit cache: {'Redis' if stack.redis else 'local memory (no redis-server)'}")
        print(f"raised for this gunicorn only: {', '.join(f'{k}={v}' for k, v in ENTRY_LIMIT_ENV.items())} "
              f"(all {args.participants + args.concurrency} simulated participants share 127.0.0.1); "
              "the per-participant trial and session limits are left as configured")
        stack.start()
        left = args.max_seconds - (time.monotonic() - started)
        print(f"{args.participants} participants x {args.items} items (+ attention checks); max {args.max_seconds:g} s")
        try:
            meter = CpuMeter({"client": os.getpid(), "web": stack.web.proc.pid,
                              "Redis": stack.redis.proc.pid if stack.redis else None}) if Path("/proc/stat").exists() else None
            if args.burst_only:
                alone = asyncio.run(asyncio.wait_for(burst_alone(args, stack.web.base), timeout=max(1.0, left)))
                checks = burst_report(stack, Outcome(alone.load, [], [], {}, 0.0, 0.0, None, burst=alone), math.nan,
                                      args)
                for check in checks:
                    print(check.line())
                return 0 if all(c.ok for c in checks) else 1
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
