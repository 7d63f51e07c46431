"""The pair statistics' library wrappers against golden values computed independently in R.

Every number below was printed by R 4.2.2 (`Rscript`, `sprintf("%.17g", …)`) with the call quoted
beside it; none was computed by the code under test or by the Python libraries it wraps.
"""
from __future__ import annotations

import pytest

from analysis.proportions import Contingency, benjamini_hochberg, matched_pair_test, proportion, wilson
from designs.paired.metrics import positive_confidence

# ----------------------------------------------------------------------------------------- Wilson
# R: prop.test(x, n, correct = FALSE)$conf.int (the score interval without continuity correction)
WILSON_R = [
    (8, 10, 0.49016247153664183, 0.94331784854562473),
    (3, 17, 0.061911266376209959, 0.41029458568834115),
    (0, 12, 0.0, 0.24249400665524079),
    (12, 12, 0.75750599334475921, 1.0),
    (1, 40, 0.0044268315026813922, 0.12881368963474088),
]


@pytest.mark.parametrize("k,n,low,high", WILSON_R)
def test_wilson_matches_r_prop_test_without_correction(k, n, low, high):
    result = wilson(k, n)
    assert result.estimate == k / n
    assert (result.low, result.high) == (pytest.approx(low, abs=1e-14), pytest.approx(high, abs=1e-14))


def test_wilson_ends_are_exact_at_0_and_n():
    # statsmodels leaves 2.8e-17 at 0 of 7 and 1 − 1.1e-16 at 7 of 7; R prints 0 and 1.
    assert wilson(0, 7).low == 0.0 and wilson(7, 7).high == 1.0


def test_wilson_other_level():
    # R: prop.test(3, 17, correct = FALSE, conf.level = 0.9)$conf.int
    result = proportion(3, 17, 0.10)
    assert (result.low, result.high) == (pytest.approx(0.072814466547064485, abs=1e-14),
                                         pytest.approx(0.36896697806902579, abs=1e-14))


# ------------------------------------------------------------------- exact binomial (few pairs)
# n21 of n discordant pairs; R: binom.test(n21, n, 0.5, alternative = a)$p.value, with
# "n12>n21" ↔ "less", "n12<n21" ↔ "greater".
BINOM_R = [
    (8, 9, "less", 0.998046875), (8, 9, "greater", 0.019531249999999993),
    (8, 9, "two.sided", 0.039062499999999986),
    (2, 10, "less", 0.054687499999999972), (2, 10, "greater", 0.9892578125),
    (2, 10, "two.sided", 0.10937499999999994),
    (3, 7, "less", 0.5), (3, 7, "greater", 0.77343749999999989), (3, 7, "two.sided", 1.0),
    (5, 10, "less", 0.62304687499999989), (5, 10, "greater", 0.62304687499999989), (5, 10, "two.sided", 1.0),
]
TO_R = {"n12>n21": "less", "n12<n21": "greater", "two-sided": "two.sided"}


@pytest.mark.parametrize("n21,n,r_alternative,p", BINOM_R)
def test_exact_binomial_matches_r_binom_test(n21, n, r_alternative, p):
    alternative = {v: k for k, v in TO_R.items()}[r_alternative]
    result = matched_pair_test(Contingency(3, n - n21, n21, 4), alternative=alternative)
    assert result.method == "exact binomial" and result.statistic == n21
    assert result.p_value == pytest.approx(p, rel=1e-12)


# -------------------------------------------------------------------------- McNemar z (many pairs)
# n11 = 40, n12 = 20, n21 = 31, n22 = 9. R:
#   mcnemar.test(matrix(c(40, 31, 20, 9), 2), correct = FALSE): X² = 2.3725490196078431,
#     p = 0.12348527214455113 (two-sided);
#   prop.test(31, 51, p = 0.5, alternative = a, correct = FALSE): the same X² = z², one-sided p
#     0.93825736392772552 ("less") and 0.061742636072274468 ("greater").
MCNEMAR_CHI2 = 2.3725490196078431
MCNEMAR_R = [("n12<n21", 0.061742636072274468), ("n12>n21", 0.93825736392772552),
             ("two-sided", 0.12348527214455113)]


@pytest.mark.parametrize("alternative,p", MCNEMAR_R)
def test_mcnemar_z_matches_r_mcnemar_test_and_prop_test(alternative, p):
    result = matched_pair_test(Contingency(40, 20, 31, 9), alternative=alternative)
    assert result.method == "McNemar z"
    assert result.statistic > 0 and result.statistic**2 == pytest.approx(MCNEMAR_CHI2, rel=1e-12)
    assert result.p_value == pytest.approx(p, rel=1e-10)


def test_mcnemar_z_sign_follows_n21_minus_n12():
    result = matched_pair_test(Contingency(40, 31, 20, 9), alternative="n12>n21")
    assert result.statistic < 0 and result.statistic**2 == pytest.approx(MCNEMAR_CHI2, rel=1e-12)
    assert result.p_value == pytest.approx(0.061742636072274468, rel=1e-10)


# ----------------------------------------------------------------------------- Benjamini–Hochberg
# R: p.adjust(c(0.041, 0.02, 0.03, 0.03, 0.5, 0.001, 0.012, 0.2), method = "BH") (ties included);
# a hypothesis is rejected at α exactly when its BH-adjusted p-value is ≤ α.
BH_P = [0.041, 0.02, 0.03, 0.03, 0.5, 0.001, 0.012, 0.2]
BH_R = [0.054666666666666669, 0.048000000000000001, 0.048000000000000001, 0.048000000000000001, 0.5,
        0.0080000000000000002, 0.048000000000000001, 0.22857142857142856]


def test_benjamini_hochberg_matches_r_p_adjust():
    result = benjamini_hochberg(BH_P, 0.05)
    assert [r.p_value for r in result] == BH_P
    assert [r.adjusted for r in result] == pytest.approx(BH_R, rel=1e-12)
    assert [r.reject for r in result] == [a <= 0.05 for a in BH_R]
    assert [r.reject for r in benjamini_hochberg(BH_P, 0.01)] == [a <= 0.01 for a in BH_R]


# ---------------------------------------------------------------------------------------- Welch
# R: t.test(c(0.91, 0.72, 0.88, 0.95, 0.67, 0.81), c(0.55, 0.62, 0.79, 0.48, 0.70, 0.66, 0.58, 0.73, 0.51),
#           var.equal = FALSE): t = 3.4906651123648151, df = 10.40286401048861, p = 0.0054844951820763287
def test_welch_matches_r_t_test():
    non = [(p, True) for p in (0.91, 0.72, 0.88, 0.95, 0.67, 0.81)] + [(0.1, False)]
    rule = [(p, True) for p in (0.55, 0.62, 0.79, 0.48, 0.70, 0.66, 0.58, 0.73, 0.51)] + [(0.99, False)]
    result = positive_confidence(rulebreakers=rule, non_rulebreakers=non)
    assert result.welch_t == pytest.approx(3.4906651123648151, rel=1e-12)
    assert result.welch_df == pytest.approx(10.40286401048861, rel=1e-12)
    assert result.p_value == pytest.approx(0.0054844951820763287, rel=1e-10)


@pytest.mark.filterwarnings("ignore:Precision loss:RuntimeWarning")  # scipy, on the constant sides
def test_welch_is_nan_where_r_t_test_stops():
    # R: t.test(c(1, 1), c(0, 0, 0)) stops with "data are essentially constant"; one value per side
    # stops with "not enough 'x' observations".
    constant = positive_confidence(rulebreakers=[(0.0, True)] * 3, non_rulebreakers=[(1.0, True)] * 2)
    single = positive_confidence(rulebreakers=[(0.2, True), (0.3, True)], non_rulebreakers=[(0.5, True)])
    for result in (constant, single):
        assert all(x != x for x in (result.welch_t, result.welch_df, result.p_value))


# ------------------------------------------- people across participants: the clustered comparison
# 14 people answer 10 items each, alternating the two members; their abilities differ. R 4.2.2,
# geepack 1.3.9 (Debian's r-cran-geepack), on the same rows:
#   geeglm(y ~ b, id = factor(participant), family = binomial, corstr = "exchangeable")
#   coef "b", summary(.)$coefficients["b", c("Std.err", "Pr(>|W|)")] (robust sandwich errors)
GEE_R = {"estimate": -1.2625669685919887, "se": 0.3657677733360552, "p": 0.00055680521192957855,
         "accuracy_a": 0.7142857142857143, "accuracy_b": 0.41428571428571431}


def _clustered_people():
    import math
    import random

    rng = random.Random(2026)
    rows = []
    for p in range(14):
        ability = rng.gauss(0, 1)
        for k in range(10):
            member = "b" if k % 2 else "a"
            logit = 0.6 + ability - (1.1 if member == "b" else 0.0)
            rows.append({"order": f"P{p + 1:02d}", "member": member,
                         "correct": rng.random() < 1 / (1 + math.exp(-logit))})
    return rows


def test_the_participant_clustered_comparison_matches_geepack():
    import pandas as pd

    from designs.paired.people import compare_members

    row = compare_members(pd.DataFrame(_clustered_people()), ("a", "b"))
    assert row["log_odds_b_vs_a"] == pytest.approx(GEE_R["estimate"], abs=1e-9)
    assert row["se"] == pytest.approx(GEE_R["se"], abs=1e-9)
    assert row["p_value"] == pytest.approx(GEE_R["p"], rel=1e-6)
    assert (row["accuracy_a"], row["accuracy_b"]) == (pytest.approx(GEE_R["accuracy_a"]), pytest.approx(GEE_R["accuracy_b"]))
    assert (row["participants"], row["answers_a"], row["answers_b"]) == (14, 70, 70) and row["note"] == ""


def test_the_clustered_comparison_says_why_it_cannot_be_estimated():
    import pandas as pd

    from designs.paired.people import compare_members

    rows = [{"order": f"P{p}", "member": m, "correct": m == "a" or p % 2 == 0} for p in range(6) for m in "ab"]
    row = compare_members(pd.DataFrame(rows), ("a", "b"))
    assert row["note"] == "every answer to the a member is right: the odds ratio is not finite"
    assert row["accuracy_a"] == 1.0 and row["accuracy_b"] == 0.5 and row["p_value"] != row["p_value"]  # NaN
