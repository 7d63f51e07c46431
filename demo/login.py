"""The demo's staff login, stable across restarts (issue 29: it changed at every start).

The password is made once with `secrets`, kept in VAR_DIR/demo-admin-password (readable by its owner
only) and printed once, at the start that made it; later starts print where it is kept. A password
the researcher changed in the admin is left alone; a database made afresh (the file kept) gets the
kept password again."""
from __future__ import annotations

import os
import secrets
from dataclasses import dataclass
from pathlib import Path

from common.env import VAR_DIR

USERNAME = "admin"


def password_file() -> Path:
    return VAR_DIR / "demo-admin-password"


@dataclass(frozen=True)
class DemoLogin:
    username: str
    password: str
    new: bool  # made (or set on a new user) at this start: print it

    def line(self) -> str:
        where = password_file()
        if self.new:
            return f"user: {self.username}   password: {self.password}   (shown once; kept in {where})"
        return f"user: {self.username}   password: as printed at the first start (kept in {where})"


def demo_login() -> DemoLogin:
    """The demo's staff user (a superuser named admin) with its kept password, made on first use."""
    from django.contrib.auth import get_user_model

    path = password_file()
    made = False
    try:
        password = path.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        password = ""
    if not password:
        password = secrets.token_urlsafe(12)
        path.parent.mkdir(parents=True, exist_ok=True)
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "w", encoding="utf-8") as kept:
            kept.write(password + "\n")
        made = True
    user, created = get_user_model().objects.get_or_create(
        username=USERNAME, defaults={"is_staff": True, "is_superuser": True})
    if made or created:
        user.set_password(password)
    user.is_staff = user.is_superuser = True
    user.save()
    return DemoLogin(username=USERNAME, password=password, new=made or created)
