"""The argument form of a sequent whatever its atoms are called and its premises' order (atoms renamed
in order of first appearance, premises in any order): what experiments/participation/practice.py compares
practice questions with a study's tested forms by, and what a practice question's `logical_form` must parse
as (the human arm's check, experiments/models/human_arm.py)."""
from __future__ import annotations

from collections.abc import Iterable
from itertools import permutations

from .formula import Atom, Box, Dia, Formula, Not
from .parser import ParseError, Sequent, parse_sequent


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
