"""Django → tidy pandas frames: with analysis.runs (which runs a report reads) and
analysis.paired_frames, the only analysis modules that read the database.

One row per human trial (`trials_frame`) and one row per model score (`scores_frame`), each with
the item's design factors joined in. Everything downstream is a function of these frames.
The columns are documented in TRIAL_COLUMNS and SCORE_COLUMNS (the report prints them).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

ITEM_COLUMNS = {
    "item_id": "database id of the item",
    "item_code": "the item's stable code within the study",
    "design": "design the item comes from (modal-syllogisms, necessitation, modal-distribution, …)",
    "form_id": "the logical sequent (form) the item instantiates",
    "modality": "none (∅), box (□) or dia (◇)",
    "argform": "argument form label (∨⊢, →ᴸ⊢, →ᴿ⊢, ∨⊬, →ᴸ⊬, →ᴿ⊬; necessitation; base/theorem/spurious)",
    "condition": "real or nonsense (the nonsense mirror)",
    "interpretation_id": "database id of the interpretation (what p and q mean)",
    "original_item_id": "for a nonsense item, the real item it mirrors",
    "gold": "the checker's answer (yes/no) under the consequence relation in `consequence`",
    "valid": "True when the sequent is valid (gold answer yes)",
    "consequence": "the consequence relation that keyed gold: local or global (blank for items without a logical form)",
    "gold_other": "the checker's answer under the other consequence relation (blank where not recorded)",
    "template_valid": "the validity the paper's template (or the imported bank) states, beside the checker's key",
    "logical_form": "the sequent in symbols",
    "pair_id": "linked pairs (rulebreakers, dual-sided rules): the pair the item belongs to (blank otherwise)",
    "pair_role": "the item's role in its pair (rulebreaker / non-rulebreaker, original / flipped)",
    "variant": "the prompt variant (phrasing) the item is written in (blank for single-phrasing designs)",
    "kind": "yes_no, or multiple_choice (four options, seed 001; gold and answers are then the letters A–D)",
    "options": "multiple choice: the four option texts in this item's order (A–D), joined by ' | '",
}
TRIAL_COLUMNS = {
    "participant": "pseudonymous participant label (P + database id; no Prolific ID)",
    "participant_status": "the session's status (completed, failed_attention, …)",
    "is_preview": "True for a researcher's preview session",
    "is_simulated": "True for a simulated pilot participant (a bot; only in pilot reports)",
    "attention_failures": "attention checks the participant answered wrongly",
    "failed_attention": "True when the participant failed the attention checks by the study's rule "
                        "(experiments/participation/attention.py; the rule is printed in the report)",
    "key_mapping": "f_yes or j_yes (counterbalancing)",
    "trial_index": "position of the trial in the participant's list",
    "answer": "yes / no (blank when the time limit ran out)",
    "correct": "1 when the answer matches the gold answer, else 0",
    "rt_ms": "response time from stimulus onset, milliseconds",
    "is_attention_check": "True for an attention-check trial (never analysed as data)",
    "timed_out": "True when no key was pressed in time",
    **ITEM_COLUMNS,
}
SCORE_COLUMNS = {
    "model": "the model configuration's name (a language model read one way; see the report's runs table)",
    "run_id": "database id of the model run",
    "prompt_format": "the run's configuration's prompt format: raw (paper 003's prompt) or chat (chat template)",
    "p_yes": "p(Yes | prompt)",
    "p_no": "p(No | prompt)",
    "soft_acc": "soft accuracy: relative probability of the gold answer (paper 003, §4.1)",
    "rel_p_yes": "relative p(Yes) = p(Yes) / (p(Yes) + p(No)) (Eq. 5)",
    "decision": "the model's answer under the score's decision rule (yes/no, A–D, or other)",
    "decision_rule": "relative: the likelier of the answers (p(Yes) vs p(No), 003 §4.1; the letters, 001); "
                     "top_token: the most probable token over the whole vocabulary (000 §4.2)",
    "decision_relative": "the likelier of the answers (p(Yes) vs p(No), or the letters), whatever the rule",
    "top_answer": "the answer whose one-token variant is the most probable token over the vocabulary, else other",
    "correct": "1 when the decision matches the gold answer, else 0",
    "perplexity": "perplexity of the prompt under the model",
    "prompt_tokens": "number of prompt tokens",
    "answer_mass": "p(Yes) + p(No): probability mass on the two answers",
    **{f"p_{x}": f"multiple choice: p({x}) relative to the four option letters (001)" for x in "ABCD"},
    **ITEM_COLUMNS,
}

_ITEM_LOOKUPS = {
    "item_id": "item_id", "item__code": "item_code", "item__design": "design",
    "item__form_id": "form_id", "item__modality": "modality", "item__argument_form": "argform",
    "item__condition": "condition", "item__interpretation_id": "interpretation_id",
    "item__original_id": "original_item_id", "item__gold_answer": "gold",
    "item__logical_form": "logical_form", "item__pair_id": "pair_id", "item__pair_role": "pair_role",
    "item__variant": "variant", "item__kind": "kind", "item__options": "options",
    "item__consequence": "consequence", "item__gold_other": "gold_other", "item__template_valid": "template_valid",
}


def _finish_items(frame: pd.DataFrame) -> pd.DataFrame:
    frame["valid"] = frame["gold"] == "yes"
    frame["options"] = frame["options"].map(lambda v: " | ".join(v) if isinstance(v, list) else (v or ""))
    for column in ("interpretation_id", "original_item_id"):
        frame[column] = frame[column].astype("Int64")
    return frame


def _field_names(model) -> set[str]:
    return {f.name for f in model._meta.get_fields()}


def trials_frame(study, *, include_simulated: bool = False) -> pd.DataFrame:
    """Every trial of the study (exclusions are applied later, explicitly, by analysis.prep); a
    simulated pilot's bots only when `include_simulated` (a pilot report)."""
    from django.db.models import BooleanField, ExpressionWrapper

    from experiments.models import Trial
    from experiments.participation import attention

    lookups = {
        "participant_id": "participant_id", "participant__status": "participant_status",
        "participant__is_preview": "is_preview", "participant__is_simulated": "is_simulated",
        "participant__key_mapping": "key_mapping",
        "index": "trial_index", "answer": "answer", "correct": "correct", "rt_ms": "rt_ms",
        **_ITEM_LOOKUPS,
    }
    optional = {"is_attention_check": False, "timed_out": False}
    trial_fields = _field_names(Trial)
    lookups.update({name: name for name in optional if name in trial_fields})
    lookups["participant__attention_failures"] = "attention_failures"
    lookups["failed_attention"] = "failed_attention"
    rows = Trial.objects.filter(participant__study=study)
    if not include_simulated:
        rows = rows.filter(participant__is_simulated=False)
    rows = (rows.order_by("participant_id", "index")
            .annotate(failed_attention=ExpressionWrapper(attention.failed_q("participant__"), BooleanField())))
    frame = pd.DataFrame.from_records(list(rows.values_list(*lookups)), columns=list(lookups.values()))
    for name, default in optional.items():
        if name not in frame:
            frame[name] = default
    frame["failed_attention"] = frame["failed_attention"].astype(bool)
    frame["participant"] = "P" + frame["participant_id"].astype(str)
    frame["correct"] = frame["correct"].astype(int)
    frame["rt_ms"] = frame["rt_ms"].astype(float)
    frame = _finish_items(frame.drop(columns=["participant_id"]))
    return frame[list(TRIAL_COLUMNS)]


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
    lookups = {
        "run__language_model__name": "model", "run_id": "run_id", "p_yes": "p_yes", "p_no": "p_no",
        "soft_accuracy": "soft_acc", "relative_p_yes": "rel_p_yes", "decision": "decision",
        "decision_rule": "decision_rule", "decision_relative": "decision_relative", "top_answer": "top_answer",
        "perplexity": "perplexity", "prompt_tokens": "prompt_tokens", "answer_mass": "answer_mass",
        "option_probs": "option_probs", **_ITEM_LOOKUPS,
    }
    rows = ModelScore.objects.filter(run_id__in=list(run_ids), run__study=study).order_by("run_id", "item_id")
    frame = pd.DataFrame.from_records(list(rows.values_list(*lookups)), columns=list(lookups.values()))
    frame = _finish_items(frame)
    for column in ("p_yes", "p_no", "soft_acc", "rel_p_yes", "perplexity", "answer_mass"):
        frame[column] = pd.to_numeric(frame[column], errors="coerce").astype(float)
    frame["correct"] = (frame["decision"] == frame["gold"]).astype(int)
    formats = {pk: (config or {}).get("prompt_format") or fallback for pk, config, fallback in
               ModelRun.objects.filter(pk__in=list(run_ids)).values_list("pk", "configuration",
                                                                         "language_model__prompt_format")}
    frame["prompt_format"] = frame["run_id"].map(formats).astype(object)
    for x in "ABCD":  # multiple choice (001): the letters' relative probabilities
        frame[f"p_{x}"] = frame["option_probs"].map(lambda d, x=x: (d or {}).get(x, np.nan)).astype(float)
    return frame[list(SCORE_COLUMNS)]


def variants_frame(run_ids: list[int]) -> pd.DataFrame:
    """The distinct answer-variant sets the scores of each run summed (ModelScore.variants):
    columns run_id, variants (label → texts)."""
    found = _inference_models()
    if found is None or not run_ids:
        return pd.DataFrame(columns=["run_id", "variants"])
    _, ModelScore = found
    seen: dict[tuple[int, str], dict] = {}
    for run_id, variants in (ModelScore.objects.filter(run_id__in=list(run_ids)).order_by()
                             .values_list("run_id", "variants").distinct()):
        variants = variants or {}
        key = (run_id, repr(sorted((k, tuple(v)) for k, v in variants.items())))
        seen.setdefault(key, variants)
    rows = sorted(((run_id, variants) for (run_id, _), variants in seen.items()), key=lambda r: (r[0], repr(r[1])))
    return pd.DataFrame(rows, columns=["run_id", "variants"])


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
