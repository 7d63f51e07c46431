"""Global consequence (paper 003 §3.1's ⊢ with the necessitation rule): premises true at every
world ⇒ conclusion true at every world. Checked against textbook cases and by brute force over
small models, with every countermodel verified by an independent evaluator."""
from __future__ import annotations

import pytest
from hypothesis import given, settings

from logic.checker import Consequence, System, entails
from logic.parser import parse_sequent
from tests.logic.test_checker import ALL, S5_MODELS, SMALL_MODELS, arguments, ev, frame_ok


def assert_global_countermodel(verdict, premises, conclusion, system):
    """Premises true at every world of a model of the system's frames, the conclusion false at its root."""
    assert not verdict.valid and verdict.consequence is Consequence.GLOBAL
    model = verdict.countermodel
    worlds, rel = list(model.worlds), set(model.access)
    val = {w: set(true) for w, true in model.valuation}
    succ = {w: [b for (a, b) in rel if a == w] for w in worlds}
    assert frame_ok(worlds, rel, system)
    assert all(ev(p, w, succ, val) for p in premises for w in worlds)
    assert not ev(conclusion, model.actual, succ, val)


@pytest.mark.parametrize("system", ALL)
def test_necessitation_is_globally_valid_and_locally_invalid(system):
    s = parse_sequent("p |- []p")
    assert entails(s.premises, s.conclusion, system, "global").valid
    local = entails(s.premises, s.conclusion, system, "local")
    assert not local.valid and local.countermodel is not None
    assert entails(["p"], "p", system, "global").valid and entails(["p"], "<>p", system, "global").valid == (
        system is not System.K)  # K has worlds that see nothing


@pytest.mark.parametrize("system", ALL)
def test_the_dia_theorem_of_table_a3_is_invalid_under_both_relations(system):
    s = parse_sequent("<>(~p -> q), <>~p |- <>q")
    for consequence in ("local", "global"):
        verdict = entails(s.premises, s.conclusion, system, consequence)
        assert not verdict.valid
    assert_global_countermodel(entails(s.premises, s.conclusion, system, "global"), s.premises, s.conclusion, system)


@pytest.mark.parametrize("text, system, valid", [
    ("<>p |- []<>p", "K", True),  # ◇p everywhere: every world has a successor, so an infinite search without blocking
    ("[]p |- p", "K", False),  # no reflexivity in K, even globally
    ("[]p |- [][]p", "T", True),  # □p everywhere ⇒ □□p everywhere, without transitivity
    ("p -> []q, p |- q", "K", False),
    ("p |- []p & [][]p", "T", True),
])
def test_textbook_global_cases(text, system, valid):
    s = parse_sequent(text)
    verdict = entails(s.premises, s.conclusion, system, "global")
    assert verdict.valid == valid
    if not valid:
        assert_global_countermodel(verdict, s.premises, s.conclusion, system)


def test_consequence_parse_and_default():
    assert Consequence.parse(" Global ") is Consequence.GLOBAL
    assert entails(["p"], "[]p").consequence is Consequence.LOCAL
    with pytest.raises(ValueError, match="choose one of local, global"):
        Consequence.parse("strict")


def _brute_global_countermodel(models, premises, conclusion):
    for succ, val in models:
        worlds = list(val)
        if all(ev(p, w, succ, val) for p in premises for w in worlds) and any(
                not ev(conclusion, w, succ, val) for w in worlds):
            return True
    return False


@settings(max_examples=120, deadline=None)
@given(arguments(("p", "q"), 5))
def test_small_global_countermodels_are_never_missed(argument):
    premises, conclusion = argument
    for system in ALL:
        verdict = entails(premises, conclusion, system, "global")
        if _brute_global_countermodel(SMALL_MODELS[str(system)], premises, conclusion):
            assert not verdict.valid
        if not verdict.valid:
            assert_global_countermodel(verdict, premises, conclusion, system)
        if entails(premises, conclusion, system, "local").valid:
            assert verdict.valid  # local consequence implies global consequence


@settings(max_examples=120, deadline=None)
@given(arguments(("p", "q"), 6))
def test_s5_global_agrees_exactly_with_brute_force(argument):
    premises, conclusion = argument
    expected = True
    for _, cluster in S5_MODELS:
        val = {v: v for v in cluster}
        succ = {v: cluster for v in cluster}
        if all(ev(p, w, succ, val) for p in premises for w in cluster) and any(
                not ev(conclusion, w, succ, val) for w in cluster):
            expected = False
            break
    verdict = entails(premises, conclusion, "S5", "global")
    assert verdict.valid == expected
    if not verdict.valid:
        assert_global_countermodel(verdict, premises, conclusion, "S5")
