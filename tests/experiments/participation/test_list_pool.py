"""One rule of which items a study's lists are drawn from (logic.list_pool.ListPool), stated in Python (`admits`)
and as the database filter the human arm's lists draw through (participation.paired.pool_q). Both are held to
each other here: over every combination of a rule's settings on a study holding every kind of item, and
through the arm's own grid (services._grid) for paired, perturbed and four-option studies. (What people could
be shown is what the lists hold: test_items_people_can_be_shown.py.)"""
from __future__ import annotations

import itertools

import pytest

from experiments import design_registry as registry
from experiments.models import Item
from experiments.participation import paired, services
from logic.list_pool import ListPool
from tests.factories import StudyFactory

pytestmark = pytest.mark.django_db

PREMISES = ["Ann is in Paris.", "If Ann is in Paris, she is in France."]
DESIGNS = ("rulebreakers", "csv-import", registry.CATCH_ITEMS)
VARIANTS = ("", "v1", "v2")
CONDITIONS = ("real", "nonsense", "names")


def _item(study, code, **fields):
    defaults = {"design": "csv-import", "gold_answer": "yes", "premises": PREMISES, "question": "Is Ann in France?",
                "prompt": "Is Ann in France?"}
    return Item(study=study, code=code, **{**defaults, **fields})


def _admitted_in_python(rule: ListPool, items) -> set[int]:
    return {i.pk for i in items if rule.admits(design=i.design, variant=i.variant, condition=i.condition)}


def test_the_filter_is_the_rule_for_every_setting_on_every_kind_of_item():
    study = StudyFactory(design="rulebreakers")
    items = Item.objects.bulk_create(
        _item(study, f"{d}.{v}.{c}", design=d, variant=v, condition=c)
        for d, v, c in itertools.product(DESIGNS, VARIANTS, CONDITIONS))
    items = list(Item.objects.filter(study=study))
    assert len(items) == len(DESIGNS) * len(VARIANTS) * len(CONDITIONS)
    one = registry.list_pool().one_phrasing
    assert "rulebreakers" in one and "csv-import" not in one  # the declarations this test leans on
    seen = set()
    for variant, perturbed, one_phrasing, never in itertools.product(
            VARIANTS, (False, True), (None, one, frozenset(), frozenset({"csv-import"})),
            (frozenset(), frozenset({registry.CATCH_ITEMS}))):
        rule = ListPool(human_variant=variant, perturbed=perturbed, one_phrasing=one_phrasing, never=never)
        queried = set(Item.objects.filter(study=study).filter(paired.pool_q(rule)).values_list("pk", flat=True))
        assert queried == _admitted_in_python(rule, items), rule
        seen.add(frozenset(queried))
    assert len(seen) > 10  # the settings do change what is drawn from


def _pairs_study(*, human_variant: str):
    study = StudyFactory(design="rulebreakers", settings={"human_variant": human_variant} if human_variant else {})
    roots = Item.objects.bulk_create(
        _item(study, f"p{p}.{role}.{v}", design="rulebreakers", pair_id=f"pair{p}", pair_role=role, variant=v,
              form_id="r1")
        for p in range(4) for role in ("rulebreaker", "conforming") for v in ("v1", "v2"))
    Item.objects.bulk_create(
        _item(study, f"{r.code}.x", design="rulebreakers", pair_id=f"{r.pair_id}.x", pair_role=r.pair_role,
              variant=r.variant, form_id="r1", condition="nonsense", original=r) for r in roots[::3])
    return study


def _four_options_study():
    study = StudyFactory(design="multiple-choice")
    roots = Item.objects.bulk_create(
        _item(study, f"q{q}.{rot}", kind="multiple_choice", gold_answer="A", pair_id=f"q{q}", pair_role=rot,
              options=["a", "b", "c", "d"], design="multiple-choice")
        for q in range(3) for rot in ("", "rot1", "rot2", "rot3"))
    Item.objects.bulk_create(  # perturbed copies of the first question's orders
        _item(study, f"{r.code}.x", kind="multiple_choice", gold_answer="A", pair_id="q0.x", pair_role=r.pair_role,
              options=["a", "b", "c", "d"], design="multiple-choice", condition="names", original=r)
        for r in roots[:4])
    return study


@pytest.mark.parametrize("include_nonsense", [False, True])
@pytest.mark.parametrize("make", [lambda: _pairs_study(human_variant="v1"), _four_options_study], ids=["pairs", "mc"])
def test_the_arms_lists_draw_from_exactly_the_items_the_rule_admits(make, include_nonsense):
    study = make()
    arm = services.human_arm_ensure(study=study)
    assert services._attention_items(study, arm)  # the arm's catch items: never in a list
    arm.include_nonsense = include_nonsense
    arm.save(update_fields=["include_nonsense"])
    grid = services._grid(study, arm)
    rule = paired.list_pool(study, arm)
    assert rule.perturbed is include_nonsense
    assert set(grid.items.values()) == _admitted_in_python(rule, Item.objects.filter(study=study))


def test_pairs_in_several_phrasings_and_none_chosen_are_refused_not_drawn_from_one_unsaid():
    """PairGrid keeps one item per pair member: without the phrasing people see, the lists would hold one
    phrasing picked by id while the rule (and the report) counted every phrasing."""
    from experiments.participation import lists

    study = _pairs_study(human_variant="")
    arm = services.human_arm_ensure(study=study)
    arm.items_per_participant = 4
    arm.save(update_fields=["items_per_participant"])
    with pytest.raises(lists.ListError, match=r"several phrasings \(v1, v2\).*human_variant"):
        services._grid(study, arm)
    assert "several phrasings (v1, v2)" in services.lists_problem(study=study, arm=arm)
    study.settings = {"human_variant": "v2"}
    study.save(update_fields=["settings"])
    assert services.lists_problem(study=study, arm=arm) is None
    assert set(services._grid(study, arm).items.values()) == set(
        Item.objects.filter(study=study, variant="v2", condition="real").values_list("pk", flat=True))
