"""A remote scorer's event loop, paused as each request finishes and every STOP_EVERY seconds
(issue 34 item 7: a server run's progress moves per item, not per chunk; issue 43 item 3: a cancel
stops the requests within seconds).

A server or chat scorer sends a chunk's requests at once (client.py bounds how many are in flight);
`run(main, on_done, stop=...)` runs `main(report)` in an event loop of its own and, whenever the
coroutine calls `report(key)` (a request is finished), stops the loop between steps and calls
`on_done(key)` in the caller's thread; it stops it as well at least every STOP_EVERY seconds to call
`stop()`, which raises when the work is no longer wanted (the run loop's checkpoint: the job was
cancelled). No event loop is running then, so `on_done` and `stop` may use Django's database (the
run loop writes the run's progress, reads its status); the requests in flight wait in their sockets
meanwhile (a progress write takes milliseconds). An error in `on_done` or `stop` cancels everything
in flight — each request's connection is closed (httpcore drops a connection whose request was
cancelled) and each client's session with it (client.py's `async with`), so nothing more is sent —
and is raised.
"""
from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

Report = Callable[[object], None]
STOP_EVERY = 1.0  # seconds between two calls of `stop` while requests are in flight


def run(main: Callable[[Report], Awaitable], on_done: Callable[[object], None] | None = None, *,
        stop: Callable[[], None] | None = None, every: float = STOP_EVERY):
    """The result of `main(report)`; `on_done(key)` for each key reported and `stop()` at most every
    `every` seconds while requests are in flight, each with the loop paused."""
    if on_done is None and stop is None:
        return asyncio.run(main(lambda key: None))
    finished: list = []
    loop = asyncio.new_event_loop()
    wake: asyncio.Event | None = None

    def report(key) -> None:
        finished.append(key)
        wake.set()

    async def started():
        nonlocal wake
        wake = asyncio.Event()
        return asyncio.ensure_future(main(report))

    task = None
    checked = time.monotonic()
    try:
        task = loop.run_until_complete(started())
        while True:
            waiter = loop.create_task(wake.wait())
            loop.run_until_complete(asyncio.wait({task, waiter}, timeout=every if stop is not None else None,
                                                 return_when=asyncio.FIRST_COMPLETED))
            waiter.cancel()
            wake.clear()
            while finished:
                key = finished.pop(0)
                if on_done is not None:
                    on_done(key)
            if task.done():
                return task.result()
            if stop is not None and time.monotonic() - checked >= every:
                stop()
                checked = time.monotonic()
    finally:
        pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
        for t in pending:
            t.cancel()
        if pending:
            loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.run_until_complete(loop.shutdown_default_executor())
        loop.close()
