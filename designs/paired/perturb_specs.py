"""The paired designs' specifications perturbed (seed 002), pure Python: RULEBREAKERS' pair specs (names, entities,
a custom mapping that may not put a known city or instance under the wrong country or type) and dual-sided rules (a
custom mapping). The machinery every perturbation shares (labels, token mappings) is logic/perturb.py's."""
from __future__ import annotations

import random
from collections.abc import Mapping, Sequence

from logic.perturb import TokenMapping, changed_only, check_label, real_only

from . import dual_sided, rulebreakers
from .rulebreakers import RulebreakerSpec
from .rulebreakers_data import Category, GivenName, Place, alternative_cities, capitals, categories, given_names


def _known_facts() -> dict[str, str]:
    facts = {p.city: p.country for p in (*capitals(), *alternative_cities())}
    facts.update({c.instance: c.type for c in (*categories(), *categories("alternate"))})
    return facts


def _check_facts(spec: RulebreakerSpec, facts: Mapping[str, str]) -> None:
    where = f"pair {spec.index}"
    if spec.whole == spec.swapped:
        raise ValueError(f"{where}: the non-rulebreaker would use the true {spec.whole!r}, so the pair breaks")
    known = facts.get(spec.part)
    if known is not None and known != spec.whole:
        raise ValueError(f"{where}: {spec.part!r} belongs to {known!r}, not {spec.whole!r}; the rulebreaker would break")
    if known is not None and known == spec.swapped:
        raise ValueError(f"{where}: {spec.part!r} belongs to {spec.swapped!r}; the non-rulebreaker would break")


def perturb_rulebreakers(
    specs: Sequence[RulebreakerSpec],
    *,
    kind: str,
    seed: int = 0,
    names: Sequence[GivenName] | None = None,
    places: Sequence[Place] | None = None,
    instances: Sequence[Category] | None = None,
    mapping: TokenMapping | Mapping[str, str] | None = None,
    label: str | None = None,
) -> tuple[RulebreakerSpec, ...]:
    """Perturbed pair specs; ``rulebreakers.render_all(result)`` gives items linked to the originals."""
    label = check_label(label, kind)
    specs = tuple(specs)
    real_only(specs, lambda s: s.condition)
    rng = random.Random(f"perturb:{kind}:{seed}")
    facts = _known_facts()
    if kind == "names":
        pool = tuple(given_names(alternate=True) if names is None else names)
        out = []
        for spec in specs:
            choices = [n for n in pool if n.name != spec.name]
            if not choices:
                raise ValueError("the name list has no name other than the original's")
            new = rng.choice(choices)
            out.append(rulebreakers.with_condition(spec, label, name=new.name, pronoun=new.pronoun))
        return tuple(out)
    if kind == "entities":
        place_pool = tuple(alternative_cities() if places is None else places)
        by_type: dict[str, list[Category]] = {}
        for c in (categories("alternate") if instances is None else instances):
            by_type.setdefault(c.type, []).append(c)
        countries = sorted({p.country for p in (*capitals(), *place_pool)})
        out = []
        for spec in specs:
            if spec.entity_kind == "geographical":
                choices = [p for p in place_pool if p.city != spec.part]
                if not choices:
                    raise ValueError("the place list has no city other than the original's")
                new = rng.choice(choices)
                swapped = spec.swapped if spec.swapped != new.country else rng.choice(
                    [c for c in countries if c != new.country])
                changed = rulebreakers.with_condition(spec, label, whole=new.country, part=new.city, swapped=swapped)
            else:
                choices = [c for c in by_type.get(spec.whole, []) if c.instance != spec.part]
                if not choices:
                    raise ValueError(f"the instance list has no other {spec.whole!r}")
                new = rng.choice(choices)
                changed = rulebreakers.with_condition(spec, label, part=new.instance, article=new.article)
            _check_facts(changed, {**{p.city: p.country for p in place_pool}, **facts})
            out.append(changed)
        return tuple(out)
    if kind == "mapping":
        table = mapping if isinstance(mapping, TokenMapping) else TokenMapping.of(mapping or {})
        pairs = []
        for spec in specs:
            name, part, whole, swapped = table.apply_unit((spec.name, spec.part, spec.whole, spec.swapped),
                                                          f"pair {spec.index}")
            new = rulebreakers.with_condition(spec, label, name=name, part=part, whole=whole, swapped=swapped)
            _check_facts(new, facts)
            pairs.append((spec, new))
        return changed_only(pairs, label, lambda old: {"original_index": old.index})
    raise ValueError("rulebreakers take the perturbations names, entities and mapping")


# ----------------------------------------------------------------------------- dual-sided rules


def perturb_rules(
    rules: Sequence[dual_sided.DualSidedRule],
    *,
    mapping: TokenMapping | Mapping[str, str],
    label: str | None = None,
) -> tuple[dual_sided.DualSidedRule, ...]:
    """Rules with the mapping applied to premise and both conclusions; unchanged rules are left out."""
    label = check_label(label, "mapping")
    rules = tuple(rules)
    real_only(rules, lambda r: r.condition)
    table = mapping if isinstance(mapping, TokenMapping) else TokenMapping.of(mapping)
    pairs = []
    for rule in rules:
        premise, conclusion, flipped = table.apply_unit(
            (rule.premise, rule.conclusion, rule.flipped_conclusion), f"rule {rule.rule_id}")
        pairs.append((rule, dual_sided.with_condition(rule, label, premise=premise, conclusion=conclusion,
                                                      flipped_conclusion=flipped)))
    return changed_only(pairs, label, lambda old: {"original_id": old.rule_id})
