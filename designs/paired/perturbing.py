"""The paired designs' perturbed copies (seed 002): RULEBREAKERS' pairs (000) and dual-sided rules (004) with other
tokens, each the registry's `Design.perturb` of its design (experiments/items/perturbing.py's items_perturb calls it)."""
from __future__ import annotations

from collections import defaultdict

from django.core.exceptions import ValidationError

from experiments.items.pairs import paired_items_store
from experiments.items.perturbing import rendered_by_generator, stored_members, written_pairs_of
from experiments.items.storage import refuse_if_answered
from experiments.models import Study
from logic.pairs import PairedItem

from . import dual_sided, perturb_specs, perturb_written, rulebreakers
from .rulebreakers_data import categories

BOOKKEEPING = {"rule", "conclusion", "member", "rule_id"}


def rulebreaker_specs_of(study: Study) -> tuple[tuple[rulebreakers.RulebreakerSpec, ...], list[str]]:
    """The stored real pairs the generator rendered, as the specs they were rendered from (imported pairs:
    written_pairs_of)."""
    articles = {c.instance: c.article for c in (*categories(), *categories("alternate"))}
    pairs, variants = stored_members(study, rulebreakers.DESIGN)
    specs = []
    for pair_id, members in pairs.items():
        if not rendered_by_generator(pair_id, members["rulebreaker"]["attributes"]):
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
    pairs, variants = stored_members(study, dual_sided.DESIGN)
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


def perturb_rulebreaker_items(*, study: Study, kind: str, seed: int, mapping, label: str) -> int:
    """Seed 000's pairs with other tokens (the registry's perturbation of 'rulebreakers'): generated pairs
    rendered again from their specs, imported pairs (RULEBREAKERS as published, a paired bank) with their
    written wording and published ids kept (logic/perturb_written.py)."""
    specs, variants = rulebreaker_specs_of(study)
    written, _ = written_pairs_of(study, rulebreakers.DESIGN)
    items: list[PairedItem] = []
    if specs:
        items += rulebreakers.render_all(perturb_specs.perturb_rulebreakers(specs, kind=kind, seed=seed, mapping=mapping,
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
    new = perturb_specs.perturb_rules(rules, mapping=mapping or {}, label=label)
    return paired_items_store(study=study, items=dual_sided.dual_sided_items(new, templates=templates),
                              refuse=refuse_if_answered).items
