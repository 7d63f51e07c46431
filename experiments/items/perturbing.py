"""Matched-pair perturbations of a stored study (seed 002): new items that keep the logic and
change the tokens, each linked to its original (``Item.original``, same variant).

`items_perturb` asks each chosen design for its perturbation (the registry's `Design.perturb` hook): the design
turns its stored real items back into the specifications it renders from (RULEBREAKERS pair specs, dual-sided
rules, 003 interpretations: designs/paired/perturbing.py, designs/modal/perturbing.py), perturbs those and stores
the rendered items like any generation: validated first, all or nothing. What the designs share is here: the
stored real members of a design, and the pairs imported as written.
"""
from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass

from django.core.exceptions import ValidationError
from django.db import transaction

from logic import perturb
from logic.pairs import PairedItem
from ..models import Item, Study
from .storage import refuse_if_answered

@dataclass(frozen=True)
class PerturbReport:
    study: Study
    kind: str
    label: str
    designs: tuple[str, ...]
    items: int


def real_items(study: Study, design: str):
    return Item.objects.filter(study=study, design=design, condition="real")


def stored_members(study: Study, design: str) -> tuple[dict[str, dict[str, dict]], list[str]]:
    """pair id → role → one stored member (attributes, premises), and the variants stored."""
    pairs: dict[str, dict[str, dict]] = defaultdict(dict)
    variants: list[str] = []
    for pair_id, role, variant, attrs, premises in (
        real_items(study, design).order_by("id").values_list("pair_id", "pair_role", "variant", "attributes", "premises")
    ):
        pairs[pair_id].setdefault(role, {"attributes": attrs, "premises": premises})
        if variant not in variants:
            variants.append(variant)
    return pairs, variants


def rendered_by_generator(pair_id: str, attributes: dict) -> bool:
    """Whether a stored pair was rendered by the generator (rulebreakers.pair_id: a numeric index) rather than
    imported as written (a published id, kept in its pair id: RULEBREAKER_0000246)."""
    return "source_id" not in attributes and re.fullmatch(r"[^:]+:real:\d+", pair_id) is not None


def written_pairs_of(study: Study, design: str) -> tuple[tuple[PairedItem, ...], list[str]]:
    """The stored real members of `design` that were imported as written, as the pair items they were stored
    from (their written premises and conclusion, their attributes), one per pair and role; and the variants."""
    out: dict[tuple[str, str], PairedItem] = {}
    variants: list[str] = []
    rows = real_items(study, design).order_by("id").values_list(
        "pair_id", "pair_role", "variant", "attributes", "premises", "form_id", "gold_answer")
    for pair_id, role, variant, attrs, premises, form_id, gold in rows:
        if variant not in variants:
            variants.append(variant)
        if (pair_id, role) in out or rendered_by_generator(pair_id, attrs):
            continue
        kept = {k: v for k, v in attrs.items() if k not in ("conclusion", "member")}
        out[(pair_id, role)] = PairedItem(
            code=attrs.get("member") or f"{pair_id}:{role}", design=design, pair_id=pair_id, role=role,
            form_id=form_id, rule=attrs.get("rule", ""), premises=tuple(premises),
            conclusion=attrs.get("conclusion", ""),
            gold_answer=gold, question="", prompt="", variants=(), attributes=kept)
    return tuple(out.values()), variants


def _check_new_label(study: Study, design: str, label: str) -> None:
    if Item.objects.filter(study=study, design=design, condition=label).exists():
        raise ValidationError(f"Study '{study.slug}' already has '{label}' items of design '{design}'; "
                              "choose another --label.")


@transaction.atomic
def items_perturb(
    *, study: Study, kind: str, seed: int = 0, mapping: perturb.TokenMapping | Mapping[str, str] | None = None,
    label: str | None = None, designs: tuple[str, ...] | None = None,
) -> PerturbReport:
    """Add a perturbed copy of the study's real items (every design it has, or ``designs``)."""
    study = Study.objects.select_for_update().get(pk=study.pk)
    refuse_if_answered(study)  # a simulated pilot does not block a perturbed copy (issue 37)
    try:
        label = perturb.check_label(label, kind)
    except ValueError as exc:
        raise ValidationError(str(exc)) from None
    from .. import design_registry as registry

    present = sorted(set(Item.objects.filter(study=study, condition="real").order_by()
                        .values_list("design", flat=True).distinct()))
    chosen = tuple(designs or [d for d in present if d in registry.perturbable()])
    unknown = [d for d in chosen if d not in present]
    if unknown or not chosen:
        raise ValidationError(f"Study '{study.slug}' has no real items of design(s) {unknown or 'any perturbable'} "
                              f"(it has: {', '.join(present) or 'none'}).")
    created = 0
    try:
        for design in chosen:
            _check_new_label(study, design, label)
            perturb_design = registry.get(design).perturb if design in registry.perturbable() else None
            if perturb_design is None:
                raise ValidationError(f"Items of design '{design}' cannot be perturbed.")
            created += perturb_design(study=study, kind=kind, seed=seed, mapping=mapping, label=label)
    except ValueError as exc:  # the pure perturbations refuse bad input with ValueError
        raise ValidationError(f"Nothing was stored: {exc}") from None
    return PerturbReport(study=study, kind=kind, label=label, designs=chosen, items=created)
