"""The embedded default (DUET_TASK_MODE=embedded, no worker running): a report requested the way the
admin action requests it is built by a separate `manage.py run_task analysis.build_report ID` process, and its
status moves queued → done with the report on disk. Runs against its own SQLite file in a temporary
DUET_VAR_DIR, so the spawned process sees the data."""
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = """
import time, django
django.setup()
from django.core.management import call_command
call_command("migrate", verbosity=0)
from django.db import transaction
from designs.modal.items import items_generate
from experiments import services
from analysis import services as analysis
from analysis.models import Report
from common import dispatch
from tests.analysis.conftest import _populate
study = services.study_create(slug="embedded", title="Embedded", design="modal-syllogisms")
items_generate(study=study, design="modal-syllogisms", interpretations=4, seed=0, nonsense=True)
_populate(study, models=1, participants=8, seed=1)
assert dispatch.mode() == "embedded"
with transaction.atomic():
    report = analysis.report_request(study=study)
    print("STATUS AT REQUEST", report.status)
deadline = time.monotonic() + 900  # wide: a loaded machine is slow, not broken
while time.monotonic() < deadline:
    report.refresh_from_db()
    if report.status in ("done", "failed"):
        break
    time.sleep(0.5)
print("STATUS", report.status, report.n_scores, report.n_trials, report.message)
print("OUT", report.out_dir)
print("R IN THIS PROCESS", "rpy2" in __import__("sys").modules)
"""


def test_embedded_default_builds_a_requested_report_in_its_own_process(r_stack, tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "CELERY_BROKER_URL", "CELERY_TASK_ALWAYS_EAGER", "DUET_TASK_MODE")}
    env.update(DJANGO_SETTINGS_MODULE="studyserver.settings", DUET_VAR_DIR=str(tmp_path), PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, "-c", SCRIPT], cwd=ROOT, env=env, capture_output=True, text=True, timeout=1200)
    out = done.stdout
    assert "STATUS AT REQUEST queued" in out, out + done.stderr
    assert "STATUS done 192 193" in out, out + done.stderr  # 1 run × 192 items; 8 × 24 trials + the preview's
    assert "R IN THIS PROCESS False" in out  # R ran in the spawned process, not in the requesting one
    folder = Path(out.split("OUT ", 1)[1].splitlines()[0])
    assert folder.is_relative_to(tmp_path) and "Humans and models in one model" in (folder / "report.html").read_text()
    log = next((tmp_path / "logs").glob("report-*.log")).read_text()
    assert done.returncode == 0 and log  # the worker process wrote its log where run.sh users look
