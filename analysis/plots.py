"""matplotlib figures for the report, returned as PNG bytes (embedded as data URIs)."""
from __future__ import annotations

import io
import math

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.collections import LineCollection  # noqa: E402
import pandas as pd  # noqa: E402

from .prep import LABELS  # noqa: E402

_DPI = 100
_HUMAN = "black"


def _png(fig) -> bytes:
    """PNG bytes. The layout is worked out once while drawing (constrained layout), not by a
    second full draw as bbox_inches="tight" would."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=_DPI)
    plt.close(fig)
    return buffer.getvalue()


def _label(level: str) -> str:
    return LABELS.get(str(level), str(level))


def _points(ax, at, est, low, high, *, color=None, label=None, horizontal=False, size=4):
    """Estimates as dots with their CIs as plain lines: one line collection per call, where
    errorbar() builds several artists per point (and a costly legend entry)."""
    at, est, low, high = (np.asarray(v, dtype=float) for v in (at, est, low, high))
    if horizontal:
        (line,) = ax.plot(est, at, "o", ms=size, color=color, label=label)
        ax.hlines(at, low, high, color=line.get_color(), lw=1.4)
    else:
        (line,) = ax.plot(at, est, "o", ms=size, color=color, label=label)
        ax.vlines(at, low, high, color=line.get_color(), lw=1.4)


def _colour(name: str):
    return _HUMAN if name == "human" else None


def means_with_ci(table: pd.DataFrame, factor: str, *, title: str, ylabel: str) -> bytes:
    """Figures 2, 5, 6: marginal means of one factor with their 95% CIs."""
    fig, ax = plt.subplots(figsize=(5.2, 3.2), layout="constrained")
    x = np.arange(len(table))
    _points(ax, x, table["estimate"], table["ci_low"], table["ci_high"], color="#1f4e79", size=6)
    ax.set_xticks(x, [_label(v) for v in table[factor]], rotation=20, ha="right")
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.grid(axis="y", alpha=0.3)
    return _png(fig)


def _grouped(ax, table: pd.DataFrame, factor: str, who: str, est: str) -> None:
    """Respondents side by side within each level of `factor` (human in black)."""
    levels = list(dict.fromkeys(table[factor]))
    names = list(dict.fromkeys(table[who]))
    width = 0.8 / max(len(names), 1)
    for i, name in enumerate(names):
        rows = table[table[who] == name].set_index(factor).reindex(levels)
        xs = np.arange(len(levels)) + (i - (len(names) - 1) / 2) * width
        _points(ax, xs, rows[est], rows["ci_low"], rows["ci_high"], color=_colour(name), label=name, size=3)
    ax.set_xticks(range(len(levels)), [_label(v) for v in levels], rotation=20, ha="right")
    ax.grid(axis="y", alpha=0.3)


def accuracy_overview(table1: pd.DataFrame) -> bytes:
    """Table 1 as a picture: accuracy per respondent by modality and by argument form, 95% CIs."""
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6), sharey=True, layout="constrained")
    for ax, factor in zip(axes, ("modality", "argform")):
        _grouped(ax, table1[table1["factor"] == factor], "level", "respondent", "accuracy")
        ax.set_title(f"by {factor}", fontsize=10)
    axes[0].set_ylabel("accuracy (models: soft)")
    axes[1].legend(fontsize=7, loc="center left", bbox_to_anchor=(1.0, 0.5))
    return _png(fig)


def random_effects(table: pd.DataFrame, ranks: dict[str, int]) -> bytes:
    """Figure 3: (a) per-model perplexity effect (fixed + random), (b) intercept random effects,
    both with 99.9% CIs; the model's Table 1 rank in parentheses."""
    fig, axes = plt.subplots(1, 2, figsize=(10, 0.9 + 0.35 * table["grp"].nunique()), sharey=True,
                             layout="constrained")
    panels = [("perplexity_z", "mixed", "(a) perplexity effect (fixed + random)"),
              ("(Intercept)", "random", "(b) intercept random effect")]
    for ax, (term, column, title) in zip(axes, panels):
        part = table[table["term"] == term].reset_index(drop=True)
        low = "mixed_ci_low" if column == "mixed" else "ci_low"
        high = "mixed_ci_high" if column == "mixed" else "ci_high"
        y = np.arange(len(part))
        _points(ax, y, part[column], part[low], part[high], color="#7a2e0e", horizontal=True, size=5)
        ax.axvline(0, color="grey", lw=0.8)
        ax.set_yticks(y, [f"{g} ({ranks.get(g, '?')})" for g in part["grp"]])
        ax.set_title(title, fontsize=10)
    return _png(fig)


def sequents(table: pd.DataFrame) -> bytes:
    """Figure 4: mean perplexity vs mean confidence per sequent; real and nonsense joined."""
    models = list(dict.fromkeys(table["model"]))
    cols = min(3, len(models))
    rows = math.ceil(len(models) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4 * cols, 3.2 * rows), squeeze=False, layout="constrained")
    for ax, model in zip(axes.flat, models):
        part = table[table["model"] == model]
        ends = part[["perplexity_real", "confidence_real", "perplexity_nonsense", "confidence_nonsense"]]
        ax.add_collection(LineCollection(ends.to_numpy(dtype=float).reshape(-1, 2, 2), colors="grey", lw=0.7))
        ax.scatter(part["perplexity_real"], part["confidence_real"], s=14, label="real", color="#1f4e79")
        ax.scatter(part["perplexity_nonsense"], part["confidence_nonsense"], s=14, label="nonsense",
                   color="#c55a11")
        ax.set_title(model, fontsize=9)
        ax.set_xlabel("mean perplexity")
        ax.set_ylabel("mean confidence (soft acc.)")
    for ax in list(axes.flat)[len(models):]:
        ax.axis("off")
    axes.flat[0].legend(fontsize=7)
    return _png(fig)


def agents(table: pd.DataFrame, factor: str) -> bytes:
    """Marginal probability correct per agent within each level of a factor, 95% CIs."""
    fig, ax = plt.subplots(figsize=(7, 3.4), layout="constrained")
    _grouped(ax, table, factor, "agent", "estimate")
    ax.set_ylabel("P(correct)")
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.0, 0.5))
    return _png(fig)


def power_curve(curve: pd.DataFrame, target: float) -> bytes:
    """Power against the number of participants, one panel per factor (modality, argument form), a
    line per level and model, its Monte-Carlo 95% interval as a band; the target as a dashed line."""
    factors = [f for f in ("modality", "argform") if f in set(curve["factor"])]
    fig, axes = plt.subplots(1, len(factors), figsize=(5.2 * len(factors), 3.6), sharey=True, squeeze=False,
                             layout="constrained")
    for ax, factor in zip(axes[0], factors):
        part = curve[curve["factor"] == factor]
        for (level, contrast), rows in part.groupby(["level", "contrast"], sort=False):
            rows = rows.sort_values("n")
            (line,) = ax.plot(rows["n"], rows["power"], "o-", ms=3, label=f"{_label(level)}: {contrast}")
            ax.fill_between(rows["n"], rows["low"], rows["high"], color=line.get_color(), alpha=0.15, lw=0)
        ax.axhline(target, ls="--", color="grey", lw=1)
        ax.set_xscale("log")
        ax.set_xticks(sorted(set(part["n"])), labels=[str(n) for n in sorted(set(part["n"]))])
        ax.set_ylim(0, 1)
        ax.set_xlabel("participants")
        ax.set_title(f"by {'modality' if factor == 'modality' else 'argument form'}", fontsize=10)
        ax.legend(fontsize=7, loc="lower right")
    axes[0][0].set_ylabel("power")
    return _png(fig)
