"""The tableau checker: textbook cases, verified countermodels, cross-checks by brute force."""
from __future__ import annotations

import itertools
import json
import statistics
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from logic import checker
from logic.checker import (
    CheckerInternalError,
    System,
    Verdict,
    entails,
    satisfiable,
    truth_table_entails,
)
from logic.formula import And, Atom, Box, Dia, Implies, Not, Or, atoms
from logic.kripke import KripkeModel, describe, frame_conditions, holds, is_frame_of
from logic.parser import parse_formula, parse_sequent

P, Q = Atom("p"), Atom("q")
ALL = tuple(System)

# --------------------------------------------------------------------------- independent oracle


def ev(f, w, succ, val):
    """Truth at world w; succ: world -> successors, val: world -> set of true atoms."""
    if isinstance(f, Atom):
        return f.name in val[w]
    if isinstance(f, Not):
        return not ev(f.sub, w, succ, val)
    if isinstance(f, And):
        return ev(f.left, w, succ, val) and ev(f.right, w, succ, val)
    if isinstance(f, Or):
        return ev(f.left, w, succ, val) or ev(f.right, w, succ, val)
    if isinstance(f, Implies):
        return (not ev(f.left, w, succ, val)) or ev(f.right, w, succ, val)
    if isinstance(f, Box):
        return all(ev(f.sub, v, succ, val) for v in succ[w])
    if isinstance(f, Dia):
        return any(ev(f.sub, v, succ, val) for v in succ[w])
    raise TypeError(f)


def frame_ok(worlds, rel, system):
    reflexive = all((w, w) in rel for w in worlds)
    symmetric = all((b, a) in rel for (a, b) in rel)
    transitive = all((a, d) in rel for (a, b) in rel for (c, d) in rel if b == c)
    return {
        "K": True,
        "T": reflexive,
        "S4": reflexive and transitive,
        "S5": reflexive and symmetric and transitive,
    }[str(system)]


def falsifies(worlds, rel, val, actual, premises, conclusion):
    succ = {w: [b for (a, b) in rel if a == w] for w in worlds}
    return all(ev(p, actual, succ, val) for p in premises) and not ev(
        conclusion, actual, succ, val
    )


def assert_real_countermodel(verdict, premises, conclusion, system):
    assert not verdict.valid and not verdict
    model = verdict.countermodel
    assert model is not None
    worlds = list(model.worlds)
    rel = set(model.access)
    val = {w: set(true) for w, true in model.valuation}
    assert model.actual in worlds
    assert frame_ok(worlds, rel, system), f"frame not in {system}:\n{describe(model)}"
    assert falsifies(worlds, rel, val, model.actual, premises, conclusion), describe(model)


def check(text, system):
    s = parse_sequent(text)
    verdict = entails(s.premises, s.conclusion, system)
    assert isinstance(verdict, Verdict) and verdict.system is System.parse(system)
    if not verdict.valid:
        assert_real_countermodel(verdict, s.premises, s.conclusion, system)
    else:
        assert verdict.countermodel is None
    return verdict.valid


# --------------------------------------------------------------------------- textbook cases

TEXTBOOK = [
    ("⊢ p → ◇p", {"K": False, "T": True, "S4": True, "S5": True}),
    ("⊢ □p → p", {"K": False, "T": True, "S4": True, "S5": True}),
    ("⊢ □p → □□p", {"K": False, "T": False, "S4": True, "S5": True}),
    ("⊢ ◇p → □◇p", {"K": False, "T": False, "S4": False, "S5": True}),
    ("⊢ ◇□p → □p", {"K": False, "T": False, "S4": False, "S5": True}),
    ("⊢ p → □◇p", {"K": False, "T": False, "S4": False, "S5": True}),
    ("⊢ ◇◇p → ◇p", {"K": False, "T": False, "S4": True, "S5": True}),
    ("□(p ∨ q) ⊢ □p ∨ □q", {"K": False, "T": False, "S4": False, "S5": False}),
    ("◇(p ∨ q) ⊢ ◇p ∨ ◇q", {"K": True, "T": True, "S4": True, "S5": True}),
    ("◇p ∧ ◇q ⊢ ◇(p ∧ q)", {"K": False, "T": False, "S4": False, "S5": False}),
    ("⊢ □(p → q) → (□p → □q)", {"K": True, "T": True, "S4": True, "S5": True}),
    ("p ∨ q, ¬p ⊢ q", {"K": True, "T": True, "S4": True, "S5": True}),
    ("¬p → q, ¬p ⊢ q", {"K": True, "T": True, "S4": True, "S5": True}),
    ("¬p → q, ¬q ⊢ p", {"K": True, "T": True, "S4": True, "S5": True}),
    ("¬p → q, q ⊢ ¬p", {"K": False, "T": False, "S4": False, "S5": False}),
    ("¬p → q, p ⊢ ¬q", {"K": False, "T": False, "S4": False, "S5": False}),
    # □(p∨q) and ◇¬p give a successor with ¬p, hence q there: valid even in K.
    ("□(p ∨ q), ◇¬p ⊢ ◇q", {"K": True, "T": True, "S4": True, "S5": True}),
    ("□(p ∨ q), ◇¬p ⊢ □q", {"K": False, "T": False, "S4": False, "S5": False}),
    ("◇(¬p → q), ◇¬p ⊢ ◇q", {"K": False, "T": False, "S4": False, "S5": False}),
    ("◇(p ∨ q), ¬◇p ⊢ ◇q", {"K": True, "T": True, "S4": True, "S5": True}),
    ("□(p ∨ q), □¬p ⊢ □q", {"K": True, "T": True, "S4": True, "S5": True}),
    ("□(p ∨ q), ¬□p ⊢ □q", {"K": False, "T": False, "S4": False, "S5": False}),
    ("p ⊢ □p", {"K": False, "T": False, "S4": False, "S5": False}),
    ("p ⊢ ◇p", {"K": False, "T": True, "S4": True, "S5": True}),
    ("□p, ◇¬p ⊢ q", {"K": True, "T": True, "S4": True, "S5": True}),
    ("⊢ ◇p ∨ ¬◇p", {"K": True, "T": True, "S4": True, "S5": True}),
    ("□p ∧ □q ⊢ □(p ∧ q)", {"K": True, "T": True, "S4": True, "S5": True}),
]


@pytest.mark.parametrize("text, expected", TEXTBOOK, ids=[t for t, _ in TEXTBOOK])
@pytest.mark.parametrize("system", ["K", "T", "S4", "S5"])
def test_textbook(text, expected, system):
    assert check(text, system) is expected[system]


def test_seriality_is_not_assumed_in_k():
    # ◇(p ∨ ¬p) fails at a dead end in K, holds in reflexive frames
    assert check("⊢ ◇(p ∨ ¬p)", "K") is False
    assert check("⊢ ◇(p ∨ ¬p)", "T") is True


def test_default_system_is_s5_and_strings_are_parsed():
    verdict = entails(["◇p"], "□◇p")
    assert verdict.valid and verdict.system is System.S5
    assert entails(["p ∨ q", "~p"], "q", "k").valid


def test_verdict_consistency():
    with pytest.raises(ValueError):
        Verdict(valid=True, system=System.K, countermodel=entails([], P, "K").countermodel)
    with pytest.raises(ValueError):
        Verdict(valid=False, system=System.K, countermodel=None)
    assert bool(entails([P], P, "K")) is True


def test_system_parse():
    assert System.parse("s4") is System.S4
    assert System.parse(" S5 ") is System.S5
    assert System.parse(System.T) is System.T
    assert str(System.K) == "K"
    with pytest.raises(ValueError, match="K, T, S4, S5"):
        System.parse("B")
    with pytest.raises(ValueError):
        entails([], P, "KD45")


def test_results_are_cached():
    first = entails((Box(Or(P, Q)),), Or(Box(P), Box(Q)), "S4")
    assert entails([Box(Or(P, Q))], Or(Box(P), Box(Q)), System.S4) is first


def test_unverified_countermodel_is_never_returned(monkeypatch):
    # Sabotage the valuation read off the tableau: verification must catch it.
    monkeypatch.setattr(checker, "_true_atoms", lambda label: frozenset({"p", "q"}))
    with pytest.raises(CheckerInternalError):
        checker._find_model((Not(P),), System.K)
    with pytest.raises(AssertionError):
        checker._find_model((Box(Not(Q)), Dia(P)), System.S5)


def test_satisfiable():
    model = satisfiable([Dia(P), Dia(Not(P)), Box(Q)], "T")
    assert model is not None and is_frame_of(model, "T")
    assert all(holds(model, model.actual, f) for f in (Dia(P), Dia(Not(P)), Box(Q)))
    assert satisfiable([Box(P), Not(P)], "T") is None
    assert satisfiable([Box(P), Not(P)], "K") is not None
    assert satisfiable([Dia(P), Box(Not(P))], "K") is None


def test_truth_table_entails():
    assert truth_table_entails([Or(P, Q), Not(P)], Q)
    assert not truth_table_entails([Implies(Not(P), Q), Q], Not(P))
    assert truth_table_entails([], Or(P, Not(P)))
    assert truth_table_entails([And(P, Not(P))], Q)
    with pytest.raises(ValueError, match="propositional"):
        truth_table_entails([Box(P)], P)


# --------------------------------------------------------------------------- kripke module


def test_kripke_model_semantics_and_description():
    model = KripkeModel(
        worlds=("w0", "w1", "w2"),
        access=frozenset({("w0", "w1"), ("w1", "w1"), ("w0", "w2")}),
        valuation={"w1": {"p"}, "w2": frozenset({"p", "q"})},
        actual="w0",
        vocabulary=frozenset({"r"}),
    )
    assert holds(model, "w0", Box(P)) and not holds(model, "w0", Box(Q))
    assert holds(model, "w0", Dia(Q)) and holds(model, "w2", Box(Not(P)))
    assert not holds(model, "w2", Dia(P))
    assert frame_conditions(model) == frozenset({"transitive"})
    assert is_frame_of(model, "k") and not is_frame_of(model, System.T)
    text = describe(model)
    assert "Worlds: w0 (actual), w1, w2" in text
    assert "Accessibility: w0 → w1, w0 → w2, w1 → w1" in text
    assert "  w0: ¬p, ¬q, ¬r" in text and "  w2: p, q, ¬r" in text
    assert text.endswith("Actual world: w0")
    data = model.to_dict()
    assert json.loads(json.dumps(data)) == data
    assert data["valuation"]["w2"] == ["p", "q"]
    assert KripkeModel.from_dict(data) == model
    assert hash(model) == hash(KripkeModel.from_dict(data))
    with pytest.raises(ValueError):
        holds(model, "w9", P)
    with pytest.raises(ValueError):
        KripkeModel(("w0",), frozenset({("w0", "w1")}), {}, "w0")
    with pytest.raises(ValueError):
        KripkeModel(("w0",), frozenset(), {}, "w1")
    with pytest.raises(ValueError):
        is_frame_of(model, "KD")


# --------------------------------------------------------------------------- random arguments


def formulas(names, max_leaves, modal=True):
    leaves = st.sampled_from(names).map(Atom)
    unary_ops = [Not, Box, Dia] if modal else [Not]

    def extend(children):
        return st.one_of(
            st.builds(lambda op, a: op(a), st.sampled_from(unary_ops), children),
            st.builds(lambda op, a, b: op(a, b), st.sampled_from([And, Or, Implies]),
                      children, children),
        )

    return st.recursive(leaves, extend, max_leaves=max_leaves)


def arguments(names, max_leaves, modal=True):
    f = formulas(names, max_leaves, modal)
    return st.tuples(st.lists(f, max_size=3).map(tuple), f)


@settings(max_examples=150, deadline=None)
@given(arguments(("p", "q", "r"), 6, modal=False))
def test_propositional_agrees_with_truth_tables(argument):
    premises, conclusion = argument
    expected = truth_table_entails(premises, conclusion)
    for system in ALL:
        verdict = entails(premises, conclusion, system)
        assert verdict.valid == expected
        if not verdict.valid:
            assert_real_countermodel(verdict, premises, conclusion, system)


def _all_small_models(names, system):
    """Every model with 1 or 2 worlds (actual world 0) whose frame is in the system's class."""
    valuations = [frozenset(c) for k in range(len(names) + 1)
                  for c in itertools.combinations(names, k)]
    out = []
    for n in (1, 2):
        worlds = list(range(n))
        pairs = list(itertools.product(worlds, worlds))
        for mask in range(2 ** len(pairs)):
            rel = {pair for i, pair in enumerate(pairs) if mask >> i & 1}
            if not frame_ok(worlds, rel, system):
                continue
            succ = {w: [b for (a, b) in rel if a == w] for w in worlds}
            for vals in itertools.product(valuations, repeat=n):
                out.append((succ, dict(enumerate(vals))))
    return out


SMALL_MODELS = {str(s): _all_small_models(("p", "q"), s) for s in ALL}


def _brute_countermodel(models, premises, conclusion):
    return any(
        all(ev(p, 0, succ, val) for p in premises) and not ev(conclusion, 0, succ, val)
        for succ, val in models
    )


@settings(max_examples=120, deadline=None)
@given(arguments(("p", "q"), 5))
def test_small_countermodels_are_never_missed(argument):
    premises, conclusion = argument
    verdicts = {}
    for system in ALL:
        verdict = entails(premises, conclusion, system)
        verdicts[system] = verdict.valid
        if _brute_countermodel(SMALL_MODELS[str(system)], premises, conclusion):
            assert not verdict.valid
        if not verdict.valid:
            assert_real_countermodel(verdict, premises, conclusion, system)
    # the frame classes shrink from K to S5, so validity can only be gained
    assert verdicts[System.K] <= verdicts[System.T] <= verdicts[System.S4] <= verdicts[System.S5]


def _s5_models(names):
    """All S5 models up to bisimulation: an actual valuation and a set of valuations with it."""
    valuations = [frozenset(c) for k in range(len(names) + 1)
                  for c in itertools.combinations(names, k)]
    for actual in valuations:
        others = [v for v in valuations if v != actual]
        for k in range(len(others) + 1):
            for extra in itertools.combinations(others, k):
                yield actual, (actual, *extra)


S5_MODELS = list(_s5_models(("p", "q")))


def _s5_brute_valid(premises, conclusion):
    for actual, cluster in S5_MODELS:
        val = {v: v for v in cluster}
        succ = {v: cluster for v in cluster}
        if all(ev(p, actual, succ, val) for p in premises) and not ev(
            conclusion, actual, succ, val
        ):
            return False
    return True


@settings(max_examples=150, deadline=None)
@given(arguments(("p", "q"), 6))
def test_s5_agrees_exactly_with_brute_force(argument):
    premises, conclusion = argument
    verdict = entails(premises, conclusion, "S5")
    assert verdict.valid == _s5_brute_valid(premises, conclusion)
    if not verdict.valid:
        assert_real_countermodel(verdict, premises, conclusion, "S5")


# --------------------------------------------------------------------------- speed


def test_typical_call_is_fast():
    texts = [
        "□(p ∨ q), ¬□p ⊢ □q",
        "◇(¬p → q), ¬◇p ⊢ ◇q",
        "□◇(p ∧ q), ◇□(r → s) ⊢ ◇◇(p ∧ r) ∨ □□(q → s)",
        "□(p → ◇q), ◇□¬q, □(r ∨ s) ⊢ ◇(□p ∧ ◇r) ∨ ¬◇s",
        "⊢ □(□(p → □p) → p) → p",
        "◇□◇p, □(◇p → □q) ⊢ ◇◇□(q ∨ r) ∧ ◇s",
    ]
    # CPU time of this thread, not the wall clock: another process on the machine (a second test
    # worker, a loaded CI machine) takes wall-clock time from the call but not CPU time.
    durations = []
    for text in texts:
        s = parse_sequent(text)
        for system in ALL:
            start = time.thread_time()
            checker._entails.__wrapped__(tuple(s.premises), s.conclusion, system)
            durations.append(time.thread_time() - start)
    assert statistics.median(durations) < 0.010, durations
    assert max(durations) < 0.2, durations


def test_textbook_formulas_parse_to_small_atoms():
    # guard: the fixtures above stay within the intended size (≤ 4 atoms)
    for text, _ in TEXTBOOK:
        s = parse_sequent(text)
        names = frozenset().union(*(atoms(f) for f in (*s.premises, s.conclusion)))
        assert len(names) <= 4
    assert parse_formula("□◇p") == Box(Dia(P))
