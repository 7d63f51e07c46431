"""Pair metrics against hand-computed values and the worked numbers printed in seed 002."""
from __future__ import annotations

import math

import pytest

from analysis.proportions import Contingency, benjamini_hochberg, contingency, matched_pair_test, wilson
from designs.paired.metrics import dual_sided_accuracy, positive_confidence, rulebreaker_accuracy

# (n12, n21, z) rows of 002's Hypothesis-6 table (gpt-3.5-turbo weak/zs, control/zs, weak/os;
# llama-3-70b control/os; mistral-large weak/zs, control/zs).
PAPER_002 = [(64, 423, 16.267843), (57, 417, 16.535348), (60, 250, 10.791275),
             (44, 174, 8.804711), (0, 533, 23.086793), (15, 530, 22.060176)]


@pytest.mark.parametrize("n12,n21,z", PAPER_002)
def test_mcnemar_z_matches_paper_002(n12, n21, z):
    result = matched_pair_test(Contingency(100, n12, n21, 100), alternative="n12<n21")
    assert result.method == "McNemar z"
    assert result.statistic == pytest.approx(z, abs=5e-6)
    assert result.p_value < 1e-6  # the paper prints 0.000000 and rejects


def test_exact_binomial_for_few_discordant_pairs():
    table = Contingency(n11=30, n12=1, n21=8, n22=2)
    upper = matched_pair_test(table, alternative="n12<n21")
    assert upper.method == "exact binomial"
    assert upper.p_value == pytest.approx(10 / 512)  # P(X ≥ 8), X ~ Bin(9, ½)
    lower = matched_pair_test(table, alternative="n12>n21")
    assert lower.p_value == pytest.approx(1 - 1 / 512)  # P(X ≤ 8)
    assert matched_pair_test(table, alternative="two-sided").p_value == pytest.approx(20 / 512)


def test_no_discordant_pairs_and_bad_alternative():
    assert matched_pair_test(Contingency(5, 0, 0, 5)).p_value == 1.0
    with pytest.raises(ValueError, match="alternative"):
        matched_pair_test(Contingency(5, 1, 2, 5), alternative="greater")


def test_contingency_counts_cells():
    table = contingency([(True, True), (True, False), (True, False), (False, True), (False, False)])
    assert table == Contingency(1, 2, 1, 1) and table.n == 5 and table.discordant == 3


def test_benjamini_hochberg_hand_computed():
    result = benjamini_hochberg([0.01, 0.04, 0.03, 0.005], alpha=0.05)
    assert [r.reject for r in result] == [True, True, True, True]
    assert [r.adjusted for r in result] == pytest.approx([0.02, 0.04, 0.04, 0.02])
    result = benjamini_hochberg([0.01, 0.02, 0.03, 0.5], alpha=0.05)
    assert [r.reject for r in result] == [True, True, True, False]
    assert result[3].adjusted == pytest.approx(0.5)
    assert benjamini_hochberg([]) == []


def test_wilson_textbook_interval_and_edges():
    p = wilson(8, 10)
    assert (round(p.low, 4), round(p.high, 4)) == (0.4902, 0.9433)
    assert wilson(0, 12).low == 0.0 and wilson(12, 12).high == 1.0
    assert math.isnan(wilson(0, 0).estimate)
    with pytest.raises(ValueError):
        wilson(3, 2)


def test_rulebreaker_paired_accuracy_equations_1_to_3():
    pairs = [(True, True), (False, True), (False, True), (True, False)]
    acc = rulebreaker_accuracy(pairs)
    assert acc.paired.estimate == 0.25
    assert acc.rulebreakers.estimate == 0.5
    assert acc.non_rulebreakers.estimate == 0.75
    # a respondent who says yes to everything: τ = 0, τ_N = 1
    assert rulebreaker_accuracy([(False, True)] * 6).paired.estimate == 0.0


def test_positive_confidence_uses_only_yes_answers_and_welch():
    non = [(0.9, True), (0.8, True), (0.95, True), (0.85, True), (0.3, False)]
    rule = [(0.6, True), (0.7, True), (0.5, True), (0.2, False)]
    result = positive_confidence(rulebreakers=rule, non_rulebreakers=non)
    assert result.pi_non_rulebreakers == pytest.approx(0.875)
    assert result.pi_rulebreakers == pytest.approx(0.6)
    assert (result.n_non_rulebreakers, result.n_rulebreakers) == (4, 3)
    # by hand: s²_N = 0.0041667/4, s²_R = 0.01/3 → t = 0.275/√(0.00104167+0.00333333) = 4.1571
    assert result.welch_t == pytest.approx(4.15761, abs=1e-4)
    from scipy.stats import ttest_ind  # independent implementation of the same test

    reference = ttest_ind([0.9, 0.8, 0.95, 0.85], [0.6, 0.7, 0.5], equal_var=False)
    assert result.welch_t == pytest.approx(reference.statistic)
    assert result.p_value == pytest.approx(reference.pvalue)


def test_dual_sided_rule_needs_both_sides():
    assert dual_sided_accuracy([(True, True), (True, False), (False, True), (True, True)]).estimate == 0.5
