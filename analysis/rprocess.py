"""A second process with its own R, for the longest fit of a report (R and threads do not mix, so
parallel fits mean processes). Sections run here through `run_section`, which turns an R failure
into the section's stated reason instead of a crash."""
from __future__ import annotations

import os
from dataclasses import dataclass

from common import env

from . import rbridge as rb
from .sections import Section

# Below this many rows (trials + scores) the human-vs-model fit takes less than a second process
# costs to start (Python's imports and R's packages: 3–5 s of CPU), so it runs in the caller.
PARALLEL_MIN_ROWS = 5_000


def run_section(function, *args) -> Section:
    """Run one analysis; an R failure becomes the section's stated reason, not a crash."""
    try:
        return function(*args)
    except rb.RUnavailable as error:  # R missing: the section says so; the rest of the report goes on
        return Section(_name(function, args), _title(function, args), absent=str(error))
    except Exception as error:  # an R error inside a fit: reported, the rest of the report goes on
        if type(error).__name__ != "RRuntimeError":
            raise
        return Section(_name(function, args), _title(function, args),
                       absent=f"R stopped with an error: {str(error).strip()}")


def child_ready() -> None:
    """The second process's start: Django's apps made ready as in the caller, so that the design registry holds
    every design there too (the designs register when the apps are ready) and a section's frame reads the same
    declared factor levels (registry.levels: the models' level order and codes) in either process. A failure
    here breaks the pool, and the section runs in the caller (Pending.result)."""
    from django.apps import apps

    if not apps.ready:  # the caller's settings module: the spawned process inherits its environment
        import django

        django.setup()


def _name(function, args) -> str:
    spec = args[0] if args and hasattr(args[0], "key") else None
    return spec.key if spec is not None else function.__name__


def _title(function, args) -> str:
    spec = args[0] if args and hasattr(args[0], "title") else None
    return spec.title if spec is not None else (function.__doc__ or function.__name__).splitlines()[0]


def processes_default() -> int:
    """DUET_ANALYSIS_PROCESSES (common/env.py), else 2 on a machine with two or more CPUs."""
    chosen = env.analysis_processes()
    if chosen is not None:
        return chosen
    return 2 if (os.cpu_count() or 1) >= 2 else 1


class RProcess:
    """A second process with its own R, for an analysis run beside the caller's work. Started as
    early as possible: the process is spawned — never forked, a forked embedded R is not safe — and
    loads R while the caller reads its data. With fewer than two `processes` (default
    processes_default()), or where no child process can be started (e.g. inside a daemonic worker),
    nothing starts and `submit` runs the analysis in the caller when its result is asked for. Same
    Section either way."""

    @classmethod
    def for_rows(cls, n_trials: int, n_scores: int) -> "RProcess":
        """The helper for a study of this size: a second process only when there are both humans and
        models and at least PARALLEL_MIN_ROWS rows between them."""
        worth = n_trials > 0 and n_scores > 0 and n_trials + n_scores >= PARALLEL_MIN_ROWS
        return cls(processes=None if worth else 1)

    def __init__(self, *, processes: int | None = None):
        self._pool = None
        if (processes or processes_default()) < 2:
            return
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        try:
            self._pool = ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn"),
                                             initializer=child_ready)
            self._pool.submit(rb.available)  # loads R there now; a failure shows in the analysis later
        except (AssertionError, OSError, RuntimeError):  # no child processes here
            self.close()

    @property
    def where(self) -> str:
        return "second process" if self._pool is not None else "this process"

    def submit(self, function, *args) -> "Pending":
        future = self._pool.submit(run_section, function, *args) if self._pool is not None else None
        return Pending(function, args, future)

    def __enter__(self) -> "RProcess":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
        self._pool = None


@dataclass
class Pending:
    function: object
    args: tuple
    future: object = None

    def result(self) -> Section:
        if self.future is not None:
            from concurrent.futures.process import BrokenProcessPool

            try:
                return self.future.result()
            except BrokenProcessPool:  # the process died (killed, out of memory): once more, here
                pass
        return run_section(self.function, *self.args)
