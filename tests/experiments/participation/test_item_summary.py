"""A study's kept item summary (item_summary.py) is what computing it from the items gives, after every
way items change: created in bulk (an import's batches, in one transaction or autocommitted), edited,
deleted one at a time or by a queryset, updated by a queryset, and after the study's settings change
(the phrasing participants see shapes their lists); the flow's catch items are left out of it and
counted in apart. A transaction that creates items rebuilds its
study's summary once, when it commits; opening a study reads the items, not the kept figures."""
from __future__ import annotations

import random

import pytest
from django.core.exceptions import ValidationError
from django.db import transaction

from experiments.models import Item, StudyItemSummary
from experiments.models.items_version import items_version
from experiments.participation import services
from experiments.participation.item_summary import item_summary, item_summary_compute, with_catch_items
from experiments.services import study_transition
from tests.experiments.participation.test_list_shapes import pairs

pytestmark = pytest.mark.django_db


def kept(study):
    """The summary a page reads, checked against the items themselves."""
    summary = item_summary(study=study)
    assert summary == item_summary_compute(study)
    return summary


def test_the_kept_summary_follows_every_change_of_the_items():
    study = pairs(random.Random(3))
    first = kept(study)
    assert StudyItemSummary.objects.filter(study=study).count() == 1
    one = study.items.filter(perturbations__isnull=True).order_by("id").first()  # no copy refers to it
    Item.objects.bulk_create([Item(study=study, code=f"extra.{n}", design="csv-import", gold_answer="no",
                                   premises=["p"], question="q?", prompt="q?", variant="extra") for n in range(3)])
    added = kept(study)
    assert added.items == first.items + 3 and "csv-import" in added.designs
    one.variant = "edited"
    one.save()
    assert "edited" in kept(study).variants
    study.items.filter(code__startswith="extra.").update(argument_form="changed")
    assert "changed" in kept(study).columns["argument_form"]
    study.items.filter(code__startswith="extra.").delete()
    assert kept(study).items == first.items
    one.delete()
    assert kept(study).items == first.items - 1
    study.settings = {**(study.settings or {}), "human_variant": "v1"}
    study.save()
    before = kept(study)
    # the flow's catch items are not in it: making one keeps it, and the items line counts it in apart
    Item.objects.create(study=study, code="attention-check.9", design="attention-check", gold_answer="yes",
                        premises=["p"], question="Press yes?", prompt="Press yes?")
    assert StudyItemSummary.objects.filter(study=study).exists() and kept(study) == before
    shown = with_catch_items(before, study=study)
    assert shown.items == study.items.count() == before.items + 1 and "attention-check" in shown.columns["design"]


def test_a_transaction_that_creates_items_rebuilds_the_summary_once_it_commits(django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        with transaction.atomic():
            study = pairs(random.Random(4))
            for batch in range(3):
                Item.objects.bulk_create([Item(study=study, code=f"b{batch}.{n}", design="csv-import", premises=["p"],
                                               gold_answer="yes", question="q?", prompt="q?") for n in range(2)])
        assert not StudyItemSummary.objects.filter(study=study).exists()  # not before the commit
    assert [getattr(c, "summary_of", None) for c in callbacks].count(study.pk) == 1  # one rebuild for every batch
    row = StudyItemSummary.objects.get(study=study)
    assert row.items_version == items_version(study)
    assert row.figures["items"] == study.items.count() and item_summary(study=study) == item_summary_compute(study)


def test_opening_reads_the_items_not_a_stale_summary():
    study = pairs(random.Random(5))
    arm = services.human_arm_ensure(study=study)
    arm.items_per_participant = 1000
    arm.save()
    kept(study)
    row = StudyItemSummary.objects.get(study=study)  # made wrong by hand: room for every list
    row.figures["shapes"] = [{**shape, "row_count": 10_000} for shape in row.figures["shapes"]]
    row.save()
    assert services.lists_problem(study=study, arm=arm) is None  # what the page reads
    with pytest.raises(ValidationError, match="exceeds the study's"):
        study_transition(study=study, to="open")


@pytest.mark.django_db(transaction=True)  # real commits: the study and its summary exist before the import
def test_the_batched_imports_raw_inserts_rebuild_the_summary_once_it_commits():
    """A whole dataset is written by storage.ItemRows (COPY / executemany, no bulk_create): it tells the
    summary too, so the first page after a 256,000-item import does not rebuild it (3.4 s)."""
    from experiments.items.storage import insert_items_at_once

    study = pairs(random.Random(5))
    kept(study)
    with transaction.atomic():
        for batch in range(2):
            insert_items_at_once([Item(study=study, code=f"raw{batch}.{n}", design="csv-import", premises=["p"],
                                       gold_answer="yes", question="q?", prompt="q?") for n in range(3)])
        assert StudyItemSummary.objects.get(study=study).items_version < items_version(study)  # raised per batch
    row = StudyItemSummary.objects.get(study=study)  # rebuilt at the commit: current, the next read keeps it
    assert row.items_version == items_version(study)
    assert row.figures["items"] == study.items.count() and item_summary(study=study) == item_summary_compute(study)
