"""matplotlib figures for the report, returned as PNG bytes (embedded as data URIs)."""
from __future__ import annotations

import io
import math

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from .prep import LABELS  # noqa: E402

_DPI = 110


def _png(fig) -> bytes:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=_DPI, bbox_inches="tight")
    plt.close(fig)
    return buffer.getvalue()


def _label(level: str) -> str:
    return LABELS.get(str(level), str(level))


def means_with_ci(table: pd.DataFrame, factor: str, *, title: str, ylabel: str) -> bytes:
    """Figures 2, 5, 6: marginal means of one factor with their 95% CIs."""
    fig, ax = plt.subplots(figsize=(5.2, 3.2))
    x = range(len(table))
    est = table["estimate"].to_numpy()
    ax.errorbar(x, est, yerr=[est - table["ci_low"].to_numpy(), table["ci_high"].to_numpy() - est],
                fmt="o", capsize=4, color="#1f4e79")
    ax.set_xticks(list(x), [_label(v) for v in table[factor]], rotation=20, ha="right")
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.grid(axis="y", alpha=0.3)
    return _png(fig)


def accuracy_overview(table1: pd.DataFrame) -> bytes:
    """Table 1 as a picture: accuracy per respondent by modality and by argument form, 95% CIs."""
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6), sharey=True)
    for ax, factor in zip(axes, ("modality", "argform")):
        part = table1[table1["factor"] == factor]
        levels = list(dict.fromkeys(part["level"]))
        respondents = list(dict.fromkeys(part["respondent"]))
        width = 0.8 / max(len(respondents), 1)
        for i, respondent in enumerate(respondents):
            rows = part[part["respondent"] == respondent].set_index("level").reindex(levels)
            xs = [j + (i - (len(respondents) - 1) / 2) * width for j in range(len(levels))]
            est = rows["accuracy"].to_numpy()
            ax.errorbar(xs, est, yerr=[est - rows["ci_low"].to_numpy(), rows["ci_high"].to_numpy() - est],
                        fmt="o", ms=3, capsize=2, label=respondent)
        ax.set_xticks(range(len(levels)), [_label(v) for v in levels], rotation=20, ha="right")
        ax.set_title(f"by {factor}", fontsize=10)
        ax.grid(axis="y", alpha=0.3)
    axes[0].set_ylabel("accuracy (models: soft)")
    axes[1].legend(fontsize=7, loc="center left", bbox_to_anchor=(1.0, 0.5))
    return _png(fig)


def random_effects(table: pd.DataFrame, ranks: dict[str, int]) -> bytes:
    """Figure 3: (a) per-model perplexity effect (fixed + random), (b) intercept random effects,
    both with 99.9% CIs; the model's Table 1 rank in parentheses."""
    fig, axes = plt.subplots(1, 2, figsize=(10, 0.9 + 0.35 * table["grp"].nunique()), sharey=True)
    panels = [("perplexity_z", "mixed", "(a) perplexity effect (fixed + random)"),
              ("(Intercept)", "random", "(b) intercept random effect")]
    for ax, (term, column, title) in zip(axes, panels):
        part = table[table["term"] == term].reset_index(drop=True)
        low = "mixed_ci_low" if column == "mixed" else "ci_low"
        high = "mixed_ci_high" if column == "mixed" else "ci_high"
        y = range(len(part))
        est = part[column].to_numpy()
        ax.errorbar(est, list(y), xerr=[est - part[low].to_numpy(), part[high].to_numpy() - est],
                    fmt="o", capsize=3, color="#7a2e0e")
        ax.axvline(0, color="grey", lw=0.8)
        ax.set_yticks(list(y), [f"{g} ({ranks.get(g, '?')})" for g in part["grp"]])
        ax.set_title(title, fontsize=10)
    return _png(fig)


def sequents(table: pd.DataFrame) -> bytes:
    """Figure 4: mean perplexity vs mean confidence per sequent; real and nonsense joined."""
    models = list(dict.fromkeys(table["model"]))
    cols = min(3, len(models))
    rows = math.ceil(len(models) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4 * cols, 3.2 * rows), squeeze=False)
    for ax, model in zip(axes.flat, models):
        part = table[table["model"] == model]
        for _, row in part.iterrows():
            ax.plot([row["perplexity_real"], row["perplexity_nonsense"]],
                    [row["confidence_real"], row["confidence_nonsense"]], color="grey", lw=0.7)
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
    levels = list(dict.fromkeys(table[factor]))
    agents_ = list(dict.fromkeys(table["agent"]))
    fig, ax = plt.subplots(figsize=(7, 3.4))
    width = 0.8 / max(len(agents_), 1)
    for i, agent in enumerate(agents_):
        rows = table[table["agent"] == agent].set_index(factor).reindex(levels)
        xs = [j + (i - (len(agents_) - 1) / 2) * width for j in range(len(levels))]
        est = rows["estimate"].to_numpy()
        ax.errorbar(xs, est, yerr=[est - rows["ci_low"].to_numpy(), rows["ci_high"].to_numpy() - est],
                    fmt="o", ms=3, capsize=2, label=agent, color="black" if agent == "human" else None)
    ax.set_xticks(range(len(levels)), [_label(v) for v in levels], rotation=20, ha="right")
    ax.set_ylabel("P(correct)")
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.0, 0.5))
    ax.grid(axis="y", alpha=0.3)
    return _png(fig)
