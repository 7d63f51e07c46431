"""The analyst's report: report.html (self-contained), every table as CSV, tidy data as CSV + Parquet.

`build_report` is a function of tidy frames (no Django): the analyze command and the admin action
read the database with analysis.frames and hand the frames over.
"""
from __future__ import annotations

import contextlib
import datetime as dt
import importlib.metadata
import platform
import time
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import pandas as pd

from common import csvsafe

from . import codebook, participant_factors, plots, prep, reproduce, summary, versus
from . import answering, people_effects
from . import factors as declared
from .rprocess import RProcess, run_section
from .sections import Section, StudyFrames, fit_spec, table_file
from . import rbridge as rb
from . import likeness_report
from .accuracy_tables import accuracy_tables
from experiments import schema
from logic.human_defaults import CATCH_ITEMS
from .runs import RUN_COLUMNS
from .sections import ModelSpec
from .html import Page, figures_of, render

DEMOGRAPHICS = "demographics"  # data/demographics.csv: Prolific's demographics, the consented columns
QUESTIONNAIRE = "questionnaire"  # data/questionnaire.csv: the questionnaires' answers, a row per participant
PY_PACKAGES = ("Django", "rpy2", "pymer4", "pandas", "numpy", "scipy", "statsmodels", "matplotlib", "pyarrow")


@dataclass
class ReportResult:
    out_dir: Path
    html: Path
    tables: list[Path]
    sections: list[Section]
    exclusions: pd.DataFrame
    n_scores: int = 0
    n_trials: int = 0
    warnings: list[str] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    runs_used: list[int] = field(default_factory=list)


def _versions() -> dict[str, str]:
    found = {"Python": platform.python_version()}
    for name in PY_PACKAGES:
        try:
            found[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            found[name] = "not installed"
    try:
        found.update(rb.versions())
    except rb.RUnavailable as error:
        found["R"] = f"unavailable ({error})"
    return found


def _figures(section: Section, ranks: dict[str, int]) -> None:
    if section.absent:
        return
    tables = section.tables
    ylabel = section.means_label
    if ylabel:
        by_factor = _means_by_factor(tables)
        for name, factor in by_factor.items():
            section.figures[name] = plots.means_with_ci(
                tables[name], factor, title=f"{section.title}: marginal means by {factor}", ylabel=ylabel,
                bounded=True)
        cut = [name for name in by_factor if plots.out_of_bounds(tables[name])]
        if cut:
            section.notes.append(
                f"Some 95% intervals of the marginal means ({', '.join(cut)}) reach beyond [0, 1]: this linear "
                "mixed model does not bound a proportion, and with few groups its intervals are wide. The plots cut "
                "them at 0 and 1 (triangles mark the cut); the tables give them as estimated.")
    if "random_effects" in tables:
        section.figures["random_effects"] = plots.random_effects(tables["random_effects"], ranks, title=section.title)
    for name in tables:  # a humans-vs-models model's marginal means by agent within each factor
        if name.startswith("emmeans_agent_by_"):
            factor = name.removeprefix("emmeans_agent_by_")
            section.figures[f"agents_by_{factor}"] = plots.agents(tables[name], factor, title=section.title)


def _means_by_factor(tables: dict) -> dict[str, str]:
    """A section's marginal-means tables by one factor (ModelSpec.emmeans: `emmeans_<factor>` for "~ <factor>",
    the factor a column of its table; the agent's aside), in the section's order: table name → factor."""
    found = {}
    for name, table in tables.items():
        factor = name.removeprefix("emmeans_")
        if name.startswith("emmeans_") and factor != "agent" and factor in getattr(table, "columns", ()):
            found[name] = factor
    return found


def _ranks(table1: pd.DataFrame) -> dict[str, int]:
    overall = table1[(table1["factor"] == "overall") & (table1["respondent"] != "human")
                     & (table1["measure"] == "soft accuracy")]
    ordered = overall.sort_values("accuracy", ascending=False)["respondent"]
    return {name: i + 1 for i, name in enumerate(ordered)}


def _write_data(frame: pd.DataFrame, folder: Path, name: str) -> list[Path]:
    """The frame as CSV and Parquet, both from one Arrow table: Arrow's CSV writer is about ten
    times faster than pandas' (strings come quoted, booleans as true/false; pandas and R read the
    file back to the same frame). A column Arrow cannot write as CSV goes through pandas."""
    import pyarrow as pa
    import pyarrow.csv as pa_csv
    import pyarrow.parquet as pq

    folder.mkdir(parents=True, exist_ok=True)
    csv, parquet = folder / f"{name}.csv", folder / f"{name}.parquet"
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), parquet)
    safe = _iso_times(csvsafe.logical(csvsafe.frame(frame)))  # formula-like text quoted; booleans TRUE/FALSE
    try:
        pa_csv.write_csv(pa.Table.from_pandas(safe, preserve_index=False), csv)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
        safe.to_csv(csv, index=False)
    return [csv, parquet]


@dataclass
class ReportInputs:
    """Everything a report is built from: the tidy frames (analysis.frames: every score of the runs
    used, every trial before exclusions), and what went in besides them — the exclusion rules, the
    runs table (analysis.runs.table: every run of the study, used or not and why), the configurations
    used (analysis.runs.configurations), the run ids asked for (empty: the default rule), what the study's
    design parts read from the database (`design_inputs`, by part key: SectionBuilder.read), sections built
    elsewhere (a power analysis), and `provenance`, what
    dataset_description.json records besides the frames (analysis.services.report_provenance)."""

    scores: pd.DataFrame
    trials: pd.DataFrame
    title: str
    rules: prep.Exclusions = field(default_factory=prep.Exclusions)
    runs: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=list(RUN_COLUMNS)))
    configurations: pd.DataFrame = field(default_factory=pd.DataFrame)
    runs_requested: list[int] = field(default_factory=list)
    design_inputs: dict = field(default_factory=dict)
    extra_sections: tuple[Section, ...] = ()
    provenance: dict | None = None
    # The study's factors (analysis/factors.py declared_factors; None: those the registry declares for the
    # designs in the frames), the descriptive-column factors' values by item_id (factors.values_frame), and
    # the designs of the study's items (None: those in the frames).
    factors: tuple[str, ...] | None = None
    factor_values: pd.DataFrame | None = None
    designs: tuple[str, ...] | None = None
    # The items people could be shown (logic.shown_items.ItemsShown; experiments.participation.selectors.
    # items_people_can_be_shown): the human/model contrasts read models on these items (None: the items people
    # answered, analysis/like_for_like.py).
    shown: object = None
    # Prolific's demographics of the participants, the columns the consent text lists (prolific/demographics.py
    # demographics_frame): written as data/demographics.csv, described in the codebook by `demographics_codebook`.
    demographics: pd.DataFrame | None = None
    demographics_codebook: dict = field(default_factory=dict)
    # The questionnaires' answers (experiments/participation/questionnaire_export.py frame): written as
    # data/questionnaire.csv, described by `questionnaire_codebook`; the study's participant factors (question keys,
    # experiments/factors.py participant_factors) are joined into the people's frames and get a section each.
    questionnaire: pd.DataFrame | None = None
    questionnaire_codebook: dict = field(default_factory=dict)
    participant_factors: tuple[str, ...] = ()

    def study_designs(self) -> set[str]:
        if self.designs is not None:
            return set(self.designs)
        found = set()
        for frame in (self.scores, self.trials):
            if frame is not None and len(frame) and "design" in frame:
                found |= set(frame["design"].dropna())
        return found - {CATCH_ITEMS}

    def declared_factors(self) -> tuple[str, ...]:
        if self.factors is not None:
            return tuple(self.factors)
        return tuple(declared.for_designs(self.study_designs()))

    def used(self) -> list[int]:
        if "used" not in self.runs:
            return []
        return sorted(int(i) for i in self.runs.loc[self.runs["used"].astype(bool), "run_id"])

    def warnings(self) -> list[str]:
        if "warning" not in self.configurations:
            return []
        return [f"{row.configuration} (run {row.run_id}): {row.warning}"
                for row in self.configurations.itertuples() if row.warning]


def build_report(inputs: ReportInputs, *, out_dir: Path, helper: RProcess | None = None) -> ReportResult:
    """Build the report of `inputs` into `out_dir`.

    R and threads do not mix (rpy2 is not thread-safe), so parallel work means processes: the
    human-vs-model model — the longest fit — runs in `helper`, a second process with its own R
    (RProcess; the caller may start it before reading its data, else it starts here and is
    closed at the end), while this process does the rest."""
    out_dir = Path(out_dir)
    (out_dir / "tables").mkdir(parents=True, exist_ok=True)
    timings: dict[str, float] = {}
    if len(inputs.trials):
        kept, exclusions = prep.apply_exclusions(inputs.trials, inputs.rules)
    else:
        kept, exclusions = inputs.trials, pd.DataFrame(columns=["rule", "trials_removed", "participants_affected",
                                                                "trials_left"])
    own = RProcess.for_rows(len(kept), len(inputs.scores)) if helper is None else contextlib.nullcontext(helper)
    with own as helper:
        return _build(inputs, kept, exclusions, out_dir, helper, timings)


def _build(inputs: ReportInputs, kept, exclusions, out_dir: Path, helper, timings) -> ReportResult:
    from experiments import design_registry as registry

    scores, trials = inputs.scores, inputs.trials
    tables_dir, data_dir = out_dir / "tables", out_dir / "data"
    designs, factors = inputs.study_designs(), inputs.declared_factors()
    analysed = registry.analysed_alone()
    kept_joined = participant_factors.join(declared.join(kept, inputs.factor_values), inputs.questionnaire,
                                           inputs.participant_factors)
    frames = StudyFrames(scores=declared.join(scores, inputs.factor_values),
                         kept=kept_joined, shown=inputs.shown, analysed=analysed)
    raw = StudyFrames(scores=scores, kept=kept, shown=inputs.shown, analysed=analysed)
    parts = registry.report_parts(designs)  # the study's designs' parts, in the report's order
    # the titles of the analyses of designs this study does not have, in the report's order
    elsewhere = [part.elsewhere for part in registry.report_parts() if part not in parts and part.elsewhere]
    both = versus.human_model_spec(frames, designs, factors)  # the one rule; the power analysis reads it too
    if both not in parts:  # humans vs each model by the study's own factors, after the study's own model fits
        after = max((i + 1 for i, part in enumerate(parts) if isinstance(part, ModelSpec)), default=0)
        generic = [both]
        if not versus.both_arms(frames) and versus.differs(frames):  # models answered items no person could see
            generic.append(versus.spec(frames, factors, all_items=True))  # the labelled sensitivity analysis
        parts = parts[:after] + generic + parts[after:]
    # the people's own effect of each declared factor (their answers alone: the model the power analysis simulates),
    # then each participant factor's section
    parts = parts + people_effects.specs(frames, factors) + [participant_factors.spec(frames, name)
                                                             for name in inputs.participant_factors]
    agents = helper.submit(fit_spec, both, frames) if both is not None else None  # first: it takes longest
    accuracy = _timed(timings, "table 1 (bootstrap)", partial(accuracy_tables, factors=factors), frames)
    table1 = accuracy.table1  # models on the items people could be shown; every item: accuracy.every
    columns = _timed(timings, "data files", _write_tidy, trials, scores, data_dir, inputs.factor_values)
    if inputs.demographics is not None and len(inputs.demographics):
        _write_data(inputs.demographics, data_dir, DEMOGRAPHICS)
    if inputs.questionnaire is not None and len(inputs.questionnaire):
        _write_data(inputs.questionnaire, data_dir, QUESTIONNAIRE)
    sections = []
    for part in parts:
        if part is both:
            sections.append(_timed(timings, f"section {part.key} ({helper.where}, waited for)", agents.result))
        elif isinstance(part, ModelSpec):
            sections.append(_timed(timings, f"section {part.key}", run_section, fit_spec, part, frames))
        else:  # a design's own sections (SectionBuilder), from the frames before factor joins
            sections += _timed(timings, f"section {part.key}", part.build, raw, inputs.design_inputs.get(part.key))
    sections += _timed(timings, "human likeness", likeness_report.sections, frames)  # issue 35 item 5
    sections += list(inputs.extra_sections)  # e.g. the study's latest power analysis (analysis/power.py)
    ranks = _ranks(table1)
    for section in sections:
        _timed(timings, "figures", _figures, section, ranks)
    overview = _timed(timings, "figures", lambda: plots.accuracy_overview(table1, factors, sides=accuracy.note)
                      if len(table1) else None)
    said = _timed(timings, "summary", lambda: summary.summarise(sections=sections, table1=table1, scores=scores,
                                                                 factors=factors))
    start = time.perf_counter()
    written = []
    by_answering = answering.table(kept)  # people by device and answer channel (issue 47 item 3)
    for name, frame in [(summary.KEY, said.frame()), *accuracy.files(), ("exclusions", exclusions),
                        ("runs", inputs.runs), ("configurations", inputs.configurations),
                        (answering.NAME, by_answering)]:
        _write_table(frame, tables_dir / f"{name}.csv")
        written.append(tables_dir / f"{name}.csv")
    for section in sections:
        for name, frame in section.tables.items():
            path = tables_dir / table_file(section.key, name)
            _write_table(frame, path)
            written.append(path)
        if section.data is not None:
            _write_data(section.data, data_dir / "model_frames", section.key)
        for name, frame in section.data_files.items():
            _write_data(frame, data_dir / "model_frames", f"{section.key}_{name}")
        if section.fitted is not None:
            section.notes.append(f"Refit it yourself from data/model_frames/{section.key}.csv: reproduce.R (lme4, "
                                 "lmerTest) and reproduce.py (pymer4) in this folder.")
    written += reproduce.write_scripts(sections, out_dir)
    figures = figures_of(overview, sections)
    write_figures(figures, out_dir / FIGURES)  # beside the tables, not counted among them
    page = Page(
        inputs=inputs, generated=dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        versions=_versions(), exclusions=exclusions, table1=table1, overview=overview, sections=sections,
        accuracy=accuracy,
        participants=kept_participants(kept), columns=columns, n_kept=len(kept),
        factors=factors, elsewhere=elsewhere, answering=by_answering, summary=said, figures=figures,
    )
    path = out_dir / "report.html"
    path.write_text(render(page), encoding="utf-8")
    described = {f"data/{DEMOGRAPHICS}.csv": inputs.demographics_codebook} if inputs.demographics_codebook else {}
    if inputs.questionnaire_codebook:
        described[f"data/{QUESTIONNAIRE}.csv"] = inputs.questionnaire_codebook
    # every column of every CSV, then the hashes of every file
    book = codebook.write_codebook(out_dir, factors=(*factors, *inputs.participant_factors), described=described)
    codebook.write_description(out_dir, codebook=book, page=page)
    timings["tables and html"] = time.perf_counter() - start
    warnings = inputs.warnings() + [w for s in sections for w in s.warnings]
    return ReportResult(out_dir, path, written, sections, exclusions, len(scores), len(trials), warnings, timings,
                        inputs.used())


FIGURES = "figures"  # figures/<stem>.png and .svg, and figures/figures.csv listing them with their captions
FIGURE_COLUMNS = ("figure", "section", "png", "svg", "caption", "alt")


def write_figures(figures, folder: Path) -> list[Path]:
    """Every figure of the report as PNG and SVG under `folder` (html.figures_of: stems unique, the page's order),
    and figures.csv: each figure's files, section, caption and alt text."""
    folder.mkdir(parents=True, exist_ok=True)
    rows, written = [], []
    for found in figures:
        png, svg = folder / f"{found.stem}.png", folder / f"{found.stem}.svg"
        png.write_bytes(found.figure.png)
        svg.write_bytes(found.figure.svg)
        written += [png, svg]
        rows.append((found.stem, found.section, f"{FIGURES}/{png.name}", f"{FIGURES}/{svg.name}",
                     found.figure.caption, found.figure.alt))
    index = folder / "figures.csv"
    _write_table(pd.DataFrame(rows, columns=list(FIGURE_COLUMNS)), index)
    return [*written, index]


def kept_participants(kept: pd.DataFrame) -> list[str]:
    """The labels of the participants whose trials the report keeps, in their ids' order (P2 before P10)."""
    return sorted(map(str, kept["participant"].unique()), key=schema.pseudonym_order) if len(kept) else []


def _timed(timings: dict[str, float], name: str, function, *args):
    start = time.perf_counter()
    try:
        return function(*args)
    finally:
        timings[name] = timings.get(name, 0.0) + time.perf_counter() - start


def _iso_times(frame: pd.DataFrame) -> pd.DataFrame:
    """Date-times as ISO 8601 text in UTC (as the admin export writes them); `frame` is a copy already."""
    for name in frame.columns:
        if isinstance(frame[name].dtype, pd.DatetimeTZDtype):
            frame[name] = frame[name].dt.tz_convert("UTC").dt.strftime("%Y-%m-%dT%H:%M:%S.%f+00:00").fillna("")
    return frame


def _write_table(frame: pd.DataFrame, path: Path) -> None:
    """A table as CSV: counts the codebook declares integer written as integers (not 4.0), booleans TRUE/FALSE."""
    codebook.integers(csvsafe.logical(csvsafe.frame(frame))).to_csv(path, index=False)


def items_frame(trials: pd.DataFrame, scores: pd.DataFrame, *, extra=()) -> pd.DataFrame:
    """One row per item seen by a participant or scored by a model (schema.ITEM's columns, then `extra`:
    the declared factors from the bank's own columns)."""
    names = list(schema.names(schema.ITEM))
    parts = [frame[names + [c for c in extra if c in frame]] for frame in (trials, scores) if len(frame)]
    if not parts:
        return pd.DataFrame(columns=names)
    return pd.concat(parts, ignore_index=True).drop_duplicates("item_id").sort_values("item_id").reset_index(drop=True)


def _write_tidy(trials: pd.DataFrame, scores: pd.DataFrame, data_dir: Path,
                factor_values: pd.DataFrame | None = None) -> pd.DataFrame:
    """data/trials, scores and items; a declared factor taken from the bank's own columns (factors.values_frame)
    is a column of each, after the schema's, so the by-factor tables can be redone from the data files."""
    trials, scores = declared.join(trials, factor_values), declared.join(scores, factor_values)
    extra = [c for c in (factor_values.columns if factor_values is not None else []) if c != "item_id"]
    extra = [c for c in extra if c in trials.columns or c in scores.columns]
    _write_data(trials, data_dir, "trials")
    _write_data(scores, data_dir, "scores")
    _write_data(items_frame(trials, scores, extra=extra), data_dir, "items")
    rows = [(f"data/{file}.csv", c.name, c.type, c.unit, schema.meaning(c)) for file in schema.REPORT_FILES
            for c in schema.TABLES[file]]
    rows += [(f"data/{file}.csv", name, "string", "", codebook.FACTOR) for file in schema.REPORT_FILES for name in extra]
    return pd.DataFrame(rows, columns=["file", "column", "type", "unit", "meaning"])
