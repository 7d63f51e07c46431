"""Issue 35 item 2: typed item links (Item.link_kind, experiments.models.LinkKind). Every writer's items get
their kind by one rule (LinkKind.of, in Item.save and Item.objects.bulk_create), and migration 0015 fills
it for the items stored before it."""
from __future__ import annotations

import pytest

from experiments.models import Item, LinkKind
from tests.factories import StudyFactory

pytestmark = pytest.mark.django_db


def _item(study, code, **fields):
    return Item(study=study, code=code, design=fields.pop("design", "csv-import"), gold_answer=fields.pop("gold", "yes"),
                premises=["p"], question="q?", prompt="q? Answer:", **fields)


def test_every_writer_gets_the_kind_of_its_link_by_one_rule():
    study = StudyFactory(design="csv-import")
    real = _item(study, "real")
    real.save()
    assert real.link_kind == LinkKind.NONE
    made = Item.objects.bulk_create([
        _item(study, "mirror", condition="nonsense", original=real),
        _item(study, "copy", condition="names", original=real),
        _item(study, "member", pair_id="p1", pair_role="original"),
        _item(study, "rot1", kind="multiple_choice", gold="B", original=real, pair_id="q1", pair_role="rot1"),
    ])
    stored = dict(Item.objects.filter(pk__in=[i.pk for i in made]).values_list("code", "link_kind"))
    assert stored == {"mirror": LinkKind.NONSENSE_MIRROR, "copy": LinkKind.PERTURBATION,
                      "member": LinkKind.PAIR_MEMBER, "rot1": LinkKind.OPTION_ORDER}


@pytest.mark.django_db(transaction=True)
def test_the_migration_fills_the_kinds_of_stored_items():
    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor

    before, after = [("experiments", "0014_job_labels")], [("experiments", "0015_item_link_kind")]
    executor = MigrationExecutor(connection)
    executor.migrate(before)
    old = executor.loader.project_state(before).apps
    OldStudy, OldItem = old.get_model("experiments", "Study"), old.get_model("experiments", "Item")
    study = OldStudy.objects.create(slug="links-old", title="links", design="csv-import")
    common = {"study": study, "design": "csv-import", "premises": ["p"], "question": "q?", "prompt": "q"}
    real = OldItem.objects.create(code="real", gold_answer="yes", **common)
    OldItem.objects.create(code="mirror", gold_answer="yes", condition="nonsense", original=real, **common)
    OldItem.objects.create(code="copy", gold_answer="yes", condition="names", original=real, **common)
    OldItem.objects.create(code="member", gold_answer="yes", pair_id="p1", pair_role="original", **common)
    OldItem.objects.create(code="rot1", gold_answer="B", kind="multiple_choice", original=real, pair_id="q1",
                           pair_role="rot1", **common)
    executor = MigrationExecutor(connection)
    executor.migrate(after)
    new = MigrationExecutor(connection).loader.project_state(after).apps.get_model("experiments", "Item")
    assert dict(new.objects.filter(study_id=study.pk).values_list("code", "link_kind")) == {
        "real": "", "mirror": "nonsense_mirror", "copy": "perturbation", "member": "pair_member",
        "rot1": "option_order"}
    executor = MigrationExecutor(connection)  # back to the latest schema, for the tests after this one
    executor.migrate(executor.loader.graph.leaf_nodes())
