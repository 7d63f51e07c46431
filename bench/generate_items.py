"""Benchmark: generating and saving paper 003's 24,000 items (24 forms × 1000 interpretations).

Measures, side by side in one run on the same database:
  1. pure generation (checker + wording, no database),
  2. generation + bulk save through the design registry (registry.get(design).make) (what generate_items does),
  3. the same rows saved one by one with Model.save() on a 10% sample, scaled up ×10,
and prints the times and the ratios. Uses a throwaway database: SQLite in a temporary directory,
or the PostgreSQL server in DATABASE_URL (a test database is created and dropped).

    .venv/bin/python bench/generate_items.py [--interpretations 1000]
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--interpretations", type=int, default=1000)
    args = parser.parse_args()
    os.environ.setdefault("DUET_VAR_DIR", tempfile.mkdtemp(prefix="duet-bench-"))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "studyserver.settings")
    import django

    django.setup()
    from django.db import connection
    from django.test.utils import setup_test_environment, teardown_test_environment

    setup_test_environment()
    old_name = connection.creation.create_test_db(verbosity=0)
    try:
        run(args.interpretations, connection.vendor)
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)
        teardown_test_environment()


def run(n: int, vendor: str) -> None:
    from experiments import design_registry as registry
    from experiments import services
    from experiments.models import Item

    design = registry.demo_design()  # 003's modal syllogisms
    started = time.perf_counter()
    items = design.sample(interpretations=n, seed=0)  # the same items, made without a database
    pure = time.perf_counter() - started

    study = services.study_create(slug="bench", title="bench", design=design.name)
    started = time.perf_counter()
    report = design.make(study=study, interpretations=n, seed=0)
    bulk = time.perf_counter() - started
    assert report.items == len(items) == 24 * n

    sample = list(Item.objects.filter(study=study).order_by("id")[: max(1, len(items) // 10)])
    other = services.study_create(slug="bench-rows", title="bench rows", design=design.name)
    started = time.perf_counter()
    for item in sample:
        item.pk = None
        item.study = other
        item.original = None
        item.save()
    per_row = (time.perf_counter() - started) * (len(items) / len(sample))

    print(f"database: {vendor}; items: {len(items)} ({n} interpretations × 24 forms)")
    print(f"  pure generation (no database)        {pure:8.2f} s")
    print(f"  generate + bulk save (generate_items) {bulk:8.2f} s   ({len(items) / bulk:,.0f} items/s)")
    print(f"  row-by-row save, extrapolated         {per_row:8.2f} s")
    print(f"ratio bulk / pure generation: {bulk / pure:.2f}")
    print(f"ratio row-by-row / bulk:      {per_row / bulk:.2f}")
    print(f"target: 24,000 items well under 60 s -> {'met' if bulk < 60 else 'NOT met'}")


if __name__ == "__main__":
    main()
