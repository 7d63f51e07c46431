"""A report folder as a dataset (issue 19 item 2): codebook.csv and dataset_description.json.

`codebook.csv` describes every column of every CSV file in the folder (its own included): the data
files from the schema (experiments/schema.py), the model frames and tables from GLOSSARY, and a
table-specific column not in the glossary with its inferred type and a pointer to its section.
`dataset_description.json` follows Psych-DS (schema.org Dataset: name, description,
variableMeasured, license left blank for the researcher), plus Duet's provenance: the study's design
and settings, logic system and consequence relation, the runs used with their configurations, the
exclusion rules with counts, Python and R package versions, and a SHA-256 of every other file.
"""
from __future__ import annotations

import csv
import hashlib
import json
from pathlib import Path

import pandas as pd

from experiments import schema

CODEBOOK = "codebook.csv"
DESCRIPTION = "dataset_description.json"
CODEBOOK_COLUMNS = {
    "file": "path of the CSV file inside the report folder",
    "column": "the column's name in that file",
    "type": "string, integer, number, boolean (TRUE/FALSE) or datetime (ISO 8601, UTC)",
    "unit": "unit of the values (ms, px, probability, tokens; blank when none)",
    "allowed_values": "the values the column may hold, separated by ' | ' (blank: any of its type)",
    "description": "what the column holds",
}
_P = "probability"
FACTOR = ("a factor the study declares (import_items --factors, or the study's settings), taken from the item bank's "
          "own column of that name: the item's value (blank where it has none); Table 1 and the humans-vs-models "
          "model are by it")
# Model frames and tables: name → (type, unit, description).
GLOSSARY: dict[str, tuple[str, str, str]] = {
    "agent": ("string", "", "human, or the model configuration's name"),
    "respondent": ("string", "", "who answered: a participant label, a model's name, or human (all participants)"),
    "interpretation": ("string", "", "the interpretation (I + database id): what p and q mean"),
    "item": ("string", "", "the item, labelled by its item_id in the data files (after an i in the humans-vs-models "
                           "and people's model frames): a random intercept per item in the model"),
    "perplexity_z": ("number", "", "perplexity of the prompt, z-scored over the model frame"),
    "rt_z": ("number", "", "log response time, z-scored over the model frame"),
    "term": ("string", "", "the model term (fixed effect, likelihood-ratio test term)"),
    "Estimate": ("number", "", "fixed-effect estimate (link scale for binomial models)"),
    "2.5_ci": ("number", "", "lower bound of the 95% confidence interval of the estimate"),
    "97.5_ci": ("number", "", "upper bound of the 95% confidence interval of the estimate"),
    "SE": ("number", "", "standard error of the estimate"),
    "DF": ("number", "", "Satterthwaite degrees of freedom (lmerTest)"),
    "T-stat": ("number", "", "t statistic"), "Z-stat": ("number", "", "Wald z statistic"),
    "P-val": ("number", _P, "p-value"), "Sig": ("string", "", "significance stars (*** < .001, ** < .01, * < .05, . < .1)"),
    "OR": ("number", "", "odds ratio, exp(Estimate)"),
    "OR_2.5_ci": ("number", "", "lower bound of the odds ratio's 95% CI"),
    "OR_97.5_ci": ("number", "", "upper bound of the odds ratio's 95% CI"),
    "Prob": ("number", _P, "the estimate as a probability, plogis(Estimate)"),
    "Prob_2.5_ci": ("number", _P, "lower bound of the probability's 95% CI"),
    "Prob_97.5_ci": ("number", _P, "upper bound of the probability's 95% CI"),
    "estimate": ("number", "", "estimate (marginal mean or contrast; response scale for binomial models)"),
    "se": ("number", "", "standard error"), "df": ("number", "", "degrees of freedom (Inf: asymptotic)"),
    "ci_low": ("number", "", "lower bound of the 95% confidence interval"),
    "ci_high": ("number", "", "upper bound of the 95% confidence interval"),
    "interval": ("string", "", "how Table 1's interval was made: the percentile bootstrap, or, where that has zero "
                 "width (every cluster with the same share), the unit-clustered interval and why"),
    "null": ("number", "", "the null value the test compares with"),
    "statistic": ("number", "", "test statistic (t, z or the test's own)"), "p_value": ("number", _P, "p-value"),
    "p_adjusted": ("number", _P, "p-value adjusted for multiple comparisons (Benjamini–Hochberg)"),
    "reject": ("boolean", "", "TRUE when the adjusted p-value is below .05"),
    "contrast": ("string", "", "the contrast (emmeans pairs)"),
    "factor": ("string", "", "the factor a row is about (one of the study's declared factors; overall)"),
    "cluster": ("string", "", "Table 1's sampling unit: what was resampled as one observation (participant, item, "
                "or pair: a linked pair's phrasings and members together)"),
    "n_clusters": ("integer", "", "how many of those units the row rests on"),
    # the `sides` table of every human/model contrast (analysis/like_for_like.py, issue 35)
    "side": ("string", "", "people or model: which side of the human/model contrast the row describes"),
    "n_items": ("integer", "", "distinct items the side answered in this contrast (Table 1: behind the row)"),
    "items": ("string", "", "which items the row's respondent is scored on (Table 1, analysis/accuracy_tables.py): "
              "the items people answered, the items people could be shown (models, like for like), or every item "
              "the model answered (not like for like)"),
    "n_copies": ("integer", "", "distinct items of the side that are perturbed copies (condition not real)"),
    "n_participants": ("integer", "", "people: distinct participants whose answers the side holds; blank for a "
                       "model configuration (one respondent)"),
    "n_answers": ("integer", "", "answers the side contributed to this contrast"),
    "phrasings": ("string", "", "the prompt variants (phrasings) the side answered; '(one phrasing)' for items "
                  "written in no variant"),
    "conditions": ("string", "", "the item conditions the side answered (real, or a perturbation's label)"),
    "level": ("string", "", "the factor's level (ASCII code)"),
    "hypothesis": ("string", "", "the paper's hypothesis tested"),
    "group": ("string", "", "the random-effect grouping factor"), "Name": ("string", "", "the random-effect term"),
    "Var": ("number", "", "random-effect variance"), "Std": ("number", "", "random-effect standard deviation"),
    "grpvar": ("string", "", "grouping factor"), "grp": ("string", "", "the group's level"),
    "random": ("number", "", "the group's random effect (BLUP)"), "random_sd": ("number", "", "its conditional SD"),
    "fixed": ("number", "", "the fixed part of the coefficient"),
    "mixed": ("number", "", "fixed + random: the group's coefficient"),
    "mixed_ci_low": ("number", "", "lower bound of the group's coefficient's 95% interval"),
    "mixed_ci_high": ("number", "", "upper bound of the group's coefficient's 95% interval"),
    "chisq": ("number", "", "likelihood-ratio χ² of the term (full vs reduced model)"),
    "aic_full": ("number", "", "AIC of the full model"), "aic_reduced": ("number", "", "AIC of the reduced model"),
    "optimizer": ("string", "", "the optimizer that fitted the models"), "warnings": ("string", "", "fit warnings"),
    "discarded": ("string", "", "warnings of refit attempts not kept (an optimizer that did not converge when the next "
                  "did)"),
    "n": ("integer", "", "number of observations (paired and multiple-choice tables: the independent units the "
                         "interval or test rests on, named in `unit`)"),
    "unit": ("string", "", "the sampling unit of the row's interval or test (pair, rule, item pair, participant)"),
    "answered_pairs": ("integer", "", "pair answers counted (pairs × phrasings, or a person's pairs)"),
    "clusters": ("integer", "", "units holding matched pairs"),
    "item_pairs": ("integer", "", "distinct item pairs (original item and its perturbation)"),
    "matched": ("integer", "", "matched (original, perturbed) observations"),
    "note": ("string", "", "what the row's interval or test did where it departs from the usual (blank: nothing)"),
    "pearson_r": ("number", "", "Pearson correlation"), "pearson_p": ("number", _P, "its p-value"),
    "spearman_rho": ("number", "", "Spearman rank correlation"), "spearman_p": ("number", _P, "its p-value"),
    "measure": ("string", "", "what the accuracy measures (soft accuracy, decision accuracy: the share of a "
                "model's decisions that match the gold answer, proportion correct: people's)"),
    "accuracy": ("number", _P, "accuracy (mean soft accuracy, decision accuracy or proportion correct)"),
    "rule": ("string", "", "the exclusion rule, in the order applied"),
    "trials_removed": ("integer", "", "trials the rule removed"),
    "participants_affected": ("integer", "", "participants with at least one trial removed by the rule"),
    "trials_left": ("integer", "", "trials left after the rule"),
    "configuration": ("string", "", "the model configuration (language model)"),
    "answers": ("string", "", "the answer words the configuration compares"),
    "variants": ("string", "", "the answer variants whose probabilities were summed"),
    "scores": ("integer", "", "scores of the run in the report"),
    "mean_answer_mass": ("number", _P, "mean probability mass on the answers"),
    "decision_rules": ("string", "", "the decision rules of the run's scores"),
    "other_share": ("number", _P, "share of the run's decisions that are 'other' (neither answer)"),
    "other_by_rule": ("string", "", "per decision rule, the share of decisions that are 'other'"),
    "warning": ("string", "", "a warning about the configuration (blank when none)"),
    "confidence_real": ("number", _P, "mean confidence on the real items of the sequent"),
    "confidence_nonsense": ("number", _P, "mean confidence on the nonsense items of the sequent"),
    "n_real": ("integer", "", "real items averaged"), "n_nonsense": ("integer", "", "nonsense items averaged"),
    "perplexity_real": ("number", "", "mean perplexity on the real items"),
    "perplexity_nonsense": ("number", "", "mean perplexity on the nonsense items"),
    "perturbation": ("string", "", "the perturbation compared with the original items"),
    "n11": ("integer", "", "pairs correct on both versions"), "n12": ("integer", "", "correct on the original only"),
    "n21": ("integer", "", "correct on the perturbed only"), "n22": ("integer", "", "wrong on both"),
    "method": ("string", "", "the test used"),
    # the power analysis's tables (analysis/power.py)
    "needed": ("integer", "", "participants needed: the smallest size tried whose power's Monte-Carlo lower 95% bound "
               "reaches the target (blank: none of the sizes tried did)"),
    "max_n": ("integer", "", "the largest number of participants tried"),
    "power_at_max": ("number", _P, "power at the largest number of participants tried"),
    # tables/summary.csv (analysis/summary.py)
    "sentence": ("string", "", "one sentence of the report's opening summary, written from the report's numbers"),
    "about": ("string", "", "whom the summary's sentence is about: human (people) or a model configuration; the "
              "numbers it quotes, and their sides, are in the tables it names"),
}
# figures/figures.csv (analysis/report.py write_figures): every figure's files and words.
FIGURES_GLOSSARY = {
    "figure": ("string", "", "the figure's name: figures/<figure>.png and figures/<figure>.svg"),
    "section": ("string", "", "the report section the figure belongs to (its id in report.html; table1: Table 1)"),
    "png": ("string", "", "path of the figure as PNG (100 dpi), as embedded in report.html"),
    "svg": ("string", "", "path of the figure as SVG (its text kept as text)"),
    "caption": ("string", "", "the figure's caption in report.html"),
    "alt": ("string", "", "the figure's alt text: its values in words"),
}


def integers(frame: pd.DataFrame) -> pd.DataFrame:
    """`frame` with the counts the glossary declares integer written as integers (10, not 10.0) where every value
    is whole; blanks stay blank."""
    out = frame
    for name in frame.columns:
        if GLOSSARY.get(name, ("",))[0] == "integer" and frame[name].dtype.kind == "f":
            values = frame[name].dropna()
            if (values == values.round()).all():
                out = out.copy() if out is frame else out
                out[name] = frame[name].astype("Int64")
    return out


def _files() -> dict[str, dict[str, tuple[str, str, str]]]:
    """Columns described per file, before the glossary (a name the glossary means otherwise, e.g. answers)."""
    from . import answering, likeness

    return {f"tables/{answering.NAME}.csv": answering.GLOSSARY, "tables/human_likeness.csv": likeness.TABLE_GLOSSARY,
            "figures/figures.csv": FIGURES_GLOSSARY,
            "data/model_frames/human_likeness.csv": likeness.FRAME_GLOSSARY,
            "data/model_frames/human_likeness_splits.csv": likeness.SPLITS_GLOSSARY}


def _runs_glossary() -> dict[str, tuple[str, str, str]]:
    from .runs import RUN_COLUMNS

    types = {"run_id": "integer", "items_done": "integer", "items_total": "integer", "partial": "boolean",
             "used": "boolean", "run_variation": "boolean", "created_at": "datetime", "finished_at": "datetime"}
    return {k: (types.get(k, "string"), "", v) for k, v in RUN_COLUMNS.items()}


def by_design(name: str) -> str:
    """What `valid`, `gold`, `family` and `decision_rule` mean for each registered design (its folder's
    design.py): the codebook says it per design, so a reader never takes validity for the expected
    answer nor one design's rule for another's."""
    from experiments import design_registry as registry

    if name == "valid":
        return " By design: " + "; ".join(f"{d.name}: {registry.VALIDITY[d.validity]}" for d in registry.all_designs())
    if name == "gold":
        return " By design: " + "; ".join(f"{d.name}: {d.gold}" for d in registry.all_designs())
    if name == "family":
        found = registry.families()
        return (" By design: " + "; ".join(f"{d.name}: {found[d.name].describe() if d.name in found else 'none'}"
                                           for d in registry.all_designs())
                + ". In a model frame (data/model_frames/) it is f + the family, or the item's own label for an item "
                  "without one; a model frame has it only where the model has a (1 | family) term.")
    if name == "decision_rule":
        return (" Each design's paper's rule, used unless the configuration set its own (runs.csv, "
                "configurations.csv): " + "; ".join(f"{d.name}: {d.scoring.decision_rule}"
                                                     for d in registry.all_designs()))
    return ""


def _schema_entry(column: schema.Column) -> dict:
    return {"type": column.type, "unit": column.unit, "allowed_values": " | ".join(schema.allowed(column)),
            "description": schema.meaning(column) + by_design(column.name)}


def _inferred(path: Path, name: str) -> str:
    dtype = pd.read_csv(path, usecols=[name])[name].dtype
    return {"b": "boolean", "i": "integer", "f": "number"}.get(dtype.kind, "string")


def entry(relative: str, name: str, path: Path, factors=(), described=None) -> dict:
    """The codebook row of one column of one file (`factors`: the study's declared factors, as named in the
    data files and as the model frames name them; `described`: file → column → (type, unit, description[,
    allowed values]) for files the report writes from other apps, e.g. Prolific's demographics, the questionnaires)."""
    stem = Path(relative).stem
    declared = schema.TABLES.get(stem) if relative.startswith("data/") and "/" not in relative[5:] else None
    if declared is not None:
        by_name = {c.name: c for c in declared}
        if name in by_name:
            return _schema_entry(by_name[name])
    if name in factors and name not in (described or {}).get(relative, {}):  # a file's own words come first
        meaning = (FACTOR if relative.startswith("data/")
                   else f"the level of the study's declared factor {name} this row is about")
        return {"type": "string", "unit": "", "allowed_values": "", "description": meaning}
    if relative == CODEBOOK:
        return {"type": "string", "unit": "", "allowed_values": "", "description": CODEBOOK_COLUMNS[name]}
    own = {**_files(), **(described or {})}.get(relative, {})
    if name in own:  # (type, unit, description), or with its allowed values (a questionnaire's choices, a scale)
        kind, unit, description, *allowed = own[name]
        return {"type": kind, "unit": unit, "allowed_values": allowed[0] if allowed else "", "description": description}
    items = {c.name: c for c in (*schema.TRIAL, *schema.SCORE)}
    glossary = {**_runs_glossary(), **GLOSSARY} if relative == "tables/runs.csv" else {**GLOSSARY, **_runs_glossary()}
    from experiments import design_registry as registry

    coded = {f.name for d in registry.all_designs() for f in d.factor_levels}  # the model frames hold their codes
    if relative.startswith("data/model_frames/") and name in items and name not in coded:
        return _schema_entry(items[name])
    if name in coded:
        return {"type": "string", "unit": "", "allowed_values": "", "description": f"{name}, as its ASCII code "
                f"(the model's level names; see {name}_code in the data files)"}
    if name in glossary:
        kind, unit, description = glossary[name]
        return {"type": kind, "unit": unit, "allowed_values": "", "description": description}
    if name in items:
        return _schema_entry(items[name])
    return {"type": _inferred(path, name), "unit": "", "allowed_values": "",
            "description": f"a column of the report section's table {stem} (see report.html)"}


def csv_files(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*.csv"))


def header(path: Path) -> list[str]:
    with path.open(newline="", encoding="utf-8") as handle:
        return next(csv.reader(handle), [])


def write_codebook(folder: Path, *, factors=(), described=None) -> pd.DataFrame:
    """codebook.csv for every CSV in `folder` (written last among the CSVs, describing itself too);
    `factors`: the study's declared factors (a column of that name in a data file is described as one);
    `described`: file → column → (type, unit, description), for files whose columns another app declares."""
    from .factors import FIELD_SOURCES, r_name

    folder = Path(folder)
    factors = {n for f in (factors or ()) if f not in FIELD_SOURCES for n in (f, r_name(f))}
    rows = []
    for relative in [f for f in csv_files(folder) if f != CODEBOOK] + [CODEBOOK]:
        names = list(CODEBOOK_COLUMNS) if relative == CODEBOOK else header(folder / relative)
        rows += [{"file": relative, "column": name, **entry(relative, name, folder / relative, factors, described)}
                 for name in names]
    table = pd.DataFrame(rows, columns=list(CODEBOOK_COLUMNS))
    from common import csvsafe

    csvsafe.frame(table).to_csv(folder / CODEBOOK, index=False)
    return table


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _records(frame: pd.DataFrame | None) -> list[dict]:
    if frame is None or frame.empty:
        return []
    return json.loads(frame.to_json(orient="records", date_format="iso"))


def write_description(folder: Path, *, codebook: pd.DataFrame, page) -> dict:
    """dataset_description.json: Psych-DS's fields and Duet's provenance (`page`: the report's
    html.Page, its inputs and what it found); written after every other file."""
    folder = Path(folder)
    inputs = page.inputs
    title, provenance, rules, runs = inputs.title, inputs.provenance, inputs.rules, inputs.runs
    exclusions, versions, generated = page.exclusions, page.versions, page.generated
    variables, seen = [], set()
    for row in codebook.itertuples():
        if row.column in seen:
            continue
        seen.add(row.column)
        variable = {"@type": "PropertyValue", "name": row.column, "description": row.description}
        if row.unit:
            variable["unitText"] = row.unit
        variables.append(variable)
    files = [p for p in sorted(folder.rglob("*")) if p.is_file() and p.name != DESCRIPTION]
    description = {
        "@context": "https://schema.org/",
        "@type": "Dataset",
        "name": title,
        "description": "Human trials and language-model scores on the same reasoning items, with the mixed-effects "
                       "analyses of a Duet report. Every CSV column is described in codebook.csv; data/ holds the "
                       "tidy data (CSV and Parquet), tables/ the analyses' tables.",
        "license": "",
        "dateCreated": generated,
        "variableMeasured": variables,
        "duet": {
            "study": (provenance or {}).get("study", {}),
            "exclusions": {"rules": rules.describe(), "counts": _records(exclusions),
                           "settings": {k: v for k, v in vars(rules).items()}},
            "runs": {"requested": list(inputs.runs_requested),
                     "used": [r for r in _records(runs) if r.get("used")], "all": _records(runs),
                     "configurations": _records(inputs.configurations),
                     "stored_configurations": (provenance or {}).get("run_configurations", {})},
            "software": versions,
            "summary": _records(page.summary.frame()) if getattr(page, "summary", None) is not None else [],
            "files": [{"path": p.relative_to(folder).as_posix(), "bytes": p.stat().st_size, "sha256": sha256(p)}
                      for p in files],
        },
    }
    (folder / DESCRIPTION).write_text(json.dumps(description, indent=2, ensure_ascii=False, default=str),
                                      encoding="utf-8")
    return description
