"""The one way into the workers (DESIGN.md rule 13).

Services hand background work to `send` by the registered name of a thin Celery task and its
integer ids; settings.DUET_TASK_MODE (common/env.py) alone decides where it runs:

- "eager": in this process, `task.apply(args=...)`, once the transaction commits (tests, debugging);
- "embedded" (the default): a detached `manage.py run_task TASK_NAME ARG...` process started on this
  machine, its output appended to VAR_DIR/logs/<log_name>.log; no broker server needed;
- "celery": `task.apply_async(args=..., queue=queue)` on CELERY_BROKER_URL (Redis), for the Celery
  workers of that queue.

Nothing here reads CELERY_TASK_ALWAYS_EAGER or looks at the broker URL.
"""
from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from django.conf import settings
from django.db import transaction

from .env import BASE_DIR, TASK_MODES, VAR_DIR


def mode() -> str:
    """The task mode background work is sent with: "eager", "embedded" or "celery" (for messages)."""
    value = settings.DUET_TASK_MODE
    if value not in TASK_MODES:
        raise ValueError(f"settings.DUET_TASK_MODE={value!r} is not one of {', '.join(TASK_MODES)}")
    return value


def send(task_name: str, *, args: Sequence[int], queue: str = "cpu", log_name: str,
         on_unreachable: Callable[[Exception], None] | None = None) -> None:
    """Run the registered Celery task `task_name` with `args` once the current transaction commits
    (at once outside a transaction), where settings.DUET_TASK_MODE says.

    task_name: the task's registered name, e.g. "analysis.build_report" or "inference.run_model".
    args: the task's positional arguments, integers only (ids: the embedded worker gets them on its
        command line).
    queue: the Celery queue in "celery" mode ("cpu" or "gpu"); ignored by the other modes.
    log_name: the embedded worker's log file, VAR_DIR/logs/<log_name>.log (e.g. f"report-{id}");
        ignored by the other modes.
    on_unreachable: called with kombu's OperationalError when the broker cannot be reached in
        "celery" mode (nothing was queued: record it where the user will see it, e.g. fail the
        row so that a retry can send it again); when None the error propagates from the commit.

    An unknown task name or a non-integer argument raises here, before anything is scheduled. In
    "eager" mode a failing task raises nothing (Celery keeps its error in the result; the task's
    service records it); "embedded" returns once the process has started, without waiting for it.
    """
    task_name = str(task_name)
    args = list(args)
    if not all(isinstance(arg, int) and not isinstance(arg, bool) for arg in args):
        raise TypeError(f"dispatch.send({task_name!r}): args must be integers (ids), got {args!r}")
    task = registered(task_name)
    how = mode()

    def deliver() -> None:
        if how == "eager":
            task.apply(args=args)
        elif how == "embedded":
            spawn([sys.executable, str(BASE_DIR / "manage.py"), "run_task", task_name, *map(str, args)],
                  log=VAR_DIR / "logs" / f"{log_name}.log")
        else:
            from kombu.exceptions import OperationalError as BrokerUnreachable

            try:
                task.apply_async(args=args, queue=queue)
            except BrokerUnreachable as exc:
                if on_unreachable is None:
                    raise
                on_unreachable(exc)

    transaction.on_commit(deliver)


def registered(task_name: str):
    """The Celery task registered under `task_name` (the installed apps' tasks modules are imported
    first); LookupError naming the known tasks when there is none."""
    from .celery_app import app

    if task_name not in app.tasks:
        app.loader.import_default_modules()  # autodiscovery: every installed app's tasks module
    try:
        return app.tasks[task_name]
    except KeyError:
        known = sorted(name for name in app.tasks if not name.startswith("celery."))
        raise LookupError(f"No task registered as {task_name!r}; known: {', '.join(known)}") from None


def spawn(argv: list[str], *, log: Path) -> subprocess.Popen:
    """Start `argv` detached from this process (own session, no stdin), in BASE_DIR, its stdout and
    stderr appended to `log`; return without waiting for it."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "ab") as out:
        return subprocess.Popen(argv, cwd=BASE_DIR, stdout=out, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True)
