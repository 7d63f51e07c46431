"""Phase 0, the launch-day burst (issue 38 item 7): arrivals on the entry page of a study sized like
003's demo; latency per arrival, and what the database says was lost or doubled."""
from __future__ import annotations

import asyncio
import math
import os
import random
import secrets
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urlencode, urlsplit

from .client import Load, Person
from .common import BURST_SLUG, expect
from .cpu import CPU_GROUPS, CpuMeter
from .figures import TARGET_BURST_P99_MS, BurstAudit, Figures, Target, burst_audit, figures

if TYPE_CHECKING:
    from .stack import Stack


@dataclass
class Burst:
    """Phase 0: what each arrival was sent to, its latency, and the load average when it started."""
    load: Load
    sent: dict[str, str | None]
    latencies: list[float]
    seconds: float
    loadavg: tuple[float, float, float] | None
    cpu: dict[str, float] | None = None  # CPU milliseconds per arrival by process group (cpu.py), Linux only


async def burst(load: Load, n: int, seconds: float, meter: CpuMeter | None = None) -> Burst:
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
    cpu0 = meter.snapshot() if meter else None
    t0 = time.perf_counter()
    await asyncio.gather(*(load.guarded(arrive(p, load.rng.uniform(0, seconds))) for p in people))
    elapsed = time.perf_counter() - t0
    if meter:
        meter.add("entry", cpu0, meter.snapshot(), n)
    return Burst(load, sent, latencies, elapsed, loadavg, meter.per_request_ms("entry") if meter else None)



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


async def burst_alone(args, base: str, meter: CpuMeter | None = None) -> Burst:
    import aiohttp

    connector = aiohttp.TCPConnector(limit=args.burst)
    async with aiohttp.ClientSession(connector=connector, timeout=aiohttp.ClientTimeout(total=120),
                                     cookie_jar=aiohttp.DummyCookieJar()) as http:
        return await burst(Load(base, http, random.Random(args.seed + 1), 0.0), args.burst, args.burst_seconds,
                           meter)


def burst_report(stack: Stack, b: Burst, trial_p99_ms: float, args) -> list[Target]:
    """Phase 0's figures (`b`, the burst's outcome) beside the trial-save p99, from the client and the database."""
    entry, found, items = burst_found(stack, b)
    load = ", ".join(f"{v:.2f}" for v in b.loadavg) if b.loadavg else "unknown"
    print(f"\nphase 0, launch-day burst: {args.burst} arrivals over {args.burst_seconds:g} s on the entry page of a "
          f"{items:,}-item study (load average before: {load})")
    print(f"  entry: {entry.line()}")
    if not math.isnan(trial_p99_ms):
        print(f"  entry p99 {entry.p99_ms:.1f} ms vs trial-save p99 {trial_p99_ms:.1f} ms: "
              f"{entry.p99_ms / trial_p99_ms if trial_p99_ms else math.nan:.1f}x")
    if b.cpu:  # PostgreSQL: every postgres process of the machine; "ours": the backends of the bench's database
        print("  CPU ms per arrival: " + ", ".join(f"{k} {b.cpu.get(k, math.nan):.1f}"
                                                   for k in (*CPU_GROUPS, "PostgreSQL, ours", "machine")))
    for name, n in sorted(b.load.count.items()):
        print(f"  {name}: {n}")
    for failure in b.load.failures[:10]:
        print(f"  FAILED: {failure}")
    if any(name.startswith("5") for name in b.load.count):
        print("  the server's first error (gunicorn's log):", *stack.server_errors(), sep="\n    ")
    print(f"  database: {found.arrivals} arrivals: lost {found.lost}, "
          f"doubled {found.doubled}")
    return [Target("burst entry p99 (ms)", entry.p99_ms, TARGET_BURST_P99_MS, entry.p99_ms <= TARGET_BURST_P99_MS),
            Target("burst arrivals lost + doubled", found.lost + found.doubled, 0,
                   not (found.lost or found.doubled or b.load.failures))]
