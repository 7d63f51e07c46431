"""matplotlib figures for the report: each a Figure (PNG and SVG bytes, a caption, alt text), embedded in
report.html as a data URI inside <figure> with its <figcaption>, and written beside the tables as
figures/<name>.png and .svg (analysis/report.py).

Readable as files too (issue 47 item 6): a legend sits outside the axes, never over the data; tick labels are
plain numbers (a log axis labelled at the values tried, no "3×10¹"; no offset or scientific notation); a count
is an integer; the SVG keeps its text as text, so a reader can search and edit it.

Every plot draws from the Okabe–Ito palette (readable with any common colour-vision deficiency),
humans in black. A probability-scale plot (soft accuracy, relative p(Yes), P(correct)) keeps its
axis to [0, 1]: an interval the model does not bound (a Gaussian LMM's, on proportions) is cut at 0
and 1 and the cut marked with a triangle, never drawn off the scale; the report says so beside it.
"""
from __future__ import annotations

import io
import math
import textwrap
from dataclasses import dataclass

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from cycler import cycler  # noqa: E402
from matplotlib.collections import LineCollection  # noqa: E402
from matplotlib.ticker import NullFormatter, NullLocator  # noqa: E402
import pandas as pd  # noqa: E402

from .factors import spoken  # noqa: E402
from .prep import LABELS  # noqa: E402

_DPI = 100
_HUMAN = "#000000"
# Okabe & Ito (2008), "Color Universal Design": black first (humans), then the seven colours.
OKABE_ITO = ("#000000", "#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00", "#CC79A7")
_CYCLE = cycler(color=[OKABE_ITO[i] for i in (5, 6, 2, 1, 3, 7, 4)])  # the models' colours, humans excluded
plt.rcParams["axes.prop_cycle"] = _CYCLE
plt.rcParams["axes.formatter.useoffset"] = False  # plain tick labels: no "+1e3" offset above an axis ...
plt.rcParams["axes.formatter.limits"] = (-9, 9)  # ... and no scientific notation for any value a report plots
plt.rcParams["svg.fonttype"] = "none"  # SVG text stays text (searchable, editable), not glyph outlines
plt.rcParams["svg.hashsalt"] = "duet"  # the same figure gives the same SVG ids (files hashed in the description)
_MAIN, _SECOND = OKABE_ITO[5], OKABE_ITO[6]  # blue, vermillion
_ALT_MAX = 40  # values listed in a figure's alt text before "…"


@dataclass(frozen=True)
class Figure:
    png: bytes
    caption: str
    alt: str
    svg: bytes = b""  # the same figure as SVG (figures/<name>.svg in the report folder)


def _title(ax, text: str, width: int = 55) -> None:
    """A title wrapped to the panel's width, never clipped."""
    ax.set_title(textwrap.fill(text, width), fontsize=10)


def _values(labels, est, low, high) -> str:
    items = [f"{label}: {e:.2f} [{lo:.2f}, {hi:.2f}]" for label, e, lo, hi in zip(labels, est, low, high)]
    more = f"; … {len(items) - _ALT_MAX} more in the table" if len(items) > _ALT_MAX else ""
    return "; ".join(items[:_ALT_MAX]) + more


def out_of_bounds(table: pd.DataFrame) -> bool:
    """Whether any interval of `table` (ci_low, ci_high) reaches beyond [0, 1]."""
    return bool(((table["ci_low"] < 0) | (table["ci_high"] > 1)).any())


def _png(fig) -> bytes:
    """PNG bytes. The layout is worked out once while drawing (constrained layout), not by a
    second full draw as bbox_inches="tight" would."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=_DPI)
    return buffer.getvalue()


def _svg(fig) -> bytes:
    """SVG bytes, without the date matplotlib would write (the same figure, the same file)."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="svg", metadata={"Date": None})
    return buffer.getvalue()


def _figure(fig, caption: str, alt: str) -> Figure:
    """The drawn figure as a Figure (PNG and SVG), closed. The SVG keeps the layout the PNG's draw worked out
    (the layout engine is switched off between the two): the same positions, without solving them again."""
    try:
        png = _png(fig)
        fig.set_layout_engine("none")
        return Figure(png, caption, alt, svg=_svg(fig))
    finally:
        plt.close(fig)


def _label(level: str) -> str:
    return LABELS.get(str(level), str(level))


def _points(ax, at, est, low, high, *, color=None, label=None, horizontal=False, size=4, bounded=False):
    """Estimates as dots with their CIs as plain lines: one line collection per call, where
    errorbar() builds several artists per point (and a costly legend entry). `bounded`: a
    probability scale — intervals cut at 0 and 1, each cut marked with a triangle."""
    at, est, low, high = (np.asarray(v, dtype=float) for v in (at, est, low, high))
    if bounded and not horizontal:
        (line,) = ax.plot(at, est, "o", ms=size, color=color, label=label)
        ax.vlines(at, np.clip(low, 0, 1), np.clip(high, 0, 1), color=line.get_color(), lw=1.4)
        for cut, where, marker in ((low < 0, 0.0, "v"), (high > 1, 1.0, "^")):
            if cut.any():
                ax.plot(at[cut], np.full(cut.sum(), where), marker, ms=size + 1, color=line.get_color())
        ax.set_ylim(-0.03, 1.03)
        return
    if horizontal:
        (line,) = ax.plot(est, at, "o", ms=size, color=color, label=label)
        ax.hlines(at, low, high, color=line.get_color(), lw=1.4)
    else:
        (line,) = ax.plot(at, est, "o", ms=size, color=color, label=label)
        ax.vlines(at, low, high, color=line.get_color(), lw=1.4)


def _colour(name: str):
    return _HUMAN if name == "human" else None


def means_with_ci(table: pd.DataFrame, factor: str, *, title: str, ylabel: str, bounded: bool = False) -> Figure:
    """Figures 2, 5, 6: marginal means of one factor with their 95% CIs."""
    fig, ax = plt.subplots(figsize=(5.2, 3.4), layout="constrained")
    x = np.arange(len(table))
    _points(ax, x, table["estimate"], table["ci_low"], table["ci_high"], color=_MAIN, size=6, bounded=bounded)
    labels = [_label(v) for v in table[factor]]
    ax.set_xticks(x, labels, rotation=20, ha="right")
    ax.set_ylabel(ylabel)
    _title(ax, title)
    ax.grid(axis="y", alpha=0.3)
    cut = " Intervals beyond [0, 1] are cut at the axis (triangles)." if bounded and out_of_bounds(table) else ""
    return _figure(fig, f"{title}: estimated marginal means with 95% confidence intervals ({ylabel}).{cut}",
                   f"Dot plot of {ylabel} by {factor}, estimate [95% CI]: "
                   + _values(labels, table["estimate"], table["ci_low"], table["ci_high"]) + ".")


def _grouped(ax, table: pd.DataFrame, factor: str, who: str, est: str, *, bounded: bool = False) -> None:
    """Respondents side by side within each level of `factor` (human in black)."""
    levels = list(dict.fromkeys(table[factor]))
    names = list(dict.fromkeys(table[who]))
    width = 0.8 / max(len(names), 1)
    for i, name in enumerate(names):
        rows = table[table[who] == name].set_index(factor).reindex(levels)
        xs = np.arange(len(levels)) + (i - (len(names) - 1) / 2) * width
        _points(ax, xs, rows[est], rows["ci_low"], rows["ci_high"], color=_colour(name), label=name, size=3,
                bounded=bounded)
    ax.set_xticks(range(len(levels)), [_label(v) for v in levels], rotation=20, ha="right")
    ax.grid(axis="y", alpha=0.3)


def _grouped_alt(table: pd.DataFrame, factor: str, who: str, est: str) -> str:
    labels = [f"{name}, {_label(level)}" for name, level in zip(table[who], table[factor])]
    return _values(labels, table[est], table["ci_low"], table["ci_high"])


def accuracy_overview(table1: pd.DataFrame, factors=(), *, sides: str = "") -> Figure:
    """Table 1 as a picture: each respondent's accuracy (models: soft accuracy; people: proportion
    correct) by each factor of the study (overall where it declares none), 95% CIs; `sides`, what each side
    holds (analysis/accuracy_tables.py), ends the caption."""
    table1 = table1[table1["measure"] != "decision accuracy"] if "measure" in table1 else table1
    panels = [f for f in factors if (table1["factor"] == f).any()] or ["overall"]
    fig, axes = plt.subplots(1, len(panels), figsize=(max(5.0, 4.2 * len(panels)), 3.8), sharey=True,
                             layout="constrained", squeeze=False)
    axes = axes[0]
    for ax, factor in zip(axes, panels):
        _grouped(ax, table1[table1["factor"] == factor], "level", "respondent", "accuracy", bounded=True)
        _title(ax, "overall" if factor == "overall" else f"by {spoken(factor)}")
    axes[0].set_ylabel("accuracy (models: soft)")
    axes[-1].legend(fontsize=7, loc="center left", bbox_to_anchor=(1.0, 0.5))
    shown = table1[table1["factor"].isin(panels)]
    named = " and by ".join(spoken(f) for f in panels) if panels != ["overall"] else "overall"
    by = "" if panels == ["overall"] else "by "
    return _figure(fig, f"Table 1 as a picture: accuracy of each respondent (humans in black) {by}{named}, "
                        "with bootstrap 95% confidence intervals." + (f" {sides}" if sides else ""),
                   "Dot plot of accuracy by respondent, estimate [95% CI]: "
                   + _grouped_alt(shown, "level", "respondent", "accuracy") + ".")




def random_effects(table: pd.DataFrame, ranks: dict[str, int], *, title: str = "") -> Figure:
    """Figure 3: (a) per-model perplexity effect (fixed + random), (b) intercept random effects,
    both with 99.9% CIs; the model's Table 1 rank in parentheses. `title`: the section's, which starts the caption
    (each figure its own caption)."""
    fig, axes = plt.subplots(1, 2, figsize=(10, 0.9 + 0.35 * table["grp"].nunique()), sharey=True,
                             layout="constrained")
    panels = [("perplexity_z", "mixed", "(a) perplexity effect (fixed + random)"),
              ("(Intercept)", "random", "(b) intercept random effect")]
    for ax, (term, column, panel) in zip(axes, panels):
        part = table[table["term"] == term].reset_index(drop=True)
        low = "mixed_ci_low" if column == "mixed" else "ci_low"
        high = "mixed_ci_high" if column == "mixed" else "ci_high"
        y = np.arange(len(part))
        _points(ax, y, part[column], part[low], part[high], color=_SECOND, horizontal=True, size=5)
        ax.axvline(0, color="grey", lw=0.8)
        ax.set_yticks(y, [f"{g} ({ranks.get(g, '?')})" for g in part["grp"]])
        _title(ax, panel, 45)
    slopes = table[table["term"] == "perplexity_z"]
    return _figure(fig, f"{title + ': ' if title else ''}Figure 3: (a) each model's perplexity effect (fixed + "
                        "random), (b) each model's random intercept, with 99.9% confidence intervals; the model's Table 1 rank "
                        "in parentheses.",
                   "Interval plot of each model's perplexity effect, estimate [99.9% CI]: "
                   + _values(slopes["grp"], slopes["mixed"], slopes["mixed_ci_low"], slopes["mixed_ci_high"]) + ".")


def sequents(table: pd.DataFrame) -> Figure:
    """Figure 4: mean perplexity vs mean confidence per sequent; real and nonsense joined."""
    models = list(dict.fromkeys(table["model"]))
    cols = min(3, len(models))
    rows = math.ceil(len(models) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4 * cols, 3.2 * rows), squeeze=False, layout="constrained")
    for ax, model in zip(axes.flat, models):
        part = table[table["model"] == model]
        ends = part[["perplexity_real", "confidence_real", "perplexity_nonsense", "confidence_nonsense"]]
        ax.add_collection(LineCollection(ends.to_numpy(dtype=float).reshape(-1, 2, 2), colors="grey", lw=0.7))
        ax.scatter(part["perplexity_real"], part["confidence_real"], s=14, label="real", color=_MAIN)
        ax.scatter(part["perplexity_nonsense"], part["confidence_nonsense"], s=14, label="nonsense", marker="s",
                   color=_SECOND)
        _title(ax, model, 40)
        ax.set_xlabel("mean perplexity")
        ax.set_ylabel("mean confidence (soft acc.)")
    for ax in list(axes.flat)[len(models):]:
        ax.axis("off")
    handles, labels = axes.flat[0].get_legend_handles_labels()
    fig.legend(handles, labels, fontsize=7, loc="outside upper center", ncols=2)  # above the panels, off the data
    return _figure(fig, "Figure 4: mean perplexity against mean confidence (soft accuracy) per logical sequent, "
                        "one panel per model; circles real items, squares their nonsense mirror, a grey line "
                        "joining the two versions of a sequent.",
                   f"Scatter plots for {len(models)} model(s): {len(table) // max(len(models), 1)} sequents each, real "
                   "and nonsense versions joined; the values are in tables/sequents_sequent_means.csv.")


def agents(table: pd.DataFrame, factor: str, *, title: str = "") -> Figure:
    """Marginal probability correct per agent within each level of a factor, 95% CIs (response scale:
    emmeans of the binomial model, bounded by 0 and 1 by construction). `title`: the section's, which starts the
    caption (the like-for-like comparison and its sensitivity analysis draw the same plot: each its own caption)."""
    fig, ax = plt.subplots(figsize=(7, 3.6), layout="constrained")
    _grouped(ax, table, factor, "agent", "estimate", bounded=True)
    ax.set_ylabel("P(correct)")
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.0, 0.5))
    name = spoken(factor)
    return _figure(fig, f"{title + ': ' if title else ''}Probability correct of each agent (humans in black) by "
                        f"{name}: marginal means of the humans-and-models binomial model on the probability scale, "
                        "with 95% confidence intervals.",
                   f"Dot plot of P(correct) by agent and {name}, estimate [95% CI]: "
                   + _grouped_alt(table, factor, "agent", "estimate") + ".")


def power_curve(curve: pd.DataFrame, target: float) -> Figure:
    """Power against the number of participants, one panel per factor of the tests (the `by` factors of the
    humans-vs-models model: a registered one's, or the any-study model's overall and each declared factor), a line
    per level and model, its Monte-Carlo 95% interval as a band; the target as a dashed line."""
    factors = list(dict.fromkeys(curve["factor"]))
    fig, axes = plt.subplots(1, len(factors), figsize=(7.2 * len(factors), 3.6), sharey=True, squeeze=False,
                             layout="constrained")
    for ax, factor in zip(axes[0], factors):
        part = curve[curve["factor"] == factor]
        for (level, contrast), rows in part.groupby(["level", "contrast"], sort=False):
            rows = rows.sort_values("n")
            (line,) = ax.plot(rows["n"], rows["power"], "o-", ms=3,
                              label=f"{_label(level)}: {contrast} ({_needed(rows, target)})")
            ax.fill_between(rows["n"], rows["low"], rows["high"], color=line.get_color(), alpha=0.15, lw=0)
        ax.axhline(target, ls="--", color="grey", lw=1)
        sizes = sorted(int(n) for n in set(part["n"]))
        ax.set_xscale("log")
        ax.set_xticks(sizes, labels=[str(n) for n in sizes])  # the sizes tried, as plain integers
        ax.xaxis.set_minor_locator(NullLocator())  # no unlabelled-then-labelled minor ticks ("3×10¹")
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_ylim(0, 1)
        ax.set_xlabel("participants")
        _title(ax, "overall" if factor == "overall" else f"by {spoken(factor)}")
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)  # beside, off the lines
    axes[0][0].set_ylabel("power")
    reached = curve[curve["low"] >= target]  # "needed": the Monte-Carlo lower bound reaches the target
    return _figure(fig, f"Power against the number of participants for each model-vs-human contrast (panels marked '(people)': "
                        f"each contrast among people's own answers), with "
                        f"Monte-Carlo 95% intervals as bands; the dashed line is the target power {target:g}; each "
                        "legend entry gives the participants needed (the smallest size tried whose lower 95% bound "
                        "reaches the target).",
                   f"Line plot of power against participants ({', '.join(str(n) for n in sorted(set(curve['n'])))}) "
                   f"for {curve.groupby(['factor', 'level', 'contrast']).ngroups} contrasts; "
                   f"{reached.groupby(['factor', 'level', 'contrast']).ngroups} reach the target (lower 95% bound) "
                   "within the sizes tried.")


def _needed(rows: pd.DataFrame, target: float) -> str:
    """A contrast's participants needed, as an integer: the smallest size tried whose Monte-Carlo lower bound reaches
    the target (analysis/power.py `needed`), or more than the largest tried."""
    reached = rows[rows["low"] >= target]
    if len(reached):
        return f"needed: {int(reached['n'].iloc[0])}"
    return f"needed: more than {int(rows['n'].iloc[-1])}"


def _fmt(value) -> str:
    return "—" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.2f}"


def choice_scatter(frame: pd.DataFrame, row: dict) -> Figure:
    """How human-like one model is (analysis/likeness_report.py): each item's share of people giving the target
    answer against the model's relative probability of it, a point's area by the answers it rests on, the
    diagonal where they agree; choice r and the people's split-half ceiling, with their 95% intervals, above."""
    items = frame.groupby("item_id").agg(share=("chose_target", "mean"), p=("p_target", "first"),
                                         n=("chose_target", "size"))
    fig, ax = plt.subplots(figsize=(4.6, 4.2), layout="constrained")
    ax.plot([0, 1], [0, 1], ls="--", color="grey", lw=0.8)
    ax.scatter(items["p"], items["share"], s=8 + 40 * items["n"] / max(items["n"].max(), 1), color=_MAIN, alpha=0.7,
               edgecolors="none")
    ax.set_xlim(-0.03, 1.03)
    ax.set_ylim(-0.03, 1.03)
    ax.set_xlabel("model: relative p(target answer)")
    ax.set_ylabel("people: share giving the target answer")
    r = (f"choice r = {_fmt(row['choice_r'])} [{_fmt(row['choice_r_low'])}, {_fmt(row['choice_r_high'])}]; "
         f"ceiling = {_fmt(row['ceiling'])} [{_fmt(row['ceiling_low'])}, {_fmt(row['ceiling_high'])}]")
    _title(ax, f"{row['model']}: {r}", 48)
    return _figure(fig, f"How human-like {row['model']} is, item by item: the share of people giving the "
                        "target answer (yes; the gold option for multiple choice) against the model's relative "
                        f"probability of it, {len(items)} items, a point's area by its answers; {r} (the people's "
                        "split-half reliability, which a model cannot be expected to exceed), 95% intervals (the "
                        "delete-one jackknife over items). The dashed diagonal marks equal values.",
                   f"Scatter plot of {len(items)} items for {row['model']}: {r}; the values are in "
                   "data/model_frames/human_likeness.csv.")
