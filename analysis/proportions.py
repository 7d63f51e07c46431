"""Proportions, matched pairs and multiple testing: the statistics every design's report shares. Pure functions.

* A proportion with its interval (`proportion`; `wilson`, the score interval R's prop.test(correct = FALSE)
  gives), the independent case of analysis/clustered.py's unit-clustered intervals.
* Matched pairs: the 2×2 table of (first, second) correctness (`contingency`), and the test of marginal
  homogeneity seed 002 names (`matched_pair_test`): the exact binomial test on the discordant pairs when they
  are few, McNemar's z otherwise, with a one-sided alternative named by the researcher.
* Multiple testing: `adjust_p_values` (statsmodels' multipletests), `benjamini_hochberg` its FDR step-up.

Every statistic comes from a maintained library (statsmodels, scipy); the functions here only pick the
method and return the project's dataclasses. A design's own metrics live in its package
(designs/<family>/metrics.py) and build on these.
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import partial

from scipy.stats import binomtest
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import proportion_confint, proportions_ztest

from .rules import ALTERNATIVES


@dataclass(frozen=True)
class Proportion:
    successes: int
    n: int
    estimate: float
    low: float
    high: float


def proportion(successes: int, n: int, alpha: float = 0.05, *, method: str = "wilson") -> Proportion:
    """A proportion with its (1 − alpha) interval from statsmodels' proportion_confint(method=…).

    At 0 and n successes the Wilson interval's end is exactly 0 and 1; the library's floating-point
    arithmetic leaves a residue there (2.8e-17, 1 − 1.1e-16), so those two ends are set exactly.
    """
    if n < 0 or not 0 <= successes <= n:
        raise ValueError(f"need 0 ≤ successes ≤ n, got {successes} of {n}")
    if n == 0:
        return Proportion(0, 0, math.nan, math.nan, math.nan)
    low, high = proportion_confint(successes, n, alpha=alpha, method=method)
    low = 0.0 if successes == 0 else float(low)
    high = 1.0 if successes == n else float(high)
    return Proportion(successes, n, successes / n, low, high)


# The Wilson score interval (well-behaved at 0 and 1 and for small n), without continuity
# correction: R's prop.test(x, n, correct = FALSE)$conf.int.
wilson = partial(proportion, method="wilson")


# --------------------------------------------------------------------------- matched pairs (002's test)


@dataclass(frozen=True)
class Contingency:
    """Rows: the original item right (1) or wrong (2); columns: the perturbed item right / wrong."""

    n11: int
    n12: int
    n21: int
    n22: int

    @property
    def n(self) -> int:
        return self.n11 + self.n12 + self.n21 + self.n22

    @property
    def discordant(self) -> int:
        return self.n12 + self.n21


def contingency(pairs: Iterable[tuple[bool, bool]]) -> Contingency:
    """pairs: (original answered correctly, perturbed answered correctly) per matched pair."""
    counts = {(True, True): 0, (True, False): 0, (False, True): 0, (False, False): 0}
    for original, perturbed in pairs:
        counts[(bool(original), bool(perturbed))] += 1
    return Contingency(
        counts[(True, True)], counts[(True, False)], counts[(False, True)], counts[(False, False)]
    )


@dataclass(frozen=True)
class MatchedPairTest:
    table: Contingency
    alternative: str
    method: str  # "exact binomial" or "McNemar z"
    statistic: float  # z for McNemar; n21 for the exact test
    p_value: float


def matched_pair_test(
    table: Contingency, *, alternative: str = "n12>n21", exact_max: int = 10
) -> MatchedPairTest:
    """002's test of marginal homogeneity (π12 = π21) on the discordant pairs.

    With n = n12 + n21 ≤ exact_max, n21 ~ Binomial(n, ½) under H0 and the p-value is its tail
    (scipy.stats.binomtest); otherwise z0 = (n21 − n12)/√(n21 + n12), McNemar's statistic without
    continuity correction, against the standard normal. z0 is the score test of n21/n = ½
    (statsmodels' proportions_ztest with the null variance, prop_var=½); its square is
    statsmodels' mcnemar(exact=False, correction=False) χ². Both library calls take the one-sided
    alternatives 002 states, which statsmodels' mcnemar (two-sided only) does not.
    alternative "n12>n21": the original is solved more often than its perturbation (token bias
    that perturbation breaks); "n12<n21": the reverse; or "two-sided".
    """
    if alternative not in ALTERNATIVES:
        raise ValueError(f"alternative must be one of {', '.join(ALTERNATIVES)}, not {alternative!r}")
    n = table.discordant
    if n == 0:
        return MatchedPairTest(table, alternative, "no discordant pairs", math.nan, 1.0)
    if n <= exact_max:
        exact = binomtest(table.n21, n, 0.5, alternative=_BINOMTEST[alternative])
        return MatchedPairTest(table, alternative, "exact binomial", float(table.n21), float(exact.pvalue))
    z, p = proportions_ztest(table.n21, n, value=0.5, alternative=_ZTEST[alternative], prop_var=0.5)
    return MatchedPairTest(table, alternative, "McNemar z", float(z), float(p))


# n21 is the count tested against Binomial(n, ½): "n12>n21" expects it small, "n12<n21" large.
_BINOMTEST = {"n12>n21": "less", "n12<n21": "greater", "two-sided": "two-sided"}
_ZTEST = {"n12>n21": "smaller", "n12<n21": "larger", "two-sided": "two-sided"}


@dataclass(frozen=True)
class Adjusted:
    p_value: float
    adjusted: float
    reject: bool


def adjust_p_values(p_values: Sequence[float], alpha: float = 0.05, *, method: str = "fdr_bh") -> list[Adjusted]:
    """Multiple-testing correction by statsmodels' multipletests(method=…), in the input order."""
    if not 0 < alpha < 1:
        raise ValueError("alpha must lie strictly between 0 and 1")
    if len(p_values) == 0:
        return []
    reject, adjusted, _, _ = multipletests(list(p_values), alpha=alpha, method=method)
    return [Adjusted(float(p), float(a), bool(r)) for p, a, r in zip(p_values, adjusted, reject)]


# Benjamini–Hochberg step-up FDR control: reject the k smallest p-values, k = max{i : p_(i) ≤ iα/m};
# adjusted p-values as R's p.adjust(p, method = "BH").
benjamini_hochberg = partial(adjust_p_values, method="fdr_bh")
