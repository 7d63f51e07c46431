"""A server run is cancelled from another process while its workers score against the real llama.cpp
server (llama-cpp-python's, SmolLM2's float32 GGUF: tests/inference/conftest.py's session server), fanned
out over two server URLs (ModelRun.parts: one worker process per server): each worker stops sending
within seconds, closes its requests in flight and ends the run as cancelled (issue 43 item 3). Before
the cancel, the run's progress moved item by item, with a rate and a time left.

The two URLs are counting proxies in front of the one real server (tests/inference/counting_proxy.py):
what the workers sent, and when, is read there, not from their bookkeeping. The processes are those
of the embedded default, each on one SQLite file under a temporary DUET_VAR_DIR: one sets the study and
the run up, two workers run the run's two tasks (the registered task, as `manage.py run_task` does, then
stay alive so that their connections are seen closed by them, not by their exit), and one more cancels
the run as the admin's action does. Every wait is generous (minutes) and ends as soon as its condition
holds: a busy machine is slow, not broken. Before issue 43 a worker scored its whole chunk (here 128
items, ~1,000 requests) before it read the run's status, and the progress stood at 0 until then."""
from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

from inference import llama_serve
from tests.inference.counting_proxy import CountingProxy
from tests.integration.servers import wait_for

ROOT = Path(__file__).resolve().parents[2]
ITEMS = 256  # two shares of 128: one chunk each (batch size 64 × 2)
MOVED = 4  # items done before the cancel
STOP_WITHIN = 15.0  # seconds after the cancel past which no request may arrive (the workers read it every second)
PATIENT = 600.0  # the longest any one wait may take on a busy machine

SETUP = """
import os, sys
os.environ["DUET_CHECK_SECONDS"] = "240"
import django
django.setup()
from django.core.management import call_command
call_command("migrate", verbosity=0)
from experiments.models import Item, Study
from inference import checks, services
checks.PROBE_TIMEOUT, checks.COMPLETION_PROBE_TIMEOUT = 60.0, 120.0  # a busy server is slow, not broken
study = Study.objects.create(slug="cancel", title="Cancel", design="csv-import")
names = ["Leo", "Mia", "Ava", "Noah", "Ines", "Omar", "Yuki", "Sara"]
for n in range(int(sys.argv[2])):
    name = names[n % len(names)]
    Item.objects.create(study=study, code=f"c{n}", design="csv-import", gold_answer="yes", question="q",
                        prompt=f"{name} is sewing button {n}.\\nQuestion: Is {name} sewing?\\nAnswer:")
model = services.language_model_create(
    name="SmolLM2 behind two proxies", source=services.EMBEDDED_SOURCE, backend="server",
    server_urls=sys.argv[1], start_token=sys.argv[3], concurrency=2, answer_forms="answers", device="cpu")
run = services.model_run_create(study=study, language_model=model, batch_size=64)
print("RUN", run.pk, run.items_total, [part.args for part in run.parts()])
"""

WORKER = """
import sys, time
import django
django.setup()
from common.dispatch import registered
result = registered("inference.run_model_shard").apply(args=[int(a) for a in sys.argv[1:]])
print("ENDED", time.time(), result.result, flush=True)
sys.stdin.read()  # alive until the test closes stdin
"""

CANCEL = """
import json, sys, time
import django
django.setup()
from inference import services
from inference.models import ModelRun
run = ModelRun.objects.get(pk=int(sys.argv[1]))
progress = run.progress()
print("PROGRESS", json.dumps({"done": progress.done, "total": progress.total, "rate": progress.rate,
                              "left": progress.seconds_left, "text": progress.text()}))
services.model_run_cancel(run=run)
print("CANCELLED", time.time(), flush=True)
"""


def _env(folder: Path) -> dict:
    cleared = {"DATABASE_URL", "CELERY_BROKER_URL", "CELERY_TASK_ALWAYS_EAGER", "DUET_TASK_MODE"}
    env = {k: v for k, v in os.environ.items() if k not in cleared}
    env.update(DJANGO_SETTINGS_MODULE="studyserver.settings", DUET_VAR_DIR=str(folder), PYTHONPATH=str(ROOT),
               OMP_NUM_THREADS="1", LOG_LEVEL="WARNING")
    return env


def _python(env: dict, code: str, *args) -> str:
    done = subprocess.run([sys.executable, "-c", code, *map(str, args)], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=PATIENT, check=False)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
    return done.stdout


def _line(out: str, word: str) -> list[str]:
    return next(line for line in out.splitlines() if line.startswith(word + " ")).split(" ", 1)[1].split(" ", 2)


class Worker:
    """One worker process running a task of the run; its stdout's lines collected as they come."""

    def __init__(self, env: dict, folder: Path, args: list[int]):
        self.lines: list[str] = []
        self.log = folder / f"worker-{args[1]}.log"
        with open(self.log, "wb") as errors:
            self.process = subprocess.Popen([sys.executable, "-c", WORKER, *map(str, args)], cwd=ROOT, env=env,
                                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=errors, text=True)
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.process.stdout:
            self.lines.append(line.strip())

    def ended(self) -> tuple[float, str] | None:
        line = next((line for line in self.lines if line.startswith("ENDED ")), None)
        if line is None:
            if self.process.poll() is not None:
                raise AssertionError(f"the worker exited: {self.log.read_text(errors='replace')[-3000:]}")
            return None
        _, at, status = line.split(" ", 2)
        return float(at), status

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.stdin.close()
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(30)


def _row(database: Path, run_id: int) -> dict:
    with sqlite3.connect(f"file:{database}?mode=ro", uri=True, timeout=60) as db:
        status, done, total = db.execute("SELECT status, items_done, items_total FROM inference_modelrun WHERE id = ?",
                                         (run_id,)).fetchone()
        stored = db.execute("SELECT COUNT(*) FROM inference_modelscore WHERE run_id = ?", (run_id,)).fetchone()[0]
    return {"status": status, "done": done, "total": total, "stored": stored}


def test_a_cancelled_server_run_stops_every_worker_within_seconds_and_its_progress_moved_before(
        llama_served, tmp_path):
    env = _env(tmp_path / "var")
    port = llama_served.port
    with CountingProxy(port) as first, CountingProxy(port) as second:
        proxies = (first, second)
        out = _python(env, SETUP, f"{first.url}\n{second.url}", ITEMS, llama_serve.START_TOKEN)
        run_id, total, parts = _line(out, "RUN")
        run_id, total = int(run_id), int(total)
        assert total == ITEMS and parts == "[(0, 2), (1, 2)]"  # fanned out: a task per server
        workers = [Worker(env, tmp_path, [run_id, shard, 2]) for shard in (0, 1)]
        try:
            database = tmp_path / "var" / "duet.sqlite3"
            # the progress moves while the run runs, item by item: seen between 0 and the total, several times
            readings: list[int] = []

            def moved():
                row = _row(database, run_id)
                if row["status"] == "running" and 0 < row["done"] < total and row["done"] not in readings:
                    readings.append(row["done"])
                return row if row["status"] not in ("queued", "running") or (
                    row["done"] >= MOVED and len(readings) >= 2) else None

            row = wait_for(moved, timeout=PATIENT, what=f"the run's progress moving past {MOVED} items",
                           log=workers[0].log, interval=0.1)
            assert row["status"] == "running" and MOVED <= row["done"] < total, row
            cancelled = _python(env, CANCEL, run_id)
            progress = json.loads(cancelled.split("PROGRESS ", 1)[1].splitlines()[0])
            cancelled_at = float(_line(cancelled, "CANCELLED")[0])
            sent_by_then = sum(len(p.arrivals) for p in proxies)
            # each worker stops: the run's task ends, the run cancelled
            ended = [wait_for(worker.ended, timeout=PATIENT, what="the worker's task ending", log=worker.log,
                              interval=0.1) for worker in workers]
            assert [status for _, status in ended] == ["cancelled", "cancelled"], ended
            # its requests in flight were closed by the worker, which is still running
            for proxy in proxies:
                wait_for(lambda proxy=proxy: proxy.open == 0, timeout=60, what="the workers' connections closed")
            assert all(worker.process.poll() is None for worker in workers)
            sent = sum(len(p.arrivals) for p in proxies)
            time.sleep(5)  # nothing more once the tasks ended, their processes still running
            assert sum(len(p.arrivals) for p in proxies) == sent
            after = [a for p in proxies for a in p.since(cancelled_at)]
            late = [a for a in after if a.at > cancelled_at + STOP_WITHIN]
            assert late == [], f"{len(late)} requests arrived more than {STOP_WITHIN:g} s after the cancel: {late[:5]}"
        finally:
            for worker in workers:
                worker.stop()
        row = _row(database, run_id)
    assert row["status"] == "cancelled" and row["done"] == row["stored"], row  # its progress: what is stored
    assert 0 < progress["done"] < total and progress["rate"] and progress["left"], progress
    assert " left" in progress["text"] and "items/" in progress["text"], progress
    stopped = max(a.at for a in after) - cancelled_at if after else 0.0
    print(f"progress before the cancel: {progress['text']}; {sent_by_then} requests by then; "
          f"{len(after)} arrived after the cancel, the last {stopped:.1f} s after it; the tasks ended "
          f"{max(at for at, _ in ended) - cancelled_at:.1f} s after it")
