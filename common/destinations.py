"""Where Duet may send a request, and with which key (issue 34; common/outbound.py sends it).

* `url_parts`: a server's base URL validated — http or https, a host, no user-info, query or
  fragment; a path prefix is fine.
* `target`: the host resolved once (within a deadline: a resolver thread, never the caller, waits on
  a silent name server) and every address allowed — a public one, or one DUET_OUTBOUND_ALLOW allows
  (rules); loopback, link-local, site-local, private, unspecified, multicast and reserved addresses are
  refused. An IPv6 address that carries an IPv4 address (IPv4-mapped and -compatible, SIIT, NAT64,
  6to4, Teredo: `carried`) is judged by the IPv4 address(es) it carries. The deployment's own database,
  broker and cache are refused by host (`Service`) unless an entry names their host and the port asked.
* `api_key`: a key read only from a name on DUET_MODEL_API_KEYS, for the origins it is bound to.

Failures are OutboundError: `kind` its class, str() its words, never a peer's text.
"""
from __future__ import annotations

import concurrent.futures
import ipaddress
import socket
from dataclasses import dataclass
from urllib.parse import urlsplit

from . import env

URL, DESTINATION, UNREACHABLE, TIMEOUT, TOO_BIG, NOT_HTTP, NOT_JSON, KEY, FAILED = (
    "url", "destination", "unreachable", "timeout", "too big", "not http", "not json", "key", "failed")
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
            found += [Rule(ipaddress.ip_network(block), None, None) for block in ("127.0.0.0/8", "::1/128")]
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


# ------------------------------------------------------------------ IPv6 forms that carry an IPv4 address
_NAT64 = ipaddress.ip_network("64:ff9b::/96")  # RFC 6052's well-known prefix
_NAT64_LOCAL = ipaddress.ip_network("64:ff9b:1::/48")  # RFC 8215: a local prefix of any length from /48 to /96
_SIIT = ipaddress.ip_network("::ffff:0:0:0/96")  # IPv4-translated (RFC 2765)
_COMPATIBLE = ipaddress.ip_network("::/96")  # IPv4-compatible (deprecated); :: and ::1 are themselves


def _rfc6052(ip: ipaddress.IPv6Address, length: int) -> ipaddress.IPv4Address:
    """The IPv4 address behind a NAT64 prefix of `length` bits (RFC 6052 §2.2: bits 64-71 are skipped)."""
    packed = ip.packed if length == 96 else ip.packed[:8] + ip.packed[9:]
    return ipaddress.IPv4Address(packed[length // 8:length // 8 + 4])


def carried(ip) -> tuple:
    """The address(es) a connection to `ip` reaches: for an IPv6 form that embeds an IPv4 address, the IPv4
    address it carries — IPv4-mapped ::ffff:0:0/96, SIIT ::ffff:0:0:0/96, NAT64 64:ff9b::/96, IPv4-compatible
    ::/96, 6to4 2002::/16 (bits 16-47), Teredo 2001::/32 (the server, bits 32-63, and the client, the last 32
    bits inverted: both); for the local NAT64 prefix 64:ff9b:1::/48, whose length the network chooses, the IPv4
    address at every position RFC 6052 allows it (/48, /56, /64, /96): all of them judged. Else (ip,)."""
    if ip.version == 4:
        return (ip,)
    if ip.ipv4_mapped is not None:
        return (ip.ipv4_mapped,)
    if ip in _SIIT or ip in _NAT64 or (ip in _COMPATIBLE and int(ip) > 1):
        return (ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF),)
    if ip.sixtofour is not None:
        return (ip.sixtofour,)
    if ip.teredo is not None:
        return ip.teredo
    if ip in _NAT64_LOCAL:
        return tuple(dict.fromkeys(_rfc6052(ip, length) for length in (96, 64, 56, 48)))
    return (ip,)


def _public(ip) -> bool:
    """A public address (`ip` as carried): global, not multicast; for IPv6 also not in the reserved (unassigned)
    space and not the deprecated site-local fec0::/10, which Python's is_global lets through."""
    return ip.is_global and not ip.is_multicast and not (ip.version == 6 and (ip.is_reserved or ip.is_site_local))


# ----------------------------------------------------------------- the deployment's own services
@dataclass(frozen=True)
class Service:
    """One of the deployment's own database, broker and cache: the host its URL names, the addresses that host
    resolves to (as carried), its port."""

    host: str
    addresses: frozenset
    port: int

    @property
    def local(self) -> bool:
        return any(a.is_loopback or a.is_unspecified for a in self.addresses)

    def holds(self, ip, host: str, port: int) -> bool:
        """Whether a connection to `ip` (as carried; the URL's host `host`, port `port`) may reach this service.
        Its host is refused on every port, by name and by every address it resolves to; this machine's own
        addresses (loopback, unspecified) on the service's port only, wherever the service is: a model server
        may share this machine with the services (the embedded default), never their ports."""
        if ip.is_loopback or ip.is_unspecified:
            return port == self.port
        return ip in self.addresses or (host == self.host and not self.local)


def services() -> list[Service]:
    """The deployment's own database, broker and cache (DATABASE_URL, CELERY_BROKER_URL, CACHE_URL); a host that
    does not resolve here is still refused by name."""
    found = []
    for url in env.service_urls():
        try:
            parts = urlsplit(url)
            host, port = parts.hostname, parts.port or DEFAULT_PORTS.get(parts.scheme.split("+")[0].lower())
        except ValueError:
            continue
        if not host or not port:
            continue
        host = host.lower().rstrip(".")
        try:
            addresses = frozenset(a for ip in _resolve(host, port, 2.0) for a in carried(ip))
        except OutboundError:
            addresses = frozenset()
        found.append(Service(host, addresses, port))
    return found


# ------------------------------------------------------------------------------------- the refusal
def _kind(ip) -> str:
    for name in ("loopback", "link_local", "site_local", "unspecified", "multicast", "private", "reserved"):
        if getattr(ip, f"is_{name}", False):
            return name.replace("_", "-")
    return "non-public"


def refusal(ip, host: str, port: int, allowed: list[Rule], own: list[Service]) -> str:
    """'' when a request may go to `ip`:`port` (named `host`), else why not. Every address `ip` carries is
    judged; an allow entry matches the address as written or as carried."""
    reached = carried(ip)

    def allows(rule: Rule, a) -> bool:
        return rule.matches(a, host, port) or rule.matches(ip, host, port)

    def shown(a) -> str:
        return f" ({a}, carried in {ip})" if a != ip else ("" if str(a) == host else f" ({a})")

    for a in reached:
        if any(service.holds(a, host, port) for service in own):
            if any(rule.port == port and allows(rule, a) for rule in allowed):
                continue
            return f"is this deployment's own database, broker or cache ({a} port {port}" + \
                ("" if a == ip else f", carried in {ip}") + ")"
    for a in reached:
        if not _public(a) and not any(allows(rule, a) for rule in allowed):
            return f"is a {_kind(a)} address" + shown(a)
    return ""


def target(url: str, *, seconds: float = RESOLVE_SECONDS) -> Target:
    """The checked destination of a server's base URL: the URL validated, its host resolved once (within
    `seconds`) and every address allowed; OutboundError (URL, DESTINATION or UNREACHABLE) otherwise, before
    anything is sent."""
    scheme, host, port, prefix = url_parts(url)
    addresses = _resolve(host, port, seconds)
    try:
        allowed, own = rules(env.outbound_allow()), services()
    except env.SettingsError as exc:  # a malformed allow-list: said, not a 500
        raise OutboundError(DESTINATION, f"cannot be checked: {exc}") from None
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
