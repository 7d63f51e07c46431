"""Metrics for designs whose items come in linked pairs (seeds 000, 002 and 004). Pure functions.

* Matched-pair perturbations (002): the 2×2 table of (original, perturbed) correctness, the exact
  binomial test on discordant pairs when they are few and McNemar's z otherwise, a one-sided
  alternative named by the researcher, and Benjamini–Hochberg across respondent groups.
* RULEBREAKERS (000): paired accuracy τ (Eq. 1), τ on rulebreakers and on non-rulebreakers
  (Eq. 2–3), and mean confidence in a positive answer on each side (Π⁺, Eq. 5–6) with Welch's t-test.
* Dual-sided rules (004): a rule counts as correct only when the original is affirmed and the
  flipped conclusion denied.
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

Z_95 = 1.959963984540054


@dataclass(frozen=True)
class Proportion:
    successes: int
    n: int
    estimate: float
    low: float
    high: float


def wilson(successes: int, n: int, z: float = Z_95) -> Proportion:
    """A proportion with its Wilson score interval (well-behaved at 0 and 1 and for small n)."""
    if n < 0 or not 0 <= successes <= n:
        raise ValueError(f"need 0 ≤ successes ≤ n, got {successes} of {n}")
    if n == 0:
        return Proportion(0, 0, math.nan, math.nan, math.nan)
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == n else min(1.0, centre + half)
    return Proportion(successes, n, p, low, high)


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


ALTERNATIVES = ("n12>n21", "n12<n21", "two-sided")


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

    With n = n12 + n21 ≤ exact_max, n21 ~ Binomial(n, ½) under H0 and the p-value is its tail;
    otherwise z0 = (n21 − n12)/√(n21 + n12) (McNemar's statistic) against the standard normal.
    alternative "n12>n21": the original is solved more often than its perturbation (token bias
    that perturbation breaks); "n12<n21": the reverse; or "two-sided".
    """
    if alternative not in ALTERNATIVES:
        raise ValueError(f"alternative must be one of {', '.join(ALTERNATIVES)}, not {alternative!r}")
    n = table.discordant
    if n == 0:
        return MatchedPairTest(table, alternative, "no discordant pairs", math.nan, 1.0)
    if n <= exact_max:
        lower = _binom_cdf(table.n21, n)  # P(X ≤ n21)
        upper = 1.0 - _binom_cdf(table.n21 - 1, n)  # P(X ≥ n21)
        p = {"n12>n21": lower, "n12<n21": upper, "two-sided": min(1.0, 2 * min(lower, upper))}
        return MatchedPairTest(table, alternative, "exact binomial", float(table.n21), p[alternative])
    z = (table.n21 - table.n12) / math.sqrt(n)
    upper, lower = _normal_sf(z), _normal_sf(-z)
    p = {"n12>n21": lower, "n12<n21": upper, "two-sided": min(1.0, 2 * min(lower, upper))}
    return MatchedPairTest(table, alternative, "McNemar z", z, p[alternative])


def _binom_cdf(k: int, n: int) -> float:
    if k < 0:
        return 0.0
    return min(1.0, sum(math.comb(n, i) for i in range(0, min(k, n) + 1)) / 2**n)


def _normal_sf(z: float) -> float:
    return 0.5 * math.erfc(z / math.sqrt(2))


@dataclass(frozen=True)
class Adjusted:
    p_value: float
    adjusted: float
    reject: bool


def benjamini_hochberg(p_values: Sequence[float], alpha: float = 0.05) -> list[Adjusted]:
    """Step-up FDR control: reject the k smallest p-values, k = max{i : p_(i) ≤ iα/m}."""
    if not 0 < alpha < 1:
        raise ValueError("alpha must lie strictly between 0 and 1")
    m = len(p_values)
    if m == 0:
        return []
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted = [0.0] * m
    running = 1.0
    for rank in range(m, 0, -1):
        i = order[rank - 1]
        running = min(running, p_values[i] * m / rank)
        adjusted[i] = running
    cutoff = 0
    for rank, i in enumerate(order, start=1):
        if p_values[i] <= rank * alpha / m:
            cutoff = rank
    rejected = set(order[:cutoff])
    return [Adjusted(p_values[i], adjusted[i], i in rejected) for i in range(m)]


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

    Welch's t-test (unequal variances, Welch–Satterthwaite df) compares the two means, two-sided.
    """
    n_side = [p for p, said_yes in non_rulebreakers if said_yes]
    r_side = [p for p, said_yes in rulebreakers if said_yes]
    mean_n = sum(n_side) / len(n_side) if n_side else math.nan
    mean_r = sum(r_side) / len(r_side) if r_side else math.nan
    t, df, p = _welch(n_side, r_side)
    return ConfidenceComparison(mean_n, mean_r, len(n_side), len(r_side), t, df, p)


def _welch(a: Sequence[float], b: Sequence[float]) -> tuple[float, float, float]:
    if len(a) < 2 or len(b) < 2:
        return math.nan, math.nan, math.nan
    ma, mb = sum(a) / len(a), sum(b) / len(b)
    va = sum((x - ma) ** 2 for x in a) / (len(a) - 1)
    vb = sum((x - mb) ** 2 for x in b) / (len(b) - 1)
    sa, sb = va / len(a), vb / len(b)
    if sa + sb == 0:
        return math.nan, math.nan, math.nan
    t = (ma - mb) / math.sqrt(sa + sb)
    df = (sa + sb) ** 2 / (sa**2 / (len(a) - 1) + sb**2 / (len(b) - 1))
    from scipy.stats import t as student_t  # analysis dependency group only

    return t, df, float(2 * student_t.sf(abs(t), df))


# --------------------------------------------------------------------------- 004: dual-sided rules


def dual_sided_accuracy(rules: Iterable[tuple[bool, bool]]) -> Proportion:
    """rules: (original affirmed, flipped conclusion denied); correct only when both hold."""
    rules = list(rules)
    return wilson(sum(bool(a) and bool(d) for a, d in rules), len(rules))
