"""Writes of the multiple-choice design (issue 7, seed 001): a bank's questions into Item rows.

Each question becomes four items, its circular mutants (questions.py):
kind multiple_choice, pair_id = the question's id, pair_role rot0..rot3, rot0 being the original
order and the other three naming it as their `original`. The gold answer is the letter of the
correct option in that mutant's order. Every row is validated before anything is written.
"""
from __future__ import annotations

from dataclasses import dataclass

from django.db import transaction

from experiments.models import Condition, HumanArm, Item, ItemKind, Study
from experiments.item_limits import check_lengths
from experiments import design_registry as registry
from experiments.items import sources
from experiments.items.arm_defaults import human_arm_ensure
from experiments.design_registry import Preview
from experiments.items.storage import BULK_BATCH, refuse_if_locked, refuse_if_too_many

from . import questions as mc

DESIGN = "multiple-choice"


@dataclass(frozen=True)
class McImportReport:
    study: Study
    questions: int
    items: int
    types: dict[str, int]
    source: str = ""  # the published format read ('' for the bank)
    left_out: tuple = ()  # sources.Problem of the rows left out (skip_problems)

    def summary(self) -> str:
        kinds = ", ".join(f"{n} {t}" for t, n in sorted(self.types.items()))
        return (f"Imported {self.questions} multiple-choice questions into '{self.study.slug}'"
                f"{f' from {self.source}' if self.source else ''}: {self.items} items "
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


def _taken(study: Study) -> frozenset[str]:
    """The question ids the study already has (as pair ids, or in its items' codes)."""
    existing = frozenset(study.items.exclude(pair_id="").values_list("pair_id", flat=True))
    codes = frozenset(study.items.values_list("code", flat=True))
    return existing | {code[: -len(".rot0")] for code in codes if code.endswith(mc.ROLES_SUFFIXES)}


_COLUMNS = {"form_id": "type", "argument_form": "type", "code": "id", "pair_id": "id"}


def _published(study: Study, data, format: str, taken: frozenset[str], filename: str):
    """The questions of a published format (sources/), each checked as a bank row is, and every
    problem (by the file's row id)."""
    from experiments.item_limits import length_errors

    rows, problems = sources.read_for(DESIGN, format, data, filename=filename)
    problems, questions, seen = list(problems), [], set()
    for row in rows:
        question, errors = mc.parse_question_record(row.fields)
        if question is not None and (question.question_id in taken or question.question_id in seen):
            errors = [("id", f"'{question.question_id}' already exists in this "
                             f"{'study' if question.question_id in taken else 'file'}")]
        if question is not None and not errors:
            errors = [(e.column, e.message) for e in length_errors([(0, _item(study, mc.Mutant(question, 0), None))],
                                                                   _COLUMNS)]
        problems += [sources.Problem(row.id, column, reason) for column, reason in errors]
        if not errors:
            seen.add(question.question_id)
            questions.append(question)
    if not questions:
        raise sources.RowProblems(problems, importable=0)
    return questions, problems


def _plan(study: Study, data, format: str = sources.BANK, filename: str = ""):
    """Every question parsed and checked, with its original-order item unsaved (reads only), and the
    problems of a published format's rows."""
    refuse_if_locked(study)
    taken = _taken(study)
    problems = []
    if format in (None, sources.BANK):
        questions = mc.parse_mc_csv(data, existing_ids=taken)
    else:
        questions, problems = _published(study, data, format, taken, filename)
    refuse_if_too_many(4 * len(questions))
    originals = [_item(study, mc.Mutant(q, 0), None) for q in questions]
    check_lengths(((q.row, item) for q, item in zip(questions, originals)), _COLUMNS)
    return questions, originals, taken, problems


def items_preview_multiple_choice(*, study: Study, data, rows: int = 10, format: str = sources.BANK,
                                  filename: str = "") -> Preview:
    """What items_import_multiple_choice would write (the originals first), without writing; a published
    format's rows that would be left out are its problems."""
    questions, originals, _, problems = _plan(study, data, format, filename)
    shown = originals[:rows]
    if len(shown) < rows:
        shown += [_item(study, m, None) for q in questions for m in mc.mutants(q)[1:]][: rows - len(shown)]
    return Preview(count=4 * len(originals), items=shown, problems=tuple(problems))


def items_import_multiple_choice(*, study: Study, data, format: str = sources.BANK, skip_problems: bool = False,
                                 filename: str = "") -> McImportReport:
    """Validate every row first (outside the write's transaction); save all questions (four mutants
    each) or none. A published format (`format`, sources/: logiqa-text) with rows it cannot read
    refuses (sources.RowProblems, by row id) unless `skip_problems`: then the others are written and
    the report's `left_out` lists them."""
    questions, originals, taken, problems = _plan(study, data, format, filename)
    left_out = sources.refuse_or_keep(problems, importable=len(questions), skip_problems=skip_problems)
    with transaction.atomic():
        report = _write(study, questions, originals, taken)
    if format in (None, sources.BANK):
        return report
    return McImportReport(**{**report.__dict__, "source": format, "left_out": left_out})


def _write(study: Study, questions, originals, taken) -> McImportReport:
    study = Study.objects.select_for_update().get(pk=study.pk)
    refuse_if_locked(study)
    clash = (_taken(study) - taken) & {q.question_id for q in questions}
    if clash:  # written by someone else while this file was being checked
        raise mc.CsvImportError([mc.RowError(q.row, "id", f"'{q.question_id}' already exists in this study")
                                 for q in questions if q.question_id in clash])
    for item in originals:
        item.study = study
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
    """A study whose human arm is not set up yet gets its design's practice and attention checks (the
    four-option sets); one set up for a yes/no bank and never edited gets them too."""
    arm = HumanArm.objects.filter(study=study).first()
    if arm is None:
        human_arm_ensure(study=study)
        return
    design = registry.get(DESIGN)
    if arm.practice == registry.practice_for("") and arm.attention_checks == registry.catch_items_for(""):
        arm.practice, arm.attention_checks = design.practice(), design.catch_items()
        arm.save(update_fields=["practice", "attention_checks"])
