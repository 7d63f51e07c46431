"""Exclusions, factor coding and predictor scaling: the steps between tidy frames and model fits.

Pure functions of DataFrames. Factors get ASCII level codes for R and the levels' order their designs declare
(the design registry's Factor levels; the report shows each code's label through LABELS); continuous
predictors are centred and scaled: perplexity is z-scored, response time is log-transformed and then z-scored.
"""
from __future__ import annotations

from collections.abc import Iterator, Mapping

import numpy as np
import pandas as pd

from experiments import design_registry as registry

from .rules import Exclusions


class _Labels(Mapping):
    """Level code → how the report shows it, as the designs declare (registry.level_labels), read when asked:
    the designs register after this module is imported."""

    def __getitem__(self, code: str) -> str:
        return registry.level_labels()[code]

    def __iter__(self) -> Iterator[str]:
        return iter(registry.level_labels())

    def __len__(self) -> int:
        return len(registry.level_labels())


LABELS = _Labels()


def codes(factor: str, values: pd.Series) -> pd.Series:
    """A factor's values as the R-safe codes their designs declare (a value without one is its own code)."""
    found = {level.value: level.code for level in registry.levels(factor)}
    return values.map(lambda value: found.get(value, value))


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


def coded(frame: pd.DataFrame, factor: str, *, order: tuple[str, ...] | None = None) -> pd.Categorical:
    """`factor`'s values as the R-safe codes their designs declare, an ordered categorical (the first level the
    models' reference): the declared codes first, in their order (or `order`), then any others sorted; only the
    levels present."""
    values = codes(factor, frame[factor])
    present = set(values.dropna())
    order = order or tuple(dict.fromkeys([*(level.code for level in registry.levels(factor)), *sorted(present)]))
    return pd.Categorical(values, categories=[v for v in order if v in present])
