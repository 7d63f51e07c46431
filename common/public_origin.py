"""The origin participants open Duet at (DUET_PUBLIC_ORIGIN, common/env.py), and whether people on the
internet can open it (issue 43 item 5).

The study link is built from it on the launch panel, and publishing on Prolific sends that link; a link on
this machine's loopback reached Prolific once with no warning. So an origin is refused for publishing, with
the reason, when it is not https, when its host is an address outbound requests would refuse as non-public
(loopback, private, link-local, CGNAT, unspecified, multicast, reserved: common/destinations.py's
`refusal`, with nothing allowed), or when its host is a name that is never public (a single label such as
`localhost` or `testserver`, or a name under a local-only suffix such as `.local`, `.internal`, `.lan`).
A name is not resolved here: this machine's resolver is not the participants' (a lab's split DNS may give
its own public name a private address inside).
"""
from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

from django.conf import settings

from .destinations import refusal

# Suffixes no public name ends in: RFC 6761/6762/8375 special-use names and the usual private ones.
LOCAL_SUFFIXES = ("localhost", "local", "localdomain", "internal", "intranet", "lan", "home.arpa", "test",
                  "invalid", "example", "onion", "arpa")
HOW = ("Set DUET_PUBLIC_ORIGIN to the https address participants open this server at, e.g. "
       "https://duet.example.org (docs/production.md).")


def public_origin() -> str:
    """The configured public origin ('' when DUET_PUBLIC_ORIGIN is unset)."""
    return getattr(settings, "DUET_PUBLIC_ORIGIN", "") or ""


def origin_problem(origin: str) -> str:
    """'' when participants on the internet can open `origin` (scheme://host[:port]), else why not, in words
    that end with what to do."""
    text = (origin or "").strip().rstrip("/")
    if not text:
        return f"No public origin is set, so Duet does not know the address participants open. {HOW}"
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError:
        return f"The public origin {text[:100]!r} is not scheme://host[:port]. {HOW}"
    host = (parts.hostname or "").lower().rstrip(".")
    if not host or parts.path or parts.query or parts.fragment or "@" in parts.netloc or \
            any(c.isspace() or ord(c) < 32 for c in text):
        return f"The public origin {text[:100]!r} is not scheme://host[:port]. {HOW}"
    if parts.scheme.lower() != "https":
        return (f"The public origin {text} is not https: participants' Prolific ids and answers would cross the "
                f"internet unencrypted, and browsers warn on such pages. {HOW}")
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        ip = None
    if ip is not None:
        why = refusal(ip, host, port or 443, [], set())
        return f"The public origin {text} {why}: participants on the internet cannot open it. {HOW}" if why else ""
    if "." not in host:
        return (f"The public origin {text} names a host ({host}) with no domain: only this machine or its "
                f"network can open it, not participants on the internet. {HOW}")
    if any(host == suffix or host.endswith("." + suffix) for suffix in LOCAL_SUFFIXES):
        return (f"The public origin {text} is a local-only name ({host}): participants on the internet cannot "
                f"open it. {HOW}")
    return ""
