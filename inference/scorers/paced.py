"""A remote scorer's event loop, paused as each request finishes (issue 34 item 7: a server run's
progress moves per item, not per chunk).

A server or chat scorer sends a chunk's requests at once (client.py bounds how many are in flight);
`run(main, on_done)` runs `main(report)` in an event loop of its own and, whenever the coroutine
calls `report(key)` (a request is finished), stops the loop between steps and calls `on_done(key)`
in the caller's thread. No event loop is running then, so `on_done` may use Django's database (the
run loop writes the run's progress); the requests in flight wait in their sockets meanwhile (a
progress write takes milliseconds). An error in `on_done` cancels what is in flight and is raised.
"""
from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

Report = Callable[[object], None]


def run(main: Callable[[Report], Awaitable], on_done: Callable[[object], None] | None = None):
    """The result of `main(report)`; `on_done(key)` for each key reported, with the loop paused."""
    if on_done is None:
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
    try:
        task = loop.run_until_complete(started())
        while True:
            waiter = loop.create_task(wake.wait())
            loop.run_until_complete(asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED))
            waiter.cancel()
            wake.clear()
            while finished:
                on_done(finished.pop(0))
            if task.done():
                return task.result()
    finally:
        pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
        for t in pending:
            t.cancel()
        if pending:
            loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.run_until_complete(loop.shutdown_default_executor())
        loop.close()
