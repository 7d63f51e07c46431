"""Separation: answers that the fixed effects of a binomial model predict perfectly, so maximum
likelihood sends a coefficient to infinity (issue 25). Two checks, both run on a data.frame already
in R by the one fitting rule (analysis/rbridge.py, `fit_r`), for the report and for every study the
power analysis simulates alike:

- by cells (`cells_r`, R's duet_separation): a combination of the levels of a factors-only term
  whose answers are all 0 or all 1;
- by linear programming (`perfectly_predicted_r`): a direction of the fixed effects that separates
  the answers where no single cell shows it.
"""
from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from .rsession import call, factors_for_r, r_session, to_pandas, to_r


@dataclass(frozen=True)
class SeparatedCell:
    """A cell of the fixed effects whose answers are all 0 or all 1 (R's duet_separation)."""

    term: str
    factors: tuple[str, ...]
    levels: tuple[str, ...]
    n: int
    ones: int

    def covers(self, other: "SeparatedCell") -> bool:
        """This cell holds `other` (its factors are a subset, at the same levels) and says it first."""
        mine = dict(zip(self.factors, self.levels))
        theirs = dict(zip(other.factors, other.levels))
        return self != other and all(theirs.get(k) == v for k, v in mine.items())

    def words(self, response: str) -> str:
        where = ", ".join(f"{factor} {level}" for factor, level in zip(self.factors, self.levels))
        what = "correct" if response == "correct" else f"with {response} = 1"
        if self.ones == self.n:
            return f"{where}: all {self.n} answers {what}"
        return f"{where}: none of {self.n} answers {what}"


def separation(formula: str, data: pd.DataFrame) -> list[SeparatedCell]:
    """The cells of the formula's fixed effects (every combination of the levels of a factors-only
    term) whose answers are all 0 or all 1, each once: a cell inside a listed one is left out (an
    agent always right is not listed again per level of another factor)."""
    with r_session() as r:
        return cells_r(r, formula, to_r(r, factors_for_r(data)))


def cells_r(r, formula: str, frame) -> list[SeparatedCell]:
    """`separation` on a data.frame already in R (the caller holds the R session)."""
    table = to_pandas(r, call("duet_separation", formula, frame))
    cells = [SeparatedCell(term=row.term, factors=tuple(row.vars.split("\r")), levels=tuple(row.values.split("\r")),
                           n=int(row.n), ones=int(row.ones)) for row in table.itertuples()]
    return [c for c in cells if not any(other.covers(c) for other in cells)]


def perfectly_predicted_r(r, formula: str, frame) -> int:
    """How many answers some direction of the fixed effects predicts perfectly: 0 when the fixed part
    does not separate the answers. The linear program of Konis (2007): with s = 2y − 1 and A = s·X,
    separation (complete or quasi-complete) is a β with Aβ ≥ 0 and Aβ ≠ 0; maximise Σ Aβ over
    −1 ≤ β ≤ 1 (rows with equal (x, y) merged in R and weighted). Catches what no single cell shows (an
    additive model's "staircase", a covariate that splits the answers)."""
    import numpy as np
    from scipy.optimize import linprog

    result = call("duet_model_matrix", formula, frame)
    if result is r.ro.NULL or result is r.ro.rinterface.NULL:
        return 0
    table = to_pandas(r, result)
    counts = table.pop(".n").to_numpy(dtype=float)
    rows = table.to_numpy(dtype=float)
    scale = np.maximum(np.abs(rows).max(axis=0), 1e-12)  # columns on one scale: the tolerance means the same
    rows = rows / scale
    found = linprog(-(counts @ rows), A_ub=-rows, b_ub=np.zeros(len(rows)), bounds=[(-1, 1)] * rows.shape[1],
                    method="highs")
    if found.status != 0 or -found.fun <= 1e-7 * counts.sum():
        return 0
    return int(counts[rows @ found.x > 1e-7].sum())
