"""Every request Duet makes to a model server goes through here (DESIGN.md habit 18; issue 34 item 2).

One way out, for the save-time checks (sync: `request`) and the runs (async: `AsyncSession`):

1. The URL is validated first: http or https, a host, no user-info, query or fragment (a path
   prefix such as https://openrouter.ai/api is fine). Nothing is sent for a URL that fails.
2. The host is resolved once and every address it resolves to must be allowed: a public address,
   or one an administrator allowed in DUET_OUTBOUND_ALLOW (common/env.py; the embedded default
   allows loopback, production nothing). Loopback, link-local (169.254.0.0/16, fe80::/10), site-local,
   private, unspecified, multicast and reserved addresses are refused, an IPv6 form that carries an
   IPv4 address (NAT64, 6to4, Teredo, IPv4-mapped, -compatible, SIIT) judged by what it carries; so are
   the deployment's own database, broker and cache (DATABASE_URL, CELERY_BROKER_URL, CACHE_URL), by host
   on every port and by this machine's addresses on their ports, unless an entry names the host and the
   port asked. The connection then goes to the address that was checked (httpcore's
   network backend is replaced by one that connects there and nowhere else), with the URL's host
   in the Host header and the TLS server name: a DNS answer that changes between the check and
   the connection (rebinding) changes nothing.
3. A request has a total deadline (not httpx's per-read timeouts: a peer sending one byte every 2 s
   is cut at the deadline) and its answer a byte cap, counted while it streams in (compressed
   answers: counted again as they are decompressed).
4. Failures are said by class, in words ("cannot be reached", "refused the key (HTTP 401)",
   "answered HTTP 404", "did not answer within 5 s", "sent more than 1 MB"): never with the peer's
   own text, which may be an internal service's error page. Every exception of the HTTP stack, not
   only httpx.HTTPError (httpx.InvalidURL for a path with a control character), becomes an
   OutboundError, raised afresh: no chained exception, and no frame of httpx's, is kept with it.
5. A key travels as a `Credential` (an httpx Auth, held masked): no local variable, attribute or
   error that an error reporter captures holds it in clear; only the request on the wire does.

Where a request may go and with which key (points 1 and 2, and `api_key(name, urls=…)`: a key read only
from a name on DUET_MODEL_API_KEYS, for the origins that list binds it to) lives in
common/destinations.py; its names are re-exported here, the one module callers import.
"""
from __future__ import annotations

import asyncio
import functools
import json
import secrets
import time
import zlib
from dataclasses import dataclass

import httpcore
import httpx

from . import env
from .destinations import (  # noqa: F401  (re-exported: the one module callers import)
    DESTINATION, FAILED, KEY, NOT_HTTP, NOT_JSON, RESOLVE_SECONDS, RETRIABLE, TIMEOUT, TOO_BIG, UNREACHABLE, URL,
    OutboundError, Target, api_key, carried, rules, size, target, url_parts,
)

# ------------------------------------------------------------------------------------- the key
class Credential(httpx.Auth):
    """A key sent as `Authorization: <scheme> <key>` (Bearer for model servers, Token for Prolific), held
    XOR-masked with a random pad: the clear text exists only while the header is written, so neither this
    object nor a frame holding it shows the key to an error reporter that captures locals (repr, attributes).
    """

    def __init__(self, key: str, *, scheme: str = "Bearer"):
        clear = f"{scheme} {key}".encode()
        self._pad = secrets.token_bytes(len(clear))
        self._masked = bytes(a ^ b for a, b in zip(clear, self._pad))

    def auth_flow(self, request: httpx.Request):
        request.headers["authorization"] = bytes(a ^ b for a, b in zip(self._masked, self._pad)).decode()
        yield request

    def __repr__(self) -> str:
        return "<Credential [secure]>"


def credential(key: str | Credential | None) -> Credential | None:
    """`key` as a Credential (a Bearer key given as text), None for none."""
    if isinstance(key, Credential) or key is None:
        return key
    return Credential(key) if key else None


# ------------------------------------------------------------------------------------- transports
class _DeadlineStream(httpcore.NetworkStream):
    """A socket whose every read and write ends by the request's deadline."""

    def __init__(self, inner: httpcore.NetworkStream, deadline: float):
        self._inner, self._deadline = inner, deadline

    def _left(self, timeout: float | None, error: type[Exception]) -> float:
        left = self._deadline - time.monotonic()
        if left <= 0:
            raise error("the request's deadline has passed")
        return left if timeout is None else min(timeout, left)

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, self._left(timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, self._left(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(self, ssl_context, server_hostname=None, timeout=None):
        inner = self._inner.start_tls(ssl_context, server_hostname, self._left(timeout, httpcore.ConnectTimeout))
        return _DeadlineStream(inner, self._deadline)

    def get_extra_info(self, info: str):
        return self._inner.get_extra_info(info)


def _same(host: str, port: int, checked: Target) -> None:
    if host.strip("[]").lower().rstrip(".") != checked.host or port != checked.port:
        raise httpcore.ConnectError("not the destination that was checked")


class _PinnedBackend(httpcore.NetworkBackend):
    """Connects to the checked address only, by the deadline."""

    def __init__(self, checked: Target, deadline: float):
        self._checked, self._deadline, self._inner = checked, deadline, httpcore.SyncBackend()

    def connect_tcp(self, host, port, timeout=None, local_address=None, socket_options=None):
        _same(host, port, self._checked)
        left = self._deadline - time.monotonic()
        if left <= 0:
            raise httpcore.ConnectTimeout("the request's deadline has passed")
        stream = self._inner.connect_tcp(self._checked.address, port, timeout=left if timeout is None else
                                         min(timeout, left), local_address=local_address, socket_options=socket_options)
        return _DeadlineStream(stream, self._deadline)

    def connect_unix_socket(self, path, timeout=None, socket_options=None):
        raise httpcore.ConnectError("no unix sockets")

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)


class _PinnedAsyncBackend(httpcore.AsyncNetworkBackend):
    """Connects to the checked address only (the deadline: asyncio.timeout around each request)."""

    def __init__(self, checked: Target):
        self._checked, self._inner = checked, httpcore.AnyIOBackend()

    async def connect_tcp(self, host, port, timeout=None, local_address=None, socket_options=None):
        _same(host, port, self._checked)
        return await self._inner.connect_tcp(self._checked.address, port, timeout=timeout,
                                             local_address=local_address, socket_options=socket_options)

    async def connect_unix_socket(self, path, timeout=None, socket_options=None):
        raise httpcore.ConnectError("no unix sockets")

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


@functools.cache
def _tls():
    """The certificate store, loaded once (a few hundred ms each time otherwise)."""
    return httpx.create_ssl_context()


def _pool_options(checked: Target, connections: int) -> dict:
    return {"ssl_context": _tls() if checked.scheme == "https" else None, "max_connections": connections,
            "max_keepalive_connections": connections, "keepalive_expiry": 5.0}


# httpx builds its httpcore pool itself and takes no network backend: its transport is made as usual and its
# pool replaced by one with the pinned backend (checked by tests/studyserver/test_outbound.py's rebinding test).
def _transport(checked: Target, deadline: float) -> httpx.HTTPTransport:
    transport = httpx.HTTPTransport(verify=_tls())  # (its own pool, replaced below, would load the store again)
    transport._pool = httpcore.ConnectionPool(**_pool_options(checked, 1),
                                              network_backend=_PinnedBackend(checked, deadline))
    return transport


def _async_transport(checked: Target, connections: int) -> httpx.AsyncHTTPTransport:
    transport = httpx.AsyncHTTPTransport(verify=_tls())
    transport._pool = httpcore.AsyncConnectionPool(**_pool_options(checked, connections),
                                                   network_backend=_PinnedAsyncBackend(checked))
    return transport


# ------------------------------------------------------------------------------------- answers
@dataclass(frozen=True)
class Answer:
    status: int
    headers: httpx.Headers
    content: bytes

    def json(self):
        try:
            return json.loads(self.content)
        except (ValueError, UnicodeDecodeError):
            raise OutboundError(NOT_JSON, "did not answer with JSON") from None

    def failure(self) -> str:
        """'' for a success, else the answer's class in words (never its body)."""
        if self.status < 300:
            return ""
        if self.status in (401, 403):
            return f"refused the key (HTTP {self.status})"
        if self.status < 400:
            return f"answered HTTP {self.status} (a redirect, which Duet does not follow: give the URL it points to)"
        return f"answered HTTP {self.status}"


def _decoded(headers: httpx.Headers, raw: bytes, max_bytes: int) -> bytes:
    coding = headers.get("content-encoding", "identity").strip().lower()
    if coding in ("", "identity"):
        return raw
    if coding not in ("gzip", "x-gzip", "deflate"):
        raise OutboundError(NOT_HTTP, f"sent its answer in an encoding Duet does not read ({coding[:20]})")
    try:
        inflater = zlib.decompressobj(47)  # gzip or zlib, by their headers
        out = inflater.decompress(raw, max_bytes + 1)
    except zlib.error:
        raise OutboundError(NOT_HTTP, "sent a compressed answer that does not decompress") from None
    if len(out) > max_bytes or inflater.unconsumed_tail:
        raise OutboundError(TOO_BIG, f"sent more than {size(max_bytes)}")
    return out


def _announced(headers: httpx.Headers, max_bytes: int) -> None:
    length = headers.get("content-length", "")
    if length.isdigit() and int(length) > max_bytes:
        raise OutboundError(TOO_BIG, f"sent more than {size(max_bytes)}")


def _failure(exc: Exception, seconds: float) -> tuple[str, str]:
    """Any exception of a request as (kind, words): OutboundError as it is, httpx's by class, anything else from
    the HTTP stack (httpx.InvalidURL is not an httpx.HTTPError) as FAILED, named by its class only."""
    if isinstance(exc, OutboundError):
        return exc.kind, str(exc)
    if isinstance(exc, httpx.InvalidURL):
        return URL, "was not asked: the request's URL is not a valid URL (a control character or the like)"
    if isinstance(exc, httpx.ConnectTimeout):
        return UNREACHABLE, f"cannot be reached (no connection within {round(seconds, 1):g} s)"
    if isinstance(exc, httpx.TimeoutException):
        return TIMEOUT, f"did not answer within {round(seconds, 1):g} s"
    if isinstance(exc, httpx.ProtocolError | httpx.DecodingError):
        return NOT_HTTP, "did not answer as an HTTP server"
    if isinstance(exc, httpx.HTTPError):
        return UNREACHABLE, "cannot be reached"
    return FAILED, f"was not asked: Duet's HTTP client failed ({type(exc).__name__})"


HEADERS = {"accept": "application/json", "accept-encoding": "gzip, deflate", "user-agent": "duet"}


def request(method: str, base_url: str, path: str, *, body: dict | None = None, key: str | Credential = "",
            seconds: float, max_bytes: int, checked: Target | None = None) -> Answer:
    """One request (sync) to `path` under a server's base URL, finished within `seconds` in all, its answer
    read up to `max_bytes`; OutboundError saying what went wrong by class, raised afresh (see point 4). The key
    (a Credential, or text sent as `Bearer <key>`) goes in the Authorization header."""
    deadline = time.monotonic() + seconds
    auth = credential(key)
    del key  # from here on only the masked Credential: this frame is kept by any error raised below
    checked = checked or target(base_url, seconds=min(seconds, RESOLVE_SECONDS))
    try:
        return _exchange(method, checked, path, body, auth, deadline, max_bytes)
    except Exception as exc:  # noqa: BLE001 — every exception of the HTTP stack is said as the client's own
        failure = _failure(exc, seconds)
    raise OutboundError(*failure)  # outside the handler: no __context__, none of httpx's frames or requests


def _exchange(method: str, checked: Target, path: str, body: dict | None, auth: Credential | None,
              deadline: float, max_bytes: int) -> Answer:
    """The exchange itself; its frame (the response, the request with its header) dies with the exception."""
    with httpx.Client(transport=_transport(checked, deadline), trust_env=False, follow_redirects=False,
                      timeout=None, auth=auth) as client:
        with client.stream(method, checked.base + path, json=body, headers=HEADERS) as response:
            _announced(response.headers, max_bytes)
            raw = bytearray()
            for chunk in response.iter_raw():
                raw += chunk
                if len(raw) > max_bytes:
                    raise OutboundError(TOO_BIG, f"sent more than {size(max_bytes)}")
            return Answer(response.status_code, response.headers, _decoded(response.headers, bytes(raw), max_bytes))


class AsyncSession:
    """Requests (async) to one server, `connections` at most at once, its destination checked once on entry:
    `async with AsyncSession(url, …) as s: answer = await s.request("POST", "/v1/completions", body, seconds=…)`."""

    def __init__(self, base_url: str, *, connections: int = 4, key: str | Credential = "",
                 max_bytes: int | None = None):
        self.base_url, self.connections = base_url, connections
        self.max_bytes = max_bytes or env.outbound_max_bytes()
        self._auth = credential(key)
        del key
        self._http: httpx.AsyncClient | None = None
        self.checked: Target | None = None

    async def __aenter__(self) -> AsyncSession:
        self.checked = await asyncio.to_thread(target, self.base_url)
        # timeout=None: httpx's per-read timeouts are replaced by one deadline per request (asyncio.timeout)
        self._http = httpx.AsyncClient(transport=_async_transport(self.checked, self.connections), trust_env=False,
                                       follow_redirects=False, headers=HEADERS, auth=self._auth, timeout=None)
        return self

    async def __aexit__(self, *exc) -> None:
        if self._http is not None:
            await self._http.aclose()
        self._http = None

    async def request(self, method: str, path: str, body: dict | None = None, *, seconds: float) -> Answer:
        if self._http is None:
            raise RuntimeError("use the session inside `async with`")
        scope = asyncio.timeout(seconds)
        try:
            async with scope:
                return await self._exchange(method, path, body)
        except TimeoutError:
            failure = (TIMEOUT, f"did not answer within {round(seconds, 1):g} s") if scope.expired() else \
                (UNREACHABLE, "cannot be reached")
        except Exception as exc:  # noqa: BLE001 — as in `request`
            failure = _failure(exc, seconds)
        raise OutboundError(*failure)  # afresh, as in `request`

    async def _exchange(self, method: str, path: str, body: dict | None) -> Answer:
        async with self._http.stream(method, self.checked.base + path, json=body) as response:
            _announced(response.headers, self.max_bytes)
            raw = bytearray()
            async for chunk in response.aiter_raw():
                raw += chunk
                if len(raw) > self.max_bytes:
                    raise OutboundError(TOO_BIG, f"sent more than {size(self.max_bytes)}")
            return Answer(response.status_code, response.headers,
                          _decoded(response.headers, bytes(raw), self.max_bytes))
