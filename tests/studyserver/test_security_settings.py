"""Production settings (issue 8): no default SECRET_KEY, HTTPS switches, the cache, rate limits from
the environment, and `manage.py check --deploy` clean — each in a fresh process, as a server starts."""
from __future__ import annotations

import os
import secrets
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CLEARED = {"DATABASE_URL", "SECRET_KEY", "DEBUG", "CELERY_BROKER_URL", "CACHE_URL", "ALLOWED_HOSTS", "SECURE_COOKIES",
           "CELERY_TASK_ALWAYS_EAGER"}
CLEARED_PREFIXES = ("DUET_",)


def _env(tmp_path, extra: dict) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in CLEARED and not k.startswith(CLEARED_PREFIXES)}
    env.update({"DUET_VAR_DIR": str(tmp_path / "var"), "DJANGO_SETTINGS_MODULE": "studyserver.settings", **extra})
    return env


def _run(tmp_path, extra: dict, *argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *argv], cwd=ROOT, env=_env(tmp_path, extra), capture_output=True,
                          text=True, timeout=600)


def _settings(tmp_path, extra: dict, expression: str) -> str:
    code = f"import django; django.setup(); from django.conf import settings; print({expression})"
    result = _run(tmp_path, extra, "-c", code)
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout.strip()


def production_env(**extra) -> dict:
    return {"DUET_PRODUCTION": "true", "SECRET_KEY": secrets.token_urlsafe(50), "ALLOWED_HOSTS": "duet.example.org",
            "CSRF_TRUSTED_ORIGINS": "https://duet.example.org", "DUET_HTTPS": "true",
            "CACHE_URL": "redis://127.0.0.1:6379/1", **extra}


def test_check_deploy_is_clean_under_production_settings(tmp_path):
    result = _run(tmp_path, production_env(), "manage.py", "check", "--deploy", "--fail-level", "WARNING")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "System check identified no issues (0 silenced)." in result.stdout
    assert not (tmp_path / "var" / "secret_key").exists()


def test_check_deploy_warns_without_https(tmp_path):
    """The control: the same check does find the missing HTTPS settings (so the clean run means something)."""
    result = _run(tmp_path, production_env(DUET_HTTPS="false"), "manage.py", "check", "--deploy")
    for warning in ("security.W004", "security.W008", "security.W012", "security.W016"):
        assert warning in result.stderr, warning


def test_production_refuses_to_start_without_a_real_secret_key(tmp_path):
    for key, message in (("", "SECRET_KEY is not set"), ("change-me-to-a-long-random-string", "placeholder"),
                         ("short-key", "too weak")):
        result = _run(tmp_path, production_env(SECRET_KEY=key), "manage.py", "check")
        assert result.returncode != 0
        assert "SettingsError" in result.stderr and message in result.stderr, result.stderr[-800:]
    assert not (tmp_path / "var" / "secret_key").exists()  # never a generated fallback in production


def test_the_embedded_default_still_generates_its_key(tmp_path):
    assert len(_settings(tmp_path, {}, "settings.SECRET_KEY")) >= 50
    assert (tmp_path / "var" / "secret_key").exists()


def test_https_switch_turns_on_hsts_secure_cookies_redirects_and_the_proxy_header(tmp_path):
    names = ("SECURE_SSL_REDIRECT", "SECURE_HSTS_SECONDS", "SECURE_HSTS_INCLUDE_SUBDOMAINS", "SECURE_HSTS_PRELOAD",
             "SESSION_COOKIE_SECURE", "CSRF_COOKIE_SECURE", "SECURE_PROXY_SSL_HEADER", "SECURE_REDIRECT_EXEMPT")
    expression = ", ".join(f"getattr(settings, {n!r}, None)" for n in names)
    on = _settings(tmp_path, {"DUET_HTTPS": "true"}, expression)
    assert on == "True 31536000 True True True True ('HTTP_X_FORWARDED_PROTO', 'https') ['^healthz$']"
    off = _settings(tmp_path, {}, expression)
    assert off == "False 0 False False False False None []"
    tuned = _settings(tmp_path, {"DUET_HTTPS": "true", "DUET_HSTS_SECONDS": "600", "DUET_PROXY_SSL_HEADER": "false",
                                 "DUET_HSTS_PRELOAD": "false"}, expression)
    assert tuned.startswith("True 600 True False") and "None" in tuned


def test_cache_and_rate_limits_come_from_the_environment(tmp_path):
    expression = "settings.CACHES['default']['BACKEND'], settings.DUET_RATELIMITS"
    default = _settings(tmp_path, {}, expression)
    assert default.startswith("django.core.cache.backends.locmem.LocMemCache")
    assert "'entry': '60/m', 'entry_ip': '600/m', 'new_participant': '300/h', 'trial': '120/m', 'session': '60/m'" in default
    redis = _settings(tmp_path, {"CACHE_URL": "redis://redis:6379/1", "DUET_RATELIMIT_ENTRY": "30/m",
                                 "DUET_RATELIMIT_TRIAL": "off"}, expression)
    assert redis.startswith("django.core.cache.backends.redis.RedisCache") and "'entry': '30/m', 'entry_ip': '600/m', 'new_participant': '300/h', 'trial': 'off'" in redis
    bad = _run(tmp_path, {"DUET_RATELIMIT_ENTRY": "thirty"}, "manage.py", "check")
    assert bad.returncode != 0 and "DUET_RATELIMIT_ENTRY: 'thirty' is not a rate" in bad.stderr
