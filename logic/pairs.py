"""Linked item pairs, shared by the three paired designs (seeds 000, 004 and 002). Pure Python.

A pair has a kind and exactly two members, each with a role:

| kind | roles (first, second) | judged together as |
| --- | --- | --- |
| RULEBREAKERS (000) | rulebreaker, non-rulebreaker | paired accuracy τ: "no" to the first and "yes" to the second (000 Eq. 1) |
| dual-sided rules (004) | original, flipped | the rule is right only if the original is affirmed and the flipped denied (004 §3.1) |
| perturbation (002) | original, perturbed | one matched pair of the 2×2 table |

A paired design's kind is its name, and its roles and their gold answers are its own (each design's
generator declares DESIGN, ROLES and GOLD and registers them here with `register_kind`; the designs
registry carries them as `pair_roles`).

An item belongs to one design pair (its ``pair_id``); a perturbed item is also linked to its
original (``original_code``), which makes a second pair of kind "perturbation".
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

PERTURBATION = "perturbation"  # the kind of an original ↔ perturbed link (002), not a design
PERTURBATION_ROLES = ("original", "perturbed")


# Pair kind → (roles, gold answers by role): each paired design's generator registers its own when it is
# imported (register_kind), so this module imports none of them (no import circle).
_KINDS: dict[str, tuple[tuple[str, str], tuple[str, str]]] = {}


def register_kind(kind: str, roles: tuple[str, str], gold: tuple[str, str]) -> None:
    """Declare a paired design's kind, its two roles and their gold answers; ValueError for a kind
    registered twice or a role another kind uses."""
    if kind in _KINDS or kind == PERTURBATION:
        raise ValueError(f"pair kind {kind!r} is registered twice")
    taken = {role for known, _ in _KINDS.values() for role in known} | {PERTURBATION_ROLES[1]}
    if taken & set(roles):
        raise ValueError(f"pair kind {kind!r}: roles {sorted(taken & set(roles))} belong to another kind")
    _KINDS[kind] = (tuple(roles), tuple(gold))


def pair_roles() -> dict[str, tuple[str, str]]:
    """Pair kind → its roles (first, second): each paired design's, then the perturbation link's."""
    return {**{kind: roles for kind, (roles, _) in _KINDS.items()}, PERTURBATION: PERTURBATION_ROLES}


def gold_by_role() -> dict[str, str]:
    """A pair member's gold answer by its role (the paired designs'; a perturbed item keeps its original's)."""
    out: dict[str, str] = {}
    for roles, gold in _KINDS.values():
        out.update(zip(roles, gold))
    return out


class PairingError(ValueError):
    """Items that do not form well-made pairs; the message names every problem."""


@dataclass(frozen=True)
class PromptVariant:
    """One phrasing of an item: the participants' question (no answer instruction), its two answer
    words, the model's full prompt (ending in its answer cue)."""

    variant_id: str
    question: str
    positive: str  # the word that means "yes" in this phrasing: Yes / True / Right
    negative: str  # No / False / Wrong
    text: str


@dataclass(frozen=True)
class PairedItem:
    """One member of a linked pair, ready to be stored as an Item.

    ``prompt`` and ``question`` are the first variant's (the phrasing humans see by default);
    models are scored on every entry of ``variants``. ``attributes`` holds the descriptive labels
    the analyses group by (e.g. rule, entity kind, verb; or a rule bank's own columns).
    """

    code: str
    design: str
    pair_id: str
    role: str
    form_id: str
    rule: str
    premises: tuple[str, ...]
    conclusion: str
    gold_answer: str  # "yes" / "no"
    question: str
    prompt: str
    variants: tuple[PromptVariant, ...]
    condition: str = "real"
    original_code: str | None = None  # for a perturbed item, the item it perturbs
    attributes: Mapping[str, str] = field(default_factory=dict, hash=False)

    @property
    def pair_kind(self) -> str:
        return pair_kind_of(self.role)


@dataclass(frozen=True)
class ItemPair:
    pair_id: str
    kind: str
    first: str  # code of the member with the kind's first role
    second: str

    @property
    def roles(self) -> tuple[str, str]:
        return pair_roles()[self.kind]


def pair_kind_of(role: str) -> str:
    if role == PERTURBATION_ROLES[1]:
        return PERTURBATION
    for kind, roles in pair_roles().items():
        if role in roles and kind != PERTURBATION:
            return kind
    raise PairingError(f"unknown role {role!r}; expected one of {sorted({*gold_by_role(), PERTURBATION_ROLES[1]})}")


def link_pairs(items: Iterable[PairedItem]) -> tuple[ItemPair, ...]:
    """The design pairs of the items, in order of first appearance.

    Every pair id must have exactly the two roles of its kind, once each; otherwise PairingError
    lists every faulty pair (nothing is returned).
    """
    members: dict[str, dict[str, list[str]]] = {}
    kinds: dict[str, set[str]] = {}
    problems: list[str] = []
    for item in items:
        try:
            kind = pair_kind_of(item.role)
        except PairingError as exc:
            problems.append(f"item {item.code}: {exc}")
            continue
        members.setdefault(item.pair_id, {}).setdefault(item.role, []).append(item.code)
        kinds.setdefault(item.pair_id, set()).add(kind)
    pairs = []
    for pair_id, by_role in members.items():
        if len(kinds[pair_id]) != 1:
            problems.append(f"pair {pair_id}: mixes roles of kinds {sorted(kinds[pair_id])}")
            continue
        kind = next(iter(kinds[pair_id]))
        first, second = pair_roles()[kind]
        for role in (first, second):
            codes = by_role.get(role, [])
            if len(codes) != 1:
                problems.append(f"pair {pair_id}: has {len(codes)} '{role}' members (needs exactly 1)")
        if all(len(by_role.get(role, [])) == 1 for role in (first, second)):
            pairs.append(ItemPair(pair_id, kind, by_role[first][0], by_role[second][0]))
    if problems:
        raise PairingError("; ".join(problems))
    return tuple(pairs)


def perturbation_links(originals: Iterable, perturbed: Iterable) -> tuple[ItemPair, ...]:
    """original ↔ perturbed pairs from items that carry ``code`` and ``original_code``.

    Works for any item type with those two attributes (PairedItem, generate.GeneratedItem).
    Every perturbed item must name an original that is present; each original is perturbed at
    most once per call (one perturbation, one partner).
    """
    known = {item.code for item in originals}
    seen: dict[str, str] = {}
    problems: list[str] = []
    pairs = []
    for item in perturbed:
        original = item.original_code
        if original is None:
            problems.append(f"item {item.code} names no original")
        elif original not in known:
            problems.append(f"item {item.code}: its original {original} is not among the originals")
        elif original in seen:
            problems.append(f"original {original} is perturbed twice ({seen[original]}, {item.code})")
        else:
            seen[original] = item.code
            pairs.append(ItemPair(f"{PERTURBATION}:{item.code}", PERTURBATION, original, item.code))
    if problems:
        raise PairingError("; ".join(problems))
    return tuple(pairs)
