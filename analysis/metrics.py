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
    if clusters is None:
        sums, counts = values, np.ones_like(values)
    else:
        grouped = pd.DataFrame({"v": values, "c": np.asarray(clusters)}).groupby("c")["v"]
        sums, counts = grouped.sum().to_numpy(), grouped.size().to_numpy().astype(float)
    rng = np.random.default_rng(seed)
    k = sums.size
    means = np.empty(samples)
    chunk = max(1, 2_000_000 // max(k, 1))
    for start in range(0, samples, chunk):
        stop = min(samples, start + chunk)
        picks = rng.integers(0, k, size=(stop - start, k), dtype=np.int32)
        if clusters is None:  # one observation per cluster: the denominator is k
            means[start:stop] = sums[picks].mean(axis=1)
        else:
            means[start:stop] = sums[picks].sum(axis=1) / counts[picks].sum(axis=1)
    alpha = (1 - level) / 2
    low, high = np.quantile(means, [alpha, 1 - alpha])
    return float(values.mean()), float(low), float(high)


def _groupings(frame: pd.DataFrame) -> list[tuple[str, str, pd.DataFrame]]:
    groups = [("overall", "all", frame)]
    for modality in MODALITIES:
        part = frame[frame["modality"] == modality]
        if len(part):
            groups.append(("modality", modality, part))
    for label in ARGFORM_CODES:
        part = frame[frame["argform"] == label]
        if len(part) and label in ("∨⊢", "→ᴸ⊢", "→ᴿ⊢", "∨⊬", "→ᴸ⊬", "→ᴿ⊬"):
            groups.append(("argform", label, part))
    return groups


def table1(scores: pd.DataFrame, trials: pd.DataFrame, *, seed: int = 0) -> pd.DataFrame:
    """Accuracy overall, per modality and per argument form on the primary (real modal-syllogism)
    items: each model's mean soft accuracy (items resampled) and humans' proportion correct
    (participants resampled), with 95% CIs."""
    scores, trials = _primary(scores), _primary(trials)
    rows = []
    for model, part in scores.groupby("model", sort=True):
        for factor, level, group in _groupings(part):
            mean, low, high = bootstrap_mean(group["soft_acc"], seed=seed)
            rows.append((model, "soft accuracy", factor, level, len(group), mean, low, high))
    if len(trials):
        for factor, level, group in _groupings(trials):
            mean, low, high = bootstrap_mean(group["correct"], group["participant"], seed=seed)
            rows.append(("human", "proportion correct", factor, level, len(group), mean, low, high))
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
