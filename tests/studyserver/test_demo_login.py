"""The demo's admin password stays the same across starts (issue 29), kept under var/, printed once."""
from __future__ import annotations

import stat

import pytest
from django.contrib.auth import get_user_model

from demo import login as login_module


def authenticate(*, username: str, password: str):
    user = get_user_model().objects.get(username=username)
    return user if user.check_password(password) else None


@pytest.fixture
def var(tmp_path, monkeypatch):
    monkeypatch.setattr(login_module, "VAR_DIR", tmp_path)
    return tmp_path


@pytest.mark.django_db
def test_the_password_is_made_once_kept_under_var_and_printed_once(var):
    first = login_module.demo_login()
    kept = var / "demo-admin-password"
    assert first.new and len(first.password) >= 16 and kept.read_text(encoding="utf-8").strip() == first.password
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600
    assert first.password in first.line() and "shown once" in first.line()
    assert authenticate(username="admin", password=first.password) is not None
    again = login_module.demo_login()
    assert not again.new and again.password == first.password
    assert first.password not in again.line() and "as printed at the first start" in again.line()
    assert authenticate(username="admin", password=first.password) is not None
    user = get_user_model().objects.get(username="admin")
    assert user.is_staff and user.is_superuser


@pytest.mark.django_db
def test_a_password_changed_in_the_admin_is_kept_and_a_fresh_database_gets_the_kept_one(var):
    first = login_module.demo_login()
    user = get_user_model().objects.get(username="admin")
    user.set_password("the researcher's own passphrase")
    user.save()
    login_module.demo_login()
    assert authenticate(username="admin", password="the researcher's own passphrase") is not None
    user.delete()  # as if the database were made afresh with var/ kept
    fresh = login_module.demo_login()
    assert fresh.new and fresh.password == first.password
    assert authenticate(username="admin", password=first.password) is not None
