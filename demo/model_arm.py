"""The model arm of `manage.py demo`: SmolLM2 scores a small subset of the demo study.

The run goes through the same service and task path as any run, in a separate process
(`manage.py run_model`), so the web process that serves afterwards never imports torch. Skipped
when the demo subset already has scores.
"""
from __future__ import annotations

import subprocess
import sys

from common.env import BASE_DIR

from inference import selectors, services

DEMO_ITEMS = 48  # two interpretations × paper 003's 24 forms


def demo_model_scores(*, study, stdout, style, limit: int = DEMO_ITEMS, show: int = 4) -> None:
    model = services.language_model_embedded_default()
    run = selectors.model_run_latest_done(study=study, language_model=model, item_limit=limit)
    if run is None:
        stdout.write(f"Scoring {limit} demo items with {model.name} (CPU, about a minute the first time)…")
        command = [sys.executable, str(BASE_DIR / "manage.py"), "run_model", study.slug, "--model", model.name,
                   "--limit", str(limit), "--device", "cpu", "--progress-every", "15"]
        if subprocess.run(command, cwd=BASE_DIR).returncode != 0:
            stdout.write(style.WARNING("The demo model run did not finish; see the message above. Serving anyway."))
            return
        run = selectors.model_run_latest_done(study=study, language_model=model, item_limit=limit)
        if run is None:
            return
    scores = list(selectors.model_run_scores(run=run))
    mean_soft = sum(s.soft_accuracy for s in scores) / len(scores)
    stdout.write(style.SUCCESS(
        f"Model scores: {model.name}, run {run.pk}, {len(scores)} items, mean soft accuracy {mean_soft:.3f}"
    ))
    for score in scores[:show]:
        stdout.write(
            f"  {score.item.code}: gold {score.item.gold_answer}, p(yes)={score.p_yes:.3f} p(no)={score.p_no:.3f}, "
            f"soft accuracy {score.soft_accuracy:.3f}, perplexity {score.perplexity:.1f}"
        )
