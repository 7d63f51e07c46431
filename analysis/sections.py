"""Report sections, declared: a `ModelSpec` says what one mixed model of the report is (its frame,
formula, family, the levels and groups it needs, its likelihood-ratio terms and marginal-means
tables), and `fit_spec` fits any of them the same way. A `StudyFrames` bundle carries the data every
section reads; a `SectionBuilder` is any other part. The parts themselves live in the design packages
(designs/<family>/), registered into the design registry; analysis/reproduce.py writes the
scripts that refit them from the report's model frames.
"""
from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import pandas as pd
from scipy import stats

from . import rbridge as rb

if TYPE_CHECKING:
    from .plots import Figure

Z_999 = float(stats.norm.ppf(0.9995))


@dataclass
class Section:
    key: str
    title: str
    formula: str = ""
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    stats: dict[str, float] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)  # R's warnings of the fits the section reports
    # R's warnings of fitting attempts the section does not report (an optimizer that did not converge when the
    # next did; a maximum-likelihood fit the separation-safe fit replaced): shown apart, as discarded
    discarded: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    cautions: list[str] = field(default_factory=list)  # what limits how far a reader can trust the fit, highlighted
    absent: str = ""
    # The sampling unit of the section's intervals and tests: what one independent observation is
    # (a pair, a rule, an item, a participant) and how the analysis respects it (issue 25).
    unit: str = ""
    n_obs: int = 0
    data: pd.DataFrame | None = None  # the exact frame the main model was fitted on
    figures: dict[str, Figure] = field(default_factory=dict)  # plots.Figure: PNG, caption, alt text
    fitted: "FittedModel | None" = None  # how the main model was fitted (for the reproduce scripts)
    # Further data files the section's numbers are computed from, written as data/model_frames/<key>_<name>
    # (e.g. the split-half assignments of analysis/likeness_report.py).
    data_files: dict[str, pd.DataFrame] = field(default_factory=dict)
    # The section's own recomputation, appended to the report's reproduce scripts: {"R": code, "python": code}.
    scripts: dict[str, str] = field(default_factory=dict)
    # The y-axis of its marginal-means figures (ModelSpec.means_label; "": none drawn), in [0, 1].
    means_label: str = ""


def table_file(key: str, name: str) -> str:
    """The CSV of a section's table under tables/: <key>_<name>.csv, or <key>.csv for the table named as
    its section (tables/human_likeness.csv)."""
    return f"{key}.csv" if name == key else f"{key}_{name}.csv"


def figure_file(key: str, name: str) -> str:
    """The stem of a section's figure under figures/ (figures/<stem>.png and .svg): <key>_<name>, or <key> for the
    figure named as its section, as table_file names tables; characters other than letters, digits, '.', '_' and
    '-' (a model's name may hold '/') become '-'."""
    stem = key if name == key else f"{key}_{name}"
    return re.sub(r"[^A-Za-z0-9._-]+", "-", stem).strip("-.") or "figure"


def per_respondent(section: Section, name: str, frame: pd.DataFrame) -> None:
    """One table per respondent (`name`_<respondent>, the frame's `respondent` column), so that the page's row
    cap never hides a model."""
    if frame.empty:
        return
    taken: set[str] = set()
    for respondent, part in frame.groupby("respondent", sort=False):
        base = re.sub(r"[^a-z0-9]+", "-", str(respondent).lower()).strip("-") or "model"
        key, k = f"{name}_{base}", 2
        while key in taken:
            key, k = f"{name}_{base}-{k}", k + 1
        taken.add(key)
        section.tables[key] = part.reset_index(drop=True)


@dataclass(frozen=True)
class FittedModel:
    """What a script needs to refit a section's main model exactly as the report did."""

    formula: str
    family: str  # gaussian (lmerTest::lmer, REML) or binomial (lme4::glmer)
    nagq: int  # glmer's nAGQ (1: Laplace; 0: fixed effects inside PIRLS)
    optimizer: str  # the optimizer the kept fit used
    levels: dict[str, list[str]]  # factor → its levels in order (the first is the reference)
    lrt_terms: tuple[str, ...] = ()
    lrt_optimizers: dict[str, str] = field(default_factory=dict)  # term → the optimizer its reduced model used
    method: str = "ml"  # "ml", or the separation-safe fit (rbridge.SAFE_METHODS): "bglmer" or "brglm"


@dataclass(frozen=True)
class StudyFrames:
    """The data the report's models read: the model scores and the human trials kept after the
    exclusions (analysis/prep.py), and the items people could be shown (logic.shown_items.ItemsShown, the study's
    by experiments.participation.selectors.items_people_can_be_shown; None: the items people answered,
    analysis/like_for_like.py)."""

    scores: pd.DataFrame
    kept: pd.DataFrame = field(default_factory=pd.DataFrame)
    shown: object = None
    # The designs whose real items alone the study-wide tables read where the study has them (the design
    # registry's analysed_alone, declared by a design's package; metrics.analysed_rows applies it).
    analysed: frozenset = frozenset()


@dataclass(frozen=True)
class ModelSpec:
    """One mixed model of the report."""

    key: str
    title: str
    formula: str
    frame: Callable[[StudyFrames], pd.DataFrame]  # the analysed rows, factors coded (module-level: pickled)
    columns: tuple[str, ...]  # the model frame's columns
    group: str  # the grouping factor (random effects) ...
    needs: str  # ... and what it must have answered, in words ("scores on valid items")
    factors: tuple[str, ...] = ()  # the factors of its frame that each need at least two levels
    min_groups: int = 2
    family: str = "gaussian"
    fast: bool = False  # binomial only: nAGQ = 0
    lrt: tuple[str, ...] = ()
    emmeans: tuple[tuple[str, str], ...] = ()  # (table, spec); binomial models: on the probability scale
    pairs: tuple[tuple[str, str], ...] = ()  # (table, spec): every pairwise difference
    versus: tuple[tuple[str, str, str | None], ...] = ()  # (table, factor, by): levels vs the reference
    hypotheses: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = ()  # (factor, ((low, high), …))
    random_effects: bool = False
    notes: tuple[str, ...] = ()
    precheck: Callable[[StudyFrames], str] | None = None  # a reason the section cannot be fitted
    extra: Callable[[Section, rb.Fit, pd.DataFrame], None] | None = None  # the section's own additions
    unit: str = ""  # the sampling unit, said in the section (Section.unit)
    # The seed paper whose model this is: a fit that departs from it (a separation-safe fit, perplexity left out
    # for a chat configuration) says so.
    paper: str = ""
    # The study's humans-vs-models model: the report fits it first, in a second process where one is worth it,
    # and fits the generic one (analysis/versus.py) only where the study's designs register none.
    humans_vs_models: bool = False
    means_label: str = ""  # its marginal means (emmeans_<factor> tables) are plotted on this axis ("": not)

    @property
    def elsewhere(self) -> str:
        """Its title, listed in the reports of studies without its designs."""
        return self.title


@dataclass(frozen=True)
class SectionBuilder:
    """A report part that is not one mixed model: `build(frames, given)` returns its sections (none where
    the data hold nothing for it) from the report's frames before factor joins and `given`, what its
    `read(study=, chosen=)` read from the database (analysis.services calls it with the runs the report uses;
    None where the report is built from frames alone). A design's package registers it into the design
    registry (experiments/design_registry/__init__.py: report_part_add), and the report runs it for studies of those
    designs."""

    key: str
    title: str
    build: Callable[[StudyFrames, object], list[Section]]
    read: Callable[..., object] | None = None  # read(study=, chosen=, analysed=): what it reads besides the frames
    elsewhere: str = ""  # a title listed in the reports of studies without its designs ("": not listed)


def models_without_perplexity(scores: pd.DataFrame) -> list[str]:
    """The model configurations whose scores carry no perplexity (chat models), by name."""
    if not len(scores) or "perplexity" not in scores or "model" not in scores:
        return []
    missing = scores.groupby("model", observed=True)["perplexity"].apply(lambda p: bool(p.isna().all()))
    return sorted(str(name) for name, none in missing.items() if none)


def fit_spec(spec: ModelSpec, frames: StudyFrames) -> Section:
    """Fit one declared model: the section says why when the data cannot support it."""
    section = Section(spec.key, spec.title, spec.formula, unit=spec.unit, means_label=spec.means_label)
    section.absent = spec.precheck(frames) if spec.precheck else ""
    if section.absent:
        return section
    frame = spec.frame(frames)
    without = models_without_perplexity(frames.scores) if "perplexity_z" in spec.columns else []
    if without:  # chat configurations: no prompt log-probabilities, so no perplexity term for them
        frame = frame[~frame["model"].isin(without)]
        section.notes.append(
            f"Left out of this fit: {', '.join(without)} — no perplexity (a chat model gives no prompt "
            "log-probabilities; docs/models.md), so the model's perplexity term cannot be computed for its scores. "
            + (f"Departure from {spec.paper}, whose models all have perplexity: this" if spec.paper else "This")
            + " fit holds only the configurations with perplexity; the others are in Table 1 and the humans-vs-models "
            "comparison.")
    section.absent = (lacks(frame, spec.group, spec.min_groups, spec.needs)
                      or levels_missing(frame, list(spec.factors)) or response_constant(frame, spec.formula))
    if section.absent:
        return section
    data = frame[list(spec.columns)]
    fit = rb.fit(spec.formula, data, family=spec.family, fast=spec.fast)
    record_fit(section, fit, data, paper=spec.paper, fast=spec.fast)
    if spec.lrt:
        record_lrt(section, fit, list(spec.lrt))
    response = spec.family == "binomial"
    for name, marginal in spec.emmeans:
        section.tables[name] = rb.emmeans(fit, marginal, response=response)
    for name, marginal in spec.pairs:
        section.tables[name] = rb.pairs(fit, marginal)
    for name, factor, by in spec.versus:
        section.tables[name] = rb.versus_reference(fit, factor, by)
    found = [t for t in (hypotheses(fit, frame, factor, pairs) for factor, pairs in spec.hypotheses) if t is not None]
    if found:
        section.tables["hypotheses"] = pd.concat(found, ignore_index=True)
    if spec.random_effects:
        section.tables["random_effects"] = random_effects_table(fit)
    section.notes += list(spec.notes)
    section.notes += adjustment_notes(spec, section.tables)
    if spec.extra:
        spec.extra(section, fit, frame)
    lrt = section.tables.get("lrt")
    section.fitted = FittedModel(
        formula=spec.formula, family=spec.family, nagq=fit.nagq if spec.family == "binomial" else 1,
        optimizer=fit.optimizer, method=fit.method,
        levels={c: [str(v) for v in data[c].cat.categories] for c in data.columns
                if isinstance(data[c].dtype, pd.CategoricalDtype)},
        lrt_terms=tuple(spec.lrt),
        lrt_optimizers=dict(zip(lrt["term"], lrt["optimizer"])) if lrt is not None else {},
    )
    return section


def _by(marginal: str) -> str | None:
    """The `by` factor of an emmeans spec ("~ agent | f" → "f"; None without one)."""
    return marginal.split("|", 1)[1].strip() if "|" in marginal else None


def _family(table: pd.DataFrame, by: str | None) -> str:
    """How many contrasts one Holm family of a table holds, as emmeans applies it: within each level of `by`
    (each level its own family), or the whole table without one."""
    if by is None or by not in table:
        return f"one family, the table's {len(table)} contrast{'s' if len(table) != 1 else ''}"
    sizes = table.groupby(by, sort=False, observed=True).size()
    each = (f"{sizes.iloc[0]} contrast{'s' if sizes.iloc[0] != 1 else ''} each" if sizes.nunique() == 1
            else "of " + ", ".join(f"{n} ({level})" for level, n in sizes.items()) + " contrasts")
    return f"a family per level of {by} ({len(sizes)} levels, {each}), levels not adjusted against each other"


def adjustment_notes(spec: ModelSpec, tables: dict[str, pd.DataFrame]) -> list[str]:
    """What the Holm adjustment of the section's contrast tables (spec.versus, spec.pairs: emmeans with
    adjust = "holm") adjusts over, read from the tables as fitted: emmeans adjusts within each level of a `by`
    factor, never across levels or tables; their intervals are Bonferroni-adjusted within the same families."""
    families = [(name, by) for name, _, by in spec.versus] + [(name, _by(marginal)) for name, marginal in spec.pairs]
    found = [f"{name}: {_family(tables[name], by)}" for name, by in families if name in tables]
    if not found:
        return []
    return [f"Multiple comparisons: p-values are Holm-adjusted by emmeans within each family, {'; '.join(found)}. "
            "No adjustment runs across families or across tables (a table per factor is its own set of families), "
            "and a family of one contrast is unadjusted. The intervals of these tables are Bonferroni-adjusted "
            "within the same families (emmeans cannot Holm-adjust an interval)."]


def lacks(frame: pd.DataFrame, group: str, minimum: int, what: str) -> str:
    count = frame[group].nunique() if len(frame) else 0
    if count < minimum:
        return f"needs {what} from at least {minimum} {group}s (random effects by {group}); found {count}"
    return ""


def response_constant(frame: pd.DataFrame, formula: str) -> str:
    """Why a mixed model of `formula` cannot be fitted when its response takes one value in every row ("" when it
    varies, or the model has no random effects: brglm2 fits those finitely): nothing for the model to explain (lme4
    stops with "Response is constant"), said before R is asked."""
    response = formula.split("~", 1)[0].strip()
    if "|" not in formula or not len(frame) or response not in frame or frame[response].nunique() > 1:
        return ""
    value = frame[response].iloc[0]
    said = {1: "correct", 0: "wrong"}.get(value) if response == "correct" else None
    every = f"every answer in its data is {said}" if said else f"{response} is {value:g} in every row of its data"
    return f"{every} ({len(frame)} rows): the response does not vary, so there is nothing for a model to explain"


def levels_missing(frame: pd.DataFrame, factors: list[str]) -> str:
    for factor in factors:
        present = frame[factor].nunique() if len(frame) else 0
        if present < 2:
            return f"the factor '{factor}' has {present} level(s) in the data; it needs at least 2"
    return ""


# Fewer levels than this under a random effect and its variance is not worth reading (a common rule
# of thumb for mixed models: five or more).
FEW_LEVELS = 5


def record_fit(section: Section, fit: rb.Fit, data: pd.DataFrame, *, paper: str = "", fast: bool = False) -> None:
    section.data = data
    section.n_obs = fit.n_obs
    section.warnings += fit.warnings
    section.discarded += fit.discarded
    if len(fit.attempts) > 1:
        section.notes.append(f"Optimizers tried: {', '.join(fit.attempts)}; kept {fit.optimizer}.")
    record_separation(section, fit, paper=paper, fast=fast)
    section.tables["coefficients"] = unestimated_blanked(fit.coefs)
    if "note" in section.tables["coefficients"]:
        section.cautions.append(
            f"Coefficients with a standard error over {rb.SE_LIMIT:g} are not estimated: their numbers are left out "
            "of the table (see its note column) rather than printed as if they meant something.")
    section.tables["random_variances"] = fit.variances
    r2 = rb.r2(fit)
    section.stats.update({f"r2_{k}": v for k, v in r2.items() if k != "random_effects_omitted"})
    section.stats["n_obs"] = fit.n_obs
    for group, count in fit.groups.items():
        section.stats[f"n_{group}"] = count
        if count < FEW_LEVELS:
            section.cautions.append(
                f"The random effects by {group} rest on {count} level{'s' if count != 1 else ''} (fewer than "
                f"{FEW_LEVELS}): a variance estimated from so few {group}s is barely identified, so it and the "
                f"intervals that depend on it are rough. Compare the {group}s one by one (Table 1) rather than "
                "through this variance.")
    if r2.get("random_effects_omitted"):
        section.cautions.append(
            "R² leaves out the random effects: performance::r2_nakagawa could not estimate their variances (it said "
            "\"Random effect variances not available\"), which happens when the fit is singular — a variance "
            "estimated at zero, common with few groups. Both R² values shown are then the fixed effects' alone.")


SEPARATION_CELLS_SHOWN = 8


def record_separation(section: Section, fit: rb.Fit, *, paper: str = "", fast: bool = False) -> None:
    """Say in plain words which cells separate the answers and how the model was fitted instead."""
    if not fit.separated:
        return
    response = fit.formula.split("~", 1)[0].strip()
    if fit.separation:
        cells = [c.words(response) for c in fit.separation]
        shown = "; ".join(cells[:SEPARATION_CELLS_SHOWN])
        more = len(cells) - SEPARATION_CELLS_SHOWN
        found = (f"Separation: {len(cells)} cell{'s' if len(cells) != 1 else ''} of the fixed effects "
                 f"{'have' if len(cells) != 1 else 'has'} every answer the same ({shown}"
                 f"{f'; and {more} more' if more > 0 else ''}).")
    elif fit.perfectly_predicted:
        found = (f"Separation: a combination of the fixed effects predicts {fit.perfectly_predicted} answers perfectly "
                 "although no single cell is all 0 or all 1 (a linear-programming check of the fixed effects' design, "
                 "Konis 2007).")
    elif fit.ml_error:
        found = (f"Separation: the maximum-likelihood fit stopped with an error ({fit.ml_error}), the mark of answers "
                 "that some combination of the fixed effects predicts perfectly although no single cell is all 0 or all 1.")
    else:
        found = (f"Separation: the maximum-likelihood fit gave a coefficient a standard error of {fit.ml_se_max:,.0f} "
                 f"(over {rb.SE_LIMIT:g}), the mark of answers that some combination of the fixed effects predicts "
                 "perfectly although no single cell is all 0 or all 1.")
    section.cautions.append(
        f"{found} Maximum likelihood puts such coefficients at plus or minus infinity (lme4 reports estimates of "
        "±20 or more with standard errors in the thousands and intervals of [0, 1]), so this model is fitted by "
        f"{rb.SAFE_METHODS[fit.method]}, which keeps every estimate finite. The coefficients, marginal means and "
        "contrasts of this section come from that fit; where the data cannot bound a coefficient it is shrunk "
        "toward zero on the logit scale, so a cell at 0 % or 100 % shows as close to, not at, 0 or 1.")
    section.stats["separated_cells"] = len(fit.separation)
    laplace = (" by Laplace (nAGQ = 1) where this report otherwise uses nAGQ = 0, since blme cannot put a prior on "
               "fixed effects estimated inside PIRLS;" if fast and fit.method == "bglmer" else "")
    section.notes.append(
        f"{f'Departure from paper {paper}: the paper fits this model by maximum likelihood. ' if paper else ''}"
        f"Because of the separation above, this model is fitted by {fit.method} instead of maximum likelihood,"
        f"{laplace} likelihood-ratio tests, where shown, compare fits by the same method.")


def unestimated_blanked(coefs: pd.DataFrame) -> pd.DataFrame:
    """Coefficients whose SE passes rbridge.SE_LIMIT keep their row, term and SE but lose every number
    read as an estimate (estimate, intervals, odds ratio, probability, statistic, p-value), with the
    reason in a note column."""
    if "SE" not in coefs:
        return coefs
    bad = pd.to_numeric(coefs["SE"], errors="coerce") > rb.SE_LIMIT
    if not bad.any():
        return coefs
    coefs = coefs.copy()
    numbers = [c for c in coefs.columns if c not in ("term", "SE", "Sig") and pd.api.types.is_numeric_dtype(coefs[c])]
    coefs.loc[bad, numbers] = float("nan")
    if "Sig" in coefs:
        coefs.loc[bad, "Sig"] = ""
    coefs["note"] = ""
    coefs.loc[bad, "note"] = [f"not estimated: SE {se:,.0f} > {rb.SE_LIMIT:g} (separation)" for se in
                              pd.to_numeric(coefs.loc[bad, "SE"])]
    return coefs


def record_lrt(section: Section, fit: rb.Fit, terms: list[str]) -> None:
    """The likelihood-ratio tests; warnings of their refits join the section's warnings, those of refit attempts
    not kept its discarded ones."""
    table = rb.lrt(fit, terms)
    section.tables["lrt"] = table
    section.warnings += rb.lrt_warnings(table)
    section.discarded += rb.lrt_discarded(table)


def hypotheses(fit: rb.Fit, frame: pd.DataFrame, factor: str, pairs) -> pd.DataFrame | None:
    present = set(frame[factor].astype(str))
    usable = [(a, b) for a, b in pairs if a in present and b in present]
    if not usable:
        return None
    table = rb.hypotheses(fit, factor, usable)
    table.insert(0, "factor", factor)
    return table


def random_effects_table(fit: rb.Fit, level_z: float = Z_999) -> pd.DataFrame:
    """Per-group conditional modes with CIs (default 99.9%) and the mixed effect (fixed + random)."""
    table = rb.random_effects(fit)
    fixed = dict(zip(fit.coefs["term"], fit.coefs["Estimate"]))
    table["fixed"] = table["term"].map(fixed).astype(float)
    table["ci_low"] = table["condval"] - level_z * table["condsd"]
    table["ci_high"] = table["condval"] + level_z * table["condsd"]
    table["mixed"] = table["fixed"] + table["condval"]
    table["mixed_ci_low"] = table["fixed"] + table["ci_low"]
    table["mixed_ci_high"] = table["fixed"] + table["ci_high"]
    return table.rename(columns={"condval": "random", "condsd": "random_sd"})
