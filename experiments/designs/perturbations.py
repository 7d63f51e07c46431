"""Matched-pair perturbations of a stored study (seed 002): new items that keep the logic and
change the tokens, each linked to its original (``Item.original``, same variant).

The stored real items are turned back into the specifications their design renders from
(RULEBREAKERS pair specs, dual-sided rules, 003 interpretations), logic/perturb.py perturbs
those, and the rendered items are stored like any generation: validated first, all or nothing.
"""
from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass

from django.core.exceptions import ValidationError
from django.db import transaction

from logic import dual_sided, perturb, perturb_written, rulebreakers
from logic import generate as gen
from logic.generate import InterpretationSpec
from logic.pairs import PairedItem
from logic.rulebreakers_data import categories
from logic.wording import Proposition
from ..models import Item, Study
from .paired import paired_items_store
from .storage import BULK_BATCH, item_from_generated, refuse_if_answered, save_interpretations

BOOKKEEPING = {"rule", "conclusion", "member", "rule_id"}


@dataclass(frozen=True)
class PerturbReport:
    study: Study
    kind: str
    label: str
    designs: tuple[str, ...]
    items: int


def _real(study: Study, design: str):
    return Item.objects.filter(study=study, design=design, condition="real")


def _members(study: Study, design: str) -> tuple[dict[str, dict[str, dict]], list[str]]:
    """pair id → role → one stored member (attributes, premises), and the variants stored."""
    pairs: dict[str, dict[str, dict]] = defaultdict(dict)
    variants: list[str] = []
    for pair_id, role, variant, attrs, premises in (
        _real(study, design).order_by("id").values_list("pair_id", "pair_role", "variant", "attributes", "premises")
    ):
        pairs[pair_id].setdefault(role, {"attributes": attrs, "premises": premises})
        if variant not in variants:
            variants.append(variant)
    return pairs, variants


def _generated(pair_id: str, attributes: dict) -> bool:
    """Whether a stored pair was rendered by the generator (rulebreakers.pair_id: a numeric index) rather than
    imported as written (a published id, kept in its pair id: RULEBREAKER_0000246)."""
    return "source_id" not in attributes and re.fullmatch(r"[^:]+:real:\d+", pair_id) is not None


def written_pairs_of(study: Study, design: str) -> tuple[tuple[PairedItem, ...], list[str]]:
    """The stored real members of `design` that were imported as written, as the pair items they were stored
    from (their written premises and conclusion, their attributes), one per pair and role; and the variants."""
    out: dict[tuple[str, str], PairedItem] = {}
    variants: list[str] = []
    rows = _real(study, design).order_by("id").values_list(
        "pair_id", "pair_role", "variant", "attributes", "premises", "form_id", "gold_answer")
    for pair_id, role, variant, attrs, premises, form_id, gold in rows:
        if variant not in variants:
            variants.append(variant)
        if (pair_id, role) in out or _generated(pair_id, attrs):
            continue
        kept = {k: v for k, v in attrs.items() if k not in ("conclusion", "member")}
        out[(pair_id, role)] = PairedItem(
            code=attrs.get("member") or f"{pair_id}:{role}", design=design, pair_id=pair_id, role=role,
            form_id=form_id, rule=attrs.get("rule", ""), premises=tuple(premises),
            conclusion=attrs.get("conclusion", ""),
            gold_answer=gold, question="", prompt="", variants=(), attributes=kept)
    return tuple(out.values()), variants


def rulebreaker_specs_of(study: Study) -> tuple[tuple[rulebreakers.RulebreakerSpec, ...], list[str]]:
    """The stored real pairs the generator rendered, as the specs they were rendered from (imported pairs:
    written_pairs_of)."""
    articles = {c.instance: c.article for c in (*categories(), *categories("alternate"))}
    pairs, variants = _members(study, rulebreakers.DESIGN)
    specs = []
    for pair_id, members in pairs.items():
        if not _generated(pair_id, members["rulebreaker"]["attributes"]):
            continue
        rb, nrb = members["rulebreaker"]["attributes"], members["non-rulebreaker"]["attributes"]
        kind = rb["entity_kind"]
        specs.append(rulebreakers.RulebreakerSpec(
            index=int(pair_id.rsplit(":", 1)[1]), rule=rb["rule"], entity_kind=kind, verb=rb["verb"],
            name=rb["name"], pronoun=rb["pronoun"], whole=rb["true_whole"], part=rb["part"],
            article="" if kind == "geographical" else articles.get(rb["part"], "a"), swapped=nrb["whole"],
        ))
    return tuple(sorted(specs, key=lambda s: s.index)), variants


def dual_sided_rules_of(study: Study) -> tuple[tuple[dual_sided.DualSidedRule, ...], list[int]]:
    """The stored real rules, and the templates they were stored under."""
    pairs, variants = _members(study, dual_sided.DESIGN)
    rules = []
    for members in pairs.values():
        original, flipped = members["original"], members["flipped"]
        attrs = original["attributes"]
        conclusion = attrs["conclusion"].removesuffix(".")
        stated = original["premises"][0]
        premise = stated.removeprefix("If ").removesuffix(f", then {conclusion}.")
        rules.append(dual_sided.DualSidedRule(
            row=0, rule_id=attrs["rule_id"], premise=premise, conclusion=conclusion,
            flipped_conclusion=flipped["attributes"]["conclusion"].removesuffix("."),
            attributes={k: v for k, v in attrs.items() if k not in BOOKKEEPING},
        ))
    return tuple(rules), [int(v.removeprefix("template-")) for v in variants]


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


def perturb_rulebreaker_items(*, study: Study, kind: str, seed: int, mapping, label: str) -> int:
    """Seed 000's pairs with other tokens (the registry's perturbation of 'rulebreakers'): generated pairs
    rendered again from their specs, imported pairs (RULEBREAKERS as published, a paired bank) with their
    written wording and published ids kept (logic/perturb_written.py)."""
    specs, variants = rulebreaker_specs_of(study)
    written, _ = written_pairs_of(study, rulebreakers.DESIGN)
    items: list[PairedItem] = []
    if specs:
        items += rulebreakers.render_all(perturb.perturb_rulebreakers(specs, kind=kind, seed=seed, mapping=mapping,
                                                                      label=label))
    if written:
        by_pair: dict[str, dict[str, PairedItem]] = defaultdict(dict)
        for member in written:
            by_pair[member.pair_id][member.role] = member
        pairs = [(m[rulebreakers.ROLES[0]], m[rulebreakers.ROLES[1]]) for m in by_pair.values()
                 if set(m) == set(rulebreakers.ROLES)]
        items += perturb_written.perturb_written_rulebreakers(pairs, kind=kind, seed=seed, mapping=mapping,
                                                              label=label)
    return paired_items_store(study=study, items=items, variants=variants, refuse=refuse_if_answered).items


def perturb_dual_sided_items(*, study: Study, kind: str, seed: int, mapping, label: str) -> int:
    """Seed 004's rules under a custom mapping (the registry's perturbation of 'dual-sided')."""
    if kind != "mapping":
        raise ValidationError("dual-sided rules take only a custom mapping (mapping:FILE.csv)")
    rules, templates = dual_sided_rules_of(study)
    new = perturb.perturb_rules(rules, mapping=mapping or {}, label=label)
    return paired_items_store(study=study, items=dual_sided.dual_sided_items(new, templates=templates),
                              refuse=refuse_if_answered).items


def perturb_interpretations(*, design: str, study: Study, kind: str, seed: int, mapping, label: str) -> int:
    """003's designs: new interpretations under the same logic (the registry's perturbation of them)."""
    return _perturb_interpretations(study, design, kind, seed, mapping, label)


def _perturb_interpretations(study: Study, design: str, kind: str, seed: int, mapping, label: str) -> int:
    used = set(_real(study, design).values_list("interpretation_id", flat=True))
    specs = tuple(
        InterpretationSpec(i.index, "real", Proposition(i.p_subject, i.p_predicate), Proposition(i.q_subject, i.q_predicate))
        for i in study.interpretations.filter(condition="real", pk__in=used).order_by("index")
    )
    if not specs:
        raise ValidationError(f"The '{design}' items have no interpretations to perturb.")
    new = perturb.perturb_interpretations(specs, kind=kind, seed=seed, mapping=mapping, label=label)
    rows = save_interpretations(study, [new])
    originals = dict(_real(study, design).values_list("code", "pk"))
    batch = [item_from_generated(study, g, rows, originals) for g in gen.generate(design, new, system=study.logic_system)]
    taken = Item.objects.filter(study=study, code__in=[i.code for i in batch]).count()
    if taken:
        raise ValidationError(f"Study '{study.slug}' already has {taken} of these items.")
    Item.objects.bulk_create(batch, batch_size=BULK_BATCH)
    return len(batch)
