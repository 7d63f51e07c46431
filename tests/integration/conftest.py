"""A session-scoped stack of real servers: Redis, gunicorn and a Celery worker over a dedicated
PostgreSQL database. The tests talk to it over HTTP and read the database through psycopg; set-up
and run launches go through the product's services in separate processes, as an operator would.

They run in the PostgreSQL pass of scripts/test.sh only (marked postgres_only; the SQLite pass
deselects them). With CI=true, a missing PostgreSQL URL or a server that cannot start fails them.
"""
from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .servers import ROOT, Database, Gunicorn, Redis, ServerError, Worker, manage, script, wait_for

HERE = Path(__file__).resolve().parent
SLUG = "integration"
ITEMS_PER_PARTICIPANT = 6


def _must_run() -> bool:
    """In CI these tests are selected only in the PostgreSQL pass; there they must run, never skip."""
    return os.environ.get("CI", "").lower() == "true"


def _unavailable(message: str):
    if _must_run():
        pytest.fail(f"Integration stack unavailable in CI: {message}", pytrace=False)
    pytest.skip(message)


class Stack:
    def __init__(self, folder: Path, db: Database, redis: Redis, model_dir: Path):
        self.folder, self.db, self.redis, self.model_dir = folder, db, redis, model_dir
        self.env = {
            **os.environ, "DATABASE_URL": db.url, "CELERY_BROKER_URL": redis.url, "CELERY_VISIBILITY_TIMEOUT": "4",
            "CELERY_UNACKED_RESTORE_INTERVAL": "1", "CELERY_UNACKED_RESTORE_THROTTLE": "1",
            "SECRET_KEY": secrets.token_urlsafe(40), "DUET_VAR_DIR": str(folder / "var"), "DB_CONN_MAX_AGE": "0",
            "DJANGO_SETTINGS_MODULE": "studyserver.settings", "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1",
            "OMP_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false", "LOG_LEVEL": "WARNING",
            "DUET_TASK_MODE": "celery",  # runs and reports go to the Celery worker over Redis
        }
        self.env.pop("CELERY_TASK_ALWAYS_EAGER", None)  # no longer read: its presence stops the settings
        self.web: Gunicorn | None = None
        self.worker: Worker | None = None

    # --- servers -------------------------------------------------------------------------------
    def start_web(self) -> Gunicorn:
        self.web = Gunicorn(self.folder, self.env)
        self.web.start()
        return self.web

    def restart_web(self) -> None:
        """SIGTERM (gunicorn's graceful stop) and start again on the same port."""
        self.web.stop()
        port = self.web.port
        self.web = Gunicorn(self.folder, self.env)
        self.web.port = port
        self.web.argv[self.web.argv.index("--bind") + 1] = f"127.0.0.1:{port}"
        self.web.start()

    def start_worker(self) -> Worker:
        self.worker = Worker(self.folder, self.env)
        self.worker.start()
        return self.worker

    def close(self) -> None:
        for process in (self.worker, self.web, self.redis):
            if process is not None:
                process.stop()

    # --- the product, from outside -------------------------------------------------------------
    def launch_run(self, *, batch_size: int, item_limit: int | None) -> int:
        """model_run_launch in a separate process: queued on Redis once its transaction commits."""
        return int(script(self.env, (
            "from experiments.models import Study\nfrom inference import selectors, services\n"
            f"run = services.model_run_launch(study=Study.objects.get(slug={SLUG!r}), "
            "language_model=selectors.language_model_by_name(name='tiny-llama'), "
            f"batch_size={batch_size}, device='cpu', item_limit={item_limit!r})\nprint(run.pk)"
        )))

    def run_row(self, run_id: int) -> dict:
        rows = self.db.query("SELECT status, items_done, items_total, error FROM inference_modelrun WHERE id = %s", (run_id,))
        return dict(zip(("status", "items_done", "items_total", "error"), rows[0]))

    def wait_run(self, run_id: int, *, timeout: float, until=lambda row: row["status"] in ("done", "failed", "cancelled")) -> dict:
        log = self.worker.log if self.worker else None
        return wait_for(lambda: (lambda row: row if until(row) else None)(self.run_row(run_id)),
                        timeout=timeout, what=f"run {run_id} progress", log=log, interval=0.05)

    def scores(self, run_id: int) -> list[tuple]:
        return self.db.query("SELECT id, item_id, created_at FROM inference_modelscore WHERE run_id = %s ORDER BY id", (run_id,))


SEED = f"""
from designs.modal.items import items_generate
from experiments import services
from experiments.models import Study, StudyStatus
from experiments.participation.consent import consent_review
from experiments.participation.services import human_arm_ensure
from inference.services import language_model_create
import sys
study = Study.objects.create(slug={SLUG!r}, title="Integration", design="modal-syllogisms")
items_generate(study=study, design="modal-syllogisms", interpretations=24, seed=0)
arm = human_arm_ensure(study=study)
for name, value in {{"items_per_participant": {ITEMS_PER_PARTICIPANT}, "completion_code": "C0MPLETE",
        "no_consent_code": "NOCONSENT", "failed_attention_code": "FAILEDAC", "incompatible_device_code": "NODEVICE",
        "attention_checks": [], "practice": []}}.items():
    setattr(arm, name, value)
arm.contact = "integration tests"
arm.full_clean()
arm.save()
consent_review(arm=arm)
services.study_transition(study=study, to=StudyStatus.OPEN)
language_model_create(name="tiny-llama", source=sys.argv[1], device="cpu")
print(json.dumps({{"items": study.items.count()}}))
"""


@pytest.fixture(scope="session")
def postgres_url() -> str:
    """The PostgreSQL server of scripts/test.sh's second pass; the SQLite pass skips these tests."""
    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith(("postgres://", "postgresql://")):
        if _must_run():
            pytest.fail("CI=true but DATABASE_URL is not a PostgreSQL URL: run them through scripts/test.sh.", pytrace=False)
        pytest.skip("integration tests run in the PostgreSQL pass of scripts/test.sh (DATABASE_URL=postgres://…)")
    return url


@pytest.fixture(scope="session")
def stack(postgres_url, django_db_setup, tmp_path_factory):
    # django_db_setup (pytest-django's test database, unused here) marks these tests as needing a
    # database, so tests/conftest.py keeps them for the PostgreSQL pass; the servers use their own one.
    url = postgres_url
    if shutil.which("redis-server") is None:
        _unavailable("redis-server is not installed (scripts/apt/test/integration.txt)")
    from tests.inference.tiny_models import build

    folder = tmp_path_factory.mktemp("integration")
    model_dir = build("llama", folder / "tiny-llama")
    db = Database(url)
    try:
        db.create()
    except Exception as exc:
        _unavailable(f"cannot create a database on {url.split('@')[-1]}: {exc}")
    redis = Redis(folder / "redis")
    stack = Stack(folder, db, redis, model_dir)
    try:
        redis.start()
        manage(stack.env, "migrate", "--no-input", "-v", "0")
        seeded = subprocess_seed(stack, model_dir)
        stack.items = seeded["items"]
        stack.start_web()
        stack.start_worker()
    except BaseException as exc:  # leave no server or database behind, whatever went wrong
        stack.close()
        db.drop()
        if isinstance(exc, ServerError):
            _unavailable(str(exc))
        raise
    yield stack
    stack.close()
    db.drop()


def subprocess_seed(stack: Stack, model_dir: Path) -> dict:
    done = subprocess.run([sys.executable, "-c", "import django, json\ndjango.setup()\n" + SEED, str(model_dir)],
                          cwd=ROOT, env=stack.env, capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        raise ServerError(f"seeding failed:\n{done.stdout}\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])
