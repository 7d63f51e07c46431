"""report.html: one self-contained page (inline CSS, figures as base64 PNG data URIs)."""
from __future__ import annotations

import base64
from dataclasses import dataclass, field
from html import escape

import pandas as pd

from .accuracy_tables import EVERY, EVERY_TITLE
from .codebook import integers
from .factors import spoken
from .prep import LABELS
from .runs import EXPLICIT, RULE
from .sections import figure_file, table_file

# Readable from 1366 px wide down (no horizontal scrolling of the page: a wide table scrolls in its
# own frame), and printable (tables and figures whole, no scrolling areas, links written out).
CSS = """
body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222;
overflow-wrap:break-word}
h1{font-size:1.6em}h2{border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:2em}
.scroll{overflow-x:auto;max-width:100%}
table{border-collapse:collapse;font-size:.82em;margin:.5em 0 1em}
td,th{border:1px solid #ddd;padding:2px 6px;text-align:right}th{background:#f3f3f3}
code{background:#f5f5f5;padding:1px 4px;overflow-wrap:anywhere}.absent{color:#8a4b00;font-style:italic}
.warn{color:#a00000}img{max-width:100%;height:auto}details{margin:.4em 0}
figure{margin:1em 0}figcaption{font-size:.85em;color:#444;max-width:60em}
.note{background:#fff8e5;border-left:3px solid #e69f00;padding:.3em .6em}
#summary{background:#f4f8fb;border:1px solid #cfe0ec;padding:.2em 1em .6em;margin:1em 0}
#summary h2{margin-top:.6em}#summary li{margin:.25em 0}.files,.basis{font-size:.8em;color:#555}
@media print{body{max-width:none;margin:0;font-size:10pt}.scroll{overflow:visible}
table{font-size:7pt;max-width:100%}td,th{padding:1px 3px;overflow-wrap:anywhere}
figure{page-break-inside:avoid}h2,h3{page-break-after:avoid}
a[href^='http']::after{content:' (' attr(href) ')'}}
"""
SCALING = ("Continuous predictors are centred and scaled: perplexity_z is perplexity z-scored over the "
           "scores in each fit; rt_z is log(response time in ms) z-scored over the kept trials in the fit.")


def _table(frame: pd.DataFrame, max_rows: int = 60) -> str:
    if frame is None or frame.empty:
        return "<p class='absent'>(empty)</p>"
    shown = integers(frame.head(max_rows))  # counts as integers (needed: 10, not 10.0)
    nullable = [c for c in shown.columns if isinstance(shown[c].dtype, pd.api.extensions.ExtensionDtype)
                and shown[c].isna().any()]  # pandas' nullable types print <NA>: blank, as na_rep says
    if nullable:
        shown = shown.astype({c: object for c in nullable})
        shown[nullable] = shown[nullable].where(shown[nullable].notna(), "")
    more = f"<p>… {len(frame) - max_rows} more rows in the CSV.</p>" if len(frame) > max_rows else ""
    html = shown.to_html(index=False, float_format=lambda v: f"{v:.4g}", na_rep="", escape=True, border=0)
    return f"<div class='scroll'>{html}</div>{more}"


@dataclass(frozen=True)
class FigureFile:
    """One figure of the report and its files' stem: figures/<stem>.png and .svg (analysis/report.py writes them)."""

    stem: str
    section: str  # the section's key (table1: Table 1's overview)
    name: str  # its name in the section's figures
    figure: object  # plots.Figure


OVERVIEW = "table1_accuracy"  # the stem of Table 1's figure


def figures_of(overview, sections) -> list[FigureFile]:
    """Every figure the page shows, in its order, each with a stem no other figure has (a second figure whose
    name would repeat one gets -2, -3, …)."""
    found = [("table1", "overview", OVERVIEW, overview)] if overview is not None else []
    found += [(s.key, name, figure_file(s.key, name), figure) for s in sections if not s.absent
              for name, figure in s.figures.items()]
    out, seen = [], set()
    for key, name, stem, figure in found:
        unique, k = stem, 2
        while unique in seen:
            unique, k = f"{stem}-{k}", k + 1
        seen.add(unique)
        out.append(FigureFile(unique, key, name, figure))
    return out


def _figure(figure, stem: str = "") -> str:
    """A plots.Figure as <figure>: the PNG inline, its alt text, its caption, and its files (`stem`)."""
    data = base64.b64encode(figure.png).decode("ascii")
    files = (f"<p class='files'>Files: <code>figures/{escape(stem)}.png</code>, "
             f"<code>figures/{escape(stem)}.svg</code></p>" if stem else "")
    return (f"<figure><img alt='{escape(figure.alt)}' src='data:image/png;base64,{data}'>"
            f"<figcaption>{escape(figure.caption)}</figcaption></figure>{files}")


def _section(section, stems: dict | None = None) -> str:
    parts = [f"<h2 id='{section.key}'>{escape(section.title)}</h2>"]
    if section.formula:
        parts.append(f"<p>Model: <code>{escape(section.formula)}</code></p>")
    if section.unit:
        parts.append(f"<p class='unit'><strong>Sampling unit:</strong> {escape(section.unit)}</p>")
    if section.stats:
        stats = ", ".join(f"{escape(k)} = {v:.4g}" if isinstance(v, float) else f"{escape(k)} = {v}"
                          for k, v in section.stats.items())
        parts.append(f"<p>{stats}</p>")
    for note in section.notes:
        parts.append(f"<p>{escape(note)}</p>")
    for note in section.cautions:
        parts.append(f"<p class='note'>{escape(note)}</p>")
    if section.warnings:
        items = "".join(f"<li>{escape(w)}</li>" for w in section.warnings)
        parts.append(f"<p class='warn'>Warnings from R (the fits reported):</p><ul class='warn'>{items}</ul>")
    if section.discarded:
        items = "".join(f"<li>{escape(w)}</li>" for w in section.discarded)
        parts.append("<p>Discarded fitting attempts (not the fits reported; their warnings do not apply to the "
                     f"numbers above):</p><ul>{items}</ul>")
    for name, figure in section.figures.items():
        parts.append(_figure(figure, (stems or {}).get((section.key, name), "")))
    for name, frame in section.tables.items():
        parts.append(f"<h3>{escape(name.replace('_', ' '))}</h3>"
                     f"<p>CSV: <code>tables/{escape(table_file(section.key, name))}</code></p>{_table(frame)}")
    return "\n".join(parts)


def _no_complete_run(runs: pd.DataFrame) -> list[str]:
    """Issue 25: a study whose scoring runs are all left out (e.g. only a --limit check run) says so
    and names them, instead of showing sections without models."""
    scoring = runs[runs["kind"] != "knowledge_probe"] if "kind" in runs else runs
    if not len(scoring) or ("used" in scoring and scoring["used"].astype(bool).any()):
        return []
    left = "; ".join(f"run {row.run_id} ({row.why})" if "why" in scoring else f"run {row.run_id}"
                     for row in scoring.itertuples())
    return [f"<p class='warn'>No complete model run is used, so this report has no model scores. Left out: "
            f"{escape(left)}.</p>"]


def _inputs(runs: pd.DataFrame, configurations: pd.DataFrame, runs_requested: list[int],
            warnings: list[str]) -> list[str]:
    """'What went in': every run of the study, used or not and why; each used configuration."""
    how = EXPLICIT.format(ids=" ".join(str(i) for i in runs_requested)) if runs_requested else RULE
    parts = ["<h3>Model runs</h3>", f"<p>{escape(how)} CSV: <code>tables/runs.csv</code></p>"]
    if not len(runs):
        return parts + ["<p class='absent'>No model runs.</p>"]
    used = runs[runs["used"].astype(bool)] if "used" in runs else runs
    parts.append(f"<p>{len(used)} of {len(runs)} run(s) used: "
                 f"{escape(', '.join(str(i) for i in used['run_id']) or 'none')}.</p>")
    parts += _no_complete_run(runs)
    parts.append(_table(runs, max_rows=200))
    parts.append("<h3>Configurations used</h3><p>How each used run asked and answered: prompt format, dtype, answers "
                 "and, per design, the variants whose probabilities were summed, mean p(Yes) + p(No) (the answer "
                 "mass), the decision rule each design's scores were decided by (relative: p(Yes) vs p(No), "
                 "003 §4.1; top token: the most probable token over the whole vocabulary, 000 §4.2), and per rule "
                 "the share of decisions that are 'other' (neither answer; a warning above 10 %). Each says "
                 "whether it is the design's paper's setting (where the paper says so) or one the configuration set. "
                 "CSV: <code>tables/configurations.csv</code></p>")
    if warnings:
        items = "".join(f"<li>{escape(w)}</li>" for w in warnings)
        parts.append(f"<p class='warn'>Answer mass below 0.5, or more than 10 % of the decisions 'other':</p>"
                     f"<ul class='warn'>{items}</ul>")
    parts.append(_table(configurations.drop(columns=["warning"], errors="ignore"), max_rows=200)
                 if len(configurations) else "<p class='absent'>No scoring run used.</p>")
    return parts


def _answering(page: "Page") -> list[str]:
    """What participants read (the researcher's texts, as the study stored them when the report was built) and
    how they answered: people by device and answer channel (issue 47)."""
    written = ((page.inputs.provenance or {}).get("study") or {}).get("participant_texts") or {}
    parts = ["<h3 id='participant_texts'>What participants read, and how they answered</h3>"]
    if written:
        parts.append(f"<p>Answer input: <code>{escape(written.get('answer_input', ''))}</code>. The texts as written "
                     "(placeholders filled per participant; <code>dataset_description.json</code> holds them):</p><dl>"
                     + "".join(f"<dt>{escape(k)}</dt><dd>{escape(v) or '(none)'}</dd>"
                               for k, v in written.items() if k != "answer_input") + "</dl>")
    if page.answering is not None and len(page.answering):
        parts += ["<p>People's kept answers by device and answer channel. CSV: <code>tables/answering.csv</code></p>",
                  _table(page.answering)]
    return parts


@dataclass
class Page:
    """What report.html (and dataset_description.json) show: the report's inputs (analysis.report.
    ReportInputs), when and with what software it was built, and what it found."""

    inputs: object  # ReportInputs
    generated: str
    versions: dict[str, str]
    exclusions: pd.DataFrame
    table1: pd.DataFrame
    overview: object  # plots.Figure or None
    sections: list
    participants: list[str]
    columns: pd.DataFrame  # the data files' columns
    n_kept: int
    factors: tuple = ()  # the study's declared factors (analysis/factors.py)
    elsewhere: list = field(default_factory=list)  # titles of analyses of designs this study does not have
    accuracy: object = None  # analysis.accuracy_tables.AccuracyTables: Table 1's sides, the models on every item
    answering: pd.DataFrame | None = None  # people by device and answer channel (analysis/answering.py)
    summary: object = None  # analysis.summary.Summary: the sentences the page opens with
    figures: list = field(default_factory=list)  # FigureFile: every figure with its files' stem (figures_of)


def _summary(page: "Page") -> str:
    """The page's opening: per model and for people, a few sentences from the report's numbers (analysis/summary.py);
    tables/summary.csv holds them one per row."""
    found = page.summary
    if found is None:
        return ""
    people = "".join(f"<li>{escape(s)}</li>" for s in found.people)
    models = "".join(f"<li><strong>{escape(model)}</strong>: {escape(' '.join(said))}</li>"
                     for model, said in found.models if said)
    return ("<section id='summary'><h2>Summary</h2>"
            f"<h3>People</h3><ul>{people}</ul>"
            + (f"<h3>Models</h3><ul>{models}</ul>" if models else "")
            + f"<p class='basis'>{escape(found.basis)} CSV: <code>tables/summary.csv</code></p></section>")


def _elsewhere(page: "Page") -> str:
    """The analyses this report leaves out, in one paragraph: this study's own that its data cannot support
    (each with what it needs), and, in one line, those of other designs."""
    waiting = [f"{s.title} ({s.absent})" for s in page.sections if s.absent]
    parts = []
    if waiting:
        parts.append(f"Not fitted in this report: {'; '.join(waiting)}.")
    if page.elsewhere:
        parts.append("Analyses of other designs, in the reports of studies that have them: "
                     f"{', '.join(page.elsewhere)}.")
    return f"<p class='absent' id='elsewhere'>{escape(' '.join(parts))}</p>" if parts else ""


def _references(page: "Page") -> str:
    """The models' reference levels: each declared factor's first level in Table 1's order (the designs' declared
    order, analysis/prep.py) among a fit's data, and the humans for agent."""
    named = ", ".join(spoken(f) for f in page.factors)
    each = f"of each factor ({escape(named)}) is its first level in Table 1's order among a fit's data, and " \
        if named else ""
    return f"Treatment coding; the reference level {each}of agent (humans vs each model) is human."


def _table1_text(page: "Page") -> str:
    factors = [f for f in page.factors]
    by = (" by " + " and ".join(escape(f) for f in factors)) if factors else " overall (the study declares no factors)"
    return (f"<p>Accuracy{by}. Models: on the items people could be shown (the models' side of every comparison "
            "with people; their accuracy on every item they answered, where that is more, is its own table below), "
            "mean soft accuracy and the accuracy of their decisions, items resampled "
            "(the phrasings and members of one linked pair resampled together). People: proportion correct, "
            "participants resampled. <code>cluster</code> names the sampling unit and <code>n_clusters</code> how "
            "many; 95% percentile-bootstrap intervals. CSV: <code>tables/table1_accuracy.csv</code></p>")


def _table1_sides(page: "Page") -> list[str]:
    """Table 1's sides (items, answers, phrasings, copies, participants), then the models on every item they
    answered, labelled as not like for like, where that differs (analysis/accuracy_tables.py)."""
    found = page.accuracy
    if found is None:
        return []
    parts = ["<h3 id='table1_sides'>Table 1: what each side holds</h3>",
             f"<p class='sides'>{escape(found.note)} CSV: <code>tables/table1_accuracy_sides.csv</code></p>",
             _table(found.sides)]
    if found.every is not None:
        parts += [f"<h3 id='table1_all_items'>{escape(EVERY_TITLE)}</h3>",
                  f"<p class='sides'>{escape(found.every_note)} CSV: <code>tables/{EVERY}.csv</code>, its sides "
                  f"<code>tables/{EVERY}_sides.csv</code></p>", _table(found.every_sides),
                  _table(found.every, max_rows=200)]
    return parts


def render(page: Page) -> str:
    inputs, sections = page.inputs, page.sections
    title, rules = inputs.title, inputs.rules
    legend = ", ".join(f"{escape(k)} = {escape(v)}" for k, v in LABELS.items())
    shown = [s for s in sections if not s.absent]
    stems = {(f.section, f.name): f.stem for f in page.figures}
    toc = "".join(f"<li><a href='#{s.key}'>{escape(s.title)}</a></li>" for s in shown)
    body = [
        f"<h1>{escape(title)}</h1>", _summary(page),
        f"<p>Generated {escape(page.generated)} (UTC). {len(inputs.scores)} model scores, "
        f"{len(inputs.trials)} human trials ({page.n_kept} kept after exclusions).</p>",
        f"<ul>{toc}</ul>", _elsewhere(page),
        f"<p>{escape(SCALING)} Factor codes: {legend}. {_references(page)} Marginal means from emmeans (lmer: "
        "Satterthwaite df up to 3000 observations, asymptotic beyond), R² from performance::r2_nakagawa.</p>",
        "<h2 id='inputs'>What went in</h2>",
        *_inputs(inputs.runs, inputs.configurations, list(inputs.runs_requested), inputs.warnings()),
        f"<h3>Participants kept ({len(page.participants)})</h3><p>{escape(', '.join(page.participants)) or '—'}</p>",
        *_answering(page),
        "<h3>Exclusions (applied in this order)</h3>",
        f"<p>Rules: {escape('; '.join(rules.describe()))}.</p>", _table(page.exclusions),
        "<h2 id='table1'>Table 1: accuracy with bootstrap 95% CIs</h2>", _table1_text(page),
        "<p class='unit'><strong>Sampling unit:</strong> people: the participant (all of a person's trials are "
        "resampled together); models: the item, or the linked pair where items come in pairs.</p>",
        _figure(page.overview, stems.get(("table1", "overview"), "")) if page.overview else
        "<p class='absent'>No answers yet: no model scores and no "
        "kept human trials.</p>",
        _table(page.table1, max_rows=200),
        *_table1_sides(page),
    ]
    body += [_section(s, stems) for s in shown]
    body += [
        "<h2 id='data'>Data files</h2><p><code>data/trials.csv|.parquet</code> (every trial, before "
        "exclusions), <code>data/scores.csv|.parquet</code> (every score of the analysed runs), "
        "<code>data/items.csv|.parquet</code> (every item in either), "
        "<code>data/model_frames/*.csv|.parquet</code> (the exact frame each model was fitted on), "
        "<code>figures/*.png|.svg</code> (every figure of this page; <code>figures/figures.csv</code> lists them with "
        "their captions). "
        "<code>codebook.csv</code> describes every column of every CSV in the folder and "
        "<code>dataset_description.json</code> (Psych-DS) holds the provenance and a SHA-256 of every file. "
        "The data files' columns:</p>", _table(page.columns, max_rows=200),
        "<h2 id='software'>Software</h2>",
        _table(pd.DataFrame(list(page.versions.items()), columns=["software", "version"])),
    ]
    return (f"<!doctype html><html lang='en'><head><meta charset='utf-8'><meta name='viewport' content='width=device-width, initial-scale=1'><title>{escape(title)}</title>"
            f"<style>{CSS}</style></head><body>{''.join(body)}</body></html>")
