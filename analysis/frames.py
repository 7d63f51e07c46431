"""Django → tidy pandas frames: with analysis.runs (which runs a report reads) and
the design packages' readers (designs/paired/frames.py), the only analysis modules that read the database.

One row per human trial (`trials_frame`) and one row per model score (`scores_frame`), each with
the item's design factors joined in. Everything downstream is a function of these frames.
The columns are declared once in experiments/schema.py (TRIAL, SCORE, ITEM), each with how it is
read: the admin's trial export and trials_frame read the same rows
(experiments.participation.selectors.trial_records), scores_frame reads schema.SCORE's.
"""
from __future__ import annotations

import pandas as pd

from experiments import schema

ITEM_COLUMNS = schema.descriptions(schema.ITEM)  # name → meaning; types, units and values: experiments/schema.py
TRIAL_COLUMNS = schema.descriptions(schema.TRIAL)
SCORE_COLUMNS = schema.descriptions(schema.SCORE)
CODE_COLUMNS = tuple(c.name for c in schema.SCORE if c.codes)  # the factors' ASCII codes (text, blank possible)


def _typed(frame: pd.DataFrame) -> pd.DataFrame:
    """Integer columns that may be blank as Int64, optional booleans as pandas' boolean."""
    for column in ("interpretation_id", "interpretation_index", "original_item_id", "list_number", "list_seed",
                   "viewport_width", "viewport_height"):
        if column in frame:
            frame[column] = frame[column].astype("Int64")
    for column in ("template_valid", "valid"):  # blank where nothing states it
        if column in frame:
            frame[column] = frame[column].astype("boolean")
    return frame


def trials_frame(study, *, include_simulated: bool = False) -> pd.DataFrame:
    """Every trial of the study, preview sessions included (exclusions are applied later, explicitly,
    by analysis.prep); a simulated pilot's bots only when `include_simulated` (a pilot report).
    The rows are the admin export's (selectors.trial_records), so the columns are identical."""
    from experiments.participation.selectors import trial_records, trials_for_export

    rows = trials_for_export(study=study, include_simulated=include_simulated, include_preview=True)
    frame = pd.DataFrame.from_records(list(trial_records(rows)), columns=list(TRIAL_COLUMNS))
    for name in schema.of_type(schema.TRIAL, "boolean"):
        if name not in ("template_valid", "valid"):
            frame[name] = frame[name].astype(bool)
    frame["correct"] = frame["correct"].astype(int)
    for name in ("rt_ms", "client_onset_ms", "client_response_ms"):
        frame[name] = frame[name].astype(float)
    frame["received_at"] = pd.to_datetime(frame["received_at"], utc=True)
    return _typed(frame)[list(TRIAL_COLUMNS)]


def analysed_item_ids(study, run_ids, *, include_simulated: bool = False, include_preview: bool = False):
    """A query of the ids of the items a report analyses: those the study's real participants answered (never a
    staff preview's unless `include_preview`, the report's exclusions keeping previews; simulated pilots' only when
    `include_simulated`) and those the runs `run_ids` scored. Readers of item rows
    filter on it in the database (a subquery, no id list), so a report reads what it analyses, not
    every item of the study (issue 37)."""
    from django.db.models import Q

    from experiments.models import Item, Trial

    trials = Trial.objects.filter(participant__study=study).by_audience(include_preview=include_preview,
                                                                        include_simulated=include_simulated)
    answered = Q(pk__in=trials.order_by().values("item_id"))
    found = _inference_models()
    if found is not None and run_ids:
        answered |= Q(pk__in=found[1].objects.filter(run_id__in=list(run_ids)).order_by().values("item_id"))
    return Item.objects.filter(study=study).filter(answered).order_by().values("pk")


def _inference_models():
    try:
        from inference.models import ModelRun, ModelScore
    except ImportError:
        return None
    return ModelRun, ModelScore


def scores_available() -> bool:
    return _inference_models() is not None


def scores_frame(study, run_ids: list[int] | None = None) -> pd.DataFrame:
    """One row per score of the runs `run_ids` (None: the runs analysis.runs' default rule uses).
    This function picks no runs itself: which runs a report reads is decided by analysis.runs."""
    found = _inference_models()
    if found is None:
        return pd.DataFrame(columns=list(SCORE_COLUMNS))
    ModelRun, ModelScore = found
    if run_ids is None:
        from . import runs

        run_ids = runs.used_ids(runs.select_runs(study))
    formats = {pk: (config or {}).get("prompt_format") or fallback for pk, config, fallback in
               ModelRun.objects.filter(pk__in=list(run_ids)).values_list("pk", "configuration",
                                                                         "language_model__prompt_format")}
    reader = schema.Rows(schema.SCORE, given={"prompt_format": (("run_id",), formats.get)})
    rows = ModelScore.objects.filter(run_id__in=list(run_ids), run__study=study).order_by("run_id", "item_id")
    frame = pd.DataFrame.from_records(list(reader.from_values(rows.values_list(*reader.lookups))),
                                      columns=list(SCORE_COLUMNS))
    for column in ("p_yes", "p_no", "soft_acc", "rel_p_yes", "perplexity", "answer_mass"):
        frame[column] = pd.to_numeric(frame[column], errors="coerce").astype(float)
    for column in (*CODE_COLUMNS, "prompt_format"):
        frame[column] = frame[column].astype(object)
    frame["correct"] = frame["correct"].astype(int)
    for x in "ABCD":  # multiple choice (001): the letters' relative probabilities
        frame[f"p_{x}"] = frame[f"p_{x}"].astype(float)
    _typed(frame)
    return frame[list(SCORE_COLUMNS)]


VARIANT_COLUMNS = ["run_id", "design", "answer_forms", "variants"]


def variants_frame(run_ids: list[int]) -> pd.DataFrame:
    """The distinct answer-variant sets the scores of each run summed (ModelScore.variants), by the
    items' design and the answer forms the scores record: columns run_id, design, answer_forms,
    variants (label → texts, labels sorted, so every database gives the same frame)."""
    found = _inference_models()
    if found is None or not run_ids:
        return pd.DataFrame(columns=VARIANT_COLUMNS)
    _, ModelScore = found
    seen: dict[tuple, dict] = {}
    for run_id, design, forms, variants in (ModelScore.objects.filter(run_id__in=list(run_ids)).order_by()
                                            .values_list("run_id", "item__design", "answer_forms", "variants")
                                            .distinct()):
        variants = variants or {}
        key = (run_id, design, forms or "", repr(sorted((k, tuple(v)) for k, v in variants.items())))
        # labels in sorted order: PostgreSQL's jsonb keeps its own key order, SQLite the order written
        seen.setdefault(key, dict(sorted(variants.items())))
    rows = sorted(((run_id, design, forms, variants) for (run_id, design, forms, _), variants in seen.items()),
                  key=lambda r: (r[0], r[1], r[2], repr(r[3])))
    return pd.DataFrame(rows, columns=VARIANT_COLUMNS)


def mc_runs_frame(study, run_ids: list[int] | None = None) -> pd.DataFrame:
    """Multiple-choice scores of the runs `run_ids` (None: analysis.runs' run-variation set, every
    complete run of each configuration in use; 001 Table 2: variation across repeated runs)."""
    if _inference_models() is None or not study.items.filter(kind="multiple_choice").exists():
        return pd.DataFrame(columns=list(SCORE_COLUMNS))
    if run_ids is None:
        from . import runs

        run_ids = runs.variation_ids(runs.select_runs(study))
    frame = scores_frame(study, run_ids)
    return frame[frame["kind"] == "multiple_choice"].reset_index(drop=True)
