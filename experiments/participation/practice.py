"""Practice questions: the rule that practice shares no logical form with the items the study tests
(each design's default set is its registry entry's: logic/human_defaults.py).

Practice trains the keys and the page, not the reasoning being measured. Before issue 16 every study
practised modus ponens with feedback — the form whose human accuracy is 003's headline result (§5,
Table 1) — so the practice told participants the answer to a tested form. The defaults now use forms
no design tests: conjunction elimination ("p and q, so q?" → Yes), disjunction introduction, and an
obvious non sequitur ("p, q, so r?" → No), written in the style of the design's own items (its
wording functions, its question, its number of statements).

Every default practice question carries its logical form (``logical_form``, a sequent), so the rule
is checkable: ``shared_forms`` compares normalised forms (atoms renamed in order of first appearance,
premises in any order), a test runs it over every design's defaults, and a study cannot open while a
practice question shares a form with one of its items (experiments/participation/readiness.py).
Practice stays a per-study option: HumanArm.practice is the list (empty = no practice), editable in
the admin; researcher-written questions without a logical form are not checked.

Pure Python: no Django imports; the designs registry is imported only when a set is asked for.
"""
from __future__ import annotations

from collections.abc import Iterable
from itertools import permutations

from logic.formula import Atom, Box, Dia, Formula, Not
from logic.parser import ParseError, Sequent, parse_sequent

# --------------------------------------------------------------------------- normal forms


def _atoms_in_order(formulas: Iterable[Formula]) -> list[str]:
    seen: list[str] = []

    def walk(f: Formula) -> None:
        if isinstance(f, Atom):
            if f.name not in seen:
                seen.append(f.name)
        elif isinstance(f, (Not, Box, Dia)):
            walk(f.sub)
        else:
            walk(f.left)
            walk(f.right)

    for formula in formulas:
        walk(formula)
    return seen


def _renamed(f: Formula, names: dict[str, str]) -> Formula:
    if isinstance(f, Atom):
        return Atom(names[f.name])
    if isinstance(f, (Not, Box, Dia)):
        return type(f)(_renamed(f.sub, names))
    return type(f)(_renamed(f.left, names), _renamed(f.right, names))


_CANONICAL = ("p", "q", "r", "s", "t", "u")


def normal_form(text: str) -> str:
    """The argument form of a sequent, whatever its atoms are called and its premises' order:
    "¬q, p ∨ q ⊢ p" and "P ∨ Q, ¬Q ⊢ P" both give "p ∨ q, ¬q ⊢ p". Raises ParseError."""
    sequent = parse_sequent(text.lower())  # RULEBREAKERS writes its forms with capital P and Q
    orders = permutations(sequent.premises) if len(sequent.premises) <= 4 else [sequent.premises]
    best = None
    for premises in orders:
        order = _atoms_in_order([*premises, sequent.conclusion])
        names = {name: (_CANONICAL[i] if i < len(_CANONICAL) else f"p{i}") for i, name in enumerate(order)}
        text = Sequent(tuple(_renamed(p, names) for p in premises), _renamed(sequent.conclusion, names)).to_unicode()
        best = text if best is None or text < best else best
    return best


def normal_forms(texts: Iterable[str]) -> frozenset[str]:
    """The normal forms of the texts that parse (others are skipped: they state no checkable form)."""
    out = set()
    for text in texts:
        try:
            out.add(normal_form(text))
        except (ParseError, ValueError):
            continue
    return frozenset(out)


def shared_forms(practice: Iterable[dict], tested: Iterable[str]) -> list[tuple[int, str]]:
    """(1-based number, normal form) of each practice question whose logical form is a tested one."""
    tested_forms = normal_forms(tested)
    shared = []
    for n, question in enumerate(practice, 1):
        form = question.get("logical_form") if isinstance(question, dict) else None
        if form and normal_forms([form]) & tested_forms:
            shared.append((n, normal_form(form)))
    return shared


# --------------------------------------------------------------------------- the designs' sets


def default_for(design: str) -> list[dict]:
    """A fresh copy of the design's default practice questions (the human arm's initial value); each
    design declares its set in the designs registry (logic/human_defaults.py)."""
    from ..designs import registry

    return registry.practice_for(design)


def tested_forms(design: str) -> tuple[str, ...] | None:
    """The forms the design declares it tests (None: its items carry their own, a bank's rows)."""
    from ..designs import registry

    return registry.tested_forms(design)


def all_tested_forms() -> frozenset[str]:
    """Every form some design declares that it tests (what a bank's practice is compared with too)."""
    from ..designs import registry

    return frozenset().union(*(normal_forms(d.tested_forms()) for d in registry.all_designs() if d.tested_forms))
