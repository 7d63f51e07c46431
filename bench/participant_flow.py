"""How much the participant flow's safety costs on the server, measured side by side in one run.

For each answer the flow validates the payload, checks the order of steps and the list, then saves
under the unique constraints (a re-sent or clashing answer takes the path that locks the participant
row and checks the idempotency key). This compares, on a fresh database:
  - a trial recorded through the whole HTTP path (CSRF, JSON, view, service),
  - the same answer re-sent (the idempotent retry path),
  - a bare ORM insert of a Trial row (no checks at all),
and prints milliseconds per operation and the ratios. Run: .venv/bin/python bench/participant_flow.py
(It always uses a throw-away SQLite file; set BENCH_DATABASE_URL to measure a scratch PostgreSQL
database instead — the bench writes a study into it.)
"""
from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ["DUET_VAR_DIR"] = tempfile.mkdtemp(prefix="duet-bench-")
os.environ.pop("DATABASE_URL", None)
if os.environ.get("BENCH_DATABASE_URL"):
    os.environ["DATABASE_URL"] = os.environ["BENCH_DATABASE_URL"]
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "studyserver.settings")
os.environ.setdefault("ALLOWED_HOSTS", "testserver")

import django  # noqa: E402

django.setup()

import json  # noqa: E402

from django.core.management import call_command  # noqa: E402
from django.test import Client  # noqa: E402

from experiments import design_registry as registry  # noqa: E402
from experiments import services  # noqa: E402
from experiments.models import Participant, StudyStatus, Trial  # noqa: E402
from experiments.participation import services as flow  # noqa: E402
from experiments.participation.consent import consent_review  # noqa: E402

PARTICIPANTS, PER = 20, 24


def body(p: Participant, index: int, key: str) -> str:
    onset = 1_700_000_000_000.0 + index * 5000
    return json.dumps({"index": index, "item": p.plan[index], "code": "KeyF", "key": "f", "idempotency_key": key,
                       "onset_ms": onset, "response_ms": onset + 900.0, "timed_out": False})


def main() -> None:
    call_command("migrate", verbosity=0)
    design = registry.demo_design()  # 003's modal syllogisms
    study = services.study_create(slug=f"bench-{time.time_ns()}", title="bench", design=design.name)
    design.make(study=study, interpretations=48, seed=0)
    arm = flow.human_arm_ensure(study=study)
    arm.attention_checks, arm.target_sample_size, arm.contact = [], 10_000, "bench"
    arm.save()
    consent_review(arm=arm)
    services.study_transition(study=study, to=StudyStatus.OPEN)

    t = time.perf_counter()
    people = [flow.participant_start(study=study, prolific_pid=f"b{n}", prolific_session_id=f"s{n}")[0]
              for n in range(2 * PARTICIPANTS)]
    start_ms = (time.perf_counter() - t) * 1000 / len(people)
    for p in people:
        flow.participant_consent(participant=p, agree=True)
        flow.participant_instructions_done(participant=p)
        flow.participant_practice_done(participant=p)

    client = Client(enforce_csrf_checks=True)
    client.get(f"/s/{study.slug}/p/{people[0].token}/")
    csrf = client.cookies["csrftoken"].value
    http_people, bare_people = people[:PARTICIPANTS], people[PARTICIPANTS:]

    t = time.perf_counter()
    for p in http_people:
        url = f"/s/{study.slug}/p/{p.token}/trial"
        for i in range(PER):
            r = client.post(url, body(p, i, f"bench-{p.pk}-{i:04d}-key"), content_type="application/json", HTTP_X_CSRFTOKEN=csrf)
            assert r.status_code == 201, r.content
    http_ms = (time.perf_counter() - t) * 1000 / (PARTICIPANTS * PER)

    t = time.perf_counter()
    for p in http_people:
        url = f"/s/{study.slug}/p/{p.token}/trial"
        for i in range(PER):
            r = client.post(url, body(p, i, f"bench-{p.pk}-{i:04d}-key"), content_type="application/json", HTTP_X_CSRFTOKEN=csrf)
            assert r.status_code == 200 and r.json()["duplicate"], r.content
    retry_ms = (time.perf_counter() - t) * 1000 / (PARTICIPANTS * PER)

    t = time.perf_counter()
    for p in bare_people:
        for i in range(PER):
            Trial.objects.create(participant=p, item_id=p.plan[i], index=i, key="f", answer="yes", correct=True, rt_ms=900.0)
    bare_ms = (time.perf_counter() - t) * 1000 / (PARTICIPANTS * PER)

    assert Trial.objects.filter(participant__in=http_people).count() == PARTICIPANTS * PER
    print(f"database: {django.db.connection.vendor}; {PARTICIPANTS * PER} trials per path")
    print(f"participant_start (list + key assignment): {start_ms:.2f} ms per participant")
    print(f"trial via HTTP (checks + save):  {http_ms:.2f} ms")
    print(f"same trial re-sent (idempotent): {retry_ms:.2f} ms")
    print(f"bare ORM insert (no checks):     {bare_ms:.2f} ms")
    print(f"ratio HTTP-with-checks / bare insert: {http_ms / bare_ms:.1f}x; re-send / first send: {retry_ms / http_ms:.2f}x")


if __name__ == "__main__":
    main()
