"""Django settings. Every value that differs between machines comes from common/env.py."""
from __future__ import annotations

from common import env as duet_env
from common.env import BASE_DIR, VAR_DIR
from common.ratelimit import RateError as _RateError
from common.ratelimit import parse_rate as _parse_rate
from common.ratelimit import parse_share as _parse_share

SECRET_KEY = duet_env.secret_key()
DEBUG = duet_env.debug()
ALLOWED_HOSTS = duet_env.allowed_hosts()
CSRF_TRUSTED_ORIGINS = duet_env.csrf_trusted_origins()

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "experiments",
    "inference",
    "analysis",
    "prolific",  # Prolific's API: publish, sync, review, bonuses (issue 38)
    "designs",  # the design packages (designs/apps.py): above experiments and analysis
    "studyserver",  # management commands only (run_task)
    "demo",  # manage.py demo: above the apps it drives
    "axes",  # admin login throttling (issue 17 hole 4)
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "common.security.ContentSecurityPolicyMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "axes.middleware.AxesMiddleware",  # last: turns a lockout into its 429 page
]

# Admin login throttling (django-axes): after DUET_LOGIN_FAILURE_LIMIT failed logins from one client
# address, or for one user name from anywhere, that address or name is locked out for
# DUET_LOGIN_COOLOFF_MINUTES; a successful login clears the count. Attempts are kept in the database
# (works whatever the cache: Redis in production, local memory embedded); the client address is the
# one the rate limits use (common/ratelimit.py: client_ip, behind DUET_TRUSTED_PROXIES proxies).
AUTHENTICATION_BACKENDS = ["axes.backends.AxesStandaloneBackend", "django.contrib.auth.backends.ModelBackend"]
AXES_FAILURE_LIMIT, AXES_COOLOFF_TIME = duet_env.login_throttle()
AXES_LOCKOUT_PARAMETERS = ["ip_address", "username"]
AXES_RESET_ON_SUCCESS = True
AXES_CLIENT_IP_CALLABLE = "common.ratelimit.login_client_ip"
AXES_DISABLE_ACCESS_LOG = True  # failures are what throttling needs; successful logins are not recorded
AXES_LOCKOUT_TEMPLATE = "admin/locked_out.html"
AXES_HTTP_RESPONSE_CODE = 429
AXES_VERBOSE = False  # no banner on every start (management commands print their own output)

ROOT_URLCONF = "studyserver.urls"
WSGI_APPLICATION = "studyserver.wsgi.application"
ASGI_APPLICATION = "studyserver.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

DATABASES = {"default": duet_env.database()}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = duet_env.time_zone()
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = VAR_DIR / "static"
STATIC_ROOT.mkdir(parents=True, exist_ok=True)
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}

# Security headers (common/security.py adds the Content-Security-Policy) and HTTPS.
SESSION_COOKIE_HTTPONLY = True
CSRF_COOKIE_HTTPONLY = False  # the trial script reads it to send answers
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"  # participant URLs carry their token: never sent on to Prolific
SECURE_CROSS_ORIGIN_OPENER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
# DUET_HTTPS=true (served over HTTPS, usually behind a TLS-terminating proxy): secure cookies, HSTS,
# plain HTTP redirected to HTTPS, and the proxy's X-Forwarded-Proto trusted (docs/production.md).
HTTPS = duet_env.https()
SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = duet_env.secure_cookies(https=HTTPS)
if HTTPS:
    _https = duet_env.https_options()
    SECURE_SSL_REDIRECT = _https.ssl_redirect
    SECURE_REDIRECT_EXEMPT = [r"^healthz$"]  # the container's health check speaks plain HTTP inside
    SECURE_HSTS_SECONDS = _https.hsts_seconds
    SECURE_HSTS_INCLUDE_SUBDOMAINS = _https.hsts_include_subdomains
    SECURE_HSTS_PRELOAD = _https.hsts_preload
    if _https.proxy_ssl_header:
        SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
DUET_CSP = duet_env.csp()
# Uploads (CSV banks): streamed to disk and refused past DUET_MAX_UPLOAD_MB while they are read
# (common/uploads.py); a file kept between an import's preview and its write lives under
# var/uploads/ for DUET_UPLOAD_TTL_MINUTES (experiments/items/uploads.py).
FILE_UPLOAD_HANDLERS = ["common.uploads.BoundedUploadHandler"]
DUET_MAX_UPLOAD_BYTES = duet_env.max_upload_mb() * 1024 * 1024
DUET_UPLOAD_DIR = VAR_DIR / "uploads"
DUET_UPLOAD_TTL_MINUTES = duet_env.upload_ttl_minutes()

# The cache (rate-limit counters): CACHE_URL, Redis in production, local memory by default.
CACHES = {"default": duet_env.cache()}
DUET_RATELIMITS = duet_env.ratelimits()  # checked here: a malformed limit stops the process at start-up
for _scope, _rate in DUET_RATELIMITS.items():
    try:
        _parse_rate(_rate)
    except _RateError as _error:
        raise duet_env.SettingsError(f"DUET_RATELIMIT_{_scope.upper()}: {_error}") from None
# New participations per client address and study: a share of the study's target per period, at least
# a minimum (common/ratelimit.py: share_rate); e.g. 5 % of a target of 200 is 10 an hour.
DUET_NEW_PARTICIPANT_SHARE, DUET_NEW_PARTICIPANT_MIN = duet_env.new_participant_share()
try:
    _parse_share(DUET_NEW_PARTICIPANT_SHARE)
except _RateError as _error:
    raise duet_env.SettingsError(f"DUET_RATELIMIT_NEW_PARTICIPANT_SHARE: {_error}") from None
# Proxies in front of the web process that append to X-Forwarded-For (0: use the socket's address).
DUET_TRUSTED_PROXIES = duet_env.trusted_proxies()
# Requests to model servers (common/outbound.py reads these when it sends one): checked here, so a
# malformed key list or limit stops the process at start-up rather than at the first save.
duet_env.model_api_keys(), duet_env.check_seconds(), duet_env.checks_at_once(), duet_env.outbound_max_bytes()
# The origin participants reach this server at (the launch panel's study link, the link published on
# Prolific); '' when unset. Whether participants can reach it is judged where it is used (public_origin.py).
DUET_PUBLIC_ORIGIN = duet_env.public_origin()
# The largest bonus Duet pays one participant on Prolific, in cents of the study's currency (prolific/bonuses.py).
DUET_PROLIFIC_BONUS_CEILING_CENTS = duet_env.prolific_bonus_ceiling_cents()

# Celery: Redis in production, an embedded filesystem transport by default (no server to start).
CELERY_BROKER_URL = duet_env.celery_broker_url()
if CELERY_BROKER_URL.startswith("filesystem://"):
    CELERY_BROKER_TRANSPORT_OPTIONS = duet_env.celery_filesystem_options()
elif CELERY_BROKER_URL.startswith(("redis://", "rediss://")):
    # A task whose worker died unacknowledged (kill -9, lost machine) goes back to the queue after this.
    CELERY_BROKER_TRANSPORT_OPTIONS = duet_env.celery_redis_options()
# Where background work runs (common/dispatch.py, the one way into the workers): eager, embedded
# (the default: a `manage.py run_task` process on this machine) or celery (queues on the broker above).
DUET_TASK_MODE = duet_env.task_mode(broker_url=CELERY_BROKER_URL)
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# On a lost broker connection a worker gives up its running task so that it is delivered again
# (our tasks are idempotent and resume from the last saved chunk); Celery 6 makes this the default.
CELERY_WORKER_CANCEL_LONG_RUNNING_TASKS_ON_CONNECTION_LOSS = True
CELERY_TASK_DEFAULT_QUEUE = "cpu"
CELERY_TIMEZONE = "UTC"

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    # no session token or query string (Prolific ids) in any line: common/logredact.py
    "filters": {"redact": {"()": "common.logredact.RedactFilter"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "filters": ["redact"]}},
    "root": {"handlers": ["console"], "level": duet_env.log_level()},
}
