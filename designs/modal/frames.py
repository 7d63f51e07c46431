"""The frames of 003's modal designs (paper 003): its real modal-syllogism items, factors coded, for Eq. (4)-(6)
and for humans and models in one model; Figure 4's per-sequent means. Pure functions of tidy frames."""
from __future__ import annotations

import numpy as np
import pandas as pd

from analysis.prep import coded, zscore
from experiments.design_registry import level_code
from .forms import SYLLOGISMS, modal_syllogism_templates


def valid_forms() -> tuple[str, ...]:
    """The codes of 003's valid syllogism forms (DS, MP, MT: Eq. 5–6 read only these), from its templates."""
    return tuple(dict.fromkeys(level_code("argform", t.argument_form)
                               for t in modal_syllogism_templates() if t.template_valid))


def code_factors(frame: pd.DataFrame, *, argforms: tuple[str, ...] | None = None) -> pd.DataFrame:
    """003's factors, modality and argument form, as ordered categoricals with R-safe level codes in the order the
    designs declare them (Design.factor_levels: ∅ □ ◇; DS MP MT AD AC DA, …)."""
    out = frame.copy()
    out["modality"] = coded(out, "modality")
    out["argform"] = coded(out, "argform", order=argforms)
    return out


def real_syllogisms(frame: pd.DataFrame) -> pd.DataFrame:
    """The rows on 003's real modal-syllogism items."""
    return frame[(frame["design"] == SYLLOGISMS) & (frame["condition"] == "real")]


def syllogism_scores(scores: pd.DataFrame, *, valid_only: bool) -> pd.DataFrame:
    """Model scores on the modal syllogisms (real items), factors coded, perplexity z-scored."""
    frame = real_syllogisms(scores)
    frame = frame.dropna(subset=["soft_acc", "rel_p_yes", "perplexity"])
    frame = code_factors(frame)
    if valid_only:
        frame = frame[frame["argform"].isin(valid_forms())]
        frame["argform"] = frame["argform"].cat.remove_unused_categories()
    frame["perplexity_z"] = zscore(frame["perplexity"].astype(float))
    return frame.reset_index(drop=True)


def syllogism_trials(trials: pd.DataFrame, *, valid_only: bool) -> pd.DataFrame:
    """Kept human trials on the modal syllogisms, factors coded, log RT z-scored."""
    frame = code_factors(real_syllogisms(trials))
    if valid_only:
        frame = frame[frame["argform"].isin(valid_forms())]
        frame["argform"] = frame["argform"].cat.remove_unused_categories()
    frame["rt_z"] = zscore(np.log(frame["rt_ms"].astype(float)))
    return frame.reset_index(drop=True)


def agent_frame(trials: pd.DataFrame, scores: pd.DataFrame) -> pd.DataFrame:
    """Humans and models in one frame: one row per answer, a model's answer its greedy decision; the item,
    its phrasing and condition ride along (not in the model: the section says what each side holds)."""
    humans, models = real_syllogisms(trials), real_syllogisms(scores)
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


def sequent_means(scores: pd.DataFrame) -> pd.DataFrame:
    """Figure 4: per model and logical sequent (form), mean perplexity and mean confidence in the
    gold answer (soft accuracy), real and nonsense side by side (one row per model × form)."""
    frame = scores[scores["design"] == SYLLOGISMS]
    grouped = (frame.groupby(["model", "form_id", "modality", "argform", "condition"], observed=True)
               .agg(perplexity=("perplexity", "mean"), confidence=("soft_acc", "mean"), n=("soft_acc", "size"))
               .reset_index())
    wide = grouped.pivot_table(index=["model", "form_id", "modality", "argform"], columns="condition",
                               values=["perplexity", "confidence", "n"])
    wide.columns = [f"{value}_{condition}" for value, condition in wide.columns]
    return wide.reset_index()
