"""An uploaded CSV bank kept on the server between its preview and its write (issue 26 item 8).

The preview used to send the whole file back to the browser as a base64 form field, and a file over
about 1.9 MB then could not be written (Django refuses form fields over DATA_UPLOAD_MAX_MEMORY_SIZE).
Now the file is copied, in chunks, to settings.DUET_UPLOAD_DIR/u<user>/s<study>/<token>.csv, where
the token is 256 random bits (secrets.token_urlsafe): the form carries only the token, and a token
reaches nothing but the uploading user's file for that study. A kept file is removed once written,
and any kept file older than settings.DUET_UPLOAD_TTL_MINUTES is removed whenever a file is kept or
looked up (uploads_expire).
"""
from __future__ import annotations

import os
import re
import secrets
import time
from collections.abc import Iterable
from pathlib import Path

from django.conf import settings

from common.uploads import describe_size

TOKEN = re.compile(r"[A-Za-z0-9_-]{43}")  # secrets.token_urlsafe(32)


class UploadTooLarge(ValueError):
    pass


def _root() -> Path:
    return Path(settings.DUET_UPLOAD_DIR)


def _ttl_seconds() -> float:
    return 60 * float(getattr(settings, "DUET_UPLOAD_TTL_MINUTES", 120))


def _folder(user, study) -> Path:
    return _root() / f"u{int(user.pk)}" / f"s{int(study.pk)}"


def upload_keep(*, user, study, chunks: Iterable[bytes], limit: int) -> str:
    """Copy an uploaded file (its chunks) to the store; its token. UploadTooLarge past `limit` bytes
    (nothing is kept)."""
    uploads_expire()
    folder = _folder(user, study)
    _root().mkdir(parents=True, exist_ok=True, mode=0o700)
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    token = secrets.token_urlsafe(32)
    path = folder / f"{token}.csv"
    size = 0
    try:
        with os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb") as out:
            for chunk in chunks:
                size += len(chunk)
                if size > limit:
                    raise UploadTooLarge(f"The file is larger than {describe_size(limit)} (the deployment's setting "
                                         "DUET_MAX_UPLOAD_MB); nothing of it was kept.")
                out.write(chunk)
    except BaseException:
        path.unlink(missing_ok=True)
        raise
    return token


def upload_path(*, user, study, token: str) -> Path | None:
    """The kept file `token` names for this user and study, or None (unknown, someone else's, or
    expired)."""
    uploads_expire()
    if not isinstance(token, str) or not TOKEN.fullmatch(token):
        return None
    path = _folder(user, study) / f"{token}.csv"
    return path if path.is_file() else None


def upload_discard(*, user, study, token: str) -> None:
    path = upload_path(user=user, study=study, token=token)
    if path is not None:
        path.unlink(missing_ok=True)


def uploads_expire(*, now: float | None = None) -> int:
    """Remove kept files older than the time to live; how many. (Folders stay: removing an empty one
    could race with another request keeping a file in it.)"""
    root = _root()
    if not root.is_dir():
        return 0
    cutoff = (time.time() if now is None else now) - _ttl_seconds()
    removed = 0
    for directory, _, files in os.walk(root):
        for name in files:
            path = Path(directory) / name
            try:
                if path.stat().st_mtime < cutoff:
                    path.unlink()
                    removed += 1
            except FileNotFoundError:
                continue
    return removed
