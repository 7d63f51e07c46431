"""Finite Kripke models: truth of modal formulas, frame conditions, readable descriptions.

A model is a frozen (hashable) dataclass. Worlds are named "w0", "w1", …; `actual` is the world
at which an argument is evaluated. The valuation is stored as a tuple of (world, atoms true there)
pairs, one per world in `worlds` order; a Mapping is accepted when constructing.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from .formula import And, Atom, Box, Dia, Formula, Implies, Not, Or, atoms

__all__ = [
    "FRAME_REQUIREMENTS",
    "KripkeModel",
    "describe",
    "frame_conditions",
    "holds",
    "is_frame_of",
]

# Which relational properties a frame needs to belong to each system's class.
FRAME_REQUIREMENTS: dict[str, frozenset[str]] = {
    "K": frozenset(),
    "T": frozenset({"reflexive"}),
    "S4": frozenset({"reflexive", "transitive"}),
    "S5": frozenset({"reflexive", "symmetric", "transitive"}),
}


@dataclass(frozen=True)
class KripkeModel:
    """⟨W, R, V⟩ with a designated actual world.

    `vocabulary` lists atoms the model is about even where they are false everywhere (so that
    `describe` can print "¬q"); atoms true somewhere are always added to it.
    """

    worlds: tuple[str, ...]
    access: frozenset[tuple[str, str]]
    valuation: tuple[tuple[str, frozenset[str]], ...]
    actual: str
    vocabulary: frozenset[str] = field(default=frozenset())

    def __post_init__(self) -> None:
        worlds = tuple(self.worlds)
        if not worlds:
            raise ValueError("a Kripke model needs at least one world")
        if len(set(worlds)) != len(worlds):
            raise ValueError(f"duplicate world names in {worlds!r}")
        known = set(worlds)
        access = frozenset((a, b) for a, b in self.access)
        for a, b in access:
            if a not in known or b not in known:
                raise ValueError(f"accessibility pair ({a!r}, {b!r}) names an unknown world")
        given = dict(self.valuation.items() if isinstance(self.valuation, Mapping)
                     else self.valuation)
        unknown = set(given) - known
        if unknown:
            raise ValueError(f"valuation names unknown worlds: {sorted(unknown)}")
        valuation = tuple((w, frozenset(given.get(w, ()))) for w in worlds)
        if self.actual not in known:
            raise ValueError(f"actual world {self.actual!r} is not one of {list(worlds)}")
        vocabulary = frozenset(self.vocabulary).union(*(true for _, true in valuation))
        object.__setattr__(self, "worlds", worlds)
        object.__setattr__(self, "access", access)
        object.__setattr__(self, "valuation", valuation)
        object.__setattr__(self, "vocabulary", vocabulary)

    # -- look-ups (cached per instance; not part of equality) ---------------------------

    @cached_property
    def _true_atoms(self) -> dict[str, frozenset[str]]:
        return dict(self.valuation)

    @cached_property
    def _successors(self) -> dict[str, tuple[str, ...]]:
        order = {w: i for i, w in enumerate(self.worlds)}
        out: dict[str, list[str]] = {w: [] for w in self.worlds}
        for a, b in self.access:
            out[a].append(b)
        return {w: tuple(sorted(succ, key=order.__getitem__)) for w, succ in out.items()}

    def true_atoms(self, world: str) -> frozenset[str]:
        """Atoms true at `world`."""
        try:
            return self._true_atoms[world]
        except KeyError:
            raise ValueError(f"unknown world {world!r}") from None

    def successors(self, world: str) -> tuple[str, ...]:
        """Worlds accessible from `world`, in `worlds` order."""
        try:
            return self._successors[world]
        except KeyError:
            raise ValueError(f"unknown world {world!r}") from None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready description (lists and strings only)."""
        order = {w: i for i, w in enumerate(self.worlds)}
        return {
            "worlds": list(self.worlds),
            "actual": self.actual,
            "access": [list(pair) for pair in sorted(
                self.access, key=lambda pair: (order[pair[0]], order[pair[1]]))],
            "valuation": {w: sorted(true) for w, true in self.valuation},
            "atoms": sorted(self.vocabulary),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> KripkeModel:
        """Inverse of to_dict."""
        return cls(
            worlds=tuple(data["worlds"]),
            access=frozenset(tuple(pair) for pair in data["access"]),
            valuation={w: frozenset(true) for w, true in data["valuation"].items()},
            actual=data["actual"],
            vocabulary=frozenset(data.get("atoms", ())),
        )

    def __str__(self) -> str:
        return describe(self)


# --------------------------------------------------------------------------- semantics


def holds(model: KripkeModel, world: str, formula: Formula) -> bool:
    """M, w ⊨ φ under the standard Kripke semantics."""
    if world not in model._true_atoms:
        raise ValueError(f"unknown world {world!r}")
    return _holds(model, world, formula)


def _holds(model: KripkeModel, world: str, f: Formula) -> bool:
    if isinstance(f, Atom):
        return f.name in model._true_atoms[world]
    if isinstance(f, Not):
        return not _holds(model, world, f.sub)
    if isinstance(f, And):
        return _holds(model, world, f.left) and _holds(model, world, f.right)
    if isinstance(f, Or):
        return _holds(model, world, f.left) or _holds(model, world, f.right)
    if isinstance(f, Implies):
        return (not _holds(model, world, f.left)) or _holds(model, world, f.right)
    if isinstance(f, Box):
        return all(_holds(model, v, f.sub) for v in model._successors[world])
    if isinstance(f, Dia):
        return any(_holds(model, v, f.sub) for v in model._successors[world])
    raise TypeError(f"not a formula: {f!r}")


# --------------------------------------------------------------------------- frames


def frame_conditions(model: KripkeModel) -> frozenset[str]:
    """Which of reflexive, symmetric, transitive, serial, euclidean the relation has."""
    r = model.access
    succ = model._successors
    found = set()
    if all((w, w) in r for w in model.worlds):
        found.add("reflexive")
    if all((b, a) in r for a, b in r):
        found.add("symmetric")
    if all((a, c) in r for a, b in r for c in succ[b]):
        found.add("transitive")
    if all(succ[w] for w in model.worlds):
        found.add("serial")
    if all((b, c) in r for a, b in r for c in succ[a]):
        found.add("euclidean")
    return frozenset(found)


def is_frame_of(model: KripkeModel, system: str) -> bool:
    """Does the model's frame belong to the class of K, T, S4 or S5 (case-insensitive)?"""
    key = str(system).strip().upper()
    try:
        required = FRAME_REQUIREMENTS[key]
    except KeyError:
        raise ValueError(
            f"unknown modal system {system!r}; choose one of {', '.join(FRAME_REQUIREMENTS)}"
        ) from None
    return required <= frame_conditions(model)


# --------------------------------------------------------------------------- text


def describe(model: KripkeModel, extra_atoms: Iterable[str] | Formula = ()) -> str:
    """Multiline text: worlds, accessibility, valuation per world and the actual world.

    Every atom of the model's vocabulary (plus `extra_atoms`, or the atoms of a formula passed
    there) is listed at every world as true ("p") or false ("¬q").
    """
    if not isinstance(extra_atoms, (str, Iterable)):
        extra_atoms = atoms(extra_atoms)
    elif isinstance(extra_atoms, str):
        extra_atoms = (extra_atoms,)
    names = sorted(model.vocabulary.union(extra_atoms))
    edges = [f"{a} → {b}" for a in model.worlds for b in model.successors(a)]
    lines = [
        "Worlds: " + ", ".join(
            f"{w} (actual)" if w == model.actual else w for w in model.worlds),
        "Accessibility: " + (", ".join(edges) if edges else "none"),
        "Valuation:",
    ]
    for world in model.worlds:
        true = model.true_atoms(world)
        listed = ", ".join(n if n in true else f"¬{n}" for n in names)
        lines.append(f"  {world}: {listed if listed else '(no atoms)'}")
    lines.append(f"Actual world: {model.actual}")
    return "\n".join(lines)
