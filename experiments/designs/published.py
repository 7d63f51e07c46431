"""RULEBREAKERS as its authors published it (issue 27), into the rulebreakers design: the reader's rows
(sources/rulebreakers.py) become pair members under the design's ten phrasings (000 §4.2), exactly as
generated pairs do, and are stored by paired.paired_items_store (every check of paired.py). Generation
stays in paired.rulebreakers_generate; the registry's entry (catalog.py) declares both."""
from __future__ import annotations

from collections.abc import Sequence

from django.core.exceptions import ValidationError
from django.db import transaction

from logic import rulebreakers
from logic.pairs import PairedItem
from ..models import Study
from . import sources
from .paired import PairedReport, choose_variants, paired_items_preview, paired_items_store
from .registry import Preview
from .storage import refuse_if_locked, refuse_if_too_many


def _imported_member(row: sources.Row) -> PairedItem:
    """A pair member from a published RULEBREAKERS row (sources.read_rulebreakers): the file's premises
    and conclusion, under the design's ten phrasings (000 §4.2) as for generated pairs."""
    f = row.fields
    premises = (f["premise_1"], f["premise_2"])
    variants = rulebreakers.phrasings(premises, f["conclusion"])
    pair = f"{rulebreakers.DESIGN}:real:{f['pair']}"
    return PairedItem(
        code=f"{pair}:{f['role']}", design=rulebreakers.DESIGN, pair_id=pair, role=f["role"],
        form_id=f"{f['rule']}.{f['entity_kind']}", rule=f["rule"], premises=premises, conclusion=f["conclusion"],
        gold_answer=f["gold_answer"], question=variants[0].question, prompt=variants[0].text, variants=variants,
        attributes={
            "rule": f["rule"], "logical_form": rulebreakers.LOGICAL_FORMS[f["rule"]],
            "entity_kind": f["entity_kind"], "category": f["category"], "verb": f["verb"], "name": f["name"],
            "pronoun": f["pronoun"], "part": f["part"], "entity_b": f["entity_b"], "whole": f["whole"],
            "true_whole": f["true_whole"],
            "source_id": row.id,
        },
    )


DEFAULT_RULEBREAKERS_FORMAT = "rulebreakers-finegrained"


def _rulebreakers_items(study: Study, data, format: str, filename: str, variants):
    refuse_if_locked(study)
    rows, problems = sources.read_for(rulebreakers.DESIGN, format or DEFAULT_RULEBREAKERS_FORMAT, data,
                                      filename=filename)
    if not rows:
        raise sources.RowProblems(problems, importable=0) if problems else ValidationError("The file has no rows.")
    items = tuple(_imported_member(row) for row in rows)
    # an import's bound counts the Item rows it writes: members × the chosen phrasings (the whole published
    # file, 25,600 members, fits with one or two phrasings; all ten want it split, pairs kept together)
    chosen = choose_variants([v.variant_id for v in items[0].variants], variants)
    try:
        refuse_if_too_many(len(items) * len(chosen))
    except ValidationError as exc:
        raise ValidationError(f"{exc.messages[0]} Or store fewer phrasings: {len(items):,} pair members × "
                              f"{len(chosen)} phrasing(s); --variants follow/yes-no stores one each.") from None
    return items, list(problems)


def rulebreakers_import_preview(*, study: Study, data, format: str = DEFAULT_RULEBREAKERS_FORMAT,
                                variants: Sequence[str] | str | None = "all", rows: int = 10,
                                filename: str = "") -> Preview:
    """What rulebreakers_import would write, without writing; the rows it would leave out as problems."""
    items, problems = _rulebreakers_items(study, data, format, filename, variants)
    preview = paired_items_preview(study=study, items=items, variants=variants, rows=rows)
    return Preview(count=preview.count, items=preview.items, problems=tuple(problems))


def rulebreakers_import(*, study: Study, data, format: str = DEFAULT_RULEBREAKERS_FORMAT,
                        variants: Sequence[str] | str | None = "all", skip_problems: bool = False,
                        filename: str = "") -> PairedReport:
    """Seed 000's published pairs (sources/: rulebreakers-finegrained) into the design: each pair a
    rulebreaker (gold no) and its non-rulebreaker (gold yes), from the file's label (000 §3.4), under
    the chosen phrasings. Rows with a problem refuse the import (sources.RowProblems, by id) unless
    `skip_problems`: then their pairs are left out whole and listed in the report's `left_out`."""
    items, problems = _rulebreakers_items(study, data, format, filename, variants)
    left_out = sources.refuse_or_keep(problems, importable=len(items), skip_problems=skip_problems)
    with transaction.atomic():
        report = paired_items_store(study=study, items=items, variants=variants)
    return PairedReport(**{**report.__dict__, "source": format or DEFAULT_RULEBREAKERS_FORMAT, "left_out": left_out})
