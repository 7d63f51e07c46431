"""Decision procedure for local and global consequence in K, T, S4 and S5, with verified countermodels.

* Local consequence (Γ ⊨ φ): at every world of every model where all of Γ holds, φ holds.
  `entails(Γ, φ, system)` searches for a finite model of Γ ∪ {¬φ} at one world.
* Global consequence (Γ ⊨_g φ): in every model where Γ holds at every world, φ holds at every
  world — derivability with the necessitation rule, the ⊢ of paper 003 §3.1 (Appendix C.1: "as they
  are all rules of inference, the ground truth answer is always Yes"). A countermodel is a rooted
  model where Γ holds at every world and φ fails at the root (a generated submodel keeps Γ global).
  The search is the same tableau with Γ added to the seed of every world; in K and T a successor
  whose seed is contained in an ancestor's label is then linked back to that ancestor (subset
  blocking, as in S4), which keeps the search finite. p ⊨_g □p holds in every system; p ⊨ □p only
  where worlds see nothing but themselves — nowhere in K, T, S4 or S5.

All formulas are put in negation normal form. The tableau:

* K, T, S4 — an and-or search over a tree of worlds. A world's label is saturated
  propositionally (∧ adds both parts, ∨ branches, a literal and its negation close the branch;
  T and S4 add A for every □A: reflexivity). Each ◇B of a saturated label gets a successor whose
  seed is {B} ∪ {A : □A in the label}, plus the □A themselves in S4 (transitivity). Successors
  are independent, so a label succeeds iff every ◇-successor is satisfiable. A seed contained in
  an existing sibling's label reuses that sibling. In S4 a seed contained in the label of an
  ancestor on the current path (the current world included) is blocked: the edge goes to that
  ancestor instead, and the reflexive-transitive closure of the tree is taken.
* S5 — one cluster in which every world sees every world: for □A anywhere, A is added to every
  world; ◇B is witnessed by any world whose label has B, else by a new world seeded with
  {B} ∪ {A : □A anywhere}; disjunctions branch globally.

Every countermodel is checked with kripke.holds and is_frame_of before it is returned (a failure
raises CheckerInternalError), then pruned of worlds it does not need.

The search is exponential in the worst case (each disjunction may double it), so it runs under a
budget (issue 26 item 4): an argument of more than MAX_SIZE symbols is refused before any search, and
a search that visits more than `max_nodes` tableau nodes (a propositional branch, a world, an S5
step; MAX_NODES by default) stops. Both raise TooComplex, a ValueError whose message says "this form
is too complex to check (limit …)". A Verdict says how many nodes its search visited.
"""
from __future__ import annotations

import itertools
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from enum import StrEnum, nonmember
from functools import lru_cache

from .formula import (
    And, Atom, Box, Dia, Formula, Implies, Not, Or, atoms, modal_depth, nnf, size, to_ascii,
)
from .kripke import KripkeModel, holds, is_frame_of
from .parser import parse_formula

__all__ = [
    "CheckerInternalError",
    "Consequence",
    "MAX_NODES",
    "MAX_SIZE",
    "System",
    "TooComplex",
    "Verdict",
    "entails",
    "satisfiable",
    "truth_table_entails",
]


class _Named(StrEnum):
    """A choice parsed from its name in any case and with stray spaces ("s4", " Global ")."""

    @classmethod
    def parse(cls, value):
        if isinstance(value, cls):
            return value
        if isinstance(value, str):
            key = value.strip().casefold()
            for member in cls:
                if member.value.casefold() == key:
                    return member
        choices = ", ".join(member.value for member in cls)
        raise ValueError(f"unknown {cls._what} {value!r}; choose one of {choices}")


class System(_Named):
    K = "K"
    T = "T"
    S4 = "S4"
    S5 = "S5"

    _what = nonmember("modal system")


class Consequence(_Named):
    """Local: premises true at a world ⇒ conclusion true there. Global: premises true at every world ⇒
    conclusion true at every world."""

    LOCAL = "local"
    GLOBAL = "global"

    _what = nonmember("consequence relation")


class CheckerInternalError(AssertionError):
    """The tableau produced a model that does not falsify the argument: a bug, never data."""


# The budget. The designs' own arguments need at most a dozen nodes; 5,000 stop a search in about a
# fifth of a second. An importer checking many rows also caps the nodes of the whole file.
MAX_SIZE = 400  # symbols (atoms and connectives) in premises and conclusion together
MAX_NODES = 5_000  # tableau nodes one decision may visit


class TooComplex(ValueError):
    """The argument is larger, or its search longer, than the checker's budget allows."""

    def __init__(self, limit: str) -> None:
        self.limit = limit
        super().__init__(f"this form is too complex to check (limit {limit})")


class _Budget:
    __slots__ = ("limit", "used")

    def __init__(self, limit: int) -> None:
        self.limit, self.used = limit, 0

    def spend(self) -> None:
        self.used += 1
        if self.used > self.limit:
            raise TooComplex(f"{self.limit:,} search nodes")


@dataclass(frozen=True)
class Verdict:
    valid: bool
    system: System
    countermodel: KripkeModel | None = None
    consequence: Consequence = Consequence.LOCAL
    nodes: int = field(default=0, compare=False)  # tableau nodes the search visited

    def __post_init__(self) -> None:
        if self.valid != (self.countermodel is None):
            raise ValueError("a Verdict has a countermodel exactly when it is invalid")

    def __bool__(self) -> bool:
        return self.valid


# --------------------------------------------------------------------------- public API


def entails(
    premises: Iterable[Formula | str],
    conclusion: Formula | str,
    system: System | str = System.S5,
    consequence: Consequence | str = Consequence.LOCAL,
    *,
    max_nodes: int = MAX_NODES,
) -> Verdict:
    """Local consequence (default): at every world of every model of the system's frame class where
    all premises hold, the conclusion holds. Global: in every model where the premises hold at every
    world, the conclusion holds at every world. Strings are parsed with parse_formula.
    Raises TooComplex past the budget (MAX_SIZE symbols, `max_nodes` search nodes)."""
    premises, conclusion = tuple(_as_formula(p) for p in premises), _as_formula(conclusion)
    _check_size((*premises, conclusion))
    return _entails(premises, conclusion, System.parse(system), Consequence.parse(consequence), max_nodes)


def satisfiable(formulas: Iterable[Formula | str], system: System | str = System.S5, *,
                max_nodes: int = MAX_NODES) -> KripkeModel | None:
    """A (verified) model whose actual world satisfies every formula, or None if there is none.
    Raises TooComplex past the budget."""
    formulas = tuple(_as_formula(f) for f in formulas)
    _check_size(formulas)
    return _satisfiable(formulas, System.parse(system), max_nodes)


def _check_size(formulas: tuple[Formula, ...]) -> None:
    """Refuse an argument past MAX_SIZE symbols before any search (the formulas are at most
    parser.MAX_DEPTH deep, so the recursive size() is safe)."""
    total = sum(size(f) for f in formulas)
    if total > MAX_SIZE:
        raise TooComplex(f"{MAX_SIZE} symbols; this one has {total}")


def truth_table_entails(premises: Iterable[Formula | str], conclusion: Formula | str) -> bool:
    """Classical propositional consequence by enumerating valuations (no □/◇ allowed)."""
    prem = tuple(_as_formula(p) for p in premises)
    concl = _as_formula(conclusion)
    names = sorted(frozenset().union(*(atoms(f) for f in (*prem, concl))))
    for f in (*prem, concl):
        if modal_depth(f) > 0:
            raise ValueError(f"truth tables cover propositional formulas only, not {f}")
    for values in itertools.product((False, True), repeat=len(names)):
        true = {n for n, v in zip(names, values) if v}
        if all(_classical(p, true) for p in prem) and not _classical(concl, true):
            return False
    return True


# --------------------------------------------------------------------------- caching layer


@lru_cache(maxsize=8192)
def _entails(premises: tuple[Formula, ...], conclusion: Formula, system: System,
             consequence: Consequence = Consequence.LOCAL, max_nodes: int = MAX_NODES) -> Verdict:
    budget = _Budget(max_nodes)
    if consequence is Consequence.GLOBAL:
        model = _find_model((Not(conclusion),), system, budget, everywhere=premises)
    else:
        model = _find_model((*premises, Not(conclusion)), system, budget)
    return Verdict(valid=model is None, system=system, countermodel=model, consequence=consequence,
                   nodes=budget.used)


@lru_cache(maxsize=8192)
def _satisfiable(formulas: tuple[Formula, ...], system: System, max_nodes: int = MAX_NODES) -> KripkeModel | None:
    return _find_model(formulas, system, _Budget(max_nodes))


def _find_model(formulas: tuple[Formula, ...], system: System, budget: _Budget | None = None,
                everywhere: tuple[Formula, ...] = ()) -> KripkeModel | None:
    """A verified model with `formulas` true at its actual world and `everywhere` at every world."""
    budget = budget or _Budget(MAX_NODES)
    glob = frozenset(nnf(f) for f in everywhere)
    seed = frozenset(nnf(f) for f in formulas) | glob
    vocabulary = frozenset().union(*(atoms(f) for f in (*formulas, *everywhere)))
    if system is System.S5:
        # one cluster: a formula true at every world is □ of it at any world
        labels = _s5_start(seed | frozenset(Box(f) for f in glob), budget)
        if labels is None:
            return None
        model = _cluster_model(labels, vocabulary)
    else:
        root = _tree_search(seed, (), system, set(), budget, glob)
        if root is None:
            return None
        model = _tree_model(root, system, vocabulary)
    if not _is_model_of(model, formulas, system, everywhere):
        raise CheckerInternalError(
            f"tableau model for {', '.join(map(str, formulas))} (everywhere: "
            f"{', '.join(map(str, everywhere)) or 'nothing'}) in {system} fails verification:\n{model}"
        )
    return _prune(model, formulas, system, everywhere)


def _as_formula(value: Formula | str) -> Formula:
    return parse_formula(value) if isinstance(value, str) else value


# --------------------------------------------------------------------------- saturation


@lru_cache(maxsize=65536)
def _order_key(f: Formula) -> tuple[int, str]:
    """A deterministic order (string hashing is randomised per process)."""
    return size(f), to_ascii(f)


def _close(label: set[Formula], pending: list[Formula], reflexive: bool) -> bool:
    """Add `pending` to `label` with the deterministic rules (∧, and □A ⇒ A when reflexive).

    Mutates label; returns False when a literal and its negation meet (the branch closes).
    """
    while pending:
        f = pending.pop()
        if f in label:
            continue
        if isinstance(f, Atom):
            if Not(f) in label:
                return False
        elif isinstance(f, Not):
            if f.sub in label:
                return False
        label.add(f)
        if isinstance(f, And):
            pending.append(f.left)
            pending.append(f.right)
        elif reflexive and isinstance(f, Box):
            pending.append(f.sub)
    return True


def _open_disjunction(label: Iterable[Formula], contains) -> Or | None:
    candidates = [f for f in label
                  if isinstance(f, Or) and not contains(f.left) and not contains(f.right)]
    return min(candidates, key=_order_key) if candidates else None


def _expansions(seed: frozenset[Formula], reflexive: bool, budget: _Budget) -> Iterator[frozenset[Formula]]:
    """Every clash-free propositional saturation of seed, depth-first, left disjunct first."""
    label: set[Formula] = set()
    if _close(label, list(seed), reflexive):
        yield from _branch(label, reflexive, budget)


def _branch(label: set[Formula], reflexive: bool, budget: _Budget) -> Iterator[frozenset[Formula]]:
    budget.spend()
    choice = _open_disjunction(label, label.__contains__)
    if choice is None:
        yield frozenset(label)
        return
    for disjunct in (choice.left, choice.right):
        extended = set(label)
        if _close(extended, [disjunct], reflexive):
            yield from _branch(extended, reflexive, budget)


# --------------------------------------------------------------------------- K, T, S4


@dataclass(frozen=True, eq=False)
class _Node:
    label: frozenset[Formula]
    children: tuple[_Node | int, ...]  # an int is a back edge to the ancestor at that depth


def _tree_search(seed: frozenset[Formula], path: tuple[frozenset[Formula], ...],
                 system: System, unsatisfiable: set[frozenset[Formula]], budget: _Budget,
                 glob: frozenset[Formula] = frozenset()) -> _Node | None:
    """A world satisfying seed (with its subtree), or None when seed is unsatisfiable.

    `unsatisfiable` caches seeds that failed: the search finds a model for every satisfiable
    seed whatever the path, so a failure does not depend on the ancestors. `glob` (global
    assumptions) is added to every successor's seed.
    """
    if seed in unsatisfiable:
        return None
    budget.spend()
    for label in _expansions(seed, system is not System.K, budget):
        node = _successors(label, path, system, unsatisfiable, budget, glob)
        if node is not None:
            return node
    unsatisfiable.add(seed)
    return None


def _successors(label: frozenset[Formula], path: tuple[frozenset[Formula], ...],
                system: System, unsatisfiable: set[frozenset[Formula]], budget: _Budget,
                glob: frozenset[Formula] = frozenset()) -> _Node | None:
    boxes = [f for f in label if isinstance(f, Box)]
    carried = frozenset(f.sub for f in boxes) | glob
    if system is System.S4:
        carried |= frozenset(boxes)
    blocking = system is System.S4 or bool(glob)  # without global assumptions K and T trees are finite
    here = (*path, label)
    children: list[_Node | int] = []
    for dia in sorted((f for f in label if isinstance(f, Dia)), key=_order_key):
        seed = carried | {dia.sub}
        if any(isinstance(c, _Node) and seed <= c.label for c in children):
            continue  # an existing successor already witnesses ◇B
        if blocking:
            depth = next((d for d in range(len(here) - 1, -1, -1) if seed <= here[d]), None)
            if depth is not None:
                children.append(depth)
                continue
        child = _tree_search(seed, here, system, unsatisfiable, budget, glob)
        if child is None:
            return None
        children.append(child)
    return _Node(label, tuple(children))


def _tree_model(root: _Node, system: System, vocabulary: frozenset[str]) -> KripkeModel:
    worlds: list[str] = []
    edges: set[tuple[str, str]] = set()
    valuation: dict[str, frozenset[str]] = {}
    queue: deque[tuple[_Node, tuple[str, ...]]] = deque([(root, ("w0",))])
    counter = itertools.count(1)
    while queue:
        node, names = queue.popleft()
        name = names[-1]
        worlds.append(name)
        valuation[name] = _true_atoms(node.label)
        for child in node.children:
            if isinstance(child, int):
                edges.add((name, names[child]))
            else:
                child_name = f"w{next(counter)}"
                edges.add((name, child_name))
                queue.append((child, (*names, child_name)))
    if system is not System.K:
        edges |= {(w, w) for w in worlds}
    if system is System.S4:
        edges = _transitive_closure(worlds, edges)
    return KripkeModel(tuple(worlds), frozenset(edges), valuation, "w0", vocabulary)


def _transitive_closure(worlds: list[str], edges: set[tuple[str, str]]) -> set[tuple[str, str]]:
    closure = set(edges)
    for middle in worlds:
        sources = [a for a in worlds if (a, middle) in closure]
        targets = [b for b in worlds if (middle, b) in closure]
        closure.update((a, b) for a in sources for b in targets)
    return closure


def _true_atoms(label: Iterable[Formula]) -> frozenset[str]:
    return frozenset(f.name for f in label if isinstance(f, Atom))


# --------------------------------------------------------------------------- S5


def _s5_start(seed: frozenset[Formula], budget: _Budget) -> list[frozenset[Formula]] | None:
    first: set[Formula] = set()
    if not _close(first, list(seed), reflexive=True):
        return None
    return _s5_search([first], budget)


def _s5_search(worlds: list[set[Formula]], budget: _Budget) -> list[frozenset[Formula]] | None:
    """Labels of one cluster satisfying the branch, or None; `worlds` is owned by this call."""
    budget.spend()
    while True:  # □A anywhere ⇒ A everywhere, until nothing new appears
        bodies = {f.sub for w in worlds for f in w if isinstance(f, Box)}
        grew = False
        for label in worlds:
            missing = [b for b in bodies if b not in label]
            if missing:
                grew = True
                if not _close(label, missing, reflexive=True):
                    return None
        if not grew:
            break
    for index, label in enumerate(worlds):
        choice = _open_disjunction(label, label.__contains__)
        if choice is None:
            continue
        for disjunct in (choice.left, choice.right):
            copy = [set(w) for w in worlds]
            if _close(copy[index], [disjunct], reflexive=True):
                found = _s5_search(copy, budget)
                if found is not None:
                    return found
        return None
    for label in worlds:
        for dia in sorted((f for f in label if isinstance(f, Dia)), key=_order_key):
            if any(dia.sub in w for w in worlds):
                continue
            witness: set[Formula] = set()
            if not _close(witness, [dia.sub, *bodies], reflexive=True):
                return None
            return _s5_search([*worlds, witness], budget)
    return [frozenset(w) for w in worlds]


def _cluster_model(labels: list[frozenset[Formula]], vocabulary: frozenset[str]) -> KripkeModel:
    worlds = tuple(f"w{i}" for i in range(len(labels)))
    access = frozenset(itertools.product(worlds, worlds))
    valuation = {w: _true_atoms(label) for w, label in zip(worlds, labels)}
    return KripkeModel(worlds, access, valuation, "w0", vocabulary)


# --------------------------------------------------------------------------- verification


def _is_model_of(model: KripkeModel, formulas: tuple[Formula, ...], system: System,
                 everywhere: tuple[Formula, ...] = ()) -> bool:
    return (is_frame_of(model, system) and all(holds(model, model.actual, f) for f in formulas)
            and all(holds(model, w, f) for w in model.worlds for f in everywhere))


def _prune(model: KripkeModel, formulas: tuple[Formula, ...], system: System,
           everywhere: tuple[Formula, ...] = ()) -> KripkeModel:
    """Greedily drop worlds the model does not need (restricting R keeps the frame class)."""
    for world in reversed(model.worlds):
        if world == model.actual:
            continue
        kept = tuple(w for w in model.worlds if w != world)
        smaller = KripkeModel(
            kept,
            frozenset((a, b) for a, b in model.access if a != world and b != world),
            {w: model.true_atoms(w) for w in kept},
            model.actual,
            model.vocabulary,
        )
        if _is_model_of(smaller, formulas, system, everywhere):
            model = smaller
    return _renumber(model)


def _renumber(model: KripkeModel) -> KripkeModel:
    rename = {w: f"w{i}" for i, w in enumerate(model.worlds)}
    return KripkeModel(
        tuple(rename[w] for w in model.worlds),
        frozenset((rename[a], rename[b]) for a, b in model.access),
        {rename[w]: model.true_atoms(w) for w in model.worlds},
        rename[model.actual],
        model.vocabulary,
    )


# --------------------------------------------------------------------------- classical


def _classical(f: Formula, true: set[str]) -> bool:
    if isinstance(f, Atom):
        return f.name in true
    if isinstance(f, Not):
        return not _classical(f.sub, true)
    if isinstance(f, And):
        return _classical(f.left, true) and _classical(f.right, true)
    if isinstance(f, Or):
        return _classical(f.left, true) or _classical(f.right, true)
    if isinstance(f, Implies):
        return not _classical(f.left, true) or _classical(f.right, true)
    raise TypeError(f"not a propositional formula: {f!r}")
