"""Writes to studies and items. Every function takes keyword-only arguments and checks its rules.

Views, admin actions and management commands call these; nothing else writes these tables.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from django.core.exceptions import ValidationError
from django.db import transaction

from .item_csv import ImportedRow, parse_item_csv
from .item_limits import check_lengths
from .logic import generate as gen
from .logic.lexicon import LEXICON_SIZES
from .logic.designs import DESIGNS
from .models import Interpretation, Item, ItemsLocked, Study, StudyStatus

BULK_BATCH = 2000


@dataclass(frozen=True)
class GenerationReport:
    study: Study
    design: str
    system: str
    interpretations: int
    items: int
    nonsense: bool
    disagreements: tuple[gen.FormVerdict, ...] = field(default_factory=tuple)
    replaced: int = 0
    forms: tuple[gen.FormVerdict, ...] = field(default_factory=tuple)

    def disagreement_lines(self) -> list[str]:
        return [
            f"{v.template.form_id}: {v.logical_form} — template says "
            f"{'valid' if v.template_valid else 'invalid'}, the {v.system} checker says "
            f"{'valid' if v.gold_answer == 'yes' else 'invalid'} ({v.consequence} consequence; "
            f"{'valid' if v.gold_other == 'yes' else 'invalid'} under the other); gold answer = {v.gold_answer}"
            for v in self.disagreements
        ]

    def consequence_text(self) -> str:
        """Which relation keyed the items, form by form where they differ."""
        used = sorted({v.consequence for v in self.forms})
        if len(used) == 1:
            return f"{used[0]} consequence"
        return ", ".join(f"{v.template.form_id}: {v.consequence}" for v in self.forms)


def study_create(
    *, slug: str, title: str, design: str, logic_system: str = "S5", settings: dict | None = None,
    description: str = "",
) -> Study:
    study = Study(
        slug=slug, title=title, design=design, logic_system=logic_system,
        settings=settings or {}, description=description,
    )
    study.full_clean()
    study.save()
    return study


def study_transition(*, study: Study, to: str) -> Study:
    """Move a study along its state machine (draft → open ⇄ paused → closed)."""
    if to not in StudyStatus.values:
        raise ValidationError(f"'{to}' is not a study status; choose one of {', '.join(StudyStatus.values)}")
    if not StudyStatus.can_move(study.status, to):
        allowed = StudyStatus.allowed_from(study.status)
        raise ValidationError(
            f"Study '{study.slug}' cannot go from {study.status} to {to} (allowed: {allowed})."
        )
    if to == StudyStatus.OPEN and not study.items.exists():
        raise ValidationError(f"Study '{study.slug}' has no items yet; generate or import some first.")
    if to == StudyStatus.OPEN:
        from .participation.readiness import open_problems  # the human arm's rules (consent, practice)

        problems = open_problems(study)
        if problems:
            raise ValidationError([f"Study '{study.slug}' cannot open. {problem}" for problem in problems])
    Study.objects.filter(pk=study.pk).update(status=to)
    study.status = to
    return study


def _refuse_if_locked(study: Study) -> None:
    if study.has_responses():
        raise ItemsLocked(
            f"Study '{study.slug}' already has responses (participant answers or model scores); "
            "its items are immutable. "
            "Create a new study to change the item set."
        )


@transaction.atomic
def items_generate(
    *,
    study: Study,
    design: str,
    interpretations: int = 1000,
    seed: int = 0,
    nonsense: bool = False,
    system: str | None = None,
    consequence: str | None = None,
    lexicon: str | None = None,
    replace: bool = False,
) -> GenerationReport:
    """Generate a design's items into a study with bulk inserts; gold answers from the checker, under
    `consequence` (default: the study's; "paper": each form's paper key)."""
    if design not in DESIGNS:
        raise ValidationError(f"Unknown design '{design}'; choose one of: {', '.join(sorted(DESIGNS))}.")
    if consequence is not None and consequence not in gen.CONSEQUENCES:
        raise ValidationError(f"Unknown consequence '{consequence}'; choose one of: {', '.join(gen.CONSEQUENCES)}.")
    system = system or study.logic_system
    consequence = consequence or study.consequence
    lexicon = lexicon or (study.settings or {}).get("lexicon", "full")
    if lexicon not in LEXICON_SIZES:
        raise ValidationError(f"Unknown lexicon size '{lexicon}'; choose one of: {', '.join(LEXICON_SIZES)}.")
    study = Study.objects.select_for_update().get(pk=study.pk)
    _refuse_if_locked(study)
    existing = study.items.filter(design=design)
    replaced = 0
    if existing.exists():
        if not replace:
            raise ValidationError(
                f"Study '{study.slug}' already has {existing.count()} items of design '{design}'; "
                "pass replace=True (--replace) to generate them anew."
            )
        replaced = existing.count()
        existing.filter(original__isnull=False).delete()
        existing.delete()
        study.interpretations.filter(items__isnull=True).delete()

    specs = gen.sample_interpretations(interpretations, seed, lexicon)
    conditions = [specs]
    if nonsense:
        conditions.append(gen.nonsense_mirror(specs))
    interp_rows = _save_interpretations(study, conditions)
    created = 0
    originals: dict[str, int] = {}
    for specs_of_condition in conditions:
        batch: list[Item] = []
        for generated in gen.generate(design, specs_of_condition, system=system, consequence=consequence):
            batch.append(_item_from_generated(study, generated, interp_rows, originals))
            if len(batch) >= BULK_BATCH:
                created += _insert(batch, originals)
                batch = []
        created += _insert(batch, originals)
    study.design = study.design or design
    study.logic_system = system
    study.consequence = consequence
    study.settings = {**(study.settings or {}), "lexicon": lexicon}
    study.save(update_fields=["design", "logic_system", "consequence", "settings", "updated_at"])
    forms = gen.verdicts(design, system, consequence)
    return GenerationReport(
        study=study, design=design, system=system, interpretations=interpretations,
        items=created, nonsense=nonsense, replaced=replaced, forms=forms,
        disagreements=tuple(v for v in forms if v.disagrees),
    )


def _save_interpretations(study, conditions) -> dict[tuple[str, int], int]:
    """Create (or reuse) the study's interpretations; returns (condition, index) -> pk."""
    wanted = [spec for specs in conditions for spec in specs]
    existing = {
        (i.condition, i.index): i for i in study.interpretations.all()
    }
    fresh = []
    for spec in wanted:
        row = existing.get((spec.condition, spec.index))
        values = (spec.p.subject, spec.p.predicate, spec.q.subject, spec.q.predicate)
        if row is not None:
            if (row.p_subject, row.p_predicate, row.q_subject, row.q_predicate) != values:
                raise ValidationError(
                    f"Study '{study.slug}' already has interpretation {spec.index} ({row}) drawn with "
                    "another seed; use the study's seed or a new study."
                )
            continue
        fresh.append(Interpretation(
            study=study, index=spec.index, condition=spec.condition,
            p_subject=values[0], p_predicate=values[1], q_subject=values[2], q_predicate=values[3],
        ))
    Interpretation.objects.bulk_create(fresh, batch_size=BULK_BATCH)
    rows = {(i.condition, i.index): i.pk for i in study.interpretations.all()}
    mirrors = [
        Interpretation(pk=pk, original_id=rows[("real", index)])
        for (condition, index), pk in rows.items()
        if condition != "real" and ("real", index) in rows
    ]
    Interpretation.objects.bulk_update(mirrors, ["original"], batch_size=BULK_BATCH)
    return rows


def _item_from_generated(study, g: gen.GeneratedItem, interp_rows, originals) -> Item:
    return Item(
        study=study, code=g.code, design=g.design, form_id=g.form_id, modality=g.modality,
        argument_form=g.argument_form, logical_form=g.logical_form, template_valid=g.template_valid,
        gold_answer=g.gold_answer, logic_system=g.logic_system, checker_disagrees=g.checker_disagrees,
        consequence=g.consequence, gold_other=g.gold_other,
        premises=list(g.premises), question=g.question, prompt=g.prompt,
        interpretation_id=interp_rows[(g.condition, g.interpretation_index)],
        condition=g.condition, original_id=originals.get(g.original_code) if g.original_code else None,
        attributes={"rule": g.rule},
    )


def _insert(batch: list[Item], originals: dict[str, int]) -> int:
    if not batch:
        return 0
    Item.objects.bulk_create(batch, batch_size=BULK_BATCH)
    if batch[0].pk is None:  # backends that do not return ids from bulk inserts
        codes = [item.code for item in batch]
        lookup = dict(Item.objects.filter(study=batch[0].study, code__in=codes).values_list("code", "pk"))
        for item in batch:
            item.pk = lookup[item.code]
    originals.update({item.code: item.pk for item in batch})
    return len(batch)


# The yes/no bank's columns (experiments/item_csv.py) the Item fields come from, for error messages.
CSV_COLUMNS = {"code": "item_id", "form_id": "form_id", "modality": "modality", "argument_form": "argument_form",
               "logical_form": "logical_form", "condition": "condition", "gold_answer": "gold_answer"}


@dataclass(frozen=True)
class ImportReport:
    study: Study
    items: int
    disagreements: int


@transaction.atomic
def items_import_csv(*, study: Study, data: bytes | str) -> ImportReport:
    """Validate every row first; save all rows or none (an error names its row and column)."""
    study = Study.objects.select_for_update().get(pk=study.pk)
    _refuse_if_locked(study)
    existing = frozenset(study.items.values_list("code", flat=True))
    rows = parse_item_csv(data, system=study.logic_system, existing_ids=existing)
    items = [_item_from_row(study, row) for row in rows]
    check_lengths(zip((row.row for row in rows), items), CSV_COLUMNS)
    Item.objects.bulk_create(items, batch_size=BULK_BATCH)
    if not study.design:
        study.design = "csv-import"
        study.save(update_fields=["design", "updated_at"])
    return ImportReport(study=study, items=len(items), disagreements=sum(r.checker_disagrees for r in rows))


def _item_from_row(study: Study, row: ImportedRow) -> Item:
    return Item(
        study=study, code=row.item_id, design="csv-import", form_id=row.form_id,
        modality=row.modality, argument_form=row.argument_form, logical_form=row.logical_form,
        template_valid=row.template_valid, gold_answer=row.gold_answer,
        logic_system=study.logic_system if row.logical_form else "",
        checker_disagrees=row.checker_disagrees, premises=list(row.premises), question=row.question,
        prompt=row.prompt, condition=row.condition, attributes=row.attributes, consequence=row.consequence,
        gold_other=row.gold_other,
    )


def item_update(*, item: Item, **fields) -> Item:
    """Edit an item's text fields; refused with a clear message once its study has responses."""
    editable = {"premises", "question", "prompt", "argument_form", "form_id", "attributes"}
    unknown = set(fields) - editable
    if unknown:
        raise ValidationError(f"Cannot edit {', '.join(sorted(unknown))}; editable: {', '.join(sorted(editable))}.")
    _refuse_if_locked(item.study)
    for name, value in fields.items():
        setattr(item, name, value)
    item.full_clean()
    item.save()
    return item
