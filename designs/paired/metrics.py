"""The paired designs' own metrics (RULEBREAKERS, seed 000; dual-sided rules, seed 004). Pure functions.

* RULEBREAKERS (000): paired accuracy τ (Eq. 1), τ on rulebreakers and on non-rulebreakers
  (Eq. 2–3), and mean confidence in a positive answer on each side (Π⁺, Eq. 5–6) with Welch's t-test.
* Dual-sided rules (004): a rule counts as correct only when the original is affirmed and the
  flipped conclusion denied.

The shared statistics they rest on (Wilson's interval, the matched-pair test, Benjamini–Hochberg) are
analysis/proportions.py's; every statistic comes from a maintained library (statsmodels, scipy).
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from scipy.stats import ttest_ind

from analysis.proportions import Proportion, wilson


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
