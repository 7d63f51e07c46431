"""Intervals and tests that respect the sampling unit (issue 25). Pure functions.

Several answers can share one independent unit: the phrasings of one linked pair or of one rule (a design's
prompt variants), a person's pairs. Treating them as independent gives intervals and
p-values that are far too small. The functions here take each answer's cluster and:

* `proportion`: when every cluster holds one answer, the Wilson interval on them (the papers'
  independent case); otherwise a GEE logistic model with an intercept only, independence working
  correlation and the robust sandwich variance clustered on the unit (in closed form, equal to
  statsmodels' GEE and to R's ``geepack::geeglm(y ~ 1, id = cluster, family = binomial,
  corstr = "independence")``), its Wald
  interval on the logit scale mapped back to a proportion. The estimate is the share of all answers
  (each cluster weighted by its answers); the interval's n is the number of clusters. Where every
  answer is right (or every answer wrong) the logit is infinite and the sandwich variance zero, so
  the row falls back to the Wilson interval with n = the number of clusters, each counted once (the
  smallest effective sample size the data allow), and its note says so.
* `mean_difference`: the difference of two means (Π⁺ on the two sides of a pair) with the sandwich
  variance clustered on the unit (GEE gaussian, independence: the pooled means; geepack the same).
* `matched_pair_test`: 002's test of marginal homogeneity. With one matched pair per cluster it is
  exactly the paper's (exact binomial on the discordant pairs up to exact_max, else McNemar's z).
  With several pairs in a cluster it is the clustered McNemar test of Durkalski et al. (2003),
  z = Σ_k (c_k − b_k) / √Σ_k (c_k − b_k)², b_k and c_k the cluster's right→wrong and wrong→right
  pairs (it reduces to McNemar's z with one pair per cluster); when at most exact_max clusters
  have c_k ≠ b_k, the exact randomisation test of Σ_k (c_k − b_k) that flips each cluster's sign
  (which reduces to the exact binomial test with one pair per cluster).
"""
from __future__ import annotations

import itertools
import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
from scipy.stats import norm
from statsmodels.stats.proportion import proportion_confint

from . import proportions
from .rules import ALTERNATIVES

WILSON = "Wilson (one answer per unit)"
GEE = "GEE logit, independence, sandwich SE clustered by unit"
FEW = 10  # fewer units than this (in all, or with a right / a wrong answer) and a sandwich interval is rough
WILSON_UNITS = "Wilson over the units, each counted once (every answer alike: the logit is infinite)"


@dataclass(frozen=True)
class ClusteredProportion:
    successes: int  # right answers (over every answer)
    answers: int  # answers
    n: int  # clusters: the independent units the interval rests on
    estimate: float
    low: float
    high: float
    method: str
    note: str = ""


def _groups(clusters: Sequence) -> np.ndarray:
    return pd.factorize(pd.Series(list(clusters), dtype=object).astype(str))[0]


def proportion(values: Sequence[bool], clusters: Sequence, alpha: float = 0.05, *, unit: str = "unit") -> ClusteredProportion:
    """The share of `values` that are true, its (1 − alpha) interval resting on the clusters."""
    y = np.asarray([bool(v) for v in values], dtype=float)
    if len(y) != len(clusters):
        raise ValueError("need one cluster per answer")
    groups = _groups(clusters)
    answers, k = len(y), int(y.sum())
    n = int(groups.max() + 1) if answers else 0
    if answers == 0:
        return ClusteredProportion(0, 0, 0, math.nan, math.nan, math.nan, "", "no answers")
    estimate = k / answers
    if n == answers:  # one answer per unit: independent observations
        p = proportions.wilson(k, n, alpha)
        return ClusteredProportion(k, answers, n, estimate, p.low, p.high, WILSON)
    if k in (0, answers):
        p = proportions.wilson(0 if k == 0 else n, n, alpha)
        side = "right" if k else "wrong"
        return ClusteredProportion(k, answers, n, estimate, p.low, p.high, WILSON_UNITS,
                                   f"every answer {side}: Wilson interval over the {n} {unit}s, each counted once")
    if n < 2:
        return ClusteredProportion(k, answers, n, estimate, math.nan, math.nan, GEE,
                                   f"one {unit}: no interval (a clustered interval needs at least two {unit}s)")
    logit, se = _gee_intercept(y, groups)
    if not se > 1e-12:  # every unit has the same share: no between-unit variation to measure
        low, high = proportion_confint(estimate * n, n, alpha=alpha, method="wilson")
        return ClusteredProportion(k, answers, n, estimate, float(low), float(high), WILSON_UNITS,
                                   f"every {unit} has the same share of right answers (the sandwich variance is 0): "
                                   f"Wilson interval over the {n} {unit}s, each counted once")
    z = float(norm.ppf(1 - alpha / 2))
    low, high = _expit(logit - z * se), _expit(logit + z * se)
    notes = []
    if n < FEW:
        notes.append(f"only {n} {unit}s: the sandwich interval is too narrow with few clusters")
    right = np.bincount(groups, weights=y, minlength=n)
    with_right, with_wrong = int((right > 0).sum()), int((right < np.bincount(groups, minlength=n)).sum())
    if min(with_right, with_wrong) < FEW:
        side = "a right" if with_right < with_wrong else "a wrong"
        notes.append(f"only {min(with_right, with_wrong)} {unit}(s) have {side} answer: the interval rests on them "
                     "and is rough")
    note = "; ".join(notes)
    return ClusteredProportion(k, answers, n, estimate, low, high, GEE, note)


def _expit(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


def _gee_intercept(y: np.ndarray, groups: np.ndarray) -> tuple[float, float]:
    """logit(p̂) and its robust SE: the GEE logit with an intercept only and independence working
    correlation, whose estimating equation Σ(y − p) = 0 gives p = the share of all answers, and whose
    sandwich variance is Σ_k (Σ_j y_kj − p)² / (N p (1 − p))² (bread N p(1 − p), meat the squared
    cluster sums of the score). In closed form because statsmodels' GEE takes ~0.1 s a fit and a
    table has hundreds; tests check it against statsmodels' GEE on random data and against geepack."""
    p = float(y.mean())
    residual = np.bincount(groups, weights=y - p)
    bread = len(y) * p * (1 - p)
    return math.log(p / (1 - p)), math.sqrt(float(np.sum(residual**2))) / bread


def gee_intercept_statsmodels(y: np.ndarray, groups: np.ndarray) -> tuple[float, float]:
    """The same fit by statsmodels' GEE (Binomial, Independence, robust covariance): the check on the closed form."""
    import statsmodels.api as sm

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = sm.GEE(y, np.ones((len(y), 1)), groups=groups, family=sm.families.Binomial(),
                     cov_struct=sm.cov_struct.Independence()).fit()
        return float(fit.params[0]), float(fit.bse[0])


@dataclass(frozen=True)
class ClusteredDifference:
    mean_a: float
    mean_b: float
    n_a: int
    n_b: int
    clusters: int
    difference: float  # mean_a − mean_b
    se: float
    z: float
    p_value: float
    note: str = ""


def mean_difference(values: Sequence[float], is_b: Sequence[bool], clusters: Sequence, *, unit: str = "unit") -> ClusteredDifference:
    """Mean of side a minus mean of side b, the Wald z-test with the sandwich variance clustered on the units
    (GEE gaussian, independence working correlation; geepack's geeglm(v ~ a, id = cluster) the same)."""
    v = np.asarray(values, dtype=float)
    b = np.asarray([bool(x) for x in is_b], dtype=bool)
    groups = _groups(clusters)
    n_a, n_b = int((~b).sum()), int(b.sum())
    mean_a = float(v[~b].mean()) if n_a else math.nan
    mean_b = float(v[b].mean()) if n_b else math.nan
    n = int(groups.max() + 1) if len(v) else 0
    nan = ClusteredDifference(mean_a, mean_b, n_a, n_b, n, mean_a - mean_b, math.nan, math.nan, math.nan)
    if n_a < 2 or n_b < 2 or n < 2:
        return replace(nan, note=f"needs two answers on each side from at least two {unit}s")
    if float(np.ptp(v)) == 0.0:
        return replace(nan, note="every value is the same on both sides: nothing to test")
    estimate, se = _gee_difference(v, ~b, groups)
    if not se > 1e-12:
        return replace(nan, note="no variation to test (the sandwich variance is 0)")
    z = estimate / se
    return ClusteredDifference(mean_a, mean_b, n_a, n_b, n, estimate, se, z, float(2 * norm.sf(abs(z))))


def _gee_difference(v: np.ndarray, a: np.ndarray, groups: np.ndarray) -> tuple[float, float]:
    """The slope of v ~ 1 + a (a: side a) and its robust SE: GEE gaussian with independence working
    correlation is least squares, its sandwich (X'X)⁻¹ Σ_k X_k'e_k e_k'X_k (X'X)⁻¹ (no small-sample factor,
    as geepack). Closed form for speed, checked against statsmodels' GEE and geepack in the tests."""
    x = np.column_stack([np.ones(len(v)), a.astype(float)])
    bread = np.linalg.inv(x.T @ x)
    beta = bread @ x.T @ v
    scores = x * (v - x @ beta)[:, None]
    sums = np.column_stack([np.bincount(groups, weights=scores[:, j]) for j in range(2)])
    cov = bread @ (sums.T @ sums) @ bread
    return float(beta[1]), math.sqrt(max(float(cov[1, 1]), 0.0))


def gee_difference_statsmodels(v: np.ndarray, a: np.ndarray, groups: np.ndarray) -> tuple[float, float]:
    """The same fit by statsmodels' GEE (Gaussian, Independence, robust covariance)."""
    import statsmodels.api as sm

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = sm.GEE(v, np.column_stack([np.ones(len(v)), a.astype(float)]), groups=groups,
                     family=sm.families.Gaussian(), cov_struct=sm.cov_struct.Independence()).fit()
        return float(fit.params[1]), float(fit.bse[1])


@dataclass(frozen=True)
class ClusteredMatchedPairTest:
    table: proportions.Contingency  # over every matched pair
    clusters: int  # units holding matched pairs
    n: int  # units the test rests on: discordant pairs (one pair per unit) or units with c_k ≠ b_k
    alternative: str
    method: str
    statistic: float
    p_value: float


PAPER = "as paper 002 (one pair per unit)"


def matched_pair_test(pairs: Sequence[tuple[bool, bool]], clusters: Sequence, *, alternative: str = "n12>n21",
                      exact_max: int = 10) -> ClusteredMatchedPairTest:
    """pairs: (original right, perturbed right) per matched pair; clusters: the unit of each pair."""
    if alternative not in ALTERNATIVES:
        raise ValueError(f"alternative must be one of {', '.join(ALTERNATIVES)}, not {alternative!r}")
    pairs = [(bool(o), bool(p)) for o, p in pairs]
    if len(pairs) != len(clusters):
        raise ValueError("need one cluster per matched pair")
    table = proportions.contingency(pairs)
    groups = _groups(clusters)
    count = int(groups.max() + 1) if pairs else 0
    if count == len(pairs):  # one pair per unit: exactly the paper's test
        test = proportions.matched_pair_test(table, alternative=alternative, exact_max=exact_max)
        return ClusteredMatchedPairTest(table, count, table.discordant, alternative, f"{test.method}, {PAPER}",
                                        test.statistic, test.p_value)
    # d_k = c_k − b_k: the cluster's wrong→right minus right→wrong pairs (n21 − n12 within the cluster)
    d = np.zeros(count)
    for (original, perturbed), g in zip(pairs, groups):
        if original != perturbed:
            d[g] += 1 if perturbed else -1
    d = d[d != 0]
    if len(d) == 0:
        return ClusteredMatchedPairTest(table, count, 0, alternative, "no net discordance in any unit", math.nan, 1.0)
    if len(d) <= exact_max:
        total = float(d.sum())
        sums = np.array([float(np.dot(signs, np.abs(d))) for signs in itertools.product((-1, 1), repeat=len(d))])
        tol = 1e-9
        if alternative == "n12>n21":
            p = float(np.mean(sums <= total + tol))
        elif alternative == "n12<n21":
            p = float(np.mean(sums >= total - tol))
        else:
            p = float(np.mean(np.abs(sums) >= abs(total) - tol))
        return ClusteredMatchedPairTest(table, count, len(d), alternative,
                                        "exact sign-flip randomisation over units", total, p)
    z = float(d.sum() / math.sqrt(float(np.sum(d * d))))
    p = {"n12>n21": norm.cdf(z), "n12<n21": norm.sf(z), "two-sided": 2 * norm.sf(abs(z))}[alternative]
    return ClusteredMatchedPairTest(table, count, len(d), alternative, "clustered McNemar z (Durkalski 2003)", z, float(p))
