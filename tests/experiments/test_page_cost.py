"""A study's admin pages cost what they show, not what the study holds (issue 37 item 2): the study
change page (items line, launch panel, participants), the item changelist filtered to the study and
the launch panel run a bounded number of queries, none of which returns more than a page of rows,
whether the study has 200 items or 2,000 (a 256,000-item study renders the same way; bench/scale.py
times it at full size). Nor do they read more rows: on SQLite every query of the items table is a
bounded index search (no count, no DISTINCT or GROUP BY, no scan, no sort of the study's items); on
PostgreSQL the rows its plans' scans actually read (EXPLAIN ANALYZE) are the same at both sizes. Their
figures come from the study's item summary (experiments/participation/item_summary.py), built once."""
from __future__ import annotations

import json
import re

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.urls import reverse

from experiments.models import Item, Study
from tests.postgres import require_postgres

pytestmark = pytest.mark.django_db

PAGE_ROWS = 100  # no query of these pages returns more rows than this (the item list's page is 50)


def paired_study(slug: str, pairs: int) -> Study:
    """A RULEBREAKERS-shaped study made cheaply: `pairs` pairs × 2 roles × 2 phrasings (bulk_create)."""
    study = Study.objects.create(slug=slug, title=slug, design="rulebreakers", settings={"human_variant": "v0"})
    Item.objects.bulk_create([
        Item(study=study, code=f"{slug}.{p}.{role}.{variant}", design="rulebreakers", gold_answer="yes",
             form_id=f"rule{p % 4}", pair_id=f"pair{p}", pair_role=role, variant=variant,
             premises=["If Ann is in Paris, she is in France.", "Ann is in Paris."],
             question="Is Ann in France?", prompt="Is Ann in France?")
        for p in range(pairs) for role in ("rulebreaker", "conforming") for variant in ("v0", "v1")
    ], batch_size=2000)
    return study


class RowCounter:
    """Every SELECT the block runs, with how many rows it returned (run again on the same data)."""

    def __init__(self):
        self.selects: list[tuple[str, tuple]] = []

    def __call__(self, execute, sql, params, many, context):
        if sql.lstrip().upper().startswith("SELECT") and not many:
            self.selects.append((sql, tuple(params or ())))
        return execute(sql, params, many, context)

    def rows(self) -> list[tuple[int, str]]:
        out = []
        with connection.cursor() as cursor:
            for sql, params in self.selects:
                cursor.execute(sql, params)
                out.append((len(cursor.fetchall()), sql))
        return out


@pytest.fixture
def staff(client):
    user = get_user_model().objects.create_user("cost-researcher", password="x-" * 8, is_staff=True,
                                                is_superuser=True)
    client.force_login(user)
    return client


def _cost(client, url, params=None):
    counter = RowCounter()
    with connection.execute_wrapper(counter):
        response = client.get(url, params or {})
    assert response.status_code == 200
    return counter.rows(), response.content.decode()


PAGES = {
    "study page": lambda s: (reverse("admin:experiments_study_change", args=[s.pk]), None),
    "item list": lambda s: (reverse("admin:experiments_item_changelist"), {"study__id__exact": s.pk}),
}


@pytest.mark.parametrize("page", sorted(PAGES))
def test_a_study_page_costs_the_same_at_200_and_2000_items(staff, page):
    small, large = paired_study("small", 50), paired_study("large", 500)
    assert small.items.count() == 200 and large.items.count() == 2000
    costs = {}
    for study in (small, large):
        url, params = PAGES[page](study)
        staff.get(url, params or {})  # first render makes the human arm and catch items
        costs[study.slug], html = _cost(staff, url, params)
        if page == "study page":
            assert f"{study.items.exclude(design='attention-check').count()} items" in html
    for slug, rows in costs.items():
        worst = max(rows)
        assert worst[0] <= PAGE_ROWS, f"{page} of {slug} fetched {worst[0]} rows in: {worst[1][:300]}"
    assert len(costs["small"]) == len(costs["large"]), (page, len(costs["small"]), len(costs["large"]))


def test_the_launch_panel_checks_lists_by_query_at_any_size():
    from experiments.participation import launch, services

    costs = {}
    for pairs in (50, 500):
        study = paired_study(f"s{pairs}", pairs)
        services.human_arm_ensure(study=study)
        launch.launch_html(study)  # makes the catch items once
        counter = RowCounter()
        with connection.execute_wrapper(counter):
            html = launch.launch_html(study)
        rows = counter.rows()
        assert max(rows)[0] <= PAGE_ROWS, max(rows)[1][:300]
        assert "✓ participants&#x27; lists can be drawn" in html or "✓ participants' lists can be drawn" in html
        assert "linked pairs (at most one member of a pair per participant)" in html
        costs[pairs] = len(rows)
    assert costs[50] == costs[500]


# ---------------------------------------------------------------------------------------- rows read

ITEMS_TABLE = re.compile(r'(FROM|JOIN) "experiments_item"')


def _measured(staff, study, page):
    """The SELECTs `page` of `study` runs once its item summary is built (the first render builds it)."""
    url, params = PAGES[page](study)
    staff.get(url, params or {})
    counter = RowCounter()
    with connection.execute_wrapper(counter):
        assert staff.get(url, params or {}).status_code == 200
    return counter.selects


@pytest.mark.parametrize("page", sorted(PAGES))
def test_no_query_of_a_study_page_reads_the_study_s_items(staff, page):
    """SQLite's plans: each query of the items table is a LIMITed search down an index."""
    paired_study("other", 5)  # a second study, so that the item list's study filter is applied
    study = paired_study("large", 500)
    on_items = [(sql, params) for sql, params in _measured(staff, study, page) if ITEMS_TABLE.search(sql)]
    assert on_items, "the page reads no item at all?"
    with connection.cursor() as cursor:
        for sql, params in on_items:
            shape = re.sub(r"\s+", " ", sql).upper()
            assert "LIMIT" in shape and not any(word in shape for word in ("COUNT(", "DISTINCT", "GROUP BY")), sql
            if connection.vendor != "sqlite":
                continue
            cursor.execute("EXPLAIN QUERY PLAN " + sql, params)
            plan = " | ".join(str(row[-1]) for row in cursor.fetchall())
            assert "SCAN experiments_item" not in plan and "TEMP B-TREE" not in plan, (plan, sql[:300])


def _rows_read(plan: dict) -> int:
    """The rows the plan's scan nodes actually read (a node's rows are per loop)."""
    own = plan.get("Actual Rows", 0) * plan.get("Actual Loops", 1) if "Scan" in plan.get("Node Type", "") else 0
    return own + sum(_rows_read(child) for child in plan.get("Plans", ()))


def _explained(selects) -> list[tuple[int, str]]:
    out = []
    with connection.cursor() as cursor:
        for sql, params in selects:
            cursor.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + sql, params)
            document = cursor.fetchone()[0]
            document = json.loads(document) if isinstance(document, str) else document
            out.append((_rows_read(document[0]["Plan"]), sql))
    return out


@pytest.mark.postgres_only
@pytest.mark.parametrize("page", sorted(PAGES))
def test_a_study_page_reads_as_many_rows_at_200_and_2000_items(staff, page):
    """PostgreSQL's EXPLAIN ANALYZE of every SELECT the page runs: the rows its scans read, summed."""
    require_postgres("the rows a page reads are measured on PostgreSQL (DATABASE_URL)")
    small, large = paired_study("small", 50), paired_study("large", 500)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE experiments_item")  # the planner knows the table's size
    read = {study.slug: _explained(_measured(staff, study, page)) for study in (small, large)}
    totals = {slug: sum(n for n, _ in rows) for slug, rows in read.items()}
    worst = max(read["large"])
    assert worst[0] <= PAGE_ROWS, f"{page}: a query read {worst[0]} rows: {worst[1][:300]}"
    assert totals["large"] <= totals["small"] + 10, (page, totals)
