"""Formulas, printing, normal form and the parser (round trips, precedence, errors)."""
from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from logic.formula import (
    And,
    Atom,
    Box,
    Dia,
    Implies,
    Not,
    Or,
    atoms,
    is_nnf,
    modal_depth,
    nnf,
    size,
    subformulas,
    to_ascii,
    to_unicode,
)
from logic.parser import ParseError, Sequent, parse_formula, parse_sequent
from tests.logic.test_checker import ev  # the tests' own Kripke evaluator, independent of the package

P, Q, R = Atom("p"), Atom("q"), Atom("r")

SETTINGS = settings(max_examples=150, deadline=None)


def formulas(names=("p", "q", "r", "r1", "rain"), max_leaves=12):
    leaves = st.sampled_from(names).map(Atom)

    def extend(children):
        unary = st.sampled_from([Not, Box, Dia])
        binary = st.sampled_from([And, Or, Implies])
        return st.one_of(
            st.builds(lambda op, a: op(a), unary, children),
            st.builds(lambda op, a, b: op(a, b), binary, children, children),
        )

    return st.recursive(leaves, extend, max_leaves=max_leaves)


sequents = st.builds(
    Sequent, st.lists(formulas(max_leaves=6), max_size=3).map(tuple), formulas(max_leaves=6)
)


# --------------------------------------------------------------------------- printing


@pytest.mark.parametrize(
    "formula, uni, asc",
    [
        (Box(Or(P, Q)), "□(p ∨ q)", "[](p | q)"),
        (Not(Dia(P)), "¬◇p", "~<>p"),
        (Implies(Not(P), Q), "¬p → q", "~p -> q"),
        (Or(Box(P), Box(Q)), "□p ∨ □q", "[]p | []q"),
        (Not(Implies(P, Q)), "¬(p → q)", "~(p -> q)"),
        (Implies(P, Implies(Q, R)), "p → q → r", "p -> q -> r"),
        (Implies(Implies(P, Q), R), "(p → q) → r", "(p -> q) -> r"),
        (And(And(P, Q), R), "p ∧ q ∧ r", "p & q & r"),
        (And(P, And(Q, R)), "p ∧ (q ∧ r)", "p & (q & r)"),
        (Or(And(P, Q), R), "(p ∧ q) ∨ r", "(p & q) | r"),
        (And(P, Or(Q, R)), "p ∧ (q ∨ r)", "p & (q | r)"),
        (Or(Implies(P, Q), R), "(p → q) ∨ r", "(p -> q) | r"),
        (Implies(And(P, Q), Or(Q, R)), "p ∧ q → q ∨ r", "p & q -> q | r"),
        (Box(Dia(Not(P))), "□◇¬p", "[]<>~p"),
        (Dia(Box(Implies(P, Q))), "◇□(p → q)", "<>[](p -> q)"),
    ],
)
def test_printing(formula, uni, asc):
    assert to_unicode(formula) == uni
    assert to_ascii(formula) == asc
    assert str(formula) == uni


@pytest.mark.parametrize("bad", ["P", "1p", "", "p-q", "p q", "_p", "ṗ", 3])
def test_atom_names_are_validated(bad):
    with pytest.raises(ValueError, match="invalid atom name"):
        Atom(bad)


@pytest.mark.parametrize("good", ["p", "q", "r1", "rain", "rain_2", "pQ"])
def test_atom_names_accepted(good):
    assert Atom(good).name == good


def test_connectives_reject_non_formulas():
    with pytest.raises(TypeError):
        Not("p")
    with pytest.raises(TypeError):
        And(P, None)


def test_formulas_are_hashable_values():
    assert Box(Or(P, Q)) == Box(Or(Atom("p"), Atom("q")))
    assert len({Box(P), Box(Atom("p")), Dia(P)}) == 2
    with pytest.raises(AttributeError):
        P.name = "q"  # frozen


# --------------------------------------------------------------------------- measures


def test_measures():
    f = Implies(Box(Or(P, Dia(Q))), Not(Dia(Box(P))))
    assert atoms(f) == frozenset({"p", "q"})
    assert modal_depth(f) == 2
    assert modal_depth(P) == 0
    assert size(f) == 10
    subs = subformulas(f)
    assert subs[-1] == f
    assert set(subs) == {P, Q, Dia(Q), Or(P, Dia(Q)), Box(Or(P, Dia(Q))), Box(P), Dia(Box(P)),
                         Not(Dia(Box(P))), f}
    assert len(subs) == len(set(subs))


@pytest.mark.parametrize(
    "formula, expected",
    [
        (Not(Box(Implies(P, Q))), Dia(And(P, Not(Q)))),
        (Not(Dia(Or(P, Not(Q)))), Box(And(Not(P), Q))),
        (Implies(Not(P), Q), Or(P, Q)),
        (Not(Not(Box(P))), Box(P)),
        (Not(And(P, Dia(Q))), Or(Not(P), Box(Not(Q)))),
    ],
)
def test_nnf_examples(formula, expected):
    assert nnf(formula) == expected


small_models = st.tuples(
    st.lists(st.tuples(st.integers(0, 2), st.integers(0, 2)), max_size=9),
    st.lists(st.frozensets(st.sampled_from(["p", "q"])), min_size=3, max_size=3),
)


@SETTINGS
@given(formulas(names=("p", "q")), small_models)
def test_nnf_is_equivalent_and_normal(f, model):
    edges, val = model
    succ = {w: [b for a, b in edges if a == w] for w in range(3)}
    g = nnf(f)
    assert is_nnf(g)
    assert atoms(g) <= atoms(f)
    for w in range(3):
        assert ev(f, w, succ, val) == ev(g, w, succ, val)


# --------------------------------------------------------------------------- parsing


@SETTINGS
@given(formulas())
def test_round_trip_formulas(f):
    assert parse_formula(to_unicode(f)) == f
    assert parse_formula(to_ascii(f)) == f


@SETTINGS
@given(sequents)
def test_round_trip_sequents(s):
    assert parse_sequent(s.to_unicode()) == s
    assert parse_sequent(s.to_ascii()) == s
    assert parse_sequent(str(s)) == s


@pytest.mark.parametrize(
    "text, expected",
    [
        ("¬p → q", Implies(Not(P), Q)),
        ("□p ∨ □q", Or(Box(P), Box(Q))),
        ("p -> q -> r", Implies(P, Implies(Q, R))),
        ("~[]p", Not(Box(P))),
        ("[]~p", Box(Not(P))),
        ("p ∧ q ∧ r", And(And(P, Q), R)),
        ("p | q | r", Or(Or(P, Q), R)),
        ("p & q -> r", Implies(And(P, Q), R)),
        ("p -> q | r", Implies(P, Or(Q, R))),
        ("(p -> q) -> r", Implies(Implies(P, Q), R)),
        ("¬(p ∨ q)", Not(Or(P, Q))),
        ("◊p", Dia(P)),
        ("<>p ∨ ◇q", Or(Dia(P), Dia(Q))),
        ("  (\tp\n→q )  ", Implies(P, Q)),
        ("□¬◇(rain_1 ∧ r1)", Box(Not(Dia(And(Atom("rain_1"), Atom("r1")))))),
        ("((p))", P),
        ("[]p->[][]p", Implies(Box(P), Box(Box(P)))),
    ],
)
def test_parse_precedence(text, expected):
    assert parse_formula(text) == expected


def test_parse_sequents():
    s = parse_sequent("□(p ∨ q), ◇¬p ⊢ ◇q")
    assert s == Sequent((Box(Or(P, Q)), Dia(Not(P))), Dia(Q))
    assert str(s) == "□(p ∨ q), ◇¬p ⊢ ◇q"
    assert s.to_ascii() == "[](p | q), <>~p |- <>q"
    empty = parse_sequent("⊢ p → p")
    assert empty.premises == () and empty.conclusion == Implies(P, P)
    assert str(empty) == "⊢ p → p"
    assert parse_sequent("|-p") == Sequent((), P)
    assert parse_sequent("[](p|q),<>~p|-<>q") == s
    assert parse_sequent("p -> q, (q | r) ⊢ r") == Sequent((Implies(P, Q), Or(Q, R)), R)


@pytest.mark.parametrize(
    "text, position, fragment",
    [
        ("", 0, "empty input"),
        ("   ", 3, "empty input"),
        ("p ∧ q)", 5, "unexpected ')'"),
        ("(p ∧ q", 0, "unclosed '('"),
        ("(p q)", 3, "expected ')'"),
        ("p →", 3, "after '→'"),
        ("→ p", 0, "expected a formula"),
        ("¬", 1, "after '¬'"),
        ("p ∨", 3, "after '∨'"),
        ("p # q", 2, "unexpected character '#'"),
        ("P ∨ q", 0, "lowercase"),
        ("p - q", 2, "'->'"),
        ("p q", 2, "unexpected 'q'"),
        ("p ∧ q ∨ r", 6, "ambiguous mix"),
        ("p ⊢ q", 2, "turnstile"),
        ("p, q", 1, "unexpected ','"),
        ("()", 1, "expected a formula after '('"),
    ],
)
def test_formula_errors(text, position, fragment):
    with pytest.raises(ParseError) as info:
        parse_formula(text)
    error = info.value
    assert isinstance(error, ValueError)
    assert error.position == position
    assert fragment in str(error)
    assert f"at column {position + 1}" in str(error)
    caret_line = str(error).splitlines()[-1]
    assert caret_line == "  " + " " * position + "^"


@pytest.mark.parametrize(
    "text, position, fragment",
    [
        ("", 0, "empty input"),
        ("p, q", 4, "missing turnstile"),
        ("p ⊢ q ⊢ r", 6, "second"),
        ("p |- q |- r", 7, "second"),
        ("p, ⊢ q", 3, "after ','"),
        (", p ⊢ q", 0, "expected a formula"),
        ("p ⊢", 3, "conclusion"),
        ("p q ⊢ r", 2, "after a premise"),
        ("p) ⊢ q", 1, "unexpected ')'"),
        ("p ⊢ q, r", 5, "unexpected ','"),
        ("(p ⊢ q)", 3, "expected ')'"),
    ],
)
def test_sequent_errors(text, position, fragment):
    with pytest.raises(ParseError) as info:
        parse_sequent(text)
    assert info.value.position == position
    assert fragment in str(info.value)


def test_error_caret_survives_whitespace_and_newlines():
    with pytest.raises(ParseError) as info:
        parse_formula("p ∧\n\tq )")
    lines = str(info.value).splitlines()
    assert lines[1] == "  p ∧  q )"
    assert lines[2].index("^") == lines[1].index(")")


def test_every_short_token_string_parses_or_raises_parse_error():
    """No other exception type escapes the parser, whatever the input."""
    alphabet = ["p", "(", ")", "¬", "□", "∨", "->", ",", "⊢", " "]
    for n in range(4):
        for combo in itertools.product(alphabet, repeat=n):
            text = "".join(combo)
            for parse in (parse_formula, parse_sequent):
                try:
                    parse(text)
                except ParseError:
                    pass
