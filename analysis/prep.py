"""Exclusions, factor coding and predictor scaling: the steps between tidy frames and model fits.

Pure functions of DataFrames. Factors get ASCII level codes for R (the report shows the paper's
symbols through LABELS); continuous predictors are centred and scaled: perplexity is z-scored,
response time is log-transformed and then z-scored.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from experiments.schema import ARGFORM_CODES  # argument forms → R-safe codes, declared once (exported as argform_code)

from .rules import Exclusions

MODALITIES = ("none", "box", "dia")
VALID_FORMS = ("DS", "MP", "MT")
LABELS = {
    "none": "∅ (propositional)", "box": "□ (must)", "dia": "◇ (may)",
    "DS": "∨⊢ disjunctive syllogism", "MP": "→ᴸ⊢ modus ponens", "MT": "→ᴿ⊢ modus tollens",
    "AD": "∨⊬ affirming the disjunct", "AC": "→ᴸ⊬ affirming the consequent",
    "DA": "→ᴿ⊬ denying the antecedent",
}


def labels_add(labels: dict[str, str]) -> None:
    """Add a design's own factor levels' labels (a design package at start-up: 003's necessitation form)."""
    clash = {code for code, label in labels.items() if LABELS.get(code, label) != label}
    if clash:
        raise ValueError(f"level label(s) {', '.join(sorted(clash))} are declared already with another text")
    LABELS.update(labels)


def apply_exclusions(trials: pd.DataFrame, rules: Exclusions = Exclusions()) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Return (kept trials, a table of what each rule removed, in the order applied)."""
    frame = trials
    # the rules over one row each, declared once (experiments/report_rules.py, Exclusions.steps; the study page's
    # "usable (analysed)" count reads the same); failed_attention is the study's attention rule (frames.py)
    steps = [(step.rule, _matches(frame, step.when)) for step in rules.steps()]
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


def _matches(frame: pd.DataFrame, when) -> pd.Series:
    """Rows where any (column, test, value) of an Excluded step holds."""
    hit = pd.Series(False, index=frame.index)
    for column, test, value in when:
        values = frame[column].astype(bool) if value is True else frame[column]
        if test == "is":
            hit |= values == value
        elif test == "is not":
            hit |= values != value
        elif test == "below":
            hit |= values < value
        else:
            raise ValueError(f"unknown exclusion test {test!r}")
    return hit


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
