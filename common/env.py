"""Everything the project reads from the environment, in one place: settings.py and the rest call
these functions and read no variable themselves (tests/test_layers.py checks).

The embedded default needs no variable at all: SQLite under var/, background work in a process
started on this machine (DUET_TASK_MODE=embedded), and a secret key generated into var/ on first
run. Production sets DATABASE_URL (PostgreSQL), CELERY_BROKER_URL (Redis), DUET_TASK_MODE=celery,
SECRET_KEY and ALLOWED_HOSTS.
"""
from __future__ import annotations

import os
import secrets
from dataclasses import dataclass
from pathlib import Path

import environ

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(os.environ.get("DUET_VAR_DIR", BASE_DIR / "var"))

env = environ.Env(
    DEBUG=(bool, False),
    ALLOWED_HOSTS=(list, ["127.0.0.1", "localhost"]),
    CSRF_TRUSTED_ORIGINS=(list, []),
    TIME_ZONE=(str, "UTC"),
)


def debug() -> bool:
    """DEBUG (default false)."""
    return env("DEBUG")


def allowed_hosts() -> list[str]:
    """ALLOWED_HOSTS, comma-separated (default 127.0.0.1,localhost)."""
    return env("ALLOWED_HOSTS")


def csrf_trusted_origins() -> list[str]:
    """CSRF_TRUSTED_ORIGINS, comma-separated (default none)."""
    return env("CSRF_TRUSTED_ORIGINS")


def time_zone() -> str:
    """TIME_ZONE (default UTC)."""
    return env("TIME_ZONE")


def secure_cookies(*, https: bool) -> bool:
    """SECURE_COOKIES: session and CSRF cookies sent over HTTPS only (default: when DUET_HTTPS is set)."""
    return env.bool("SECURE_COOKIES", default=https)


@dataclass(frozen=True)
class HttpsOptions:
    ssl_redirect: bool
    hsts_seconds: int
    hsts_include_subdomains: bool
    hsts_preload: bool
    proxy_ssl_header: bool


def https_options() -> HttpsOptions:
    """Under DUET_HTTPS: DUET_SSL_REDIRECT, DUET_HSTS_SECONDS (default a year), DUET_HSTS_INCLUDE_SUBDOMAINS,
    DUET_HSTS_PRELOAD and DUET_PROXY_SSL_HEADER (trust the proxy's X-Forwarded-Proto), each on by default."""
    return HttpsOptions(
        ssl_redirect=env.bool("DUET_SSL_REDIRECT", default=True),
        hsts_seconds=env.int("DUET_HSTS_SECONDS", default=31_536_000),
        hsts_include_subdomains=env.bool("DUET_HSTS_INCLUDE_SUBDOMAINS", default=True),
        hsts_preload=env.bool("DUET_HSTS_PRELOAD", default=True),
        proxy_ssl_header=env.bool("DUET_PROXY_SSL_HEADER", default=True),
    )


def csp() -> bool:
    """DUET_CSP: send the Content-Security-Policy header (default true)."""
    return env.bool("DUET_CSP", default=True)


def max_upload_mb() -> int:
    """DUET_MAX_UPLOAD_MB: the largest upload (a CSV bank) read, in MB (default 20)."""
    return env.int("DUET_MAX_UPLOAD_MB", default=20)


def upload_ttl_minutes() -> int:
    """DUET_UPLOAD_TTL_MINUTES: how long a file kept between an import's preview and its write lives (default 120)."""
    return env.int("DUET_UPLOAD_TTL_MINUTES", default=120)


def trusted_proxies() -> int:
    """DUET_TRUSTED_PROXIES: how many proxies in front of the server append to X-Forwarded-For (default 0)."""
    return env.int("DUET_TRUSTED_PROXIES", default=0)


def celery_redis_options() -> dict:
    """A Redis broker's transport options: a task whose worker died unacknowledged goes back to the
    queue after CELERY_VISIBILITY_TIMEOUT seconds (default 3600); workers look for such tasks every
    CELERY_UNACKED_RESTORE_INTERVAL × CELERY_UNACKED_RESTORE_THROTTLE seconds (kombu's defaults, 10 × 10)."""
    return {
        "visibility_timeout": env.int("CELERY_VISIBILITY_TIMEOUT", default=3600),
        "unacked_restore_interval": env.int("CELERY_UNACKED_RESTORE_INTERVAL", default=10),
        "unacked_restore_throttle": env.int("CELERY_UNACKED_RESTORE_THROTTLE", default=10),
    }


def log_level() -> str:
    """LOG_LEVEL (default INFO)."""
    return env.str("LOG_LEVEL", default="INFO")


def secret_key_given() -> str:
    """SECRET_KEY as the environment gives it ("" when unset); for the log redaction's keyed hash."""
    return os.environ.get("SECRET_KEY", "").strip()


def _ensure_var_dir() -> Path:
    VAR_DIR.mkdir(parents=True, exist_ok=True)
    return VAR_DIR


class SettingsError(RuntimeError):
    """A setting the process cannot start with (raised while the settings load: a clear startup error)."""


def production() -> bool:
    """DUET_PRODUCTION=true: the production stack (docker/duet.env.example sets it)."""
    return env.bool("DUET_PRODUCTION", default=False)


def secret_key() -> str:
    """SECRET_KEY from the environment, else one generated once into var/secret_key (mode 600).

    In production (DUET_PRODUCTION=true) there is no fallback: a missing, placeholder or short key
    stops the process with a message saying what to set.
    """
    value = os.environ.get("SECRET_KEY", "").strip()
    if production():
        if not value:
            raise SettingsError(
                "SECRET_KEY is not set. In production (DUET_PRODUCTION=true) set SECRET_KEY to a long random "
                "string, e.g. the output of: python -c 'import secrets; print(secrets.token_urlsafe(50))'"
            )
        if value.startswith("change-me") or len(value) < 50 or len(set(value)) < 5:
            raise SettingsError(
                "SECRET_KEY is the example's placeholder or too weak (fewer than 50 characters). Set a long "
                "random string: python -c 'import secrets; print(secrets.token_urlsafe(50))'"
            )
        return value
    if value:
        return value
    path = _ensure_var_dir() / "secret_key"
    if path.exists():
        return path.read_text().strip()
    value = secrets.token_urlsafe(50)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(value)
    return value


def database() -> dict:
    """DATABASE_URL (postgres://… in production), else SQLite under var/."""
    default = f"sqlite:///{_ensure_var_dir() / 'duet.sqlite3'}"
    config = env.db_url("DATABASE_URL", default=default)
    if config["ENGINE"] == "django.db.backends.postgresql":
        config.setdefault("CONN_MAX_AGE", env.int("DB_CONN_MAX_AGE", default=60))
        config.setdefault("CONN_HEALTH_CHECKS", True)
        if env.bool("DUET_PREPARED_STATEMENTS", default=True):
            # The trial endpoint's one-statement save (participation/fastsave.py) binds its parameters
            # on the server; these connection options make psycopg prepare it on first use and
            # PostgreSQL plan it once. Django's own queries bind on the client and are never prepared,
            # so nothing else is affected. false: behind a connection pooler in transaction mode that
            # does not track prepared statements (PgBouncer >= 1.21 does).
            options = config.setdefault("OPTIONS", {})
            options.setdefault("prepare_threshold", 0)
            startup = options.get("options", "")
            if "plan_cache_mode" not in startup:
                options["options"] = f"{startup} -c plan_cache_mode=force_generic_plan".strip()
    elif config["ENGINE"] == "django.db.backends.sqlite3":
        # WAL and a busy timeout let the embedded worker and the web process share the file.
        # IMMEDIATE takes the write lock when a transaction starts, so concurrent writers wait
        # (up to the timeout) instead of failing mid-transaction with "database is locked".
        config.setdefault("OPTIONS", {}).update({
            "timeout": 20,
            "transaction_mode": "IMMEDIATE",
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        })
    return config


def celery_broker_url() -> str:
    """CELERY_BROKER_URL (redis://… in production), else kombu's filesystem transport under var/."""
    return env.str("CELERY_BROKER_URL", default="filesystem://")


TASK_MODES = ("eager", "embedded", "celery")


def task_mode(*, broker_url: str) -> str:
    """DUET_TASK_MODE: where background work (model runs, reports) runs — common/dispatch.py.

    eager: in the process that sends it, once its transaction commits (tests, debugging);
    embedded (default): a `manage.py run_task` process started on this machine, no broker server;
    celery: a Celery queue on CELERY_BROKER_URL (Redis), served by `celery worker` processes.
    """
    if "CELERY_TASK_ALWAYS_EAGER" in os.environ:
        raise SettingsError("CELERY_TASK_ALWAYS_EAGER is no longer read: set DUET_TASK_MODE=eager instead "
                            "(or embedded / celery), and unset CELERY_TASK_ALWAYS_EAGER.")
    value = env.str("DUET_TASK_MODE", default="embedded").strip().lower()
    if value not in TASK_MODES:
        raise SettingsError(f"DUET_TASK_MODE={value!r} is not one of {', '.join(TASK_MODES)}: eager (in-process), "
                            "embedded (a worker process on this machine, the default) or celery (a broker's queues).")
    if value == "celery" and broker_url.startswith("filesystem://"):
        raise SettingsError("DUET_TASK_MODE=celery needs a broker that Celery workers share: set CELERY_BROKER_URL "
                            "to redis://HOST:6379/0 (it is the embedded filesystem:// transport now), or use "
                            "DUET_TASK_MODE=embedded on one machine.")
    return value


def celery_filesystem_options() -> dict:
    folder = _ensure_var_dir() / "broker"
    for sub in ("in", "processed"):
        (folder / sub).mkdir(parents=True, exist_ok=True)
    return {
        "data_folder_in": str(folder / "in"),
        "data_folder_out": str(folder / "in"),
        "processed_folder": str(folder / "processed"),
        "store_processed": False,
    }


def cache() -> dict:
    """CACHE_URL (redis://… in production, shared by every web process), else a local memory cache,
    which is right for the embedded single-process server. Rate-limit counters live here."""
    return env.cache_url("CACHE_URL", default="locmemcache://duet")


RATELIMIT_DEFAULTS = {
    # per client IP address and Prolific id: opening the study link (a participant needs it once, a
    # reload or two more); participants behind one NAT address each have their own count
    "entry": "60/m",
    # per client IP address, whatever the Prolific id: a ceiling for one address (a university NAT
    # brings many participants; a script making up ids brings more)
    "entry_ip": "600/m",
    # per client IP address: new participations started (a Prolific id the study has not seen); a
    # script making up ids is stopped here, a university NAT's real participants are not
    "new_participant": "300/h",
    # per participant token: trial requests other than the save of a new answer (re-sent, refused,
    # malformed, unknown session); new answers are bounded by the participant's list
    "trial": "120/m",
    # per participant token: heartbeat (every 30 s) and finish (retried every 2 s until saved)
    "session": "60/m",
    # per participant token: the session page and its consent / instructions / practice steps (a
    # participant loads it after each step and on a reload: a handful a minute at most)
    "page": "60/m",
    # per client IP address: requests naming a session token that does not exist (random tokens cost a
    # database read each); once over, that address is refused at once, before any read, until the
    # window ends (a participant behind the same address retries after Retry-After, nothing lost)
    "unknown_token": "30/m",
}


def ratelimits() -> dict[str, str]:
    """DUET_RATELIMIT_ENTRY / _TRIAL / _SESSION / _PAGE: "N/s|m|h|d" (e.g. 30/m, 600/5m) or "off"."""
    return {scope: env.str(f"DUET_RATELIMIT_{scope.upper()}", default=default)
            for scope, default in RATELIMIT_DEFAULTS.items()}


def new_participant_share() -> tuple[str, int]:
    """New participations per client address and study, relative to the study's target sample size:
    DUET_RATELIMIT_NEW_PARTICIPANT_SHARE ("P%/period", default 5%/h, or "off") and at least
    DUET_RATELIMIT_NEW_PARTICIPANT_MIN (default 3) per period. One address cannot fill a study with
    made-up Prolific ids (issue 26 item 7); checked in settings.py at start-up."""
    text = env.str("DUET_RATELIMIT_NEW_PARTICIPANT_SHARE", default="5%/h")
    minimum = os.environ.get("DUET_RATELIMIT_NEW_PARTICIPANT_MIN", "3").strip()
    if not minimum.isdigit() or int(minimum) < 1:
        raise SettingsError(f"DUET_RATELIMIT_NEW_PARTICIPANT_MIN must be a whole number ≥ 1, not '{minimum}'.")
    return text, int(minimum)


def https() -> bool:
    """DUET_HTTPS=true: served over HTTPS (directly or behind a TLS-terminating proxy)."""
    return env.bool("DUET_HTTPS", default=False)


def analysis_processes() -> int | None:
    """DUET_ANALYSIS_PROCESSES: how many processes (one R each) a report may use; None when unset
    (the analysis then picks 2 on a machine with two or more CPUs)."""
    text = os.environ.get("DUET_ANALYSIS_PROCESSES", "").strip()
    if not text:
        return None
    if not text.isdigit() or int(text) < 1:
        raise SettingsError(f"DUET_ANALYSIS_PROCESSES must be a whole number ≥ 1, not '{text}'.")
    return int(text)


POWER_MAX_SIMULATED_DEFAULT = 200_000


def power_max_simulated() -> int:
    """DUET_POWER_MAX_SIMULATED (default 200,000): the most simulated participants one power analysis
    may ask for, nsim × the sum of its sizes for the model − human studies and as many again for the
    people's effects by each declared factor (the default plan, 10 20 40 80 160 × 100, is 31,000 a set:
    93,000 for 003's two factors); a larger request is refused with a message (analysis/power_plan.py)."""
    text = os.environ.get("DUET_POWER_MAX_SIMULATED", "").strip()
    if not text:
        return POWER_MAX_SIMULATED_DEFAULT
    if not text.isdigit() or int(text) < 1:
        raise SettingsError(f"DUET_POWER_MAX_SIMULATED must be a whole number ≥ 1, not '{text}'.")
    return int(text)


def login_throttle():
    """(failures, cool-off) for admin logins: DUET_LOGIN_FAILURE_LIMIT (default 5) failed attempts lock
    the client address or the user name out for DUET_LOGIN_COOLOFF_MINUTES (default 15)."""
    from datetime import timedelta

    limit = env.int("DUET_LOGIN_FAILURE_LIMIT", default=5)
    minutes = env.int("DUET_LOGIN_COOLOFF_MINUTES", default=15)
    if limit < 1 or minutes < 1:
        raise SettingsError("DUET_LOGIN_FAILURE_LIMIT and DUET_LOGIN_COOLOFF_MINUTES must be at least 1.")
    return limit, timedelta(minutes=minutes)


def secret_from_environment(name: str) -> str:
    """A secret (an inference API key) read from the environment variable `name` when it is needed;
    it is kept in no setting, database row or log."""
    return os.environ.get(name, "").strip()


# ---------------------------------------------------------------- outbound requests (common/outbound.py)
# The names that hold the deployment's own secrets: never an API key, whatever DUET_MODEL_API_KEYS says.
SERVICE_VARIABLES = ("DATABASE_URL", "CELERY_BROKER_URL", "CACHE_URL")
NEVER_API_KEYS = frozenset({"SECRET_KEY", *SERVICE_VARIABLES})


def model_api_keys() -> dict[str, tuple[str, ...]]:
    """DUET_MODEL_API_KEYS: the environment variables that may hold a model API key, each bound to the
    origins it is sent to, e.g. "OPENAI_API_KEY=https://api.openai.com,OPENROUTER_API_KEY=https://openrouter.ai"
    (several origins for one key: separated by |). Default: none. The secret key, the database, broker
    and cache URLs are refused even when listed (SettingsError), as is an entry without an origin."""
    from urllib.parse import urlsplit

    text = os.environ.get("DUET_MODEL_API_KEYS", "").strip()
    found: dict[str, tuple[str, ...]] = {}
    for entry in filter(None, (part.strip() for part in text.split(","))):
        name, _, origins = entry.partition("=")
        name = name.strip()
        if name.upper() in NEVER_API_KEYS:
            raise SettingsError(f"DUET_MODEL_API_KEYS names {name}, which holds this deployment's own settings, never "
                                "a model API key: remove it.")
        if not name.isidentifier():
            raise SettingsError(f"DUET_MODEL_API_KEYS: {name!r} is not an environment variable's name.")
        bound = []
        for origin in filter(None, (o.strip().rstrip("/") for o in origins.split("|"))):
            parts = urlsplit(origin)
            if parts.scheme not in ("http", "https") or not parts.hostname or parts.path or parts.query:
                raise SettingsError(f"DUET_MODEL_API_KEYS: {name}'s origin {origin!r} is not scheme://host[:port] "
                                    "(e.g. https://api.openai.com).")
            bound.append(origin.lower())
        if not bound:
            raise SettingsError(f"DUET_MODEL_API_KEYS: {name} is bound to no origin; write {name}=https://HOST "
                                "(the key is sent there and nowhere else).")
        found[name] = tuple(bound)
    return found


def outbound_allow() -> list[str]:
    """DUET_OUTBOUND_ALLOW: the addresses a model server may have although they are not public, comma-
    separated: CIDR blocks (10.0.0.0/8), host names or addresses, each with an optional :PORT, and
    'loopback' (127.0.0.0/8 and ::1). Default: 'loopback' on the embedded default, nothing in production
    (DUET_PRODUCTION=true). The deployment's own database, broker and cache are reached only when an
    entry names their host and port."""
    default = "" if production() else "loopback"
    text = os.environ.get("DUET_OUTBOUND_ALLOW", default)
    return [part.strip() for part in text.split(",") if part.strip()]


def service_urls() -> list[str]:
    """The deployment's own services (DATABASE_URL, CELERY_BROKER_URL, CACHE_URL) as set: never a model server."""
    return [os.environ[name] for name in SERVICE_VARIABLES if os.environ.get(name, "").strip()]


def _positive(name: str, default: float, *, whole: bool = False) -> float:
    text = os.environ.get(name, "").strip()
    if not text:
        return default
    try:
        value = int(text) if whole else float(text)
    except ValueError:
        value = 0
    if value <= 0:
        raise SettingsError(f"{name} must be a {'whole ' if whole else ''}number above 0, not '{text}'.")
    return value


def outbound_max_bytes() -> int:
    """DUET_OUTBOUND_MAX_MB (default 8): the largest answer read from a model server, in MB (a run's)."""
    return int(_positive("DUET_OUTBOUND_MAX_MB", 8) * 1024 * 1024)


def check_seconds() -> float:
    """DUET_CHECK_SECONDS (default 25): the wall-clock cap of a configuration's save-time check, all its
    servers together; a web thread is never held longer by one."""
    return _positive("DUET_CHECK_SECONDS", 25.0)


def checks_at_once() -> int:
    """DUET_CHECKS_AT_ONCE (default 2): save-time checks of server configurations running at once in one
    web process; one more is refused at once (try again). Keep it below gunicorn's threads per worker
    (4 in docker/web.Dockerfile), so participants always find a free thread."""
    return int(_positive("DUET_CHECKS_AT_ONCE", 2, whole=True))


# Imports (issue 37 item 1): a whole published dataset in one step, within the deployment's bounds.
IMPORT_MAX_ITEMS_DEFAULT = 300_000  # RULEBREAKERS' 25,600 members × its ten phrasings are 256,000
IMPORT_MAX_RECORDS_DEFAULT = 100_000  # records of one published file (RULEBREAKERS has 25,600)
IMPORT_MAX_MB_DEFAULT = 64  # a published file's size, read a line at a time (the admin's upload limit applies too)


def import_max_items() -> int:
    """DUET_IMPORT_MAX_ITEMS (default 300,000): the most Item rows one import writes (all in one
    transaction: on SQLite the import holds the write lock while it writes, about 2,000-5,000 items/s)."""
    return int(_positive("DUET_IMPORT_MAX_ITEMS", IMPORT_MAX_ITEMS_DEFAULT, whole=True))


def import_max_records() -> int:
    """DUET_IMPORT_MAX_RECORDS (default 100,000): the most records (rows, questions) a published-format
    reader reads from one file (experiments/items/sources/)."""
    return int(_positive("DUET_IMPORT_MAX_RECORDS", IMPORT_MAX_RECORDS_DEFAULT, whole=True))


def import_max_bytes() -> int:
    """DUET_IMPORT_MAX_MB (default 64): the largest published-format file read, in MB (streamed a line at
    a time; an admin upload is also held to DUET_MAX_UPLOAD_MB)."""
    return int(_positive("DUET_IMPORT_MAX_MB", IMPORT_MAX_MB_DEFAULT) * 1024 * 1024)


# ---------------------------------------------------------------- Prolific's API (prolific/client.py; issue 38)
PROLIFIC_DEFAULT_URL = "https://api.prolific.com"


def prolific_api_url() -> str:
    """PROLIFIC_API_URL (default https://api.prolific.com): the origin of Prolific's API. Tests point it at a
    stand-in server on loopback (tests/prolific/standin.py)."""
    return os.environ.get("PROLIFIC_API_URL", "").strip().rstrip("/") or PROLIFIC_DEFAULT_URL


def public_origin() -> str:
    """DUET_PUBLIC_ORIGIN: the origin participants reach this server at, e.g. https://duet.example.org (default
    unset: ''). The launch panel builds the study link from it and publishing on Prolific sends that link, so it
    must be the address people on the internet open; whether it is one is judged when it is used
    (common/public_origin.py). A value that is not scheme://host[:port] stops the process at start-up."""
    from urllib.parse import urlsplit

    text = os.environ.get("DUET_PUBLIC_ORIGIN", "").strip().rstrip("/")
    if not text:
        return ""
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError:
        parts, port = None, None
    if (parts is None or parts.scheme.lower() not in ("http", "https") or not parts.hostname or parts.path
            or parts.query or parts.fragment or "@" in parts.netloc
            or any(c.isspace() or ord(c) < 32 or c == "\\" for c in text)):
        raise SettingsError(f"DUET_PUBLIC_ORIGIN must be scheme://host[:port] with nothing after it (e.g. "
                            f"https://duet.example.org), not {text[:100]!r}.")
    host = parts.hostname.lower()
    host = f"[{host}]" if ":" in host else host
    return f"{parts.scheme.lower()}://{host}" + (f":{port}" if port is not None else "")


PROLIFIC_BONUS_CEILING_DEFAULT = "10.00"


def prolific_bonus_ceiling_cents() -> int:
    """DUET_PROLIFIC_BONUS_CEILING (default 10.00, in the study's currency): the largest bonus Duet pays one
    participant of a study on Prolific; a bonus rule that gives more is refused before anything is set up
    (prolific/bonuses.py). From 0.01 to 21,474,836.47 (what a bonus's amount_cents holds)."""
    from decimal import Decimal, InvalidOperation

    text = os.environ.get("DUET_PROLIFIC_BONUS_CEILING", "").strip() or PROLIFIC_BONUS_CEILING_DEFAULT
    try:
        value = Decimal(text)
    except InvalidOperation:
        value = Decimal(0)
    if not value.is_finite() or value != value.quantize(Decimal("0.01")) or \
            not Decimal("0.01") <= value <= Decimal("21474836.47"):
        raise SettingsError(f"DUET_PROLIFIC_BONUS_CEILING must be an amount from 0.01 to 21474836.47 with at most "
                            f"2 decimals (e.g. 10.00), not '{text[:40]}'.")
    return int(value * 100)


def prolific_api_token() -> str:
    """PROLIFIC_API_TOKEN: the workspace's API token, read when a request is made and kept in no setting,
    database row, log or page ('' when unset: the client then refuses to start, saying which variable to set)."""
    return secret_from_environment("PROLIFIC_API_TOKEN")
