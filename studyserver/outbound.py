"""Every request Duet makes to a model server goes through here (DESIGN.md habit 18; issue 34 item 2).

One way out, for the save-time checks (sync: `request`) and the runs (async: `AsyncSession`):

1. The URL is validated first: http or https, a host, no user-info, query or fragment (a path
   prefix such as https://openrouter.ai/api is fine). Nothing is sent for a URL that fails.
2. The host is resolved once and every address it resolves to must be allowed: a public address,
   or one an administrator allowed in DUET_OUTBOUND_ALLOW (studyserver/env.py; the embedded default
   allows loopback, production nothing). Loopback, link-local (169.254.0.0/16, fe80::/10), private,
   unspecified, multicast and reserved addresses are refused, and so are the deployment's own
   database, broker and cache (DATABASE_URL, CELERY_BROKER_URL, CACHE_URL) unless an entry names
   their host and port. The connection then goes to the address that was checked (httpcore's
   network backend is replaced by one that connects there and nowhere else), with the URL's host
   in the Host header and the TLS server name: a DNS answer that changes between the check and
   the connection (rebinding) changes nothing.
3. A request has a total deadline (not httpx's per-read timeouts: a peer sending one byte every 2 s
   is cut at the deadline) and its answer a byte cap, counted while it streams in (compressed
   answers: counted again as they are decompressed).
4. Failures are said by class, in words ("cannot be reached", "refused the key (HTTP 401)",
   "answered HTTP 404", "did not answer within 5 s", "sent more than 1 MB"): never with the peer's
   own text, which may be an internal service's error page.

API keys: `api_key(name, urls=…)` reads a key only from a name on DUET_MODEL_API_KEYS and only for the
origins that list binds it to (env.model_api_keys).
"""
from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import ipaddress
import json
import socket
import time
import zlib
from dataclasses import dataclass
from urllib.parse import urlsplit

import httpcore
import httpx

from . import env

URL, DESTINATION, UNREACHABLE, TIMEOUT, TOO_BIG, NOT_HTTP, NOT_JSON, KEY = (
    "url", "destination", "unreachable", "timeout", "too big", "not http", "not json", "key")
RETRIABLE = frozenset({UNREACHABLE, TIMEOUT, NOT_HTTP})
DEFAULT_PORTS = {"http": 80, "https": 443, "postgres": 5432, "postgresql": 5432, "pgsql": 5432, "redis": 6379,
                 "rediss": 6379, "memcache": 11211, "pymemcache": 11211}


class OutboundError(RuntimeError):
    """A request that was not made or got no usable answer; `kind` is its class, str() its words (no peer
    text in them)."""

    def __init__(self, kind: str, words: str):
        super().__init__(words)
        self.kind = kind


def size(n: int) -> str:
    return f"{n / 1024 / 1024:g} MB" if n >= 1024 * 1024 else f"{n:,} bytes"


# ------------------------------------------------------------------------------------------- the URL
@dataclass(frozen=True)
class Target:
    """A checked destination: where the URL points and the one address a connection may go to."""

    scheme: str
    host: str  # lower case; an IPv6 address without brackets
    port: int
    prefix: str  # the URL's path, no trailing slash ("" or "/api")
    address: str  # the address checked, connected to

    @property
    def origin(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        default = self.port == DEFAULT_PORTS[self.scheme]
        return f"{self.scheme}://{host}" + ("" if default else f":{self.port}")

    @property
    def base(self) -> str:
        return self.origin + self.prefix


def url_parts(url: str) -> tuple[str, str, int, str]:
    """(scheme, host, port, path prefix) of a server's base URL; OutboundError (URL) saying what is wrong."""
    text = (url or "").strip()
    shown = text if len(text) <= 200 else text[:200] + "…"

    def refuse(why: str) -> OutboundError:
        return OutboundError(URL, f"{shown!r} is not a server's base URL: {why}. Give scheme://host[:port][/path], "
                                  "e.g. http://gpu1:8000 or https://openrouter.ai/api.")

    if not text or any(c.isspace() or ord(c) < 32 or c == "\\" for c in text):
        raise refuse("it is empty or holds spaces, control characters or backslashes")
    parts = urlsplit(text)
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        raise refuse("only http and https are used")
    if "@" in parts.netloc:
        raise refuse("it holds a user name or password (user-info); a key goes in an API-key variable")
    if "?" in text:
        raise refuse("it has a query (…?…)")
    if "#" in text:
        raise refuse("it has a fragment (…#…)")
    try:
        host, port = parts.hostname, parts.port
    except ValueError:
        raise refuse("its port is not a number from 1 to 65535") from None
    if not host or "%" in host:
        raise refuse("it names no host")
    return scheme, host.lower().rstrip("."), port or DEFAULT_PORTS[scheme], parts.path.rstrip("/")


# ------------------------------------------------------------------------------------- the policy
@dataclass(frozen=True)
class Rule:
    network: ipaddress.IPv4Network | ipaddress.IPv6Network | None
    host: str | None
    port: int | None

    def matches(self, ip, host: str, port: int) -> bool:
        where = (self.network is not None and ip.version == self.network.version and ip in self.network) or \
            (self.host is not None and self.host == host)
        return where and (self.port is None or self.port == port)


def rules(entries: list[str]) -> list[Rule]:
    """DUET_OUTBOUND_ALLOW's entries as rules; SettingsError for one that is neither a CIDR block, a host
    nor 'loopback' (each with an optional :PORT)."""
    found = []
    for entry in entries:
        text = entry.strip().lower()
        if text == "loopback":
            found += [Rule(ipaddress.ip_network("127.0.0.0/8"), None, None), Rule(ipaddress.ip_network("::1"), None, None)]
            continue
        try:
            found.append(Rule(ipaddress.ip_network(text, strict=False), None, None))
            continue
        except ValueError:
            pass
        host, port = text, None
        if text.startswith("["):
            host, _, rest = text[1:].partition("]")
            port = rest.removeprefix(":") or None
        elif text.count(":") == 1:
            host, port = text.split(":")
        if port is not None and not (port.isdigit() and 0 < int(port) < 65536) or not host:
            raise env.SettingsError(f"DUET_OUTBOUND_ALLOW: {entry!r} is not a CIDR block, host or host:port.")
        port = int(port) if port is not None else None
        try:
            found.append(Rule(ipaddress.ip_network(host), None, port))
        except ValueError:
            found.append(Rule(None, host.rstrip("."), port))
    return found


RESOLVE_SECONDS = 10.0  # the longest a host name's resolution is waited for (getaddrinfo has no timeout)
_RESOLVERS = concurrent.futures.ThreadPoolExecutor(max_workers=4, thread_name_prefix="duet-resolve")


def _resolve(host: str, port: int, seconds: float = RESOLVE_SECONDS) -> list:
    """The addresses of `host`, resolved once; a name server that does not answer holds a resolver thread,
    never the caller past `seconds`."""
    try:
        return [ipaddress.ip_address(host)]
    except ValueError:
        pass
    try:
        infos = _RESOLVERS.submit(socket.getaddrinfo, host, port, type=socket.SOCK_STREAM).result(max(0.01, seconds))
    except concurrent.futures.TimeoutError:
        raise OutboundError(UNREACHABLE, f"cannot be reached (its host name did not resolve within "
                                         f"{round(seconds, 1):g} s)") from None
    except (socket.gaierror, UnicodeError, OSError):
        raise OutboundError(UNREACHABLE, "cannot be reached (its host name does not resolve here)") from None
    found = []
    for info in infos:
        ip = ipaddress.ip_address(info[4][0].split("%")[0])
        if ip not in found:
            found.append(ip)
    return found


def _plain(ip):
    return ip.ipv4_mapped if ip.version == 6 and ip.ipv4_mapped else ip


def services() -> set[tuple[str, int]]:
    """(address, port) of the deployment's own database, broker and cache."""
    found = set()
    for url in env.service_urls():
        try:
            parts = urlsplit(url)
            host, port = parts.hostname, parts.port or DEFAULT_PORTS.get(parts.scheme.split("+")[0].lower())
        except ValueError:
            continue
        if not host or not port:
            continue
        try:
            found |= {(str(_plain(ip)), port) for ip in _resolve(host, port, 2.0)}
        except OutboundError:
            continue
    return found


def _kind(ip) -> str:
    for name in ("loopback", "link_local", "unspecified", "multicast", "private", "reserved"):
        if getattr(ip, f"is_{name}"):
            return name.replace("_", "-")
    return "non-public"


def refusal(ip, host: str, port: int, allowed: list[Rule], own: set[tuple[str, int]]) -> str:
    """'' when a request may go to `ip`:`port` (named `host`), else why not."""
    ip = _plain(ip)
    if (str(ip), port) in own:
        if any(rule.port == port and rule.matches(ip, host, port) for rule in allowed):
            return ""
        return f"is this deployment's own database, broker or cache ({ip} port {port})"
    if ip.is_global and not ip.is_multicast:
        return ""
    if any(rule.matches(ip, host, port) for rule in allowed):
        return ""
    return f"is a {_kind(ip)} address" + ("" if str(ip) == host else f" ({ip})")


def target(url: str, *, seconds: float = RESOLVE_SECONDS) -> Target:
    """The checked destination of a server's base URL: the URL validated, its host resolved once (within
    `seconds`) and every address allowed; OutboundError (URL, DESTINATION or UNREACHABLE) otherwise, before
    anything is sent."""
    scheme, host, port, prefix = url_parts(url)
    addresses = _resolve(host, port, seconds)
    allowed, own = rules(env.outbound_allow()), services()
    for ip in addresses:
        why = refusal(ip, host, port, allowed, own)
        if why:
            raise OutboundError(DESTINATION, f"is not a destination Duet sends requests to: {host} {why}. An "
                                             "administrator may allow it (DUET_OUTBOUND_ALLOW, docs/production.md).")
    return Target(scheme, host, port, prefix, str(addresses[0]))


# ------------------------------------------------------------------------------------- API keys
def api_key(name: str, *, urls: list[str]) -> str:
    """The API key in the environment variable `name`, for requests to `urls`: '' for no name; OutboundError
    (KEY) when the name is not on DUET_MODEL_API_KEYS, when a URL's origin is not one the list binds it to
    (nothing is sent then), or when the variable is not set. Never a Django setting."""
    name = (name or "").strip()
    if not name:
        return ""
    try:
        listed = env.model_api_keys()
    except env.SettingsError as exc:
        raise OutboundError(KEY, str(exc)) from None
    if name not in listed or name.upper() in env.NEVER_API_KEYS:
        raise OutboundError(KEY, f"{name} is not on this deployment's list of model API keys (DUET_MODEL_API_KEYS, "
                                 "docs/production.md); whoever runs Duet adds it there, bound to its provider's "
                                 "origin, e.g. OPENAI_API_KEY=https://api.openai.com.")
    for url in urls:
        scheme, host, port, _ = url_parts(url)
        origin = Target(scheme, host, port, "", "").origin
        if origin not in listed[name]:
            raise OutboundError(KEY, f"The key in {name} is sent only to {', '.join(listed[name])} "
                                     f"(DUET_MODEL_API_KEYS), not to {origin}.")
    value = env.secret_from_environment(name)
    if value and value in {env.secret_key_given(), *env.service_urls()}:
        raise OutboundError(KEY, f"{name} holds this deployment's own secret key or a service's URL, never a model "
                                 "API key.")
    if not value:
        raise OutboundError(KEY, f"The API key variable {name} is not set here. Set it in the environment of the web "
                                 f"server and the workers (export {name}=…) and save again; the key itself is never "
                                 "stored in the configuration.")
    return value


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


def _words(exc: httpx.HTTPError, seconds: float) -> OutboundError:
    if isinstance(exc, httpx.ConnectTimeout):
        return OutboundError(UNREACHABLE, f"cannot be reached (no connection within {round(seconds, 1):g} s)")
    if isinstance(exc, httpx.TimeoutException):
        return OutboundError(TIMEOUT, f"did not answer within {round(seconds, 1):g} s")
    if isinstance(exc, httpx.ProtocolError | httpx.DecodingError):
        return OutboundError(NOT_HTTP, "did not answer as an HTTP server")
    return OutboundError(UNREACHABLE, "cannot be reached")


HEADERS = {"accept": "application/json", "accept-encoding": "gzip, deflate", "user-agent": "duet"}


def request(method: str, base_url: str, path: str, *, body: dict | None = None, key: str = "", seconds: float,
            max_bytes: int, checked: Target | None = None) -> Answer:
    """One request (sync) to `path` under a server's base URL, finished within `seconds` in all, its answer
    read up to `max_bytes`; OutboundError saying what went wrong by class."""
    deadline = time.monotonic() + seconds
    checked = checked or target(base_url, seconds=min(seconds, RESOLVE_SECONDS))
    headers = {**HEADERS, **({"authorization": f"Bearer {key}"} if key else {})}
    try:
        with httpx.Client(transport=_transport(checked, deadline), trust_env=False, follow_redirects=False,
                          timeout=None) as client:
            with client.stream(method, checked.base + path, json=body, headers=headers) as response:
                _announced(response.headers, max_bytes)
                raw = bytearray()
                for chunk in response.iter_raw():
                    raw += chunk
                    if len(raw) > max_bytes:
                        raise OutboundError(TOO_BIG, f"sent more than {size(max_bytes)}")
                return Answer(response.status_code, response.headers, _decoded(response.headers, bytes(raw),
                                                                                max_bytes))
    except httpx.HTTPError as exc:
        raise _words(exc, seconds) from None


class AsyncSession:
    """Requests (async) to one server, `connections` at most at once, its destination checked once on entry:
    `async with AsyncSession(url, …) as s: answer = await s.request("POST", "/v1/completions", body, seconds=…)`."""

    def __init__(self, base_url: str, *, connections: int = 4, key: str = "", max_bytes: int | None = None):
        self.base_url, self.connections = base_url, connections
        self.max_bytes = max_bytes or env.outbound_max_bytes()
        self._headers = {**HEADERS, **({"authorization": f"Bearer {key}"} if key else {})}
        self._http: httpx.AsyncClient | None = None
        self.checked: Target | None = None

    async def __aenter__(self) -> AsyncSession:
        self.checked = await asyncio.to_thread(target, self.base_url)
        # timeout=None: httpx's per-read timeouts are replaced by one deadline per request (asyncio.timeout)
        self._http = httpx.AsyncClient(transport=_async_transport(self.checked, self.connections), trust_env=False,
                                       follow_redirects=False, headers=self._headers, timeout=None)
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
                async with self._http.stream(method, self.checked.base + path, json=body) as response:
                    _announced(response.headers, self.max_bytes)
                    raw = bytearray()
                    async for chunk in response.aiter_raw():
                        raw += chunk
                        if len(raw) > self.max_bytes:
                            raise OutboundError(TOO_BIG, f"sent more than {size(self.max_bytes)}")
                    return Answer(response.status_code, response.headers,
                                  _decoded(response.headers, bytes(raw), self.max_bytes))
        except TimeoutError:
            if scope.expired():
                raise OutboundError(TIMEOUT, f"did not answer within {round(seconds, 1):g} s") from None
            raise OutboundError(UNREACHABLE, "cannot be reached") from None
        except httpx.HTTPError as exc:
            raise _words(exc, seconds) from None
