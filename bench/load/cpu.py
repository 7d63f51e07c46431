"""CPU time per request by process group and for the whole machine, read from /proc (Linux)."""
from __future__ import annotations

import math
import os
from collections import Counter, defaultdict

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

    def __init__(self, roots: dict[str, int | None], database: str | None = None):
        """`database`: the bench's own database; the PostgreSQL backends serving it are counted apart too
        ("PostgreSQL, ours"), for on a shared server "PostgreSQL" holds every other database's work."""
        self.roots, self.tick_s, self.database = roots, 1 / os.sysconf("SC_CLK_TCK"), database
        self.ticks: dict[str, Counter] = defaultdict(Counter)
        self.requests: Counter = Counter()

    def snapshot(self) -> Counter:
        table = process_ticks()
        counts = Counter(group_ticks(table, self.roots))
        if self.database:
            counts["PostgreSQL, ours"] = sum(ticks for pid, (_, comm, ticks) in table.items()
                                             if comm.startswith("postgres") and self._serves(pid))
        machine = machine_cpu()
        if machine:  # user, nice, system, irq, softirq: time this machine's CPUs worked for us
            counts["machine"] = sum(machine[i] for i in (0, 1, 2, 5, 6))
        return counts

    def _serves(self, pid: int) -> bool:
        """Whether a postgres process is a backend of the bench's database (its title names it)."""
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                return f" {self.database} ".encode() in f.read().replace(b"\0", b" ") + b" "
        except OSError:
            return False

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
