"""The paired designs' items (issue 6): RULEBREAKERS' generated pairs (000), dual-sided rules imported from a bank
or ULogic's file (004), and the knowledge probe of a RULEBREAKERS item (000 §4.1). They are stored as any linked
pairs are (experiments/items/pairs.py); RULEBREAKERS' published file is read by published.py."""
from __future__ import annotations

import functools
from collections.abc import Sequence

from django.core.exceptions import ValidationError
from django.db import transaction

from experiments.design_registry import Preview
from experiments.items import sources
from experiments.items.pairs import PairedReport, paired_items_preview, paired_items_store
from experiments.items.storage import design_items_replace, refuse_if_locked, refuse_if_too_many
from experiments.models import Study

from . import dual_sided, rulebreakers
from .rulebreakers_data import alternative_cities, capitals


@transaction.atomic
def rulebreakers_generate(
    *, study: Study, pairs: int | None = None, seed: int = 0, rules: Sequence[str] = rulebreakers.RULES,
    entity_kinds: Sequence[str] = rulebreakers.ENTITY_KINDS,
    names_per_combination: int = rulebreakers.NAMES_PER_COMBINATION,
    variants: Sequence[str] | str | None = "all", replace: bool = False,
) -> PairedReport:
    """Seed 000's design: rulebreaker / non-rulebreaker pairs under the chosen phrasings of §4.2."""
    refuse_if_locked(study)
    try:
        items = rulebreakers.generate_rulebreakers(
            seed=seed, pairs=pairs, rules=rules, entity_kinds=entity_kinds,
            names_per_combination=names_per_combination,
        )
    except ValueError as exc:
        raise ValidationError(str(exc)) from None
    replaced = design_items_replace(study=study, design=rulebreakers.DESIGN, replace=replace)
    report = paired_items_store(study=study, items=items, variants=variants)
    _record(study, rulebreakers.DESIGN, {"seed": seed, "pairs": pairs, "rules": list(rules),
                                          "entity_kinds": list(entity_kinds),
                                          "names_per_combination": names_per_combination})
    return PairedReport(**{**report.__dict__, "replaced": replaced})


def _published_rules(study: Study, data, format: str, existing: frozenset[str], filename: str):
    """The rules of a published format (sources/) checked as bank rows are, and every problem."""
    rows, problems = sources.read_for(dual_sided.DESIGN, format, data, filename=filename)
    problems, rules = list(problems), []
    for number, row in enumerate(rows, 1):
        rule, errors = dual_sided.parse_rule_record(row.fields, number=number)
        if rule is not None and rule.rule_id in existing:
            errors = [("rule_id", f"'{rule.rule_id}' already exists in this study")]
        problems += [sources.Problem(row.id, column, reason) for column, reason in errors]
        if not errors:
            rules.append(rule)
    return rules, problems


def _dual_sided_items(study: Study, data, templates: Sequence[int], format: str = sources.BANK, filename: str = ""):
    """(items, the chosen templates, problems of a published format's rows)."""
    refuse_if_locked(study)
    try:
        chosen = dual_sided.check_templates(templates)
    except ValueError as exc:
        raise ValidationError(str(exc)) from None
    existing = frozenset(a.get("rule_id", "") for a in study.items.filter(design=dual_sided.DESIGN)
                         .values_list("attributes", flat=True))
    if format in (None, sources.BANK):
        rules, problems = dual_sided.parse_rule_bank(data, existing_ids=existing), []
    else:
        rules, problems = _published_rules(study, data, format, existing, filename)
        if not rules:
            raise sources.RowProblems(problems, importable=0)
    items = dual_sided.dual_sided_items(rules, templates=chosen)
    refuse_if_too_many(sum(len(item.variants) for item in items))  # an import's bound (generators have none)
    return items, chosen, problems


def dual_sided_preview(*, study: Study, data, templates: Sequence[int] = (1, 2, 3, 4, 5), rows: int = 10,
                       format: str = sources.BANK, filename: str = "") -> Preview:
    """What dual_sided_import would write, without writing (the same checks); a published format's rows
    that would be left out are the preview's problems."""
    items, _, problems = _dual_sided_items(study, data, templates, format, filename)
    preview = paired_items_preview(study=study, items=items, rows=rows)
    return Preview(count=preview.count, items=preview.items, problems=tuple(problems))


def dual_sided_import(*, study: Study, data, templates: Sequence[int] = (1, 2, 3, 4, 5), format: str = sources.BANK,
                      skip_problems: bool = False, filename: str = "") -> PairedReport:
    """Seed 004: a rule bank from CSV → original (yes) and flipped (no) items under the templates.

    Row errors raise logic.csv_table.CsvImportError (every error names its row and column). The file
    is parsed before the write's transaction begins (no write lock while parsing). A published format
    (`format`, sources/: ulogic-json) is read by its reader, which derives the flipped conclusions;
    its rows that cannot be read or flipped refuse the import (sources.RowProblems, by row id) unless
    `skip_problems`, which writes the others and lists these in the report's `left_out`."""
    items, chosen, problems = _dual_sided_items(study, data, templates, format, filename)
    left_out = sources.refuse_or_keep(problems, importable=len(items) // 2, skip_problems=skip_problems)
    with transaction.atomic():
        report = paired_items_store(study=study, items=items)
        _record(study, dual_sided.DESIGN, {"templates": list(chosen),
                                           **({"format": format} if format not in (None, sources.BANK) else {})})
    if format in (None, sources.BANK):
        return report
    return PairedReport(**{**report.__dict__, "source": format, "left_out": left_out})


def _record(study: Study, design: str, options: dict) -> None:
    study.refresh_from_db(fields=["settings"])
    generated = dict((study.settings or {}).get("paired_designs", {}))
    generated[design] = options
    study.settings = {**study.settings, "paired_designs": generated}
    study.save(update_fields=["settings", "updated_at"])


@functools.cache
def _city_aliases() -> dict[str, tuple[str, ...]]:
    return {p.city: tuple(p.aliases) for p in (*capitals(), *alternative_cities())}


def rulebreakers_probe(attributes: dict) -> rulebreakers.KnowledgeProbe | None:
    """000 §4.1's knowledge probe for a rulebreakers item (its city or instance and the true country
    or type, with the city's other names); None when the item's attributes do not say them."""
    kind, part, whole = attributes.get("entity_kind"), attributes.get("part"), attributes.get("true_whole")
    if not (kind and part and whole):
        return None
    return rulebreakers.knowledge_probe(kind, whole, part, _city_aliases().get(part, ()))

