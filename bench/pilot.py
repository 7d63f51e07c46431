"""Benchmark: a simulated pilot of 40 participants (issue 18's target: under 2 minutes here).

Builds a throwaway study (SQLite in a temporary folder, or a test database on DATABASE_URL's server)
of paper 003's design (24 forms × 100 interpretations; 24 items, 2 catch items and 2 practice
questions per participant), then times, in one run and side by side:
  1. the pilot: 40 bots through the participant pages over HTTP (experiments/participation/pilot.py);
  2. the same 40 participations written through the services directly (no pages, no HTTP),
and prints both, the ratio (what walking the real pages costs) and the pilot's time against the
2-minute target.

    .venv/bin/python bench/pilot.py [--participants 40]
"""
from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
TARGET_SECONDS = 120.0


def direct(study, n: int, seed: int) -> int:
    """n participations written through the services (the floor the pilot is compared with)."""
    from experiments.models import Item
    from experiments.participation import services, trials
    from experiments.participation.payload import parse_trial

    rng, saved = random.Random(seed), 0
    for k in range(n):
        pid, session = services.simulated_ids()
        participant, _ = services.participant_start(study=study, prolific_pid=pid, prolific_session_id=session,
                                                    simulated=True)
        services.participant_consent(participant=participant, agree=True)
        services.participant_instructions_done(participant=participant)
        services.participant_practice_done(participant=participant)
        participant.refresh_from_db()
        yes = "KeyF" if participant.key_mapping == "f_yes" else "KeyJ"
        no = "KeyJ" if yes == "KeyF" else "KeyF"
        for index, item_id in enumerate(participant.plan):
            gold = Item.objects.get(pk=item_id).gold_answer
            right = rng.random() < 0.8
            code = yes if (gold == "yes") == right else no
            onset = 1.7e12 + index * 5000.0
            payload = parse_trial({"index": index, "item": item_id, "code": code, "key": code[-1].lower(),
                                   "idempotency_key": f"direct-{k}-{index}-{rng.getrandbits(32):08x}",
                                   "onset_ms": onset, "response_ms": onset + 1800.0, "timed_out": False,
                                   "viewport_width": 1366, "viewport_height": 768, "focus_lost": False,
                                   "visibility_lost": False})
            trials.trial_record(participant=participant, payload=payload, user_agent="bench")
            saved += 1
        services.participant_finish(participant=participant)
    return saved


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--participants", type=int, default=40)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="duet-bench-pilot-"))
    os.environ.setdefault("DUET_VAR_DIR", str(work / "var"))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "studyserver.settings")
    import django

    django.setup()
    from django.db import connection
    from django.test.utils import setup_test_environment, teardown_test_environment

    from experiments import design_registry as registry

    from experiments import services
    from experiments.participation.pilot import pilot_create, pilot_execute
    from experiments.participation.services import human_arm_ensure

    setup_test_environment()
    old_name = connection.creation.create_test_db(verbosity=0)
    try:
        studies = []
        for slug in ("bench-pilot", "bench-direct"):
            design = registry.demo_design()  # 003's modal syllogisms
            study = services.study_create(slug=slug, title="Pilot benchmark", design=design.name)
            design.make(study=study, interpretations=100, seed=0)
            arm = human_arm_ensure(study=study)
            arm.items_per_participant, arm.completion_code = 24, "C0MPLETE"
            arm.save()
            studies.append(study)
        start = time.perf_counter()
        pilot = pilot_execute(pilot_id=pilot_create(study=studies[0], participants=args.participants, seed=1,
                                                    run=False).pk)
        walked = time.perf_counter() - start
        start = time.perf_counter()
        saved = direct(studies[1], args.participants, seed=1)
        floor = time.perf_counter() - start
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)
        teardown_test_environment()
    print(f"pilot ({connection.vendor}): {pilot.message}")
    print(f"pilot, {args.participants} bots through the pages over HTTP: {walked:7.1f} s ({pilot.trials} answers)")
    print(f"the same participations through the services directly:   {floor:7.1f} s ({saved} answers)")
    print(f"ratio pages / services: {walked / floor:.2f}; pilot {walked:.1f} s against the target of "
          f"{TARGET_SECONDS:.0f} s: {'met' if walked < TARGET_SECONDS else 'NOT met'}")


if __name__ == "__main__":
    main()
