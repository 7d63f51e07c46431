"""A model run whose worker is killed (SIGKILL: no exception handler, no clean-up) resumes where it
stopped (issue 37 item 3): the chunks stored before the kill are kept as they are, the chunk being
scored when it died is not half stored, the resumed worker scores only what is missing, and the run
ends with every item scored exactly once. Two processes on one SQLite file, as a worker and the next
worker that takes the run over."""
from __future__ import annotations

import json
import signal

import pytest

from tests.studyserver.test_dispatch import _python

SETUP_AND_KILL = """
import os, signal
import django
django.setup()
from django.core.management import call_command
call_command("migrate", verbosity=0)
from designs.modal.items import items_generate
from experiments import services as study_services
from inference import services
from designs.modal.forms import SYLLOGISMS

study = study_services.study_create(slug="killed", title="Killed", design=SYLLOGISMS)
items_generate(study=study, design=SYLLOGISMS, interpretations=10, seed=0)
fake = services.language_model_create(name="fake", source="fake", backend="fake", device="cpu")
run = services.model_run_create(study=study, language_model=fake, batch_size=8)  # chunks of 16
print("RUN", run.pk, flush=True)
scorer = services._build_scorer(run)
inner, calls = scorer.score, [0]

def score(requests, **options):
    calls[0] += 1
    out = inner(requests, **options)
    if calls[0] == 5:  # the fifth chunk is scored, not yet stored: the worker dies here
        os.kill(os.getpid(), signal.SIGKILL)
    return out

scorer.score = score
services.model_run_execute(run_id=run.pk, scorer=scorer)
print("NOT KILLED", flush=True)
"""

RESUME = """
import json
import django
django.setup()
from inference import services
from inference.models import ModelRun, ModelScore

run = ModelRun.objects.get()
before = {"status": run.status, "items_done": run.items_done,
          "scores": dict(ModelScore.objects.filter(run=run).values_list("item_id", "id"))}
scorer = services._build_scorer(run)
inner, asked = scorer.score, []

def score(requests, **options):
    asked.extend(r.key for r in requests)
    return inner(requests, **options)

scorer.score = score
run = services.model_run_execute(run_id=run.pk, scorer=scorer)
after = {"status": run.status, "items_done": run.items_done, "items_total": run.items_total, "error": run.error,
         "scores": dict(ModelScore.objects.filter(run=run).values_list("item_id", "id")),
         "rows": ModelScore.objects.filter(run=run).count(),
         "items": sorted(run.study.items.values_list("id", flat=True))}
print("RESULT", json.dumps({"before": before, "asked": asked, "after": after}))
"""


@pytest.fixture(scope="module")
def killed_and_resumed(tmp_path_factory):
    folder = tmp_path_factory.mktemp("killed")
    killed = _python(folder, SETUP_AND_KILL)
    assert killed.returncode == -signal.SIGKILL, killed.stdout[-2000:] + killed.stderr[-3000:]
    assert "RUN " in killed.stdout and "NOT KILLED" not in killed.stdout
    resumed = _python(folder, RESUME)
    assert resumed.returncode == 0, resumed.stdout[-2000:] + resumed.stderr[-3000:]
    line = next(line for line in resumed.stdout.splitlines() if line.startswith("RESULT "))
    return json.loads(line.removeprefix("RESULT "))


def test_a_killed_run_is_left_running_with_its_stored_chunks_and_nothing_half_stored(killed_and_resumed):
    before = killed_and_resumed["before"]
    assert before["status"] == "running"  # killed: nothing could mark it failed
    assert len(before["scores"]) == before["items_done"] == 4 * 16  # four chunks stored, the fifth not at all


def test_the_resumed_run_scores_only_what_is_missing_and_ends_with_each_item_once(killed_and_resumed):
    before, asked, after = killed_and_resumed["before"], killed_and_resumed["asked"], killed_and_resumed["after"]
    assert after["status"] == "done" and after["error"] == ""
    assert after["items_done"] == after["items_total"] == after["rows"] == len(after["items"]) == 240
    assert sorted(int(k) for k in after["scores"]) == after["items"]  # nothing lost
    assert len(asked) == len(set(asked)) == 240 - 64  # nothing scored twice
    assert not set(asked) & {int(k) for k in before["scores"]}
    assert {k: v for k, v in after["scores"].items() if k in before["scores"]} == before["scores"]  # kept as stored
