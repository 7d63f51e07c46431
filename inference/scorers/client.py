"""The request layer for inference servers and hosted APIs (asyncio): one client per server, a
bounded number of requests in flight per server, retries with backoff (Retry-After honoured).

Scoring (server.py, chat.py) and generation call the same client: `post(path, body)` returns the
decoded JSON, `gather(...)` runs many coroutines at once. The requests themselves go through
common/outbound.py (allowed destinations, a total deadline, a byte cap, no peer text in
errors). Nothing here knows about scores; API keys are read where the client is built
(services.api_key: listed and bound to the server's origin), held masked (outbound.Credential) and
written in clear only into its request headers (never in `describe()`, an error message, a log line or
a frame an error keeps).
"""
from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field

from common import outbound

log = logging.getLogger(__name__)

RETRIED_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})


class ServerError(RuntimeError):
    """A server answered with an error that retrying does not cure, or never answered."""


@dataclass
class Usage:
    """What a client has spent: requests, retries, tokens, and cost where the server reports it."""

    requests: int = 0
    retries: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0
    cost_reported: bool = False
    rate_limited: int = 0  # 429 answers (each waited for as Retry-After said)

    def add(self, body: dict) -> None:
        usage = body.get("usage") or {}
        self.prompt_tokens += int(usage.get("prompt_tokens") or 0)
        self.completion_tokens += int(usage.get("completion_tokens") or 0)
        for key in ("cost", "total_cost"):  # OpenRouter and others report a cost in usage
            if isinstance(usage.get(key), int | float):
                self.cost += float(usage[key])
                self.cost_reported = True

    def as_json(self) -> dict:
        out = {"requests": self.requests, "retries": self.retries, "rate_limited": self.rate_limited,
               "prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens}
        if self.cost_reported:
            out["cost"] = round(self.cost, 6)
        return out


def retry_after(response) -> float | None:
    """Seconds the server asks to wait (Retry-After: seconds or an HTTP date), else None."""
    value = response.headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        from email.utils import parsedate_to_datetime

        try:
            return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
        except (TypeError, ValueError):
            return None


@dataclass
class ServerClient:
    """One server: its base URL, how many requests may be in flight, how errors are retried. Every request
    goes through common.outbound (destination checked once, a total deadline of `timeout` seconds per
    request, a byte cap per answer, failures in words without the server's text).

    Use inside one event loop (`async with ServerClient(...) as client`)."""

    base_url: str
    concurrency: int = 4
    retries: int = 5
    backoff: float = 0.5  # seconds before the first retry; doubled each time, with jitter
    max_wait: float = 60.0
    timeout: float = 300.0  # seconds, in all, per request (not per read)
    api_key: str | outbound.Credential | None = field(default="", repr=False)  # held as a Credential
    usage: Usage = field(default_factory=Usage)
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep
    max_bytes: int | None = None  # per answer; None: DUET_OUTBOUND_MAX_MB

    def __post_init__(self):
        if self.concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        self.base_url = self.base_url.rstrip("/")
        self.api_key = outbound.credential(self.api_key)  # masked: no frame of an error shows it
        self._limit: asyncio.Semaphore | None = None
        self._session: outbound.AsyncSession | None = None

    async def __aenter__(self) -> ServerClient:
        session = outbound.AsyncSession(self.base_url, connections=self.concurrency, key=self.api_key,
                                        max_bytes=self.max_bytes)
        try:
            self._session = await session.__aenter__()
        except outbound.OutboundError as exc:
            raise ServerError(f"The server at {self.base_url} {exc}") from None
        self._limit = asyncio.Semaphore(self.concurrency)
        return self

    async def __aexit__(self, *exc) -> None:
        if self._session is not None:
            await self._session.__aexit__(*exc)
        self._session = None

    async def request(self, method: str, path: str, body: dict | None = None, *, retry: bool = True) -> dict:
        """The decoded JSON answer; transient failures (no connection, no answer in time, 408/429/5xx) are
        retried with exponential backoff, a 429's Retry-After is waited for as given."""
        if self._session is None:
            raise RuntimeError("use the client inside `async with`")
        attempt = 0
        while True:
            wait: float | None = None
            async with self._limit:
                try:
                    answer = await self._session.request(method, path, body, seconds=self.timeout)
                except outbound.OutboundError as exc:
                    problem = f"{self.base_url}{path} {exc}"
                    if exc.kind not in outbound.RETRIABLE:
                        raise ServerError(problem) from None
                else:
                    if answer.status < 300:
                        try:
                            decoded = answer.json()
                        except outbound.OutboundError as exc:
                            raise ServerError(f"{self.base_url}{path} {exc}") from None
                        self.usage.requests += 1
                        if isinstance(decoded, dict):
                            self.usage.add(decoded)
                        return decoded
                    problem = f"{self.base_url}{path} {answer.failure()}"
                    if answer.status == 429:
                        self.usage.rate_limited += 1
                        wait = retry_after(answer)
                    if answer.status not in RETRIED_STATUS:
                        raise ServerError(problem)
            attempt += 1
            if not retry or attempt > self.retries:
                raise ServerError(f"{problem} (after {attempt} attempt(s))")
            self.usage.retries += 1
            if wait is None:
                wait = self.backoff * 2 ** (attempt - 1) * (1 + random.random() / 2)
            log.info("retrying %s%s in %.1fs (%s)", self.base_url, path, wait, problem)
            await self.sleep(min(wait, self.max_wait))

    async def post(self, path: str, body: dict, *, retry: bool = True) -> dict:
        return await self.request("POST", path, body, retry=retry)

    async def get(self, path: str, *, retry: bool = True) -> dict:
        return await self.request("GET", path, retry=retry)


async def gather(coroutines: Iterable[Awaitable]) -> list:
    """Run the coroutines at once (each client bounds its own requests in flight); the first error
    cancels the rest and is raised."""
    tasks = [asyncio.ensure_future(c) for c in coroutines]
    try:
        return await asyncio.gather(*tasks)
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise


def run(coroutine: Awaitable):
    """Run a coroutine from synchronous code (a worker's scorer.score), in a loop of its own."""
    return asyncio.run(coroutine)
