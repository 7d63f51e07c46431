"""Rate limits on Django's cache: a fixed-window counter per (scope, client), limits from settings.

A limit is written "N/period" with period s, m, h or d, optionally with a count ("600/5m");
"off" (or 0) switches a scope off. Limits live in settings.DUET_RATELIMITS (common/env.py
reads them from DUET_RATELIMIT_<SCOPE>). Over the limit a view answers 429 with a Retry-After
header and a message, and changes nothing. The counters live in the default cache: a local memory
cache in the embedded single-process mode, Redis in production (shared by every web process).

Clients are identified by what the view passes: a participant's token for the trial endpoints, the
client's IP address for the entry link. Identifiers are hashed with the secret key before they
become cache keys, so no IP address or token is written anywhere in the clear.
"""
from __future__ import annotations

import functools
import hashlib
import hmac
import logging
import math
import re
import time
import weakref
from dataclasses import dataclass

from django.conf import settings
from django.core.cache import caches
from django.core.cache.backends.redis import RedisCache
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from redis.exceptions import NoScriptError

log = logging.getLogger(__name__)
_RATE = re.compile(r"^\s*(\d+)\s*/\s*(\d*)\s*([smhd])\s*$")
_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


class RateError(ValueError):
    pass


@dataclass(frozen=True)
class Rate:
    count: int
    seconds: int

    def __str__(self) -> str:
        return f"{self.count} per {self.seconds} s"


@functools.lru_cache(maxsize=64)  # read on every request; the settings' few texts parse once
def parse_rate(text: str | None) -> Rate | None:
    """'30/m' -> Rate(30, 60); 'off', '0' or empty -> None (no limit)."""
    value = (text or "").strip().lower()
    if value in {"", "off", "none", "0"}:
        return None
    match = _RATE.match(value)
    if not match:
        raise RateError(f"'{text}' is not a rate such as 30/m, 600/5m or 2/s (or 'off').")
    count, multiple, unit = int(match.group(1)), int(match.group(2) or 1), match.group(3)
    if count == 0:
        return None
    if multiple == 0:
        raise RateError(f"'{text}': the period must be at least one {unit}.")
    return Rate(count, multiple * _SECONDS[unit])


_SHARE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*%\s*/\s*(\d*)\s*([smhd])\s*$")


@dataclass(frozen=True)
class Share:
    """A limit relative to a study's target: `percent` of it per `seconds` (settings: "5%/h")."""

    percent: float
    seconds: int


@functools.lru_cache(maxsize=16)
def parse_share(text: str | None) -> Share | None:
    """'5%/h' -> Share(5.0, 3600); 'off', '0' or empty -> None (no limit)."""
    value = (text or "").strip().lower()
    if value in {"", "off", "none", "0"}:
        return None
    match = _SHARE.match(value)
    if not match:
        raise RateError(f"'{text}' is not a share of the target such as 5%/h or 10%/30m (or 'off').")
    percent, multiple, unit = float(match.group(1)), int(match.group(2) or 1), match.group(3)
    if percent <= 0 or percent > 100:
        raise RateError(f"'{text}': the share must be above 0 % and at most 100 %.")
    if multiple == 0:
        raise RateError(f"'{text}': the period must be at least one {unit}.")
    return Share(percent, multiple * _SECONDS[unit])


def share_rate(target: int) -> Rate | None:
    """New participations one client address may start in a study of this target sample size:
    DUET_NEW_PARTICIPANT_SHARE of the target per period, at least DUET_NEW_PARTICIPANT_MIN."""
    share = parse_share(getattr(settings, "DUET_NEW_PARTICIPANT_SHARE", None))
    if share is None:
        return None
    minimum = int(getattr(settings, "DUET_NEW_PARTICIPANT_MIN", 3))
    return Rate(max(minimum, math.ceil(share.percent * max(target, 0) / 100 - 1e-9)), share.seconds)


@dataclass(frozen=True)
class Decision:
    allowed: bool
    retry_after: int = 0  # whole seconds until the window resets (only when refused)


def _digest(scope: str, ident: str) -> str:
    mac = hmac.new(settings.SECRET_KEY.encode(), f"{scope}\0{ident}".encode("utf-8", "surrogatepass"), hashlib.sha256)
    return mac.hexdigest()[:32]


class Refused(Exception):
    """Raised by a view's admission check (see experiments' trial endpoint) to answer 429."""

    def __init__(self, decision: Decision):
        super().__init__(f"rate limited for {decision.retry_after} s")
        self.decision = decision


# Identifiers this process has seen refused, until their window ends: (scope, ident, rate) -> the
# window's end (epoch seconds). A client over its limit is then refused here at once, without asking
# the cache again for every request of a flood; the shared count only grows within a window, so the
# answer is the one the cache would give. Bounded: past _BLOCKED_MAX entries the expired ones go,
# and if that is not enough, all of them (the shared counters still refuse).
_blocked: dict[tuple[str, str, Rate], float] = {}
_BLOCKED_MAX = 10_000


def refused_here(scope: str, ident: str, rate: Rate | None, *, now: float | None = None) -> Decision | None:
    """The refusal this process already received for `ident` in this window, if any (no cache call)."""
    if rate is None or not _blocked:
        return None
    now = time.time() if now is None else now
    until = _blocked.get((scope, ident, rate))
    if until is None or until <= now:
        return None
    return Decision(False, max(1, math.ceil(until - now)))


def _remember_refusal(scope: str, ident: str, rate: Rate, until: float, now: float) -> None:
    if len(_blocked) >= _BLOCKED_MAX:
        for key, end in list(_blocked.items()):  # a copy: another thread may add meanwhile
            if end <= now:
                _blocked.pop(key, None)
        if len(_blocked) >= _BLOCKED_MAX:
            _blocked.clear()
    _blocked[(scope, ident, rate)] = until


def hit(scope: str, ident: str, rate: Rate | None, *, now: float | None = None) -> Decision:
    """Count one request of `ident` in `scope`; refuse it when the window already holds `rate.count`
    (and remember the refusal in this process until the window ends: refused_here)."""
    if rate is None:
        return Decision(True)
    now = time.time() if now is None else now
    refused = refused_here(scope, ident, rate, now=now)
    if refused is not None:
        return refused
    window = int(now // rate.seconds)
    key = f"duet:rl:{scope}:{_digest(scope, ident)}:{window}"
    cache = caches[getattr(settings, "DUET_RATELIMIT_CACHE", "default")]
    ttl = rate.seconds + 5
    try:
        count = _count_redis(cache, key, ttl) if isinstance(cache, RedisCache) else _count(cache, key, ttl)
    except Exception as error:  # the cache (Redis) is down: let the participant through, say so in the log
        log.warning("rate limit %s not checked, the cache is unavailable: %s", scope, error)
        return Decision(True)
    if count <= rate.count:
        return Decision(True)
    until = (window + 1) * rate.seconds
    _remember_refusal(scope, ident, rate, until, now)
    return Decision(False, max(1, math.ceil(until - now)))


def release(scope: str, ident: str, rate: Rate | None, *, now: float | None = None) -> None:
    """Take back one request that hit() counted in this window and that turned out not to count (e.g.
    a new participation the study refused: only participations started are counted against the share of
    the target). Nothing happens when the window has ended meanwhile or the cache is unavailable."""
    if rate is None:
        return
    now = time.time() if now is None else now
    key = f"duet:rl:{scope}:{_digest(scope, ident)}:{int(now // rate.seconds)}"
    try:
        caches[getattr(settings, "DUET_RATELIMIT_CACHE", "default")].decr(key)
    except Exception:  # expired (ValueError) or the cache is down: nothing to take back
        pass


def _count(cache, key: str, ttl: int) -> int:
    """Any Django cache: add the key at 1, or increment it (two or three calls)."""
    if cache.add(key, 1, ttl):
        return 1
    try:
        return cache.incr(key)
    except ValueError:  # expired between add and incr
        cache.add(key, 1, ttl)
        return 1


# INCR, and on the window's first request EXPIRE: one command, atomic inside Redis.
_INCR_WITH_EXPIRY = """
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('EXPIRE', KEYS[1], ARGV[1]) end
return n
"""
_scripts: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _count_redis(cache: RedisCache, key: str, ttl: int) -> int:
    """Redis: one round trip (EVALSHA of _INCR_WITH_EXPIRY) where Django's add + incr take three
    (SET NX, EXISTS, INCR) and build a new client object for each. The command goes straight to a
    pooled connection (the client's per-command layers cost more than the round trip itself); a
    Redis that lost the script (restarted, SCRIPT FLUSH) gets it again through redis-py's Script. A
    connection that fails is dropped, and the error goes to the caller. The script and its client are
    made once per cache object (Django keeps one per process and thread). Django's Redis cache stores
    integers as plain numbers, so the counters stay readable through the cache API."""
    script = _scripts.get(cache)
    if script is None:
        script = _scripts[cache] = cache._cache.get_client(write=True).register_script(_INCR_WITH_EXPIRY)
    full_key = cache.make_key(key)  # hex digests and a scope name: nothing to validate
    pool = script.registered_client.connection_pool
    connection = pool.get_connection()
    try:
        connection.send_command("EVALSHA", script.sha, 1, full_key, ttl)
        return int(connection.read_response())
    except NoScriptError:
        return int(script(keys=[full_key], args=[ttl]))
    except BaseException:
        connection.disconnect()
        raise
    finally:
        pool.release(connection)


def first_in_period(key: str, seconds: int) -> bool:
    """The default cache's `add(key, 1, seconds)`: True for the one caller that added the key, until it expires
    (e.g. work that runs once per period whichever process asks first). On Redis one SET NX EX straight on a
    pooled connection, as _count_redis, where Django's add builds a client object first; errors go to the
    caller, as the cache's own."""
    cache = caches["default"]
    if not isinstance(cache, RedisCache):
        return cache.add(key, 1, timeout=seconds)
    pool = cache._cache._get_connection_pool(True)
    connection = pool.get_connection()
    try:
        connection.send_command("SET", cache.make_key(key), 1, "EX", seconds, "NX")
        return connection.read_response() is not None  # OK, or nil when the key is there
    except BaseException:
        connection.disconnect()
        raise
    finally:
        pool.release(connection)


def rate_for(scope: str) -> Rate | None:
    return parse_rate(getattr(settings, "DUET_RATELIMITS", {}).get(scope))


def client_ip(request: HttpRequest) -> str:
    """The client's address: REMOTE_ADDR, or, behind DUET_TRUSTED_PROXIES proxies, the address the
    outermost trusted proxy saw (taken from the right of X-Forwarded-For, which clients can forge
    only to the left)."""
    proxies = getattr(settings, "DUET_TRUSTED_PROXIES", 0)
    remote = request.META.get("REMOTE_ADDR", "") or "unknown"
    if proxies <= 0:
        return remote
    hops = [h.strip() for h in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",") if h.strip()]
    if len(hops) >= proxies:
        return hops[-proxies]
    return hops[0] if hops else remote


def login_client_ip(request) -> str | None:
    """client_ip for django-axes, which stores it in an IP address column: None when the request has
    no address (Django's force_login and test requests), never text PostgreSQL's inet refuses."""
    import ipaddress

    address = client_ip(request) if request is not None else ""
    try:
        return str(ipaddress.ip_address(address))
    except ValueError:
        return None


MESSAGE = "Too many requests: please wait {seconds} second(s) and try again. Nothing was lost."


def too_many(request: HttpRequest, decision: Decision, *, json: bool) -> HttpResponse:
    message = MESSAGE.format(seconds=decision.retry_after)
    if json:
        response = JsonResponse({"error": message, "reason": "rate_limited", "retry_after": decision.retry_after},
                                status=429)
    else:
        response = render(request, "participant/too_many.html",
                          {"message": message, "retry_after": decision.retry_after}, status=429)
    response["Retry-After"] = str(decision.retry_after)
    return response


def ident_for(request: HttpRequest, key, kwargs: dict) -> str:
    """Whom a request counts for: the client's address (key "ip"), the study's slug and the URL
    keyword argument `key` (e.g. the participant's token), or what a callable `key(request, kwargs)`
    says (e.g. the address and the Prolific id of the entry link)."""
    if callable(key):
        return key(request, kwargs)
    return client_ip(request) if key == "ip" else f"{kwargs.get('slug', '')}/{kwargs.get(key, '')}"


def limit(scope: str, *, key: str, json: bool = False):
    """Decorator for a view: `key` is "ip" or the name of a URL keyword argument (e.g. "token")."""

    def decorate(view):
        @functools.wraps(view)
        def wrapped(request, *args, **kwargs):
            decision = hit(scope, ident_for(request, key, kwargs), rate_for(scope))
            if not decision.allowed:
                return too_many(request, decision, json=json)
            return view(request, *args, **kwargs)

        return wrapped

    return decorate


UNKNOWN_TOKEN = "unknown_token"


def unknown_tokens_limited(*, json: bool = False, known=None):
    """Decorator for the views under a participant token: a client address that keeps naming
    tokens that do not exist (a 404) is limited per address (scope "unknown_token").

    The refusal is for unknown tokens only: a known token is never refused by it, whatever its address
    did (a scanner behind a NAT address must not lock out the participants behind it: issue 26 item 3).
    `known(kwargs)` says whether the URL's token names a session; it is asked only once the address is
    refused (one indexed read), so a request from an address in good standing costs nothing extra and a
    refused address's unknown tokens are answered 429 without the view's work."""
    from django.http import Http404

    def decorate(view):
        @functools.wraps(view)
        def wrapped(request, *args, **kwargs):
            rate = rate_for(UNKNOWN_TOKEN)
            ip = client_ip(request)
            refused = refused_here(UNKNOWN_TOKEN, ip, rate)
            if refused is not None and not (known is not None and known(kwargs)):
                return too_many(request, refused, json=json)
            try:
                response = view(request, *args, **kwargs)
            except Http404:
                decision = hit(UNKNOWN_TOKEN, ip, rate)
                if not decision.allowed:
                    return too_many(request, decision, json=json)
                raise
            if response.status_code == 404:
                decision = hit(UNKNOWN_TOKEN, ip, rate)
                if not decision.allowed:
                    return too_many(request, decision, json=json)
            return response

        return wrapped

    return decorate
