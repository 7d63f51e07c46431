"""Benchmark (issue 37 item 3): a model run's per-item overhead at 10,000 vs 100,000 items.

A run on the fake backend (inference/scorers/fake.py: hashes for log-probabilities, no model) goes
through the one run loop (services.model_run_execute, as the worker and run_model do): the items
read and ordered, the requests made, every chunk's numbers checked, its rows built and stored in one
transaction with the progress, the cancel check, the final completeness check. The scorer's own time
(its score() calls, less the progress callbacks it makes) is measured apart and taken off: what is
left is the overhead per item, everything but the model. Printed side by side, with the ratio
(large / small; target ≤ 1.3: the overhead per item does not grow with the run) and the overhead
against a real model's time per item (SmolLM2-135M on this machine's CPU, docs/models.md).

The studies are paper 003's design: 240 items generated (24 forms × 10 interpretations), then
copied under new codes up to the size (the run reads them as any items). A throwaway database:
SQLite in a temporary folder, or a test database on DATABASE_URL's server.

    .venv/bin/python bench/scale_runs.py [--small 10000] [--large 100000] [--batch-size 16]

`figures(small=, large=, batch_size=)` returns the figures (a dict) for bench/scale.py, inside a
database it has set up (`with database(): ...` does so for a script of its own).
"""
from __future__ import annotations

import argparse
import contextlib
import copy
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
TARGET_RATIO = 1.3
# SmolLM2-135M-Instruct (the embedded model) on one CPU thread of the shared 2-vCPU machine, seconds
# per item at batch 16 (bench/scoring.py, docs/models.md "Benchmark"): the real model's time an
# item's overhead is set against.
REAL_MODEL_SECONDS = 0.02


class TimedScorer:
    """The run's own scorer, its score()/generate() time summed apart from the progress callbacks
    (on_done: the loop's own work, so overhead) it makes."""

    def __init__(self, scorer):
        self.inner, self.model_seconds = scorer, 0.0

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def _timed(self, method, requests, on_done):
        spent = [0.0]

        def told(key):
            start = time.perf_counter()
            on_done(key)
            spent[0] += time.perf_counter() - start

        start = time.perf_counter()
        out = method(requests, on_done=told if on_done else None)
        self.model_seconds += time.perf_counter() - start - spent[0]
        return out

    def score(self, requests, on_done=None):
        return self._timed(self.inner.score, requests, on_done)

    def generate(self, requests, on_done=None):
        return self._timed(self.inner.generate, requests, on_done)


@contextlib.contextmanager
def database():
    """Django set up on a throwaway database (SQLite under a temporary folder unless DATABASE_URL)."""
    os.environ.setdefault("DUET_VAR_DIR", tempfile.mkdtemp(prefix="duet-bench-runs-"))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "studyserver.settings")
    import django

    django.setup()
    from django.db import connection
    from django.test.utils import setup_test_environment, teardown_test_environment

    setup_test_environment()
    old_name = connection.creation.create_test_db(verbosity=0)
    try:
        yield connection.vendor
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)
        teardown_test_environment()


def study_of(n: int, slug: str):
    """A study of paper 003's design with `n` items: 240 generated, copied under new codes."""
    from experiments import designs, services
    from experiments.models import Item
    from logic.modal_forms import SYLLOGISMS

    study = services.study_create(slug=slug, title=f"Run benchmark, {n} items", design=SYLLOGISMS)
    designs.items_generate(study=study, design=SYLLOGISMS, interpretations=10, seed=0)
    base = list(Item.objects.filter(study=study).order_by("id"))
    batch = []
    for k in range(len(base), n):
        item = copy.copy(base[k % len(base)])
        item.pk, item.id, item.code = None, None, f"{item.code}-c{k // len(base)}"
        batch.append(item)
        if len(batch) == 5000:
            Item.objects.bulk_create(batch)
            batch = []
    Item.objects.bulk_create(batch)
    return study


def measure(n: int, *, batch_size: int = 16) -> dict:
    """One fake-backend run over a study of `n` items: wall time, the scorer's, the overhead per item."""
    from inference import services
    from inference.models import LanguageModel, ModelScore

    study = study_of(n, slug=f"bench-runs-{n}")
    fake = LanguageModel.objects.filter(name="bench-fake").first() or services.language_model_create(
        name="bench-fake", source="fake", backend="fake", device="cpu")
    run = services.model_run_create(study=study, language_model=fake, batch_size=batch_size)
    scorer = TimedScorer(services._build_scorer(run))
    start = time.perf_counter()
    run = services.model_run_execute(run_id=run.pk, scorer=scorer)
    wall = time.perf_counter() - start
    stored = ModelScore.objects.filter(run=run).count()
    if run.status != "done" or stored != n:
        raise RuntimeError(f"the {n}-item run ended {run.status} with {stored} scores: {run.error}")
    overhead = (wall - scorer.model_seconds) / n
    return {"items": n, "seconds": wall, "model_seconds": scorer.model_seconds, "overhead_ms": 1000 * overhead,
            "items_per_second": n / wall}


def figures(*, small: int = 10_000, large: int = 100_000, batch_size: int = 16) -> dict:
    """The run benchmark's figures (inside a database Django is set up on): each size's measure and the
    ratio of overhead per item, large / small (target ≤ TARGET_RATIO)."""
    low, high = measure(small, batch_size=batch_size), measure(large, batch_size=batch_size)
    ratio = high["overhead_ms"] / low["overhead_ms"]
    return {"small": low, "large": high, "ratio": ratio, "target": TARGET_RATIO, "met": ratio <= TARGET_RATIO,
            "real_model_ms": 1000 * REAL_MODEL_SECONDS}


def lines(result: dict, vendor: str = "") -> list[str]:
    low, high = result["small"], result["large"]
    out = [f"model run on the fake backend{f' ({vendor})' if vendor else ''}: overhead per item (all but the model)"]
    for row in (low, high):
        out.append(f"  {row['items']:>7,} items: {row['seconds']:7.1f} s in all, {row['model_seconds']:6.1f} s "
                   f"in the scorer, {row['overhead_ms']:.3f} ms overhead per item "
                   f"({row['items_per_second']:,.0f} items/s)")
    out.append(f"  ratio {high['items']:,} / {low['items']:,}: {result['ratio']:.2f} "
               f"(target ≤ {result['target']}: {'met' if result['met'] else 'NOT met'}); overhead "
               f"{high['overhead_ms']:.3f} ms against a real model's {result['real_model_ms']:.0f} ms per item "
               f"({100 * high['overhead_ms'] / result['real_model_ms']:.1f} %)")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", type=int, default=10_000)
    parser.add_argument("--large", type=int, default=100_000)
    parser.add_argument("--batch-size", type=int, default=16)
    args = parser.parse_args()
    with database() as vendor:
        result = figures(small=args.small, large=args.large, batch_size=args.batch_size)
    print("\n".join(lines(result, vendor)))


if __name__ == "__main__":
    main()
