"""Benchmark: Duet at the seed papers' own scale (issue 37 item 4), ratios measured side by side in one run.

Works in a throwaway folder (SQLite, DUET_VAR_DIR there; DATABASE_URL is ignored) and prints, for a
RULEBREAKERS file in the published 15-column format made from tests/data's excerpt (its 26 pairs
repeated under new ids: 12,800 pairs, 25,600 rows, the published file's size):

1. import: items/s of `manage.py import_items rulebreakers FILE STUDY` (all ten phrasings) at full size
   vs a tenth (target ≥ 0.7), and the full import's peak memory (target ≤ 1 GB). Each import runs in
   its own process, so its peak resident memory is its own. Where the import refuses a file that size
   (before issue 37 item 1 lands) the bench says so and builds the 256,000-item study from by-pair
   parts of the file, the workaround the issue describes.
2. report: `manage.py analyze` time and peak memory for the same participants (40 × 24 answers on the
   same pair members) on a 25,600-item study (the tenth's: 1,280 pairs × ten phrasings, the first pairs
   of the whole file) and on the 256,000-item one (targets ≤ 2× time, ≤ 1.3× peak memory).
3. admin: the study's admin page (items line, launch panel, participants) and its item list (the
   changelist filtered to the study) at both sizes (target ≤ 3×), and the page's first load after the
   import (its item summary is built when the import commits, so the first load finds it too).
4. model runs: the fake backend's per-item overhead at 10,000 vs 100,000 items (target ≤ 1.3×), from
   bench/scale_runs.py, run in a process of its own.

    .venv/bin/python bench/scale.py [--quick] [--keep]

--quick divides every size by ten (a two-minute check, not the targets' measurement).
"""
from __future__ import annotations

import argparse
import csv
import math
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
# The published excerpt, in the folder named after the design it is read into (tests/data/published/<design>/).
EXCERPT = next((ROOT / "tests" / "data" / "published").glob("*/RULEBREAKERS_finegrained_excerpt.csv"))
DESIGN = EXCERPT.parent.name
FULL_PAIRS = 12_800  # the published file: 25,600 rows
PHRASINGS = 10
VARIANT = "follow/yes-no"  # the phrasing people see in both studies, where the import chose none
PARTICIPANTS, ANSWERS = 40, 24  # 960 answers, as in the measurement
MAX_PART_ITEMS = 48_000  # the by-pair parts of the workaround stay under the old 50,000-item bound
TARGETS = {"import rate": 0.7, "import peak MB": 1024, "report time": 2.0, "report memory": 1.3, "admin page": 3.0,
           "run overhead": 1.3}


@dataclass(frozen=True)
class Measured:
    seconds: float
    peak_mb: float
    ok: bool
    output: str


def excerpt_pairs() -> tuple[list[str], list[list[dict]]]:
    """The excerpt's header and its pairs (each the list of its two member rows)."""
    with EXCERPT.open(newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        rows = list(reader)
        header = list(reader.fieldnames or [])
    pairs: dict[str, list[dict]] = {}
    for row in rows:
        pairs.setdefault(row["id"].rsplit("_", 1)[0], []).append(row)
    return header, [members for members in pairs.values() if len(members) == 2]


def write_file(path: Path, pairs: int) -> int:
    """A published-format file of `pairs` pairs (the excerpt's, repeated under new ids); returns its rows."""
    header, templates = excerpt_pairs()
    rows = 0
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=header)
        writer.writeheader()
        for n in range(pairs):
            for member in templates[n % len(templates)]:
                suffix = member["id"].rsplit("_", 1)[1]
                writer.writerow({**member, "id": f"RULEBREAKER_{n:07d}_{suffix}"})
                rows += 1
    return rows


def split_file(path: Path, parts_dir: Path, pairs_per_part: int) -> list[Path]:
    """The file cut into parts of whole pairs (what a researcher had to do before issue 37 item 1)."""
    with path.open(newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        header, rows = list(reader.fieldnames or []), list(reader)
    by_pair: dict[str, list[dict]] = {}
    for row in rows:
        by_pair.setdefault(row["id"].rsplit("_", 1)[0], []).append(row)
    groups = list(by_pair.values())
    out = []
    for k in range(0, len(groups), pairs_per_part):
        part = parts_dir / f"part{k // pairs_per_part:02d}.csv"
        with part.open("w", newline="", encoding="utf-8") as handle:
            writer = csv.DictWriter(handle, fieldnames=header)
            writer.writeheader()
            for members in groups[k:k + pairs_per_part]:
                writer.writerows(members)
        out.append(part)
    return out


def progress(text: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {text}", file=sys.stderr, flush=True)


def run_measured(args: list[str], env: dict) -> Measured:
    """One process's wall time and peak resident memory (its own, from wait4's rusage)."""
    progress(" ".join(args[2:])[:160])
    start = time.perf_counter()
    with tempfile.TemporaryFile("w+") as log:
        proc = subprocess.Popen(args, env=env, stdout=log, stderr=subprocess.STDOUT, cwd=ROOT)
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        log.seek(0)
        output = log.read()
    return Measured(seconds, usage.ru_maxrss / 1024, proc.returncode == 0, output)


def manage(*args: str) -> list[str]:
    return [sys.executable, str(ROOT / "manage.py"), *args]


def ratio_line(label: str, small: float, large: float, target: float, unit: str, better_high: bool = False) -> str:
    value = large / small if small else math.inf
    met = value >= target if better_high else value <= target
    sign = "≥" if better_high else "≤"
    return (f"{label:<34} {small:10.1f} {unit:<5} {large:10.1f} {unit:<5} ratio {value:5.2f} "
            f"(target {sign} {target}) {'met' if met else 'NOT MET'}")


def add_participants(study, pair_ids: list[str], variant: str, seed: int = 0) -> int:
    """PARTICIPANTS completed people answering ANSWERS members each of `pair_ids` (one member of a pair
    each, in `variant`), the same people and answers for any study holding those pairs."""
    from datetime import timedelta

    from django.utils import timezone

    from experiments.models import Participant, Trial

    items = {(p, r): (pk, gold) for pk, p, r, gold in study.items.filter(pair_id__in=pair_ids, variant=variant)
             .values_list("pk", "pair_id", "pair_role", "gold_answer")}
    roles = sorted({r for _, r in items})
    rng = random.Random(seed)
    now = timezone.now()
    made = 0
    for n in range(PARTICIPANTS):
        person = Participant.objects.create(
            study=study, prolific_pid=f"scale{n:019d}", key_mapping="f_yes", status="completed",
            consented_at=now - timedelta(minutes=20), finished_at=now - timedelta(minutes=5))
        chosen = rng.sample(pair_ids, ANSWERS)
        trials = []
        for index, pair in enumerate(chosen):
            pk, gold = items[(pair, roles[(n + index) % len(roles)])]
            correct = rng.random() < (0.8 if index % 2 else 0.6)
            answer = gold if correct else ("no" if gold == "yes" else "yes")
            trials.append(Trial(participant=person, item_id=pk, index=index, key="f", answer=answer,
                                correct=correct, rt_ms=math.exp(rng.gauss(8.0, 0.4))))
        made += len(Trial.objects.bulk_create(trials))
    return made


def admin_seconds(client, study, repeats: int = 3, page: str = "study") -> float:
    """The median time of `repeats` loads of the study's admin page (`page` "study") or of the item list
    filtered to the study ("items")."""
    from django.urls import reverse

    if page == "study":
        url, params = reverse("admin:experiments_study_change", args=[study.pk]), {}
    else:
        url, params = reverse("admin:experiments_item_changelist"), {"study__id__exact": study.pk}
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        response = client.get(url, params)
        times.append(time.perf_counter() - start)
        if response.status_code != 200:
            raise SystemExit(f"the admin page of {study.slug} answered {response.status_code}")
    return statistics.median(times)


def runs_overhead(quick: bool) -> list[str]:
    """bench/scale_runs.py's lines, run in a process of its own (its own throwaway database): a fake-backend
    run's overhead per item at 10,000 vs 100,000 items (--quick: 1,000 vs 10,000)."""
    sizes = ["--small", "1000", "--large", "10000"] if quick else []
    env = {k: v for k, v in os.environ.items() if k not in ("DUET_VAR_DIR", "DATABASE_URL")}
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "scale_runs.py"), *sizes], cwd=ROOT, env=env,
                          capture_output=True, text=True, check=False)
    if done.returncode:
        return [f"model runs (fake backend): bench/scale_runs.py failed: {done.stderr.strip()[-1500:]}"]
    return done.stdout.strip().splitlines()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="every size divided by ten")
    parser.add_argument("--keep", action="store_true", help="keep the working folder (its path is printed)")
    args = parser.parse_args()
    scale = 10 if args.quick else 1
    pairs = FULL_PAIRS // scale
    work = Path(tempfile.mkdtemp(prefix="duet-bench-scale-"))
    env = {**os.environ, "DUET_VAR_DIR": str(work / "var"), "DJANGO_SETTINGS_MODULE": "studyserver.settings"}
    env.pop("DATABASE_URL", None)
    os.environ.update({k: env[k] for k in ("DUET_VAR_DIR", "DJANGO_SETTINGS_MODULE")})
    os.environ.pop("DATABASE_URL", None)
    lines = [f"bench/scale.py{' --quick' if args.quick else ''}: SQLite in {work}, {os.cpu_count()} CPUs, "
             f"load average {os.getloadavg()[0]:.1f} at the start"]
    try:
        migrated = run_measured(manage("migrate", "--noinput"), env)
        if not migrated.ok:
            raise SystemExit(f"migrate failed:\n{migrated.output[-3000:]}")
        full, tenth = work / "full.csv", work / "tenth.csv"
        rows_full, rows_tenth = write_file(full, pairs), write_file(tenth, pairs // 10)

        # 1. import: all ten phrasings, a tenth then the whole file, each in its own process
        small_import = run_measured(manage("import_items", DESIGN, str(tenth), "scale-tenth"), env)
        if not small_import.ok:
            raise SystemExit(f"the tenth-size import failed:\n{small_import.output[-3000:]}")
        big_import = run_measured(manage("import_items", DESIGN, str(full), "scale-big"), env)
        items_tenth, items_full = rows_tenth * PHRASINGS, rows_full * PHRASINGS
        import_lines = []
        if big_import.ok:
            rate_small, rate_big = items_tenth / small_import.seconds, items_full / big_import.seconds
            peak_met = "met" if big_import.peak_mb <= TARGETS["import peak MB"] else "NOT MET"
            import_lines += [
                ratio_line(f"import items/s ({items_tenth:,} vs {items_full:,})", rate_small, rate_big,
                           TARGETS["import rate"], "it/s", better_high=True),
                f"{'import peak memory (full file)':<34} {big_import.peak_mb:10.0f} MB (target ≤ "
                f"{TARGETS['import peak MB']} MB) {peak_met}; tenth {small_import.peak_mb:.0f} MB",
                f"{'import times':<34} {small_import.seconds:10.1f} s     {big_import.seconds:10.1f} s"]
        else:
            refusal = " ".join(big_import.output.strip().splitlines()[-2:])[:400]
            import_lines += [
                f"import of the whole file ({rows_full:,} rows, {items_full:,} items) in one command: REFUSED "
                f"after {big_import.seconds:.1f} s, {big_import.peak_mb:.0f} MB (import targets NOT MET): {refusal}",
                f"  the tenth ({rows_tenth:,} rows, {items_tenth:,} items): {small_import.seconds:.1f} s "
                f"({items_tenth / small_import.seconds:,.0f} items/s), peak {small_import.peak_mb:.0f} MB"]
            per_part = MAX_PART_ITEMS // (2 * PHRASINGS)
            parts = split_file(full, work, per_part)
            seconds, peak = 0.0, 0.0
            for part in parts:
                done = run_measured(manage("import_items", DESIGN, str(part), "scale-big"), env)
                if not done.ok:
                    raise SystemExit(f"{part.name} failed:\n{done.output[-3000:]}")
                seconds, peak = seconds + done.seconds, max(peak, done.peak_mb)
            import_lines.append(f"  so the {items_full:,}-item study was imported in {len(parts)} by-pair parts: "
                                f"{seconds:.1f} s in all ({items_full / seconds:,.0f} items/s), peak {peak:.0f} MB "
                                "a part (no ratio: the one-step import is issue 37 item 1)")

        import django

        django.setup()
        from django.contrib.auth import get_user_model
        from django.test import Client
        from django.test.utils import setup_test_environment

        from experiments.models import Study

        # the tenth's study is the small one: 25,600 items (a tenth of the pairs, all ten phrasings), its pairs
        # the first of the big study's, so the same people answer the same pair members in both
        small, big = Study.objects.get(slug="scale-tenth"), Study.objects.get(slug="scale-big")
        variant = (small.settings or {}).get("human_variant") or VARIANT
        big.settings = {**(big.settings or {}), "human_variant": variant}
        big.save(update_fields=["settings"])
        n_small, n_big = small.items.count(), big.items.count()
        pair_ids = sorted(small.items.order_by().values_list("pair_id", flat=True).distinct())
        chosen = random.Random(1).sample(pair_ids, min(len(pair_ids), 480))
        progress("participants")
        answers = [add_participants(study, chosen, variant) for study in (small, big)]

        # 2. the report, same participants, each in its own process
        reports = [run_measured(manage("analyze", study.slug, "--out", str(work / f"report-{study.slug}")), env)
                   for study in (small, big)]
        for study, done in zip((small, big), reports):
            if not done.ok:
                raise SystemExit(f"analyze {study.slug} failed:\n{done.output[-3000:]}")

        # 3. the study's admin page
        user = get_user_model().objects.create_user("scale-bench", password=os.urandom(8).hex(), is_staff=True,
                                                    is_superuser=True)
        setup_test_environment()  # the test client's host is allowed
        client = Client()
        client.force_login(user)
        progress("admin pages")
        admin_seconds(client, small, repeats=1, page="items")  # warm the process once (templates, the admin)
        firsts = [admin_seconds(client, study, repeats=1) for study in (small, big)]
        pages = [admin_seconds(client, study) for study in (small, big)]
        item_lists = [admin_seconds(client, study, page="items") for study in (small, big)]

        lines += import_lines
        lines += [
            f"report and admin page: {n_small:,}-item vs {n_big:,}-item study, {answers[0]} vs {answers[1]} answers "
            "(the same people and pair members)",
            ratio_line("report time (manage.py analyze)", reports[0].seconds, reports[1].seconds,
                       TARGETS["report time"], "s"),
            ratio_line("report peak memory", reports[0].peak_mb, reports[1].peak_mb, TARGETS["report memory"], "MB"),
            ratio_line("study admin page (median of 3)", pages[0] * 1000, pages[1] * 1000, TARGETS["admin page"], "ms"),
            ratio_line("  its first load after the import", firsts[0] * 1000, firsts[1] * 1000, TARGETS["admin page"],
                       "ms"),
            ratio_line("its item list (median of 3)", item_lists[0] * 1000, item_lists[1] * 1000,
                       TARGETS["admin page"], "ms"),
        ]
        lines += runs_overhead(args.quick)
    finally:
        if args.keep:
            lines.append(f"working folder kept: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
