"""Multiple-choice metrics of seed 001 (DivLogicEval §2.2, Appendices F–G). Pure functions.

An *instance* is one question answered in all four circular mutants by one respondent (a model run,
or a participant who saw every mutant). Options are identified by their place in the original order
(0..3), so a mutant's answer letter is mapped back through its rotation (pair_role rotK: the options
rotated left by K, so letter i holds original option (i + K) mod 4).

* Accuracy: correct on the original order (the rot0 mutant).
* Circular: correct on all four mutants.
* PartialCircular (Eq. 2): c/4 · (1 + Σ_o p(o) log₄ p(o)), c the mutants answered correctly and p the
  frequency distribution of the predicted options over the four mutants.
* PC_α (Appendix F): c/4 · [(1 − α) + α(1 + Σ p log₄ p)]; α = 1 is PartialCircular, α = 0 is c/4.
* Coefficient of variation across repeated runs (Table 2): SD / mean × 100, the SD over the runs
  with divisor n (Table 2's accuracy row, 3.3, is reproduced that way; with n − 1 it would be 3.7).
"""
from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from analysis.metrics import bootstrap_mean

LETTERS = ("A", "B", "C", "D")
N_OPTIONS = 4
ROLE = re.compile(r"^rot([0-3])$")


def shift_of(role: str) -> int | None:
    """'rot2' → 2; anything else → None (not a circular mutant)."""
    match = ROLE.match(str(role or ""))
    return int(match.group(1)) if match else None


def original_option(letter: str, shift: int) -> int | None:
    """The original-order index of the option at `letter` in the mutant rotated left by `shift`."""
    if letter not in LETTERS:
        return None
    return (LETTERS.index(letter) + shift) % N_OPTIONS


def entropy_sum(predicted: Sequence[int]) -> float:
    """Σ_o p(o) log₄ p(o) over the frequency distribution of the predicted options (0 ≥ value ≥ −1)."""
    counts = Counter(predicted)
    n = len(predicted)
    return math.fsum((k / n) * math.log(k / n, N_OPTIONS) for k in counts.values()) if n else 0.0


def partial_circular(correct: int, predicted: Sequence[int], alpha: float = 1.0) -> float:
    """Eq. (2) with Appendix F's α: c/4 · [(1 − α) + α(1 + Σ p log₄ p)]."""
    if not 0.0 <= alpha <= 1.0:
        raise ValueError(f"α must lie in [0, 1] (got {alpha})")
    if not 0 <= correct <= N_OPTIONS:
        raise ValueError(f"c must lie in 0..{N_OPTIONS} (got {correct})")
    return correct / N_OPTIONS * ((1.0 - alpha) + alpha * (1.0 + entropy_sum(predicted)))


@dataclass(frozen=True)
class Instance:
    """One question in its four mutants (index = the rotation), answered by one respondent."""

    question: str
    respondent: str
    qtype: str
    predicted: tuple[int, ...]  # the original-order option chosen in each mutant
    gold: int  # the correct option's original-order index

    @property
    def correct(self) -> tuple[bool, ...]:
        return tuple(p == self.gold for p in self.predicted)

    @property
    def c(self) -> int:
        return sum(self.correct)

    @property
    def accuracy(self) -> float:
        return float(self.correct[0])

    @property
    def circular(self) -> float:
        return float(self.c == N_OPTIONS)

    def pc(self, alpha: float = 1.0) -> float:
        return partial_circular(self.c, self.predicted, alpha)


def instances(frame: pd.DataFrame, *, answer: str, respondent: str) -> tuple[list[Instance], int]:
    """Complete instances from a tidy frame (one row per mutant answered: pair_id, pair_role, `answer`
    letter, gold letter, type) grouped by (`respondent`, pair_id); also how many groups were incomplete
    (fewer than four answered mutants)."""
    out: list[Instance] = []
    incomplete = 0
    if frame.empty:
        return out, 0
    data = frame.assign(_shift=frame["pair_role"].map(shift_of)).dropna(subset=["_shift"])
    for (who, question), group in data.groupby([respondent, "pair_id"], sort=True):
        by_shift = {int(s): row for s, row in zip(group["_shift"], group.itertuples(index=False))}
        predicted = [original_option(getattr(by_shift[k], answer), k) if k in by_shift else None for k in range(4)]
        if any(p is None for p in predicted):
            incomplete += 1
            continue
        first = by_shift[0]
        gold = original_option(first.gold, 0)
        out.append(Instance(question=str(question), respondent=str(who), qtype=str(getattr(first, "qtype", "")),
                            predicted=tuple(predicted), gold=gold))
    return out, incomplete


@dataclass(frozen=True)
class Estimate:
    measure: str
    n: int
    estimate: float
    low: float
    high: float


def summarise(found: Sequence[Instance], *, alphas: Iterable[float] = (0.5,), cluster: bool = False,
              seed: int = 0) -> list[Estimate]:
    """Accuracy, Circular, PartialCircular and PC_α over instances, with percentile-bootstrap 95% CIs
    (questions resampled; respondents resampled when `cluster`, e.g. participants)."""
    if not found:
        return []
    clusters = [i.respondent for i in found] if cluster else None
    measures = [("accuracy", [i.accuracy for i in found]), ("circular", [i.circular for i in found]),
                ("partial_circular", [i.pc() for i in found])]
    measures += [(f"pc_alpha_{alpha:g}", [i.pc(alpha) for i in found]) for alpha in alphas]
    rows = []
    for name, values in measures:
        mean, low, high = bootstrap_mean(values, clusters, seed=seed)
        rows.append(Estimate(name, len(values), mean, low, high))
    return rows


def by_type(found: Sequence[Instance], **options) -> list[tuple[str, Estimate]]:
    """summarise() overall ("all") and per question type (3e1c, 3c1e, missing, …)."""
    rows = [("all", e) for e in summarise(found, **options)]
    for qtype in sorted({i.qtype for i in found if i.qtype}):
        rows += [(qtype, e) for e in summarise([i for i in found if i.qtype == qtype], **options)]
    return rows


def coefficient_of_variation(values: Sequence[float]) -> float:
    """SD / mean × 100 with the SD's divisor n (001 Table 2); NaN for fewer than two values or mean 0."""
    array = np.asarray(values, dtype=float)
    if array.size < 2 or array.mean() == 0:
        return math.nan
    return float(array.std(ddof=0) / array.mean() * 100.0)


def run_variation(per_run: pd.DataFrame) -> pd.DataFrame:
    """Table 2: per model with several runs, each measure's value per run and its CV across runs.

    `per_run` has columns model, run_id, measure, estimate (one row per run and measure)."""
    rows = []
    for (model, measure), group in per_run.groupby(["model", "measure"], sort=True):
        if group["run_id"].nunique() < 2:
            continue
        values = group.sort_values("run_id")["estimate"].to_list()
        rows.append((model, measure, len(values), float(np.mean(values)), coefficient_of_variation(values),
                     ", ".join(f"{v:.4g}" for v in values)))
    return pd.DataFrame(rows, columns=["model", "measure", "runs", "mean", "cv_percent", "per_run"])
