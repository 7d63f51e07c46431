"""Exclusions, factor coding and predictor scaling: the steps between tidy frames and model fits.

Pure functions of DataFrames. Factors get ASCII level codes for R (the report shows the paper's
symbols through LABELS); continuous predictors are centred and scaled: perplexity is z-scored,
response time is log-transformed and then z-scored.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from logic.modal_forms import NECESSITATION_FORM, SYLLOGISMS  # 003's items (item data)
from experiments.schema import ARGFORM_CODES  # argument forms → R-safe codes, declared once (exported as argform_code)

from .rules import Exclusions

MODALITIES = ("none", "box", "dia")
VALID_FORMS = ("DS", "MP", "MT")
LABELS = {
    "none": "∅ (propositional)", "box": "□ (must)", "dia": "◇ (may)",
    "DS": "∨⊢ disjunctive syllogism", "MP": "→ᴸ⊢ modus ponens", "MT": "→ᴿ⊢ modus tollens",
    "AD": "∨⊬ affirming the disjunct", "AC": "→ᴸ⊬ affirming the consequent",
    "DA": "→ᴿ⊬ denying the antecedent", "NEC": NECESSITATION_FORM,
}


def apply_exclusions(trials: pd.DataFrame, rules: Exclusions = Exclusions()) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Return (kept trials, a table of what each rule removed, in the order applied)."""
    steps: list[tuple[str, pd.Series]] = []
    frame = trials
    failed = frame["failed_attention"].astype(bool)  # the study's attention rule, applied in frames.py
    if rules.drop_preview:
        steps.append(("preview session", frame["is_preview"].astype(bool)))
    if rules.drop_failed_attention:
        steps.append(("failed attention check", failed))
    if rules.completed_only:
        steps.append(("session not completed", frame["participant_status"] != "completed"))
    steps.append(("attention-check trial", frame["is_attention_check"].astype(bool)))
    steps.append(("timed out / no answer", frame["timed_out"].astype(bool) | (frame["answer"] == "")))
    if rules.rt_min_ms is not None:
        steps.append((f"RT < {rules.rt_min_ms:g} ms", frame["rt_ms"] < rules.rt_min_ms))
    rows = []
    keep = pd.Series(True, index=frame.index)
    for name, mask in steps:
        removed = keep & mask
        rows.append(_count(name, frame, removed, keep & ~removed))
        keep &= ~removed
    if rules.rt_log_sd is not None:
        removed = keep & _log_rt_outliers(frame[keep], rules.rt_log_sd).reindex(frame.index, fill_value=False)
        rows.append(_count(f"|log RT − participant mean| > {rules.rt_log_sd:g} SD", frame, removed, keep & ~removed))
        keep &= ~removed
    table = pd.DataFrame(rows, columns=["rule", "trials_removed", "participants_affected", "trials_left"])
    return frame[keep].copy(), table


def _count(name: str, frame: pd.DataFrame, removed: pd.Series, left: pd.Series) -> tuple:
    return name, int(removed.sum()), int(frame.loc[removed, "participant"].nunique()), int(left.sum())


def _log_rt_outliers(frame: pd.DataFrame, limit: float) -> pd.Series:
    log_rt = np.log(frame["rt_ms"].clip(lower=1.0))
    grouped = log_rt.groupby(frame["participant"])
    centre, spread = grouped.transform("mean"), grouped.transform("std")
    z = (log_rt - centre) / spread
    return (z.abs() > limit) & spread.gt(0) & grouped.transform("size").ge(3)


def zscore(values: pd.Series) -> pd.Series:
    spread = values.std()
    if not np.isfinite(spread) or spread == 0:
        return values - values.mean()
    return (values - values.mean()) / spread


def code_factors(frame: pd.DataFrame, *, argforms: tuple[str, ...] | None = None) -> pd.DataFrame:
    """modality and argform as ordered categoricals with R-safe level codes."""
    out = frame.copy()
    out["modality"] = pd.Categorical(out["modality"], categories=[m for m in MODALITIES if m in set(out["modality"])])
    codes = out["argform"].map(lambda label: ARGFORM_CODES.get(label, label))
    order = argforms or tuple(dict.fromkeys([*ARGFORM_CODES.values(), *sorted(set(codes))]))
    out["argform"] = pd.Categorical(codes, categories=[a for a in order if a in set(codes)])
    return out


def syllogism_scores(scores: pd.DataFrame, *, valid_only: bool) -> pd.DataFrame:
    """Model scores on the modal syllogisms (real items), factors coded, perplexity z-scored."""
    frame = scores[(scores["design"] == SYLLOGISMS) & (scores["condition"] == "real")]
    frame = frame.dropna(subset=["soft_acc", "rel_p_yes", "perplexity"])
    frame = code_factors(frame)
    if valid_only:
        frame = frame[frame["argform"].isin(VALID_FORMS)]
        frame["argform"] = frame["argform"].cat.remove_unused_categories()
    frame["perplexity_z"] = zscore(frame["perplexity"].astype(float))
    return frame.reset_index(drop=True)


def syllogism_trials(trials: pd.DataFrame, *, valid_only: bool) -> pd.DataFrame:
    """Kept human trials on the modal syllogisms, factors coded, log RT z-scored."""
    frame = trials[(trials["design"] == SYLLOGISMS) & (trials["condition"] == "real")]
    frame = code_factors(frame)
    if valid_only:
        frame = frame[frame["argform"].isin(VALID_FORMS)]
        frame["argform"] = frame["argform"].cat.remove_unused_categories()
    frame["rt_z"] = zscore(np.log(frame["rt_ms"].astype(float)))
    return frame.reset_index(drop=True)


def agent_frame(trials: pd.DataFrame, scores: pd.DataFrame) -> pd.DataFrame:
    """Humans and models in one frame: one row per answer, a model's answer its greedy decision; the item,
    its phrasing and condition ride along (not in the model: the section says what each side holds)."""
    humans = trials[(trials["design"] == SYLLOGISMS) & (trials["condition"] == "real")]
    models = scores[(scores["design"] == SYLLOGISMS) & (scores["condition"] == "real")]
    columns = ["agent", "respondent", "interpretation", "modality", "argform", "correct", "item_id", "variant",
               "condition"]
    human_rows = pd.DataFrame({
        "agent": "human", "respondent": humans["participant"], "interpretation": humans["interpretation_id"],
        "modality": humans["modality"], "argform": humans["argform"], "correct": humans["correct"],
        **_item_columns(humans),
    })
    model_rows = pd.DataFrame({
        "agent": models["model"], "respondent": models["model"], "interpretation": models["interpretation_id"],
        "modality": models["modality"], "argform": models["argform"], "correct": models["correct"],
        **_item_columns(models),
    })
    frame = pd.concat([human_rows, model_rows], ignore_index=True)[columns]
    frame["interpretation"] = "I" + frame["interpretation"].astype(str)
    frame = code_factors(frame)
    agents = ["human"] + sorted(set(frame["agent"]) - {"human"})
    frame["agent"] = pd.Categorical(frame["agent"], categories=agents)
    return frame


def _item_columns(frame: pd.DataFrame) -> dict:
    return {"item_id": frame["item_id"] if "item_id" in frame else pd.NA,
            "variant": frame["variant"].fillna("").astype(str) if "variant" in frame else "",
            "condition": frame["condition"].astype(str)}
