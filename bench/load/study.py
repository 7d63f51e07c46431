"""Phases 1 and 2: participants take the study with paper-like pauses, then trial saves and the bare
endpoint at saturation in alternating bursts; the report, with the database's audit."""
from __future__ import annotations

import asyncio
import math
import random
import secrets
import time
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .burst import Burst, burst, burst_report
from .client import Load, Person, seconds_per_answer
from .common import SLUG, expect, progress
from .cpu import CpuMeter, cpu_table, machine_cpu, stolen_share
from .figures import Audit, Target, audit, figures, targets

if TYPE_CHECKING:
    from .stack import Stack


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
                                   args.burst_seconds, meter)
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
    burst_checks = burst_report(stack, out.burst, phase1.p99_ms, args) if out.burst is not None else []
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
