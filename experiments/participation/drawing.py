"""How a study's participants' lists are drawn from its items (the rules are lists.py's): the grid of
the items, how many lists the arm's settings draw, the words the launch panel shows, the stored lists
prepared when the study opens, and the catch items each list carries. services.py's entry draws from
the stored lists these make (list_store.py)."""
from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction

from logic import human_defaults

from ..models import HumanArm, Item, ItemKind, PairedPresentation, Study
from . import choice, list_store, lists, paired
from .compiled import CompiledRead
from .fastsave import ATTENTION_DESIGN
from .item_summary import item_summary


_CATCH_ITEMS = CompiledRead(  # read at every entry: compiled once (compiled.py)
    lambda study: Item.objects.filter(study=study, design=ATTENTION_DESIGN).order_by().values_list("code", "pk"),
    study=int)


def _attention_items(study: Study, arm: HumanArm) -> list[int]:
    """The study's catch items, created from the arm's settings the first time they are needed."""
    existing = dict(_CATCH_ITEMS.rows(study=study.pk))
    ids = []
    for n, check in enumerate(arm.attention_checks, 1):
        code = f"attention-check.{n}"
        if code not in existing:
            four = {"kind": ItemKind.MULTIPLE_CHOICE, "options": list(check["options"])} if "options" in check else {}
            try:
                with transaction.atomic():
                    existing[code] = Item.objects.create(
                        study=study, code=code, design=ATTENTION_DESIGN, form_id=ATTENTION_DESIGN,
                        gold_answer=check["answer"], premises=list(check["premises"]), question=check["question"],
                        prompt=human_defaults.catch_item_prompt(check),
                        attributes={"attention_check": True}, **four,
                    ).pk
            except IntegrityError:  # a concurrent first entry made it (entries make them outside the lock)
                existing[code] = Item.objects.filter(study=study, code=code).values_list("pk", flat=True).get()
        ids.append(existing[code])
    return ids


def _grid(study: Study, arm: HumanArm) -> lists.Grid:
    pool = paired.pool_items(study, arm)  # the items the lists draw from (logic.list_pool)
    if choice.is_mc_study(study):  # questions × circular mutants (seed 001)
        return choice.mc_grid(pool)
    pairs = paired.paired_grid(study, arm)
    if pairs is not None:  # linked pairs (issue 6): at most one member of a pair per participant
        return pairs
    rows = list(pool.order_by("id").values_list("id", "form_id", "interpretation_id"))
    grid = lists.Grid.from_cells(
        lists.Cell(item_id=pk, form=form or "", row=interp if interp is not None else ("item", pk))
        for pk, form, interp in rows
    )
    if not grid.rows:  # items without interpretations (a CSV bank): one column of items
        grid = lists.Grid.from_cells((lists.Cell(item_id=pk, form="*", row=pk) for pk, _, _ in rows),
                                     words=lists.ITEM_WORDS)
    return grid


def _within(grid, arm: HumanArm) -> bool:
    return grid.shape.paired and arm.paired_presentation == PairedPresentation.WITHIN


def _list_total(study: Study, arm: HumanArm, grid) -> int:
    """How many distinct lists the arm's settings draw from the study's items (ListError or
    ValidationError saying why none can be drawn); `grid` is the grid or its shape (shapes.py). The rule
    test_stored_lists.py holds the stored lists to."""
    return lists.list_total(grid, arm.items_per_participant, within=_within(grid, arm),
                            every_form=choice.all_mutants(study), min_gap=arm.paired_min_gap)


def lists_scheme(*, study: Study, arm: HumanArm, fresh: bool = False) -> str:
    """How participants' lists are drawn from the study's items, in words for the launch panel: a
    study whose items form no interpretation × form grid (a CSV bank, or generated items mixed with
    imported ones) gets one shuffled column of items, without the Latin square, and is told so.
    From the grid's shape in the study's item summary (item_summary.py; fresh: computed now by the
    aggregate queries of shapes.py), never by loading the items."""
    summary = item_summary(study=study, fresh=fresh)
    shape = summary.shape(arm)
    if shape.paired:
        how = "within" if _within(shape, arm) else "at most one member of a pair per participant"
        return f"linked pairs ({how}), members rotated across lists"
    if summary.multiple_choice:
        return f"{shape.row_count} questions × {len(shape.forms)} circular mutants, rotated across lists (seed 001)"
    if shape.forms == ("*",):
        return (f"one column of {shape.row_count} items, each participant's drawn in turn and shuffled — no Latin "
                f"square, since the items form no interpretation × form grid (designs: {', '.join(summary.designs)})")
    return (f"Latin square over {shape.row_count} interpretations × {len(shape.forms)} forms: every form equally "
            "often in a list, no interpretation twice")


def lists_problem(*, study: Study, arm: HumanArm, summary=None) -> str | None:
    """Why participants' lists cannot be drawn with the arm's settings (None when they can), from the
    grid's shape in the study's item summary (`summary`: one in hand, e.g. computed now by opening)."""
    try:
        _list_total(study, arm, (summary or item_summary(study=study)).shape(arm))
    except ValidationError as exc:
        return " ".join(exc.messages)
    except lists.ListError as exc:
        return str(exc)
    return None


def lists_hold(*, study: Study, arm: HumanArm, summary=None) -> str:
    """What the launch panel says of the items people can be shown: how many of the study's items its lists
    hold, from the grid's shape (every item of the grid is in some list: lists.py's windows), so it reads no
    item; the same count as selectors.items_people_can_be_shown before anyone answers
    (test_items_people_can_be_shown.py holds the two). "" where no lists can be drawn."""
    summary = summary or item_summary(study=study)
    try:
        held = summary.shape(arm).items
    except lists.ListError:
        return ""
    if held == summary.items:
        return f"all {held} of the study's items are in its lists"
    return (f"{held} of the study's {summary.items} items are in its lists; the other {summary.items - held} are in "
            "none (phrasings other than the one people see, perturbed copies the arm does not draw, or a row "
            "missing one of its forms or members)")


def lists_shortfall(*, study: Study, arm: HumanArm, summary=None) -> lists.Shortfall | None:
    """What the arm's target sample size leaves unshown of the lists its settings draw (issue 44 item 1):
    None when every list is given to someone, or when no lists can be drawn (lists_problem says why). From
    the grid's shape in the study's item summary, as lists_problem."""
    try:
        shape = (summary or item_summary(study=study)).shape(arm)
        return lists.shortfall(shape, arm.items_per_participant, arm.target_sample_size, within=_within(shape, arm),
                               every_form=choice.all_mutants(study), min_gap=arm.paired_min_gap)
    except (ValidationError, lists.ListError):
        return None


def lists_prepare(*, study: Study, arm: HumanArm) -> list_store.StoredLists:
    """Store the lists the arm's settings draw (list_store.py) unless they are current: done when the
    study opens, so the first arrivals after a launch find them (an entry builds them otherwise); and read
    by items_people_can_be_shown (selectors.py). ListError or ValidationError where none can be drawn."""
    study = Study.objects.get(pk=study.pk)  # as stored: the caller's copy may predate a generation's settings
    return list_store.stored_lists_current(study=study, arm=arm, build=lambda: _every_list(study, arm))


def _every_list(study: Study, arm: HumanArm) -> tuple[bool, list[list]]:
    """Every list the arm's settings draw from the study's items (list_store keeps them)."""
    grid = _grid(study, arm)
    within = _within(grid, arm)
    every = lists.every_list(grid, arm.items_per_participant, within=within, every_form=choice.all_mutants(study),
                             min_gap=arm.paired_min_gap)
    return within, every
