"""Simulated tidy frames with known effects (for tests and bench/analysis.py).

The frames have exactly the columns analysis.frames produces, so every analysis runs on them.
Effects are additive on the scale each model uses: soft accuracy (identity) for model scores,
the logit of p(correct) for human trials.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from experiments import schema
from .forms import ARGUMENT_FORMS, MODALITIES, SYLLOGISMS, modal_syllogism_templates

from analysis.frames import ITEM_COLUMNS, SCORE_COLUMNS, TRIAL_COLUMNS

FORMS = [  # (rule, argform label, gold): paper 003's 8 forms per modality (∨ᴸ and ∨ᴿ share a label)
    (t.form_id.split(".")[1], t.argument_form, "yes" if t.template_valid else "no")
    for t in modal_syllogism_templates() if t.modality == MODALITIES[0]
]
_ITEM_ROWS = schema.Rows(schema.ITEM)


def _by_form(*effects: float) -> dict[str, float]:
    """An effect per argument form, in ARGUMENT_FORMS' order (the valid forms first)."""
    return dict(zip((label for label, _, _ in ARGUMENT_FORMS), effects, strict=True))


@dataclass(frozen=True)
class Effects:
    intercept: float = 0.60
    modality: dict = field(default_factory=lambda: {"none": 0.0, "box": -0.15, "dia": 0.05})
    argform: dict = field(default_factory=lambda: _by_form(0.0, 0.10, -0.10, -0.05, -0.10, 0.0))
    perplexity_slope: float = -0.03  # per SD of perplexity
    model_sd: float = 0.05
    noise_sd: float = 0.12


def _items(n_interpretations: int) -> pd.DataFrame:
    rows = []
    item_id = 0
    for interpretation in range(n_interpretations):
        for modality in MODALITIES:
            for rule, argform, gold in FORMS:
                item_id += 1
                rows.append(_ITEM_ROWS.from_dict({  # the other columns derived as schema.ITEM declares, or blank
                    "item_id": item_id, "item_code": f"sim-{item_id}", "design": SYLLOGISMS,
                    "form_id": f"{modality}.{rule}.{'valid' if gold == 'yes' else 'fallacy'}", "modality": modality, "argform": argform,
                    "condition": "real", "interpretation_id": interpretation + 1,
                    "original_item_id": pd.NA, "gold": gold, "logical_form": f"{modality} {argform}",
                    "valid": gold == "yes",  # modal syllogisms: gold is the checker's verdict (no registry: no Django)
                }))
    frame = pd.DataFrame.from_records(rows, columns=list(ITEM_COLUMNS))
    for column in ("interpretation_id", "original_item_id"):
        frame[column] = frame[column].astype("Int64")
    return frame


def scores(n_models: int = 4, n_interpretations: int = 20, *, effects: Effects = Effects(),
           seed: int = 0) -> pd.DataFrame:
    """Model scores: soft accuracy from the effects, p(Yes)/p(No) and perplexity consistent with it."""
    rng = np.random.default_rng(seed)
    items = _items(n_interpretations)
    parts = []
    for index in range(n_models):
        frame = items.copy()
        frame["model"] = f"sim-model-{index + 1}"
        frame["run_id"] = index + 1
        log_ppl = rng.normal(2.3, 0.25, len(frame)) + rng.normal(0, 0.1)
        perplexity = np.exp(log_ppl)
        ppl_z = (perplexity - perplexity.mean()) / perplexity.std()
        mean = (effects.intercept + frame["modality"].map(effects.modality)
                + frame["argform"].map(effects.argform) + effects.perplexity_slope * ppl_z
                + rng.normal(0, effects.model_sd))
        soft = np.clip(mean + rng.normal(0, effects.noise_sd, len(frame)), 0.001, 0.999)
        mass = rng.uniform(0.5, 0.95, len(frame))
        p_gold = soft * mass
        yes_gold = frame["gold"] == "yes"
        frame["p_yes"] = np.where(yes_gold, p_gold, mass - p_gold)
        frame["p_no"] = mass - frame["p_yes"]
        frame["soft_acc"] = soft
        frame["rel_p_yes"] = frame["p_yes"] / mass
        frame["decision"] = np.where(frame["p_yes"] >= frame["p_no"], "yes", "no")
        frame["decision_rule"], frame["decision_relative"] = "relative", frame["decision"]
        frame["prompt_format"] = "raw"
        frame["correct"] = (frame["decision"] == frame["gold"]).astype(int)
        frame["perplexity"] = perplexity
        frame["prompt_tokens"] = rng.integers(60, 90, len(frame))
        frame["answer_mass"] = mass
        parts.append(frame)
    out = pd.concat(parts, ignore_index=True)
    for column in SCORE_COLUMNS:  # score columns of other designs (multiple-choice letters): blank here
        if column not in out:
            out[column] = np.nan
    return out[list(SCORE_COLUMNS)]


def trials(n_participants: int = 30, n_trials: int = 24, *, logit_effects: Effects | None = None,
           seed: int = 0) -> pd.DataFrame:
    """Human trials: correct ~ Bernoulli(logistic(intercept + modality + argform + rt slope + u_p))."""
    effects = logit_effects or Effects(
        intercept=1.0, modality={"none": 0.0, "box": -0.8, "dia": 0.3},
        argform=_by_form(0.0, 0.7, -0.5, -0.6, -0.9, -0.3),
        perplexity_slope=-0.2, model_sd=0.6,
    )
    rng = np.random.default_rng(seed)
    items = _items(max(1, n_trials // 24 + 1) * 4)
    rows = []
    for p in range(n_participants):
        chosen = items.sample(n=n_trials, random_state=int(rng.integers(1 << 31))).copy()
        log_rt = rng.normal(np.log(4000), 0.4, n_trials) + rng.normal(0, 0.2)
        rt_z = (log_rt - np.log(4000)) / 0.45
        eta = (effects.intercept + chosen["modality"].map(effects.modality)
               + chosen["argform"].map(effects.argform) + effects.perplexity_slope * rt_z
               + rng.normal(0, effects.model_sd))
        correct = rng.random(n_trials) < 1 / (1 + np.exp(-eta))
        chosen["participant"] = f"P{p + 1}"
        chosen["participant_status"] = "completed"
        chosen["is_preview"] = False
        chosen["is_simulated"] = False
        chosen["attention_failures"] = 0
        chosen["failed_attention"] = False
        chosen["key_mapping"] = "f_yes" if p % 2 else "j_yes"
        chosen["trial_index"] = np.arange(n_trials)
        chosen["correct"] = correct.astype(int)
        chosen["answer"] = np.where(correct == (chosen["gold"] == "yes"), "yes", "no")
        chosen["rt_ms"] = np.exp(log_rt)
        chosen["is_attention_check"] = False
        chosen["timed_out"] = False
        rows.append(chosen)
    out = pd.concat(rows, ignore_index=True)
    booleans = schema.of_type(schema.TRIAL, "boolean")
    for column in TRIAL_COLUMNS:  # what a browser adds (clock times, viewport, …): blank here
        if column not in out:
            out[column] = False if column in booleans and column != "template_valid" else None
    return out[list(TRIAL_COLUMNS)]


def always_yes(scores: pd.DataFrame) -> pd.DataFrame:
    """The scores of a model that answers "yes" to every item: right on every valid form, wrong on
    every invalid one (separation, issue 25)."""
    scores = scores.copy()
    scores["decision"] = "yes"
    scores["correct"] = (scores["gold"] == "yes").astype(int)
    return scores
