"""Writes of the multiple-choice design (issue 7, seed 001): a bank's questions into Item rows.

Each question becomes four items, its circular mutants (experiments/logic/multiple_choice.py):
kind multiple_choice, pair_id = the question's id, pair_role rot0..rot3, rot0 being the original
order and the other three naming it as their `original`. The gold answer is the letter of the
correct option in that mutant's order. Every row is validated before anything is written.
"""
from __future__ import annotations

from dataclasses import dataclass

from django.db import transaction

from ..logic import multiple_choice as mc
from ..models import Condition, Item, ItemKind, Study
from ..item_limits import check_lengths
from ..participation.arm import default_mc_attention_checks, default_mc_practice
from . import registry
from .storage import BULK_BATCH, refuse_if_locked

DESIGN = "multiple-choice"


@dataclass(frozen=True)
class McImportReport:
    study: Study
    questions: int
    items: int
    types: dict[str, int]

    def summary(self) -> str:
        kinds = ", ".join(f"{n} {t}" for t, n in sorted(self.types.items()))
        return (f"Imported {self.questions} multiple-choice questions into '{self.study.slug}': {self.items} items "
                f"(each question in its four circular option orders; types: {kinds}).")


def _item(study: Study, mutant: mc.Mutant, original_id: int | None) -> Item:
    q = mutant.question
    return Item(
        study=study, code=mutant.code, design=DESIGN, kind=ItemKind.MULTIPLE_CHOICE,
        form_id=q.qtype, argument_form=q.qtype, gold_answer=mutant.gold_letter,
        premises=[q.context], question=q.question, options=list(mutant.options), prompt=mutant.prompt,
        condition=Condition.REAL, pair_id=q.question_id, pair_role=mutant.role, original_id=original_id,
        attributes={**q.attributes, "type": q.qtype, "shift": mutant.shift, "row": q.row,
                    "original_gold": q.gold_letter},
    )


@transaction.atomic
def items_import_multiple_choice(*, study: Study, data: bytes | str) -> McImportReport:
    """Validate every row first; save all questions (four mutants each) or none."""
    study = Study.objects.select_for_update().get(pk=study.pk)
    refuse_if_locked(study)
    existing = frozenset(study.items.exclude(pair_id="").values_list("pair_id", flat=True))
    codes = frozenset(study.items.values_list("code", flat=True))
    taken = {code[: -len(".rot0")] for code in codes if code.endswith(mc.ROLES_SUFFIXES)}
    questions = mc.parse_mc_csv(data, existing_ids=existing | taken)
    originals = [_item(study, mc.Mutant(q, 0), None) for q in questions]
    check_lengths(((q.row, item) for q, item in zip(questions, originals)),
                  {"form_id": "type", "argument_form": "type", "code": "id", "pair_id": "id"})
    Item.objects.bulk_create(originals, batch_size=BULK_BATCH)
    if any(item.pk is None for item in originals):  # backends that do not return ids from bulk inserts
        ids = dict(study.items.filter(code__in=[i.code for i in originals]).values_list("code", "pk"))
        for item in originals:
            item.pk = ids[item.code]
    rotated = [_item(study, m, original.pk) for q, original in zip(questions, originals)
               for m in mc.mutants(q)[1:]]
    Item.objects.bulk_create(rotated, batch_size=BULK_BATCH)
    if registry.is_generic(study.design):
        study.design = DESIGN
        study.save(update_fields=["design", "updated_at"])
    _human_arm_defaults(study)
    types: dict[str, int] = {}
    for q in questions:
        types[q.qtype or "(none)"] = types.get(q.qtype or "(none)", 0) + 1
    return McImportReport(study=study, questions=len(questions), items=len(originals) + len(rotated), types=types)


def _human_arm_defaults(study: Study) -> None:
    """A study whose human arm is not set up yet gets four-option practice and attention checks."""
    from ..participation.arm import HumanArm

    if not HumanArm.objects.filter(study=study).exists():
        HumanArm.objects.create(study=study, practice=default_mc_practice(),
                                attention_checks=default_mc_attention_checks())
