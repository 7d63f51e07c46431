"""The production stack the load bench runs on, on loopback only: a database of its own on PostgreSQL,
Redis as the rate limits' cache, gunicorn serving studyserver.wsgi (tests/integration/servers.py)."""
from __future__ import annotations

import ipaddress
import os
import secrets
import shutil
import subprocess
import tempfile
from pathlib import Path
from urllib.parse import urlsplit

from .common import BURST_SLUG, ROOT, SLUG, BenchError

# every simulated participant comes from 127.0.0.1: the per-address limits on the entry link and on
# new participations are raised for this gunicorn only (the per-token limits stay as in production)
ENTRY_LIMIT_ENV = {"DUET_RATELIMIT_ENTRY": "1000000/m", "DUET_RATELIMIT_ENTRY_IP": "1000000/m",
                   "DUET_RATELIMIT_NEW_PARTICIPANT": "1000000/h"}


def is_loopback(host: str | None) -> bool:
    host = (host or "").strip("[]").lower()
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def require_loopback(url: str, what: str) -> str:
    host = urlsplit(url).hostname
    if not is_loopback(host):
        raise BenchError(f"{what} must be on this machine (127.0.0.1, ::1 or localhost), not {host or url!r}: "
                         "the bench floods what it targets and refuses anything else.")
    return url


# --- servers ----------------------------------------------------------------------------------
def postgres_server(arg: str | None) -> str:
    url = arg or os.environ.get("DATABASE_URL", "")
    if not url.startswith(("postgres://", "postgresql://")):
        done = subprocess.run(["bash", "-c", "source scripts/common.sh && source scripts/postgres.sh && "
                               "start_postgres >&2 && printf %s \"$PG_URL\""], cwd=ROOT, capture_output=True,
                              text=True, timeout=300)
        if done.returncode != 0 or not done.stdout:
            raise BenchError(f"could not start PostgreSQL through scripts/postgres.sh:\n{done.stderr[-2000:]}")
        url = done.stdout.strip()
    return require_loopback(url, "the PostgreSQL server")


SEED = """
from experiments import design_registry as registry
from experiments import services
from experiments.models import Study, StudyStatus
from experiments.participation.consent import consent_review
from experiments.participation.services import human_arm_ensure
design = registry.demo_design()  # 003's modal syllogisms
study = services.study_create(slug=SLUG, title="Load bench", design=design.name)
design.make(study=study, interpretations=INTERPRETATIONS, seed=0, nonsense=NONSENSE)
arm = human_arm_ensure(study=study)
arm.items_per_participant, arm.target_sample_size, arm.completion_code = ITEMS, 100000, "BENCHDONE"
arm.contact = "bench"
arm.full_clean()
arm.save()
consent_review(arm=arm)
services.study_transition(study=study, to=StudyStatus.OPEN)
print(study.items.count())
"""


class Stack:
    def __init__(self, args):
        from tests.integration import servers  # the integration tests' process handling, reused

        self.servers, self.args = servers, args
        self.folder = Path(tempfile.mkdtemp(prefix="duet-load-"))
        self.db = servers.Database(postgres_server(args.database_url))
        self.redis = servers.Redis(self.folder / "redis") if shutil.which("redis-server") else None
        if self.redis:  # docker/compose's persistence (appendonly, fsync once a second), not fsync-always
            self.redis.argv[self.redis.argv.index("--appendfsync") + 1] = "everysec"
        self.web = None
        self.env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "CACHE_URL", "DB_CONN_MAX_AGE")}
        self.env.update({"DATABASE_URL": self.db.url, "SECRET_KEY": secrets.token_urlsafe(40), "LOG_LEVEL": "WARNING",
                         "DUET_VAR_DIR": str(self.folder / "var"), "DJANGO_SETTINGS_MODULE": "studyserver.settings",
                         "PYTHONPATH": str(ROOT), **ENTRY_LIMIT_ENV})
        if self.redis:
            self.env["CACHE_URL"] = self.redis.url

    def start(self) -> None:
        s = self.servers
        self.db.create()
        if self.redis:
            self.redis.start()
        s.manage(self.env, "migrate", "--no-input", "-v", "0", timeout=300)
        if not getattr(self.args, "burst_only", False):  # phases 1 and 2's study
            s.script(self.env, f"SLUG, NONSENSE = {SLUG!r}, False\n"
                     f"INTERPRETATIONS, ITEMS = {max(24, self.args.items)}, {self.args.items}\n" + SEED)
        if self.args.burst:  # 003's demo size: every interpretation real and nonsense
            s.script(self.env, f"SLUG, NONSENSE = {BURST_SLUG!r}, True\n"
                     f"INTERPRETATIONS, ITEMS = {self.args.burst_interpretations}, {self.args.items}\n" + SEED)
        self.web = s.Gunicorn(self.folder, self.env, workers=self.args.workers)
        if self.args.threads > 1:
            self.web.argv += ["--worker-class", "gthread", "--threads", str(self.args.threads)]
        self.web.start()
        require_loopback(self.web.base, "the web server")

    def server_errors(self, lines: int = 30) -> list[str]:
        """The last error lines of gunicorn's log (a 5xx answer's traceback), for the report."""
        log = getattr(self.web, "log", None)
        if log is None or not Path(log).exists():
            return []
        text = Path(log).read_text(errors="replace").splitlines()
        start = next((n for n, line in enumerate(text) if "Traceback" in line or "ERROR" in line), None)
        return [] if start is None else text[start:start + lines]

    def close(self) -> None:
        for process in (self.web, self.redis):
            if process is not None:
                process.stop()
        try:
            self.db.drop()
        finally:
            shutil.rmtree(self.folder, ignore_errors=True)
