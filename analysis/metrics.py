"""Descriptive metrics: Table 1 with bootstrap CIs, correlations.

Pure functions of tidy frames (numpy/scipy only, no R).
"""
from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from logic.human_defaults import CATCH_ITEMS  # the arm's checks, stored under this design name, scored by models too

from experiments import design_registry as registry

from . import factors as declared

BOOTSTRAP_SAMPLES = 2000


def bootstrap_mean(values, clusters=None, *, samples: int = BOOTSTRAP_SAMPLES, level: float = 0.95,
                   seed: int = 0) -> tuple[float, float, float]:
    """Mean with a percentile bootstrap CI; with `clusters`, whole clusters are resampled."""
    values = np.asarray(values, dtype=float)
    if values.size == 0:
        return (np.nan, np.nan, np.nan)
    draws = Resamples(samples=samples, seed=seed)
    if clusters is None:  # one observation per cluster: the denominator is k
        means = draws.totals(values) / values.size
    else:
        grouped = pd.DataFrame({"v": values, "c": np.asarray(clusters)}).groupby("c")["v"]
        sums, counts = grouped.sum().to_numpy(), grouped.size().to_numpy().astype(float)
        means = draws.totals(sums) / draws.totals(counts)
    low, high = _percentiles(means, level)
    return float(values.mean()), float(low), float(high)


def _percentiles(means: np.ndarray, level: float):
    alpha = (1 - level) / 2
    return np.quantile(means, [alpha, 1 - alpha], axis=0)


class Resamples:
    """Bootstrap resampling plans, shared by every mean resampled from the same number of units.

    The plan for k units is `samples` draws of k unit indices with replacement from a generator
    seeded with `seed`: it depends only on (k, samples, seed), as it always did. It is kept as a
    matrix of how often each unit is drawn, so the resampled totals of many columns of values are
    one matrix product; plans up to `keep_entries` numbers in all are kept, larger ones are drawn
    again in chunks when needed."""

    def __init__(self, *, samples: int = BOOTSTRAP_SAMPLES, seed: int = 0, keep_entries: int = 1 << 23):
        self.samples, self.seed, self.keep_entries = samples, seed, keep_entries
        self._plans: dict[int, np.ndarray] = {}

    def _chunks(self, k: int):
        rng = np.random.default_rng(self.seed)
        step = max(1, 2_000_000 // max(k, 1))
        for start in range(0, self.samples, step):
            rows = min(self.samples, start + step) - start
            yield start, rng.integers(0, k, size=(rows, k), dtype=np.int32)

    def _plan(self, k: int) -> np.ndarray | None:
        if k not in self._plans and sum(p.size for p in self._plans.values()) + self.samples * k <= self.keep_entries:
            plan = np.empty((self.samples, k))
            for start, picks in self._chunks(k):
                n = len(picks)
                flat = picks + np.arange(n, dtype=np.int64)[:, None] * k
                plan[start:start + n] = np.bincount(flat.ravel(), minlength=n * k).reshape(n, k)
            self._plans[k] = plan
        return self._plans.get(k)

    def totals(self, units: np.ndarray) -> np.ndarray:
        """Resampled totals of `units` (k values, or a k × m matrix of m columns): samples (× m)."""
        units = np.asarray(units, dtype=float)
        k = units.shape[0]
        plan = self._plan(k)
        if plan is not None:
            return plan @ units
        out = np.empty((self.samples, *units.shape[1:]))
        for start, picks in self._chunks(k):
            out[start:start + len(picks)] = units[picks].sum(axis=1)
        return out


# What Table 1 resamples: people by participant; a model's answers by item, the phrasings of one
# linked pair (a design's pair_id) together, by pair.
PARTICIPANT, ITEM, PAIR = "participant", "item", "pair"


def _levels(frame: pd.DataFrame, factor: str) -> list[str]:
    """The factor's levels Table 1 reports: those its designs declare (registry.levels), in their order, where a
    design declares them; else every value present, sorted."""
    values = frame[factor].dropna().astype(str)
    present = set(values[values != ""])
    found = registry.levels(factor)
    if found:
        return [level.value for level in found if level.value in present]
    return sorted(present)


def _groupings(frame: pd.DataFrame, factors: tuple[str, ...]) -> list[tuple[str, str, pd.DataFrame]]:
    groups = [("overall", "all", frame)]
    for factor in factors:
        if factor not in frame or not len(frame):
            continue
        values = frame[factor].astype(str).where(frame[factor].notna(), "")
        parts = dict(tuple(frame.groupby(values, sort=False)))
        groups += [(factor, level, parts[level]) for level in _levels(frame, factor) if level in parts]
    return groups


FAMILY = "cluster_family"  # the column table1 adds: the unit a model's answer is resampled in


def families(scores: pd.DataFrame) -> pd.DataFrame:
    """`scores` with the unit each answer belongs to (FAMILY): its item's pair where the items are linked
    in pairs, else the item — a perturbed copy (condition not real, linked to its original) taking its
    original's pair or item, so an original and its copies are one cluster (issue 35). A question's option
    orders keep condition real and share their question's pair id already."""
    if not len(scores) or "item_id" not in scores:
        return scores
    item = scores["item_id"]
    root = item
    if "original_item_id" in scores and "condition" in scores:
        copies = scores["original_item_id"].notna() & (scores["condition"].astype(str) != "real")
        root = item.where(~copies, scores["original_item_id"]).astype("Int64")
    pair = (scores["pair_id"].fillna("").astype(str) if "pair_id" in scores
            else pd.Series("", index=scores.index))
    pair_of = dict(zip(item, pair))
    found = [pair_of.get(r, "") or (p if r == i else "") for r, i, p in zip(root, item, pair)]
    return scores.assign(**{FAMILY: [f or f"item {r}" for f, r in zip(found, root)]})


def model_clusters(scores: pd.DataFrame) -> tuple[pd.Series, str]:
    """What one independent observation of a model is: an item, or a linked pair (all its phrasings and
    both members resampled together) where the items carry a pair id; a perturbed copy belongs to its
    original's (families)."""
    if not len(scores) or "item_id" not in scores:
        return pd.Series(range(len(scores)), index=scores.index), ITEM
    found = scores if FAMILY in scores else families(scores)
    paired = "pair_id" in scores and (scores["pair_id"].fillna("") != "").any()
    return found[FAMILY].astype(str), PAIR if paired else ITEM


def _clustered(heads, columns, clusters, draws, seed, level) -> list[tuple]:
    """Each column's mean with a percentile bootstrap CI. Columns whose clusters are all single rows
    share one resampling plan per size (one matrix product); others resample their clusters whole."""
    found: dict[int, tuple[float, float, float]] = {}
    single = [i for i, c in enumerate(clusters) if c.nunique() == len(c)]
    for k in sorted({columns[i].size for i in single}):
        indices = [i for i in single if columns[i].size == k]
        matrix = np.column_stack([columns[i] for i in indices])
        lows, highs = _percentiles(draws.totals(matrix) / k, level)
        for j, i in enumerate(indices):
            found[i] = (float(matrix[:, j].mean()), float(lows[j]), float(highs[j]))
    for i in set(range(len(columns))) - set(single):
        found[i] = bootstrap_mean(columns[i], clusters[i].to_numpy(), seed=seed, level=level)
    return [(*head, int(clusters[i].nunique()), *found[i]) for i, head in enumerate(heads)]


def table1(scores: pd.DataFrame, trials: pd.DataFrame, *, factors=None, seed: int = 0,
           level: float = 0.95, analysed=frozenset()) -> pd.DataFrame:
    """Accuracy overall and by each of the study's factors (analysis/factors.py; None: the factors the registry
    declares for the designs of the rows read), on analysed_rows (`analysed`: the designs whose real items alone it
    reads where present):
    each model's mean soft accuracy and the accuracy of
    its decisions, its items resampled (pairs where items are linked in pairs), and people's proportion
    correct, participants resampled, with 95% percentile-bootstrap CIs. `cluster` names what was
    resampled and `n_clusters` how many there were."""
    scores, trials = families(analysed_rows(scores, analysed)), analysed_rows(trials, analysed)
    if factors is None:
        factors = tuple(declared.for_designs({*_designs(scores), *_designs(trials)}))
    draws = Resamples(seed=seed)
    heads, columns, clusters = [], [], []
    measures = [("soft accuracy", "soft_acc"), ("decision accuracy", "correct")]
    for model, part in (scores.groupby("model", sort=True) if len(scores) else []):
        for factor, name, group in _groupings(part, factors):
            for measure, column in measures:
                if column not in group:
                    continue
                rows = group[group[column].notna()]
                if not len(rows):
                    continue
                found, unit = model_clusters(rows)
                heads.append((model, measure, factor, name, len(rows), unit))
                columns.append(rows[column].to_numpy(dtype=float))
                clusters.append(found.reset_index(drop=True))
    rows = []
    for i, row in enumerate(_clustered(heads, columns, clusters, draws, seed, level)):
        rows.append((*row[:-2], *_degenerate(heads[i][1], columns[i], clusters[i], row[-2:], heads[i][5], level)))
    if len(trials):
        for factor, name, group in _groupings(trials, factors):
            stats_ = bootstrap_mean(group["correct"], group["participant"], seed=seed, level=level)
            found = _degenerate("proportion correct", group["correct"], group["participant"], stats_[1:],
                                PARTICIPANT, level)
            rows.append(("human", "proportion correct", factor, name, len(group), PARTICIPANT,
                         int(group["participant"].nunique()), stats_[0], *found[:2], found[2]))
    return pd.DataFrame(rows, columns=["respondent", "measure", "factor", "level", "n", "cluster", "n_clusters",
                                       "accuracy", "ci_low", "ci_high", "interval"])


def _designs(frame: pd.DataFrame) -> set[str]:
    return set(frame["design"].dropna().astype(str)) if len(frame) and "design" in frame else set()


PERCENTILE = "percentile bootstrap"


def _degenerate(measure, values, clusters, bounds, unit, level) -> tuple[float, float, str]:
    """A zero-width bootstrap interval (every resample gives the same mean: every cluster has the same share,
    or every answer is alike) replaced for a right/wrong measure by the unit-clustered interval the τ tables
    use (clustered.proportion: Wilson over the units, each counted once), and said; otherwise kept, with why."""
    low, high = (float(b) for b in bounds)
    if not (np.isfinite(low) and low == high):
        return low, high, PERCENTILE
    if measure == "soft accuracy":
        return low, high, f"{PERCENTILE}: zero width, every {unit} has the same mean soft accuracy"
    from .clustered import proportion

    found = proportion(np.asarray(values, dtype=float) > 0.5, list(np.asarray(clusters)), 1 - level, unit=unit)
    return found.low, found.high, (f"{PERCENTILE} zero width ({found.note or 'every ' + unit + ' alike'}): "
                                   f"{found.method}")


def analysed_rows(frame: pd.DataFrame, analysed=frozenset()) -> pd.DataFrame:
    """The rows Table 1 reads: the real items of the `analysed` designs where the study has them (a design
    whose package declares so, registry.analysed_alone_add; StudyFrames.analysed); otherwise
    every item but a nonsense mirror and the human arm's attention checks."""
    if not len(frame):
        return frame
    alone = frame["design"].isin(list(analysed))
    if alone.any():
        return frame[alone & (frame["condition"] == "real")]
    return frame[(frame["condition"] != "nonsense") & (frame["design"] != CATCH_ITEMS)]


def correlation(x, y) -> dict[str, float]:
    """Pearson r and Spearman ρ with their p-values (the perplexity–soft-accuracy correlation)."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if x.size < 3:
        return {"n": int(x.size), "pearson_r": np.nan, "pearson_p": np.nan, "spearman_rho": np.nan,
                "spearman_p": np.nan}
    pearson = stats.pearsonr(x, y)
    spearman = stats.spearmanr(x, y)
    return {"n": int(x.size), "pearson_r": float(pearson.statistic), "pearson_p": float(pearson.pvalue),
            "spearman_rho": float(spearman.statistic), "spearman_p": float(spearman.pvalue)}
