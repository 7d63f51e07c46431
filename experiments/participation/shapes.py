"""The shape of a study's list grid from aggregate queries (issue 37 item 2): the launch panel and
readiness ask how many lists can be drawn and why none can, which depends only on the grid's forms,
how many of its rows are complete and (for pairs) how many members each family has. services._grid
builds the whole grid from every item, which a participant's entry needs; these queries return a
few rows whatever the study's size. The rules are the grid builders' (lists.Grid.from_cells,
lists.PairGrid.from_cells, paired.paired_grid, choice.mc_grid); tests/experiments/participation/
test_list_shapes.py drives both paths over random studies and compares the shapes.
"""
from __future__ import annotations

import dataclasses

from django.db import connection
from django.db.models import Case, CharField, Count, F, Value, When
from django.db.models.functions import Concat

from ..models import Condition, ItemKind, Study
from . import choice, lists, paired


def _histogram(grouped) -> dict[int, int]:
    """{members n: how many groups have n} for a queryset grouped with an annotation named n."""
    sql, params = grouped.query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT shape_q.n, COUNT(*) FROM ({sql}) shape_q GROUP BY shape_q.n", params)
        return {int(n): int(count) for n, count in cursor.fetchall()}


def _distinct(queryset, field) -> list:
    return list(queryset.order_by().values_list(field, flat=True).distinct())


def _grid_shape(pool, *, row: str, form, loose) -> lists.Shape:
    """A Latin-square grid: rows grouped by `row`, forms `form` (an expression); `loose` are the items
    without a row, each its own row with one form."""
    pool = pool.order_by().annotate(shape_form=form)
    forms = tuple(sorted({f or "" for f in _distinct(pool, "shape_form")}))
    grouped = pool.exclude(**{row: loose}).values(row).annotate(n=Count("shape_form", distinct=True))
    complete = _histogram(grouped).get(len(forms), 0)
    if len(forms) == 1:
        complete += pool.filter(**{row: loose}).count()
    return lists.Shape(forms=forms, row_count=complete)


def _pair_shape(pool) -> lists.Shape:
    perturbed = pool.exclude(condition=Condition.REAL).exists()
    slot = Concat(F("condition"), Value("/"), F("pair_role"), output_field=CharField()) if perturbed else F("pair_role")
    pool = pool.order_by().annotate(
        family=Case(When(original__isnull=False, then=F("original__pair_id")), default=F("pair_id"),
                    output_field=CharField()),
        slot=slot)
    sizes = _histogram(pool.values("family").annotate(n=Count("slot", distinct=True)))
    return lists.Shape(forms=tuple(sorted({s or "" for s in _distinct(pool, "slot")})),
                       row_count=sum(sizes.values()), sizes=tuple(sorted(sizes)),
                       members=sum(n * count for n, count in sizes.items()))


def study_shape(*, study: Study, arm) -> lists.Shape:
    """The shape of the grid services._grid draws participants' lists from, by queries."""
    pool = paired.pool_items(study, arm)
    if choice.is_mc_study(study):
        role = Case(When(pair_role="", then=Value("rot0")), default=F("pair_role"), output_field=CharField())
        shape = _grid_shape(pool.filter(kind=ItemKind.MULTIPLE_CHOICE), row="pair_id", form=role, loose="")
        return dataclasses.replace(shape, words=lists.QUESTION_WORDS)
    pairs = paired.paired_pool(study, arm)
    if pairs is not None:
        return _pair_shape(pairs)
    shape = _grid_shape(pool, row="interpretation_id", form=F("form_id"), loose=None)
    if shape.row_count:
        return shape
    count = pool.count()  # items without interpretations (a CSV bank): one column of items
    return lists.Shape(forms=("*",) if count else (), row_count=count, words=lists.ITEM_WORDS)
