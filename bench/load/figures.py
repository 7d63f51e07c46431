"""Pure figures of the participant load bench: percentiles, latency figures, the targets, and the
database audits of phases 0-2 (tests/bench/test_participants_bench.py)."""
from __future__ import annotations

import math
from collections import Counter, defaultdict
from dataclasses import dataclass

TARGET_THROUGHPUT, TARGET_P99 = 0.5, 10.0
TARGET_BURST_P99_MS = 500.0


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
