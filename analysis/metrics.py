"""Descriptive metrics: Table 1 with bootstrap CIs, correlations, Figure 4's per-sequent means.

Pure functions of tidy frames (numpy/scipy only, no R).
"""
from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from .prep import ARGFORM_CODES, MODALITIES

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


ARGFORM_LABELS = ("∨⊢", "→ᴸ⊢", "→ᴿ⊢", "∨⊬", "→ᴸ⊬", "→ᴿ⊬")


def _groupings(frame: pd.DataFrame) -> list[tuple[str, str, pd.DataFrame]]:
    groups = [("overall", "all", frame)]
    for factor, levels in (("modality", MODALITIES), ("argform", [a for a in ARGFORM_CODES if a in ARGFORM_LABELS])):
        parts = dict(tuple(frame.groupby(factor, sort=False, observed=True))) if len(frame) else {}
        groups += [(factor, level, parts[level]) for level in levels if level in parts]
    return groups


def table1(scores: pd.DataFrame, trials: pd.DataFrame, *, seed: int = 0, level: float = 0.95) -> pd.DataFrame:
    """Accuracy overall, per modality and per argument form on the primary (real modal-syllogism)
    items: each model's mean soft accuracy (items resampled) and humans' proportion correct
    (participants resampled), with 95% CIs. Groups of the same size share one resampling plan, so
    all models' groups of one size are resampled in one matrix product."""
    scores, trials = _primary(scores), _primary(trials)
    draws = Resamples(seed=seed)
    heads, columns = [], []
    for model, part in scores.groupby("model", sort=True):
        for factor, name, group in _groupings(part):
            heads.append((model, "soft accuracy", factor, name, len(group)))
            columns.append(group["soft_acc"].to_numpy(dtype=float))
    found: dict[int, tuple[float, float, float]] = {}
    for k in sorted({c.size for c in columns}):
        indices = [i for i, c in enumerate(columns) if c.size == k]
        matrix = np.column_stack([columns[i] for i in indices])
        lows, highs = _percentiles(draws.totals(matrix) / k, level)
        for j, i in enumerate(indices):
            found[i] = (float(matrix[:, j].mean()), float(lows[j]), float(highs[j]))
    rows = [(*head, *found[i]) for i, head in enumerate(heads)]
    if len(trials):
        for factor, name, group in _groupings(trials):
            stats_ = bootstrap_mean(group["correct"], group["participant"], seed=seed, level=level)
            rows.append(("human", "proportion correct", factor, name, len(group), *stats_))
    return pd.DataFrame(rows, columns=["respondent", "measure", "factor", "level", "n", "accuracy",
                                       "ci_low", "ci_high"])


def _primary(frame: pd.DataFrame) -> pd.DataFrame:
    if not len(frame):
        return frame
    return frame[(frame["design"] == "modal-syllogisms") & (frame["condition"] == "real")]


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


def sequent_means(scores: pd.DataFrame) -> pd.DataFrame:
    """Figure 4: per model and logical sequent (form), mean perplexity and mean confidence in the
    gold answer (soft accuracy), real and nonsense side by side (one row per model × form)."""
    frame = scores[scores["design"] == "modal-syllogisms"]
    grouped = (frame.groupby(["model", "form_id", "modality", "argform", "condition"], observed=True)
               .agg(perplexity=("perplexity", "mean"), confidence=("soft_acc", "mean"), n=("soft_acc", "size"))
               .reset_index())
    wide = grouped.pivot_table(index=["model", "form_id", "modality", "argform"], columns="condition",
                               values=["perplexity", "confidence", "n"])
    wide.columns = [f"{value}_{condition}" for value, condition in wide.columns]
    return wide.reset_index()
