"""Environment-driven settings, the database the run was meant to use, and the web process's imports."""
from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from django.db import connection

ROOT = Path(__file__).resolve().parents[2]


def _settings_in_subprocess(tmp_path, env_extra: dict, expression: str) -> str:
    env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "SECRET_KEY", "DEBUG", "CELERY_BROKER_URL",
                                                         "CELERY_TASK_ALWAYS_EAGER", "DUET_TASK_MODE"}}
    env.update({"DUET_VAR_DIR": str(tmp_path / "var"), "DJANGO_SETTINGS_MODULE": "studyserver.settings"})
    env.update(env_extra)
    code = f"import django; django.setup(); from django.conf import settings; print({expression})"
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True
    )
    return result.stdout.strip()


def test_embedded_defaults_sqlite_under_var_and_filesystem_broker(tmp_path):
    out = _settings_in_subprocess(
        tmp_path, {},
        "settings.DATABASES['default']['ENGINE'], settings.DATABASES['default']['NAME'], "
        "settings.CELERY_BROKER_URL, settings.DUET_TASK_MODE, settings.DEBUG",
    )
    assert out == (
        f"django.db.backends.sqlite3 {tmp_path / 'var' / 'duet.sqlite3'} filesystem:// embedded False"
    )


def test_secret_key_generated_once_into_var_and_private(tmp_path):
    first = _settings_in_subprocess(tmp_path, {}, "settings.SECRET_KEY")
    second = _settings_in_subprocess(tmp_path, {}, "settings.SECRET_KEY")
    key_file = tmp_path / "var" / "secret_key"
    assert first == second == key_file.read_text().strip()
    assert len(first) >= 50
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600


def test_environment_overrides(tmp_path):
    out = _settings_in_subprocess(
        tmp_path,
        {
            "DATABASE_URL": "postgres://u:pw@db.example:5433/duet",
            "CELERY_BROKER_URL": "redis://127.0.0.1:6379/0",
            "DUET_TASK_MODE": "celery",
            "SECRET_KEY": "from-the-environment",
            "DEBUG": "true",
            "ALLOWED_HOSTS": "duet.example.org,127.0.0.1",
        },
        "settings.DATABASES['default']['ENGINE'], settings.DATABASES['default']['PORT'], "
        "settings.CELERY_BROKER_URL, settings.DUET_TASK_MODE, settings.SECRET_KEY, settings.DEBUG, "
        "settings.ALLOWED_HOSTS",
    )
    assert out == (
        "django.db.backends.postgresql 5433 redis://127.0.0.1:6379/0 celery from-the-environment True "
        "['duet.example.org', '127.0.0.1']"
    )
    assert not (tmp_path / "var" / "secret_key").exists()


def test_web_process_imports_neither_torch_nor_r(tmp_path):
    code = (
        "import os, sys; os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'studyserver.settings');"
        "from studyserver.wsgi import application;"
        "from django.urls import get_resolver; get_resolver().url_patterns;"
        "import experiments.admin, experiments.services;"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in {'torch', 'transformers', 'rpy2', 'pymer4'});"
        "print(heavy)"
    )
    env = {**os.environ, "DUET_VAR_DIR": str(tmp_path / "var")}
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


@pytest.mark.django_db
def test_running_on_the_database_the_test_command_asked_for(expect_db):
    """scripts/test.sh runs the suite once on SQLite and once on PostgreSQL; in CI it must say which."""
    if os.environ.get("CI") == "true":
        assert expect_db in {"sqlite", "postgresql"}, "run the suite through scripts/test.sh"
    if expect_db:
        assert connection.vendor == expect_db
