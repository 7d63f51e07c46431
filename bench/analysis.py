"""Benchmark: the whole analysis report vs a plain R script fitting the same models, in one run.

Builds a throwaway study (SQLite in a temporary folder, or a test database on DATABASE_URL's server)
with 24,000 model scores (10 models × 2,400 items of paper 003: 24 forms × 100 interpretations) and
2,000 human trials (80 participants × 25), then times
  1. `manage.py analyze` in-process: database → frames → Table 1, Eq. 4–6, the agent model, plots,
     report.html, CSV and Parquet (R started from cold inside the timing);
  2. `Rscript bench/analysis_reference.R` on the exact model frames the report exported: the same
     fits, likelihood-ratio tests, marginal means, contrasts, R² and random effects (R from cold);
and prints both times and the ratio (target: report ≤ 1.5 × R). Wall-clock time is the measure;
CPU time (this process for the report, the child for Rscript) is printed beside it, because on a
shared machine other processes stretch wall-clock time unevenly between the two runs.

    .venv/bin/python bench/analysis.py [--interpretations 100] [--participants 80]
"""
from __future__ import annotations

import argparse
import io
import math
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
MODALITY = {"none": 0.0, "box": -0.15, "dia": 0.05}
# The effect of each of 003's six argument forms, in the order its items are made (Table A1's: DS, MP, MT valid,
# then AD, AC, DA), matched to the forms of the study's items in order of first appearance.
ARGFORM_EFFECTS = (0.0, 0.1, -0.1, -0.05, -0.1, 0.0)


def populate(study, *, models: int, participants: int, trials_each: int) -> None:
    from experiments.models import Participant, Trial
    from inference.models import LanguageModel, ModelRun, ModelScore

    rng = random.Random(0)
    items = list(study.items.order_by("pk"))
    argform = dict(zip(dict.fromkeys(item.argument_form for item in items), ARGFORM_EFFECTS, strict=True))
    for m in range(models):
        lm = LanguageModel.objects.create(name=f"bench-lm-{m + 1:02d}", source=f"bench/lm-{m + 1}")
        run = ModelRun.objects.create(study=study, language_model=lm, status="done")
        shift, slope = rng.gauss(0, 0.05), rng.gauss(-0.03, 0.01)
        rows = []
        for item in items:
            z = rng.gauss(0, 1)
            soft = 0.6 + shift + MODALITY[item.modality] + argform[item.argument_form] + slope * z + rng.gauss(0, 0.12)
            soft = min(0.995, max(0.005, soft))
            mass = rng.uniform(0.5, 0.95)
            p_yes = soft * mass if item.gold_answer == "yes" else (1 - soft) * mass
            rows.append(ModelScore(run=run, item=item, logprobs={}, token_ids={}, p_yes=p_yes, p_no=mass - p_yes,
                                   relative_p_yes=p_yes / mass, soft_accuracy=soft,
                                   decision="yes" if p_yes >= mass / 2 else "no",
                                   perplexity=math.exp(2.3 + 0.25 * z), prompt_tokens=70, answer_mass=mass))
        ModelScore.objects.bulk_create(rows, batch_size=2000)
    for p in range(participants):
        participant = Participant.objects.create(study=study, prolific_pid=f"bench{p:019d}", key_mapping="f_yes",
                                                 status="completed")
        u = rng.gauss(0, 0.6)
        rows = []
        for index, item in enumerate(rng.sample(items, trials_each)):
            logit = 1.0 + u + 4 * MODALITY[item.modality] + 4 * argform[item.argument_form]
            correct = rng.random() < 1 / (1 + math.exp(-logit))
            answer = item.gold_answer if correct else ("no" if item.gold_answer == "yes" else "yes")
            rows.append(Trial(participant=participant, item=item, index=index, key="f", answer=answer,
                              correct=correct, rt_ms=math.exp(rng.gauss(8.3, 0.45))))
        Trial.objects.bulk_create(rows)


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--interpretations", type=int, default=100)
    parser.add_argument("--models", type=int, default=10)
    parser.add_argument("--participants", type=int, default=80)
    parser.add_argument("--trials", type=int, default=25)
    parser.add_argument("--processes", type=int, default=None,
                        help="processes the report may use (DUET_ANALYSIS_PROCESSES; default: 2 on 2+ CPUs)")
    args = parser.parse_args()
    if args.processes is not None:
        os.environ["DUET_ANALYSIS_PROCESSES"] = str(args.processes)
    work = Path(tempfile.mkdtemp(prefix="duet-bench-analysis-"))
    os.environ.setdefault("DUET_VAR_DIR", str(work / "var"))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "studyserver.settings")
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection
    from django.test.utils import setup_test_environment, teardown_test_environment

    from analysis.rprocess import processes_default
    from experiments import design_registry as registry
    from experiments import services

    processes = processes_default()

    setup_test_environment()
    old_name = connection.creation.create_test_db(verbosity=0)
    try:
        design = registry.demo_design()  # 003's modal syllogisms
        study = services.study_create(slug="bench-analysis", title="Analysis benchmark", design=design.name)
        design.make(study=study, interpretations=args.interpretations, seed=0)
        populate(study, models=args.models, participants=args.participants, trials_each=args.trials)
        n_scores = study.model_runs.all().values_list("scores", flat=True).count()
        print(f"study: {study.items.count()} items, {n_scores} model scores, "
              f"{args.participants * args.trials} human trials ({connection.vendor})")
        out = work / "report"
        start, cpu = time.perf_counter(), time.process_time() + _children_cpu()
        log = io.StringIO()
        call_command("analyze", study.slug, "--out", str(out), stdout=log)
        ours, ours_cpu = time.perf_counter() - start, time.process_time() + _children_cpu() - cpu
        print("report breakdown:", next(line for line in log.getvalue().splitlines() if "time:" in line).strip())
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)
        teardown_test_environment()
    start, cpu = time.perf_counter(), _children_cpu()
    result = subprocess.run(["Rscript", str(ROOT / "bench" / "analysis_reference.R"), str(out / "data" / "model_frames")],
                            capture_output=True, text=True)
    reference, reference_cpu = time.perf_counter() - start, _children_cpu() - cpu
    if result.returncode != 0:
        sys.exit(f"Rscript failed:\n{result.stderr}")
    print(result.stdout.strip())
    print(f"report (manage.py analyze, R from cold, {processes} process(es)): {ours:8.1f} s  (CPU {ours_cpu:.1f} s)")
    print(f"plain Rscript, same models on the exported frames:    {reference:8.1f} s  (CPU {reference_cpu:.1f} s)")
    print(f"ratio report / Rscript: {ours / reference:.2f} (target ≤ 1.5); CPU-time ratio {ours_cpu / reference_cpu:.2f}")
    print(f"report folder: {out}; load average now {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()
