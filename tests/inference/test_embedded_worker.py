"""The embedded default (filesystem:// broker, no worker running): a run launched the way admin
launches it executes in a separate `run_model --run ID` process and finishes, no broker server needed.

Runs against its own SQLite file in a temporary DUET_VAR_DIR, so the spawned process sees the data.
"""
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
from experiments.models import Item, Study
from inference import services
from inference.models import ModelRun
from tests.inference.tiny_models import PROMPTS
study = Study.objects.create(slug="s", title="s", design="csv-import")
for i, prompt in enumerate(PROMPTS[:3]):
    Item.objects.create(study=study, code=f"i{i}", design="csv-import", gold_answer="yes", question="q", prompt=prompt)
model = services.language_model_create(name="tiny", source=MODEL, device="cpu")
from common import dispatch
assert dispatch.mode() == "embedded"
run = services.model_run_launch(study=study, language_model=model, batch_size=2)
deadline = time.monotonic() + 600  # wide: a loaded machine is slow, not broken
while time.monotonic() < deadline:
    run.refresh_from_db()
    if run.status in ("done", "failed"):
        break
    time.sleep(0.5)
print("STATUS", run.status, run.items_done, run.items_total, run.error)
print("TORCH IN THIS PROCESS", "torch" in __import__("sys").modules)
"""


def test_embedded_default_runs_the_task_in_a_worker_process(tiny_llama, tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "CELERY_BROKER_URL", "CELERY_TASK_ALWAYS_EAGER", "DUET_TASK_MODE")}
    env.update(DJANGO_SETTINGS_MODULE="studyserver.settings", DUET_VAR_DIR=str(tmp_path), PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, "-c", f"MODEL = {str(tiny_llama)!r}\n" + SCRIPT], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=900)
    assert "STATUS done 3 3" in done.stdout, done.stdout + done.stderr
    assert "TORCH IN THIS PROCESS False" in done.stdout
    assert (tmp_path / "logs" / "model-run-1.log").read_text().count("inference.run_model(1): done") == 1
