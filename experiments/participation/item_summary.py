"""A study's items in figures, kept (issue 37 item 2): its admin page, settings editor and launch panel
show how many items it has, their designs, prompt variants and logical forms, and whether and how
participants' lists can be drawn (the list grid's shape). Each of those is an aggregate over every item
of the study (a count, a DISTINCT, the shape's GROUP BYs in shapes.py): seconds for a 256,000-item
study on SQLite. They are computed once, by the same functions, and kept in StudyItemSummary
(experiments/models/item_summary.py); rendering a page then reads that row and the study's items
version (one row, by the study's primary key), whatever the study's size.

The summary is rebuilt at its first read after anything it was computed from changed:
- every write to the study's items (bulk_create, the batched import's raw inserts, a save, a delete)
  raises the study's items version (experiments/models/items_version.py), which the summary records
  (read before its figures: items written while they are computed leave it stale, never wrong);
- an item saved or deleted, and a queryset's update or delete (the admin, a regeneration), drop it
  (Item.save/delete and ItemQuerySet, experiments/models/items.py); deleting the study takes it along;
- the flow's own catch items (made when the study is first shown or entered) are not in it, so making
  them changes nothing here; `with_catch_items` adds their few rows where every item is shown;
- the study's design and settings (the phrasing participants see shapes their lists) are digested
  into its key.
Items created inside a transaction (a generation, perturbed copies, a bank: Item.objects.bulk_create
sends items_created; a writer inserting by raw SQL may send it itself) get their study's summary
rebuilt once the transaction commits, one rebuild per study however many batches it wrote, so the
first page after finds it ready; otherwise the next read rebuilds it.
Opening a study does not trust the summary: study_transition's readiness reads the items (fresh=True).
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
from types import SimpleNamespace

from django.db import IntegrityError, transaction
from django.dispatch import receiver

from ..items.pairs import paired_variants
from ..factors import study_designs
from ..models import Study, StudyItemSummary
from ..models.item_summary import items_created
from ..models.items_version import items_version
from . import choice, lists
from .fastsave import ATTENTION_DESIGN


CATCH_ROWS = 500  # a study's catch items are its arm's attention checks: a handful
LISTED = ("design", "argument_form", "pair_role", "variant", "condition")  # the item list's filters by value


@dataclasses.dataclass(frozen=True)
class ItemSummary:
    items: int  # the study's items, its catch items aside (as everything here: with_catch_items adds them)
    designs: tuple[str, ...]  # the designs its items come from, catch items aside (factors.study_designs)
    variants: tuple[str, ...]  # its paired items' prompt variants (items.pairs.paired_variants)
    logical_forms: tuple[str, ...]  # the non-empty logical forms of its items (readiness.practice_problem)
    multiple_choice: bool  # choice.is_mc_study
    shapes: tuple[lists.Shape, lists.Shape]  # the list grid's shape: real items only, with nonsense/perturbed
    columns: dict[str, tuple[str, ...]]  # the values of each of LISTED's columns (the item list's filters)
    shape_problems: tuple[str, str] = ("", "")  # why no grid can be built (lists.ListError), as `shapes`

    def shape(self, arm) -> lists.Shape:
        """The list grid's shape for the arm's settings; ListError where the items give no grid at all."""
        problem = self.shape_problems[bool(arm.include_nonsense)]
        if problem:
            raise lists.ListError(problem)
        return self.shapes[bool(arm.include_nonsense)]


def _shape_or_problem(study: Study, include_nonsense: bool) -> tuple[lists.Shape, str]:
    from .shapes import study_shape

    try:
        return study_shape(study=study, arm=SimpleNamespace(include_nonsense=include_nonsense)), ""
    except lists.ListError as exc:  # e.g. pairs in several phrasings and none chosen for people (paired.py)
        return lists.Shape(forms=(), row_count=0), str(exc)


def item_summary_compute(study: Study) -> ItemSummary:
    """The figures from the items themselves (aggregate queries, each reading the study's items)."""
    shapes = [_shape_or_problem(study, flag) for flag in (False, True)]
    pool = study.items.exclude(design=ATTENTION_DESIGN)
    forms = pool.exclude(logical_form="").order_by().values_list("logical_form", flat=True).distinct()
    return ItemSummary(
        items=pool.count(), designs=tuple(study_designs(study)),
        variants=tuple(sorted(paired_variants(study=study))), logical_forms=tuple(sorted(set(forms))),
        multiple_choice=choice.is_mc_study(study),
        shapes=tuple(shape for shape, _ in shapes), shape_problems=tuple(problem for _, problem in shapes),
        columns={name: tuple(sorted(set(pool.order_by().values_list(name, flat=True).distinct())))
                 for name in LISTED})


FIGURES = 2  # what the kept figures hold: raised when a figure is added (2: a pair grid's members), so they are rebuilt


def _key(study: Study) -> str:
    return hashlib.sha256(json.dumps([FIGURES, study.design, study.settings or {}], sort_keys=True,
                                     default=str).encode()).hexdigest()


def with_catch_items(summary: ItemSummary, *, study: Study) -> ItemSummary:
    """The summary with the study's catch items counted in (the admin's items line and item list show
    every item): their few rows, read down the (study, design) index."""
    rows = study.items.filter(design=ATTENTION_DESIGN).order_by()
    catch = list(rows.values_list(*LISTED)[:CATCH_ROWS])
    if not catch:
        return summary
    count = len(catch) if len(catch) < CATCH_ROWS else rows.count()  # the arm's few checks, one item each
    columns = {name: tuple(sorted({*summary.columns[name], *(row[n] for row in catch)}))
               for n, name in enumerate(LISTED)}
    return dataclasses.replace(summary, items=summary.items + count, columns=columns)


def _dump(summary: ItemSummary) -> dict:
    out = dataclasses.asdict(summary)
    out["shapes"] = [{**dataclasses.asdict(shape), "words": dataclasses.asdict(shape.words)}
                     for shape in summary.shapes]
    return out


def _load(figures: dict) -> ItemSummary:
    shapes = tuple(lists.Shape(forms=tuple(s["forms"]), row_count=s["row_count"],
                               sizes=None if s["sizes"] is None else tuple(s["sizes"]),
                               words=lists.GridWords(**s["words"]), members=s.get("members", 0))
                   for s in figures["shapes"])
    return ItemSummary(items=figures["items"], designs=tuple(figures["designs"]), variants=tuple(figures["variants"]),
                       logical_forms=tuple(figures["logical_forms"]), multiple_choice=figures["multiple_choice"],
                       shapes=shapes, columns={name: tuple(values) for name, values in figures["columns"].items()},
                       shape_problems=tuple(figures.get("shape_problems", ("", ""))))


def item_summary(*, study: Study, fresh: bool = False) -> ItemSummary:
    """The study's item summary, rebuilt first when anything it was computed from changed (fresh: always
    computed from the items, and kept)."""
    if not fresh:
        row = StudyItemSummary.objects.filter(study=study).first()
        if row is not None and (row.key, row.items_version) == (_key(study), items_version(study)):
            return _load(row.figures)
    return item_summary_refresh(study=study)


def item_summary_refresh(*, study: Study) -> ItemSummary:
    """Compute the study's item summary from its items and keep it."""
    version = items_version(study)  # first: items written meanwhile raise it past this, so the summary is stale
    summary = item_summary_compute(study)
    fields = {"key": _key(study), "items_version": version, "figures": _dump(summary)}
    try:
        with transaction.atomic():
            StudyItemSummary.objects.update_or_create(study=study, defaults=fields)
    except IntegrityError:  # another request stored one meanwhile; it is checked again at the next read
        pass
    return summary


@receiver(items_created, dispatch_uid="item_summary_items_created")
def _items_created(sender, study_ids, **kwargs) -> None:
    connection = transaction.get_connection()
    if not connection.in_atomic_block:
        return  # each autocommitted batch would rebuild it: the next read does, once
    pending = {getattr(func, "summary_of", None) for _, func, _ in connection.run_on_commit}
    for study_id in set(study_ids) - pending:
        transaction.on_commit(_refresh_later(study_id), robust=True)


def _refresh_later(study_id: int):
    def refresh() -> None:
        study = Study.objects.filter(pk=study_id).first()
        if study is not None:
            item_summary_refresh(study=study)
    refresh.summary_of = study_id
    return refresh
