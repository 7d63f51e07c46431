"""Benchmark: do the human-likeness intervals cover? (issue 44 item 5) Prints, side by side in one run, how
often the 95% intervals of `ceiling` and `choice_r` (analysis/likeness.py) hold the true value over simulated
studies, for the report's interval and for the two it replaced or passed over:

  jackknife   the report's: delete-one jackknife over items on Fisher's z scale, bias-corrected, the people's
              random splits fixed (each half holds distinct people);
  items       a 95% percentile bootstrap of items, the same fixed splits (the alternative passed over);
  old         the interval before issue 44: participants and items resampled together, a participant's copies
              kept in one half (so the halves hold fewer distinct people).

A simulated study: items drawn from a population, each with a true share p ~ Beta(a, a) of people answering
"yes" and a model probability m = logistic(logit p + N(0, noise²)); every person answers each item they are
shown yes with probability p, independently (`crossed`: every person every item; `lists`: two lists, each
person half the items, so each item has half the people). The answers go through the report's own code
(likeness.answer_frame, split_halves, table). The true values, for the number of people k answering an item:
ceiling = var(p) / (var(p) + E[p(1 − p)]/k), the reliability of a share of k answers, which is what the split
halves Spearman–Brown corrected estimate; choice_r = cov(m, p) / √(var(m) (var(p) + E[p(1 − p)]/k)), the
correlation of the model's probability with a share of k answers. Moments from 2,000,000 items (seeded).

    .venv/bin/python bench/likeness_coverage.py [--studies 200] [--people 20] [--items 40] [--shape 2]
                                                [--design crossed|lists] [--seed 0] [--resamples 1000]

Nominal: 0.95; with 200 studies, 0.92–0.98 is within about two Monte-Carlo standard errors.
"""
from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from analysis import likeness  # noqa: E402

NOISE = 1.0  # SD of the model's logit around the people's


def population(rng: np.random.Generator, count: int, shape: float) -> tuple[np.ndarray, np.ndarray]:
    """count items: (true share p, model probability m)."""
    p = rng.beta(shape, shape, count)
    logit = np.log(p / (1 - p)) + rng.normal(0.0, NOISE, count)
    return p, 1.0 / (1.0 + np.exp(-logit))


def truth(shape: float, answers_per_item: int) -> tuple[float, float]:
    """(ceiling, choice_r) for items answered by answers_per_item people."""
    p, m = population(np.random.default_rng(2024), 2_000_000, shape)
    noise = float(np.mean(p * (1 - p))) / answers_per_item
    var_p = float(p.var())
    return var_p / (var_p + noise), float(np.cov(m, p)[0, 1]) / math.sqrt(float(m.var()) * (var_p + noise))


def study(seed: int, *, people: int, items: int, shape: float, design: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(people's answers, the model's scores) of one simulated study, in answer_frame's input columns."""
    rng = np.random.default_rng(seed)
    p, m = population(rng, items, shape)
    yes = rng.random((people, items)) < p
    shown = np.ones((people, items), dtype=bool)
    if design == "lists":  # list 1 the first half of the items, list 2 the rest; people alternate
        first = np.arange(items) < items // 2
        shown = np.array([first if k % 2 == 0 else ~first for k in range(people)])
    who, which = np.nonzero(shown)
    answers = np.where(yes[who, which], "yes", "no")
    answered = pd.DataFrame({"participant": [f"P{k:03d}" for k in who], "item_id": which, "answer": answers,
                             "gold": "yes", "correct": (answers == "yes").astype(int)})
    scores = pd.DataFrame({"model": "m", "item_id": np.arange(items), "gold": "yes", "rel_p_yes": m,
                           "decision": np.where(m >= 0.5, "yes", "no")})
    return answered, scores


def _weighted_r(x, y, w):
    return likeness._weighted_r(x, y, w)


def items_bootstrap(mat: likeness.Matrices, rng: np.random.Generator, resamples: int) -> dict:
    """The percentile bootstrap of items, the splits fixed: (low, high) of choice_r and the ceiling."""
    weights = likeness._draws(rng, len(mat.items), resamples)
    r = _weighted_r(likeness.item_shares(mat), mat.m, weights)
    a, b, both = likeness.half_shares(mat)
    ceilings = np.mean([likeness._spearman_brown(_weighted_r(a[s], b[s], weights * both[s]))
                        for s in range(len(a))], axis=0)
    return {"choice_r": likeness._interval(r), "ceiling": likeness._interval(ceilings)}


def old_bootstrap(mat: likeness.Matrices, rng: np.random.Generator, resamples: int) -> dict:
    """The interval before issue 44: participants and items resampled together, a participant's copies in one
    half (each resample's ceiling over the first 20 splits, as it was)."""
    people_w = likeness._draws(rng, len(mat.participants), resamples)
    item_w = likeness._draws(rng, len(mat.items), resamples)
    S, D = people_w @ mat.Y, people_w @ mat.N
    r = _weighted_r(likeness._shares(S, D), mat.m, item_w * (D > 0))
    rows = []
    for half in mat.H[:20]:
        a = people_w * half
        Sa, Da = a @ mat.Y, a @ mat.N
        w = item_w * ((Da > 0) & (D - Da > 0))
        rows.append(likeness._spearman_brown(_weighted_r(likeness._shares(Sa, Da), likeness._shares(S - Sa, D - Da), w)))
    return {"choice_r": likeness._interval(r), "ceiling": likeness._interval(likeness._mean_defined(np.array(rows), 0))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--studies", type=int, default=200)
    parser.add_argument("--people", type=int, default=20)
    parser.add_argument("--items", type=int, default=40)
    parser.add_argument("--shape", type=float, default=2.0, help="a of the Beta(a, a) of the items' true shares")
    parser.add_argument("--design", choices=("crossed", "lists"), default="crossed")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--resamples", type=int, default=1000, help="for the two bootstrap intervals compared")
    args = parser.parse_args()
    per_item = args.people if args.design == "crossed" else args.people // 2
    true = dict(zip(("ceiling", "choice_r"), truth(args.shape, per_item)))
    hits = {(scheme, name): 0 for scheme in ("jackknife", "items", "old") for name in true}
    estimates = {name: [] for name in true}
    started = time.perf_counter()
    for k in range(args.studies):
        seed = args.seed * 1_000_003 + k
        answered, scores = study(seed, people=args.people, items=args.items, shape=args.shape, design=args.design)
        frame, _ = likeness.answer_frame(answered, scores)
        halves = likeness.split_halves(frame["participant"], seed=seed)
        row = likeness.table(frame, halves, resamples=10, seed=seed).iloc[0]
        mat = likeness.matrices(frame, halves)
        rng = np.random.default_rng(seed)
        intervals = {"jackknife": {name: (row[f"{name}_low"], row[f"{name}_high"]) for name in true},
                     "items": items_bootstrap(mat, rng, args.resamples), "old": old_bootstrap(mat, rng, args.resamples)}
        for name, value in true.items():
            estimates[name].append(row[name])
            for scheme, found in intervals.items():
                low, high = found[name]
                hits[(scheme, name)] += bool(low <= value <= high)
    took = time.perf_counter() - started
    print(f"{args.studies} simulated studies ({args.design}: {args.people} people, {args.items} items, "
          f"{per_item} answers per item; shares ~ Beta({args.shape:g}, {args.shape:g}); seed {args.seed}) in {took:.1f} s")
    for name, value in true.items():
        mean = float(np.nanmean(estimates[name]))
        print(f"{name:>9}: true {value:.4f}, mean estimate {mean:.4f}; 95% interval coverage  "
              + "  ".join(f"{scheme} {hits[(scheme, name)] / args.studies:.3f}" for scheme in ("jackknife", "items", "old")))
    worst = min(hits[("jackknife", name)] / args.studies for name in true)
    best = max(hits[("jackknife", name)] / args.studies for name in true)
    print(f"report's interval (jackknife) within 0.92–0.98: {'yes' if 0.92 <= worst and best <= 0.98 else 'NO'}")


if __name__ == "__main__":
    main()
