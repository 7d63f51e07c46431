"""Metrics for designs whose items come in linked pairs (seeds 000, 002 and 004). Pure functions.

* Matched-pair perturbations (002): the 2×2 table of (original, perturbed) correctness, the exact
  binomial test on discordant pairs when they are few and McNemar's z otherwise, a one-sided
  alternative named by the researcher, and Benjamini–Hochberg across respondent groups.
* RULEBREAKERS (000): paired accuracy τ (Eq. 1), τ on rulebreakers and on non-rulebreakers
  (Eq. 2–3), and mean confidence in a positive answer on each side (Π⁺, Eq. 5–6) with Welch's t-test.
* Dual-sided rules (004): a rule counts as correct only when the original is affirmed and the
  flipped conclusion denied.

Every statistic comes from a maintained library (statsmodels, scipy); the functions here only pick
the method the papers name and return the project's dataclasses.
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import partial

from scipy.stats import binomtest, ttest_ind
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


# --------------------------------------------------------------------------- 002: token bias


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


# --------------------------------------------------------------------------- 000: rulebreakers


@dataclass(frozen=True)
class RulebreakerAccuracy:
    paired: Proportion  # τ, Eq. (1)
    rulebreakers: Proportion  # τ_{D^R}, Eq. (2)
    non_rulebreakers: Proportion  # τ_{D^N}, Eq. (3)


def rulebreaker_accuracy(pairs: Iterable[tuple[bool, bool]]) -> RulebreakerAccuracy:
    """pairs: (rulebreaker answered correctly, its non-rulebreaker answered correctly)."""
    pairs = [(bool(r), bool(n)) for r, n in pairs]
    total = len(pairs)
    return RulebreakerAccuracy(
        paired=wilson(sum(r and n for r, n in pairs), total),
        rulebreakers=wilson(sum(r for r, _ in pairs), total),
        non_rulebreakers=wilson(sum(n for _, n in pairs), total),
    )


@dataclass(frozen=True)
class ConfidenceComparison:
    pi_non_rulebreakers: float  # Π⁺_{D^N}, Eq. (5)
    pi_rulebreakers: float  # Π⁺_{D^R}, Eq. (6)
    n_non_rulebreakers: int
    n_rulebreakers: int
    welch_t: float
    welch_df: float
    p_value: float


def positive_confidence(
    *, rulebreakers: Sequence[tuple[float, bool]], non_rulebreakers: Sequence[tuple[float, bool]]
) -> ConfidenceComparison:
    """Each entry: (p⁺(x), the respondent answered yes/true). Only positive answers count (D^yes).

    Welch's t-test (unequal variances, Welch–Satterthwaite df) compares the two means, two-sided:
    scipy.stats.ttest_ind(equal_var=False), as R's t.test(var.equal = FALSE). NaN when a side has
    fewer than two positive answers.
    """
    n_side = [p for p, said_yes in non_rulebreakers if said_yes]
    r_side = [p for p, said_yes in rulebreakers if said_yes]
    mean_n = sum(n_side) / len(n_side) if n_side else math.nan
    mean_r = sum(r_side) / len(r_side) if r_side else math.nan
    if len(n_side) < 2 or len(r_side) < 2:
        t = df = p = math.nan
    else:
        welch = ttest_ind(n_side, r_side, equal_var=False)
        # Both sides constant: scipy gives t = ±inf, p = 0 (different constants) or NaN (equal ones);
        # R's t.test stops with "data are essentially constant". Reported as NaN, as before.
        finite = math.isfinite(welch.statistic)
        t, df, p = (float(welch.statistic), float(welch.df), float(welch.pvalue)) if finite else (math.nan,) * 3
    return ConfidenceComparison(mean_n, mean_r, len(n_side), len(r_side), t, df, p)


# --------------------------------------------------------------------------- 004: dual-sided rules


def dual_sided_accuracy(rules: Iterable[tuple[bool, bool]]) -> Proportion:
    """rules: (original affirmed, flipped conclusion denied); correct only when both hold."""
    rules = list(rules)
    return wilson(sum(bool(a) and bool(d) for a, d in rules), len(rules))
