"""The yes/no CSV bank: items imported from a researcher's CSV (experiments/item_csv.py), every row
validated before any is written."""
from __future__ import annotations

from dataclasses import dataclass

from django.core.exceptions import ValidationError
from django.db import transaction

from ..item_csv import ImportedRow, parse_item_csv
from ..item_limits import check_lengths
from ..models import Item, Study
from .storage import BULK_BATCH, refuse_if_locked

DESIGN = "csv-import"


# The yes/no bank's columns (experiments/item_csv.py) the Item fields come from, for error messages.
CSV_COLUMNS = {"code": "item_id", "form_id": "form_id", "modality": "modality", "argument_form": "argument_form",
               "logical_form": "logical_form", "condition": "condition", "gold_answer": "gold_answer"}


@dataclass(frozen=True)
class ImportReport:
    study: Study
    items: int
    disagreements: int


@transaction.atomic
def items_import_csv(*, study: Study, data: bytes | str, factors: list[str] | None = None) -> ImportReport:
    """Validate every row first; save all rows or none (an error names its row and column). `factors`:
    the bank's factor columns, checked against its columns (analysis/factors.py) and stored in the
    study's settings; a wrong name writes nothing."""
    study = Study.objects.select_for_update().get(pk=study.pk)
    refuse_if_locked(study)
    existing = frozenset(study.items.values_list("code", flat=True))
    rows = parse_item_csv(data, system=study.logic_system, existing_ids=existing)
    items = [_item_from_row(study, row) for row in rows]
    check_lengths(zip((row.row for row in rows), items), CSV_COLUMNS)
    Item.objects.bulk_create(items, batch_size=BULK_BATCH)
    fields = ["updated_at"]
    if factors:
        from analysis.factors import SETTING, validate

        try:
            study.settings = {**(study.settings or {}), SETTING: validate(study, factors)}
        except ValueError as error:
            raise ValidationError(str(error)) from None  # the transaction undoes the rows written above
        fields.append("settings")
    if not study.design:
        study.design = DESIGN
        fields.append("design")
    if len(fields) > 1:
        study.save(update_fields=fields)
    return ImportReport(study=study, items=len(items), disagreements=sum(r.checker_disagrees for r in rows))


def _item_from_row(study: Study, row: ImportedRow) -> Item:
    return Item(
        study=study, code=row.item_id, design=DESIGN, form_id=row.form_id,
        modality=row.modality, argument_form=row.argument_form, logical_form=row.logical_form,
        template_valid=row.template_valid, gold_answer=row.gold_answer,
        logic_system=study.logic_system if row.logical_form else "",
        checker_disagrees=row.checker_disagrees, premises=list(row.premises), question=row.question,
        prompt=row.prompt, condition=row.condition, attributes=row.attributes, consequence=row.consequence,
        gold_other=row.gold_other,
    )
