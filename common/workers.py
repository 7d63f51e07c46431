"""Whether Celery workers are listening, for the admin: a run's queue ("cpu", "gpu") means something
only where workers take work from queues. In the embedded and eager modes (common/dispatch.py)
there are none, so the admin does not show the queue at all; in the Celery mode it asks the workers
(a ping with a short timeout) and shows the queue only when one answers. The answer is kept for a
few seconds so a list page asks once."""
from __future__ import annotations

import time

from . import dispatch

PING_TIMEOUT_S = 1.0
KEEP_S = 30.0
_last: dict[str, tuple[float, tuple[str, ...]]] = {}


def listening(*, timeout: float = PING_TIMEOUT_S) -> tuple[str, ...]:
    """The names of the Celery workers that answered a ping (empty: none, or not the Celery mode,
    or the broker cannot be reached)."""
    if dispatch.mode() != "celery":
        return ()
    from django.conf import settings

    key = settings.CELERY_BROKER_URL
    now = time.monotonic()
    kept = _last.get(key)
    if kept is not None and now - kept[0] < KEEP_S:
        return kept[1]
    from .celery_app import app

    try:
        with app.connection_for_write() as connection:
            connection.ensure_connection(max_retries=1, timeout=timeout)
            replies = app.control.inspect(timeout=timeout, connection=connection).ping() or {}
    except Exception:  # the broker is down or refuses: no worker can be reached either
        replies = {}
    names = tuple(sorted(replies))
    _last[key] = (now, names)
    return names


def queues_shown() -> bool:
    """Show a run's queue in the admin: only when Celery workers answer."""
    return bool(listening())


def forget() -> None:
    """Ask again next time (tests; after starting a worker)."""
    _last.clear()
