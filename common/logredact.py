"""What the server's logs may hold about participants (issue 26 item 11): the consent says we never
store an IP address, yet gunicorn's access log kept every client address, the entry link with its
PROLIFIC_PID and SESSION_ID, and every session token.

Every log line goes through here: a participant's session token in a path becomes a keyed hash
(`t-` and 12 hex digits: one session's requests can still be followed, the token cannot be recovered
or used), and query strings are dropped (the entry link carries the Prolific ids; admin searches can
too) — only a `?…` says there was one. Client addresses are left out by the access log's format
(studyserver/gunicorn_conf.py). Pure Python: the web process, the workers and gunicorn's master all
use it without Django.
"""
from __future__ import annotations

import hashlib
import hmac
import logging
import re
import secrets

from .env import secret_key_given

# /s/<slug>/p/<token>… (experiments/participation/urls.py), anywhere in a text, with what follows it
# up to the next space or quote
_PARTICIPANT = re.compile(r"(/s/[^/\s?#\"']+/p/)([^/\s?#\"']+)")
_QUERY = re.compile(r"\?[^\s\"']*")
_KEY = (secret_key_given() or secrets.token_urlsafe(32)).encode()


def token_pseudonym(token: str, *, key: bytes | None = None) -> str:
    """A keyed hash of a session token (the secret key is the key): the same token gives the same
    code in every line; without the key, the code says nothing."""
    mac = hmac.new(key or _KEY, b"access-log\0" + token.encode("utf-8", "surrogatepass"), hashlib.sha256)
    return "t-" + mac.hexdigest()[:12]


def redact(text: str) -> str:
    """`text` without query strings and with every participant token replaced by its pseudonym."""
    text = _QUERY.sub("?…", text)
    return _PARTICIPANT.sub(lambda m: m.group(1) + token_pseudonym(m.group(2)), text)


class RedactFilter(logging.Filter):
    """A logging filter that redacts each record's message (Django's "Not Found: /s/…/p/<token>/…",
    gunicorn's "Error handling request /s/…?PROLIFIC_PID=…")."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a malformed record: leave it to the handler's own error path
            return True
        redacted = redact(message)
        if redacted != message:
            record.msg, record.args = redacted, ()
        return True
