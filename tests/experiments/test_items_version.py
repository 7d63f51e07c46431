"""A study's items version (experiments/models/items_version.py, issue 43 item 8): every way items are
written raises it by one, in the writer's transaction (a save, an edit, a delete, a queryset's update or
delete, bulk_create, the batched import's raw inserts); the flow's own catch items never do, nor does
another study's write; and what is built from the items (the stored lists) is rebuilt after any of them."""
from __future__ import annotations

import importlib

import pytest
from django.apps import apps
from django.db import transaction

from experiments.items.storage import insert_items_at_once
from experiments.models import Item, StoredLists, StudyItemsVersion
from experiments.models.items_version import items_version
from experiments.participation import services
from logic.human_defaults import CATCH_ITEMS
from tests.experiments.participation.conftest import make_open_study
from tests.factories import ItemFactory, StudyFactory

pytestmark = pytest.mark.django_db


def new(study, code: str, design: str = "csv-import") -> Item:
    return Item(study=study, code=code, design=design, premises=["p"], gold_answer="yes", question="q?", prompt="q?")


def test_every_writer_of_items_raises_the_version_once_and_catch_items_none():
    study, other = StudyFactory(), StudyFactory()
    ItemFactory(study=other)
    theirs = items_version(other)
    assert items_version(study) == 0 and not StudyItemsVersion.objects.filter(study=study).exists()
    writes = [
        ("created", lambda: ItemFactory(study=study, code="a")),
        ("edited", lambda: Item.objects.get(study=study, code="a").save()),
        ("bulk created", lambda: Item.objects.bulk_create([new(study, "b"), new(study, "c")])),
        ("raw inserts", lambda: insert_items_at_once([new(study, "d"), new(study, "e")])),
        ("updated", lambda: Item.objects.filter(study=study, code__in=["b", "c"]).update(question="q2?")),
        ("deleted", lambda: Item.objects.get(study=study, code="e").delete()),
        ("deleted by a queryset", lambda: Item.objects.filter(study=study, code="d").delete()),
    ]
    for step, (name, write) in enumerate(writes, start=1):
        write()
        assert items_version(study) == step, name
    # the flow's catch items (made by the first entry) are not the study's pool: they raise nothing
    catch = [new(study, "check.1", CATCH_ITEMS), new(study, "check.2", CATCH_ITEMS)]
    Item.objects.bulk_create(catch[:1])
    catch[1].save()
    Item.objects.filter(study=study, design=CATCH_ITEMS).update(question="Press yes?")
    Item.objects.filter(study=study, design=CATCH_ITEMS).delete()
    assert items_version(study) == len(writes) and items_version(other) == theirs


def test_a_write_that_rolls_back_leaves_the_version_as_it_was():
    study = StudyFactory()
    ItemFactory(study=study)
    with pytest.raises(RuntimeError), transaction.atomic():
        insert_items_at_once([new(study, "x")])
        assert items_version(study) == 2
        raise RuntimeError
    assert items_version(study) == 1


def test_the_lists_an_entry_reads_are_rebuilt_after_a_raw_insert():
    """The batched import's raw inserts send no per-item signal: the version alone tells the next entry."""
    study = make_open_study(interpretations=24, attention_checks=[])
    services.participant_start(study=study, prolific_pid=f"pid{0:021d}", prolific_session_id="s0")
    built = StoredLists.objects.get(study=study)
    assert built.items_version == items_version(study)
    insert_items_at_once([new(study, "later")])
    services.participant_start(study=study, prolific_pid=f"pid{1:021d}", prolific_session_id="s1")
    rebuilt = StoredLists.objects.get(study=study)
    assert rebuilt.pk != built.pk and rebuilt.items_version == items_version(study) == built.items_version + 1


def test_the_migration_starts_each_study_at_its_highest_item_id():
    """Lists and summaries kept before the version recorded the highest item id (catch items aside): each
    study starts there, so they stay current until the next write."""
    migration = importlib.import_module("experiments.migrations.0021_burst_items_version")
    study, empty = StudyFactory(), StudyFactory()
    items = [ItemFactory(study=study) for _ in range(3)]
    Item.objects.bulk_create([new(study, "check.1", CATCH_ITEMS)])  # newer, but not in the pool
    StudyItemsVersion.objects.all().delete()
    migration.start_at_the_highest_item_id(apps, None)
    assert items_version(study) == max(item.pk for item in items)
    assert items_version(empty) == 0 and not StudyItemsVersion.objects.filter(study=empty).exists()
    assert migration.CATCH_ITEMS == CATCH_ITEMS
