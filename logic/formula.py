"""Formulas of propositional modal logic as immutable trees.

Nodes are frozen dataclasses (hashable, comparable by structure): Atom, Not, Box, Dia, And, Or,
Implies. Printing follows the paper's conventions: ¬ □ ◇ bind tighter than ∧ ∨, which bind
tighter than →; → associates to the right; ∧ and ∨ associate to the left and are never mixed
without parentheses. `str(formula)` is the Unicode rendering.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Union

__all__ = [
    "And",
    "Atom",
    "Box",
    "Dia",
    "Formula",
    "Implies",
    "Not",
    "Or",
    "atoms",
    "is_nnf",
    "modal_depth",
    "nnf",
    "size",
    "subformulas",
    "to_ascii",
    "to_unicode",
]

ATOM_PATTERN = re.compile(r"[a-z][A-Za-z0-9_]*")


class _Node:
    """Shared behaviour of every formula node."""

    __slots__ = ()

    def __str__(self) -> str:
        return to_unicode(self)  # type: ignore[arg-type]


def _check_sub(owner: str, value: object) -> None:
    if not isinstance(value, _Node):
        raise TypeError(f"{owner} expects a formula, got {value!r}")


@dataclass(frozen=True, slots=True)
class Atom(_Node):
    """A propositional variable: a lowercase letter, then letters, digits or underscores."""

    name: str

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not ATOM_PATTERN.fullmatch(self.name):
            raise ValueError(
                f"invalid atom name {self.name!r}: an atom is a lowercase letter followed by "
                "letters, digits or underscores (e.g. p, q, r1, rain)"
            )


@dataclass(frozen=True, slots=True)
class Not(_Node):
    sub: Formula

    def __post_init__(self) -> None:
        _check_sub("Not", self.sub)


@dataclass(frozen=True, slots=True)
class Box(_Node):
    sub: Formula

    def __post_init__(self) -> None:
        _check_sub("Box", self.sub)


@dataclass(frozen=True, slots=True)
class Dia(_Node):
    sub: Formula

    def __post_init__(self) -> None:
        _check_sub("Dia", self.sub)


@dataclass(frozen=True, slots=True)
class And(_Node):
    left: Formula
    right: Formula

    def __post_init__(self) -> None:
        _check_sub("And", self.left)
        _check_sub("And", self.right)


@dataclass(frozen=True, slots=True)
class Or(_Node):
    left: Formula
    right: Formula

    def __post_init__(self) -> None:
        _check_sub("Or", self.left)
        _check_sub("Or", self.right)


@dataclass(frozen=True, slots=True)
class Implies(_Node):
    left: Formula
    right: Formula

    def __post_init__(self) -> None:
        _check_sub("Implies", self.left)
        _check_sub("Implies", self.right)


Formula = Union[Atom, Not, Box, Dia, And, Or, Implies]

_UNARY = (Not, Box, Dia)
_BINARY = (And, Or, Implies)

UNICODE_SYMBOLS = {Not: "¬", Box: "□", Dia: "◇", And: "∧", Or: "∨", Implies: "→"}
ASCII_SYMBOLS = {Not: "~", Box: "[]", Dia: "<>", And: "&", Or: "|", Implies: "->"}


# --------------------------------------------------------------------------- printing


def _render(f: Formula, symbols: dict) -> str:
    if isinstance(f, Atom):
        return f.name
    if isinstance(f, _UNARY):
        inner = _render(f.sub, symbols)
        if isinstance(f.sub, _BINARY):
            inner = f"({inner})"
        return symbols[type(f)] + inner
    if isinstance(f, (And, Or)):
        left = _render(f.left, symbols)
        right = _render(f.right, symbols)
        # left-associative; a different junction or an implication needs parentheses
        if isinstance(f.left, Implies) or (
            isinstance(f.left, (And, Or)) and type(f.left) is not type(f)
        ):
            left = f"({left})"
        if isinstance(f.right, _BINARY):
            right = f"({right})"
        return f"{left} {symbols[type(f)]} {right}"
    if isinstance(f, Implies):
        left = _render(f.left, symbols)
        if isinstance(f.left, Implies):  # right-associative
            left = f"({left})"
        return f"{left} {symbols[Implies]} {_render(f.right, symbols)}"
    raise TypeError(f"not a formula: {f!r}")


def to_unicode(f: Formula) -> str:
    """E.g. "□(p ∨ q)", "¬◇p", "¬p → q", "□p ∨ □q" (minimal parentheses)."""
    return _render(f, UNICODE_SYMBOLS)


def to_ascii(f: Formula) -> str:
    """The same layout as to_unicode with [] <> ~ | & -> ."""
    return _render(f, ASCII_SYMBOLS)


# --------------------------------------------------------------------------- measures


def _children(f: Formula) -> tuple[Formula, ...]:
    if isinstance(f, Atom):
        return ()
    if isinstance(f, _UNARY):
        return (f.sub,)
    if isinstance(f, _BINARY):
        return (f.left, f.right)
    raise TypeError(f"not a formula: {f!r}")


def atoms(f: Formula) -> frozenset[str]:
    """Names of the atoms occurring in f."""
    if isinstance(f, Atom):
        return frozenset((f.name,))
    out: frozenset[str] = frozenset()
    for child in _children(f):
        out |= atoms(child)
    return out


def subformulas(f: Formula) -> tuple[Formula, ...]:
    """Every distinct subformula of f (f included), children before parents, left to right."""
    seen: dict[Formula, None] = {}

    def walk(g: Formula) -> None:
        for child in _children(g):
            walk(child)
        seen.setdefault(g, None)

    walk(f)
    return tuple(seen)


def modal_depth(f: Formula) -> int:
    """Maximal nesting of □/◇."""
    below = max((modal_depth(c) for c in _children(f)), default=0)
    return below + 1 if isinstance(f, (Box, Dia)) else below


def size(f: Formula) -> int:
    """Number of symbol occurrences: atoms plus connectives."""
    return 1 + sum(size(c) for c in _children(f))


# --------------------------------------------------------------------------- normal form


def nnf(f: Formula) -> Formula:
    """Negation normal form: → eliminated, ¬ only directly in front of atoms.

    Uses a → b ≡ ¬a ∨ b, De Morgan, ¬¬a ≡ a, ¬□a ≡ ◇¬a and ¬◇a ≡ □¬a.
    """
    if isinstance(f, Atom):
        return f
    if isinstance(f, Not):
        return _negated_nnf(f.sub)
    if isinstance(f, And):
        return And(nnf(f.left), nnf(f.right))
    if isinstance(f, Or):
        return Or(nnf(f.left), nnf(f.right))
    if isinstance(f, Implies):
        return Or(_negated_nnf(f.left), nnf(f.right))
    if isinstance(f, Box):
        return Box(nnf(f.sub))
    if isinstance(f, Dia):
        return Dia(nnf(f.sub))
    raise TypeError(f"not a formula: {f!r}")


def _negated_nnf(g: Formula) -> Formula:
    """nnf(¬g)."""
    if isinstance(g, Atom):
        return Not(g)
    if isinstance(g, Not):
        return nnf(g.sub)
    if isinstance(g, And):
        return Or(_negated_nnf(g.left), _negated_nnf(g.right))
    if isinstance(g, Or):
        return And(_negated_nnf(g.left), _negated_nnf(g.right))
    if isinstance(g, Implies):
        return And(nnf(g.left), _negated_nnf(g.right))
    if isinstance(g, Box):
        return Dia(_negated_nnf(g.sub))
    if isinstance(g, Dia):
        return Box(_negated_nnf(g.sub))
    raise TypeError(f"not a formula: {g!r}")


def is_nnf(f: Formula) -> bool:
    """True when f has no → and ¬ applies only to atoms."""
    if isinstance(f, Atom):
        return True
    if isinstance(f, Not):
        return isinstance(f.sub, Atom)
    if isinstance(f, Implies):
        return False
    return all(is_nnf(c) for c in _children(f))
