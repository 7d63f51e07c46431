"""How far a job is, in the researcher's words: `Progress` (done / total, the rate since the worker
started, the time left at that rate, silence when nothing was written for QUIET_AFTER) for the
admin's bar, and `ProgressPrinter` for the commands' lines. common.jobs re-exports all of it."""
from __future__ import annotations

import math
import time
from dataclasses import dataclass
from datetime import timedelta

# A running job that has written nothing for this long is shown as silent: its worker may have died
# (a model run's chunk or a report's R fit takes minutes, not this long, on the machines we know).
QUIET_AFTER = timedelta(minutes=30)


def duration(seconds: float) -> str:
    """'45 s', '3 min 05 s', '2 h 04 min'."""
    seconds = max(0, int(math.ceil(seconds)))
    if seconds < 60:
        return f"{seconds} s"
    minutes, rest = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes} min {rest:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


@dataclass(frozen=True)
class Progress:
    """done of total, the rate (per second, since the worker started; None before it is known) and the
    time left at that rate. What the admin's bar and the commands' lines print."""

    done: int
    total: int
    unit: str = "items"
    rate: float | None = None
    running: bool = False
    quiet_for: float | None = None  # seconds since a running job last wrote its progress

    @property
    def silent(self) -> bool:
        """Running, yet nothing written for QUIET_AFTER: its worker may have stopped."""
        return self.quiet_for is not None and self.quiet_for >= QUIET_AFTER.total_seconds()

    @property
    def share(self) -> float:
        return min(1.0, self.done / self.total) if self.total else 0.0

    @property
    def seconds_left(self) -> float | None:
        if not self.rate or self.total <= self.done:
            return None
        return (self.total - self.done) / self.rate

    def text(self) -> str:
        """'120 / 384 items (31 %), 3.2 items/s, about 1 min 23 s left'."""
        parts = [f"{self.done} / {self.total} {self.unit} ({100 * self.share:.0f} %)"]
        if self.rate:
            parts.append(f"{self.rate:.1f} {self.unit}/s" if self.rate >= 0.1 else f"{60 * self.rate:.1f} {self.unit}/min")
        left = self.seconds_left
        if left is not None and not self.silent:
            parts.append(f"about {duration(left)} left")
        if self.silent:
            parts.append(f"nothing written for {duration(self.quiet_for)}: its worker may have stopped "
                         "(cancel it, then retry it)")
        return ", ".join(parts)


class ProgressPrinter:
    """The commands' progress lines (run_model, the demo): `printer(done, total)` writes
    'Scoring: 120 / 384 items (31 %), 3.2 items/s, about 1 min 23 s left' at most every `every`
    seconds, and always the first and the last; the rate counts from the first call."""

    def __init__(self, write, *, label: str, unit: str = "items", every: float = 5.0, clock=time.monotonic):
        self.write, self.label, self.unit, self.every, self.clock = write, label, unit, every, clock
        self.start: float | None = None
        self.start_done = 0
        self.last: float | None = None

    def __call__(self, done: int, total: int) -> None:
        now = self.clock()
        if self.start is None:
            self.start, self.start_done = now, done
        elapsed = now - self.start
        rate = (done - self.start_done) / elapsed if elapsed > 0 and done > self.start_done else None
        final = total and done >= total
        if self.last is not None and not final and now - self.last < self.every:
            return
        self.last = now
        self.write(f"{self.label}: {Progress(done=done, total=total, unit=self.unit, rate=rate).text()}")
