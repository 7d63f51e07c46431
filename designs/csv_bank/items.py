"""The yes/no CSV bank: items imported from a researcher's CSV (experiments/item_csv.py), every row
validated before any is written.

A bank whose rows carry pair_id and pair_role (rulebreaker / non-rulebreaker, or original / flipped)
goes into its paired design (rulebreakers, dual-sided) through paired.py, with the checks of that
design (each pair has both roles once, gold answers agree with the roles): each row is one pair
member with one prompt, stored as the prompt variant "bank", which participants then see.

The file is parsed and checked (the model checker included) before the write's transaction begins:
on SQLite a transaction takes the write lock when it starts (common/env.py), so only the
inserts, in batches of BULK_BATCH, hold it (issue 26 item 5). The transaction checks again that the
study is not locked and that no item id was taken meanwhile.
"""
from __future__ import annotations

from dataclasses import dataclass

from django.core.exceptions import ValidationError
from django.db import transaction

from experiments.item_csv import CsvImportError, ImportedRow, RowError, parse_item_csv
from experiments.item_limits import check_lengths
from experiments.models import Item, Study
from experiments.design_registry import Preview
from experiments.items.storage import BULK_BATCH, refuse_if_locked

DESIGN = "csv-import"


# The yes/no bank's columns (experiments/item_csv.py) the Item fields come from, for error messages.
CSV_COLUMNS = {"code": "item_id", "form_id": "form_id", "modality": "modality", "argument_form": "argument_form",
               "logical_form": "logical_form", "condition": "condition", "gold_answer": "gold_answer"}


@dataclass(frozen=True)
class ImportReport:
    study: Study
    items: int
    disagreements: int
    design: str = DESIGN  # the design the items were stored in (a paired one for a bank with pairs)
    pairs: int = 0


def _plan(study: Study, data) -> tuple[list[ImportedRow], list[Item], frozenset[str]]:
    """Every row parsed and checked, as unsaved Items (reads only; raises CsvImportError)."""
    refuse_if_locked(study)
    existing = frozenset(study.items.values_list("code", flat=True))
    rows = parse_item_csv(data, system=study.logic_system, existing_ids=existing)
    items = [_item_from_row(study, row) for row in rows]
    check_lengths(zip((row.row for row in rows), items), CSV_COLUMNS)
    return rows, items, existing


def _check_factors(items: list[Item], factors: list[str] | None) -> list[str]:
    """The bank's factor names checked against the file's own columns (ValidationError naming the
    columns there are); [] when none were named."""
    if not factors:
        return []
    from experiments.factors import check

    columns = {key for item in items for key in (item.attributes or {})}
    try:
        return check(factors, columns)
    except ValueError as error:
        raise ValidationError(str(error)) from None


BANK_VARIANT = "bank"  # the prompt variant of a paired bank's items (its own wording, one per row)


def _paired(rows: list[ImportedRow]) -> list | None:
    """The rows as pair members (logic.pairs.PairedItem) when they carry pairs; None when none does;
    CsvImportError naming each row without one when only some do."""
    with_pairs = [row for row in rows if row.pair_id]
    if not with_pairs:
        return None
    if len(with_pairs) != len(rows):
        raise CsvImportError([RowError(row.row, "pair_id", "is empty, but other rows have pairs: give every row "
                                       "its pair_id and pair_role, or none") for row in rows if not row.pair_id])
    from logic.pairs import PairedItem, PromptVariant, pair_kind_of

    return [PairedItem(
        code=row.item_id, design=pair_kind_of(row.pair_role), pair_id=row.pair_id, role=row.pair_role,
        form_id=row.form_id, rule=row.argument_form, premises=row.premises, conclusion="",
        gold_answer=row.gold_answer, question=row.question, prompt=row.prompt, condition=row.condition,
        variants=(PromptVariant(BANK_VARIANT, row.question, "Yes", "No", row.prompt),),
        attributes={**row.attributes, **({"logical_form": row.logical_form} if row.logical_form else {})},
    ) for row in rows]


def items_preview_csv(*, study: Study, data, rows: int = 10, factors: list[str] | None = None) -> Preview:
    """What items_import_csv would write, without writing (the same checks, the factor names included)."""
    parsed, items, _ = _plan(study, data)
    _check_factors(items, factors)
    paired = _paired(parsed)
    if paired is not None:
        from experiments.items.pairs import paired_items_preview

        return paired_items_preview(study=study, items=paired, rows=rows)
    return Preview(count=len(items), items=items[:rows])


def items_import_csv(*, study: Study, data, factors: list[str] | None = None) -> ImportReport:
    """Validate every row first; save all rows or none (an error names its row and column). `factors`:
    the bank's factor columns, checked against its columns (experiments/factors.py) and stored in the
    study's settings; a wrong name writes nothing."""
    rows, items, existing = _plan(study, data)  # outside the transaction: no write lock while checking
    checked = _check_factors(items, factors)
    paired = _paired(rows)
    if paired is not None:
        return _import_pairs(study, paired, checked, rows)
    with transaction.atomic():
        study = Study.objects.select_for_update().get(pk=study.pk)
        refuse_if_locked(study)
        taken = (frozenset(study.items.values_list("code", flat=True)) - existing) & {i.code for i in items}
        if taken:  # written by someone else while this file was being checked
            raise CsvImportError([RowError(row.row, "item_id", f"'{row.item_id}' already exists in this study")
                                  for row in rows if row.item_id in taken])
        for item in items:
            item.study = study
        Item.objects.bulk_create(items, batch_size=BULK_BATCH)
        fields = ["updated_at"]
        if checked:
            from experiments.factors import SETTING, validate

            try:  # against every item of the study (the bank may add to earlier ones)
                study.settings = {**(study.settings or {}), SETTING: validate(study, checked)}
            except ValueError as error:
                raise ValidationError(str(error)) from None  # the transaction undoes the rows written above
            fields.append("settings")
        if not study.design:
            study.design = DESIGN
            fields.append("design")
        if len(fields) > 1:
            study.save(update_fields=fields)
    return ImportReport(study=study, items=len(items), disagreements=sum(r.checker_disagrees for r in rows))


def _import_pairs(study: Study, paired: list, factors: list[str], rows: list[ImportedRow]) -> ImportReport:
    from experiments.items.pairs import paired_items_store

    with transaction.atomic():
        report = paired_items_store(study=study, items=paired, variants=[BANK_VARIANT])
        study = report.study
        if factors:
            from experiments.factors import SETTING, validate

            try:
                study.settings = {**(study.settings or {}), SETTING: validate(study, factors)}
            except ValueError as error:
                raise ValidationError(str(error)) from None
            study.save(update_fields=["settings", "updated_at"])
    return ImportReport(study=study, items=report.items, disagreements=sum(r.checker_disagrees for r in rows),
                        design=report.design, pairs=report.pairs)


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
