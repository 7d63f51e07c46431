"""The items people could be shown (issue 44 item 2): one function, items_people_can_be_shown, gives the items in a
study's stored lists (with any item people answered outside them), and for a closed study the items people
answered; without lists, the items people answered. The launch panel's count of the items the lists hold comes
from the grid's shape, without reading items (lists_hold): on random studies of every kind the two agree, and
both are every item of the grid (the windows cover every row)."""
from __future__ import annotations

import html
import random

import pytest

from experiments import services as study_services
from experiments.models import Item, Participant, StudyStatus, Trial
from experiments.participation import launch, lists, services
from experiments.participation.item_summary import item_summary
from experiments.participation.selectors import items_people_can_be_shown
from tests.factories import review_consent

from .test_list_shapes import bank, four_options, generated, pairs

pytestmark = pytest.mark.django_db


def listed(study) -> set[int]:
    arm = services.human_arm_ensure(study=study)
    grid = services._grid(study, arm)
    within = services._within(grid, arm)
    every = lists.every_list(grid, arm.items_per_participant, within=within,
                             every_form=services.choice.all_mutants(study), min_gap=arm.paired_min_gap)
    return {i for ids in every for member in ids for i in (member if isinstance(member, list) else [member])}


@pytest.mark.parametrize("make", [generated, bank, pairs, four_options])
@pytest.mark.parametrize("seed", [0, 1, 3, 4])
def test_the_items_are_the_lists_and_the_panels_count_is_theirs(make, seed):
    study = make(random.Random(seed))
    arm = services.human_arm_ensure(study=study)
    for include in (False, True):
        arm.include_nonsense = include
        arm.save(update_fields=["include_nonsense"])
        summary = item_summary(study=study)
        try:
            shape = summary.shape(arm)
            arm.items_per_participant = max(1, min(shape.row_count, 1 + seed))
            arm.save(update_fields=["items_per_participant"])
            services._list_total(study, arm, shape)
        except lists.ListError:
            continue
        shown = items_people_can_be_shown(study)
        assert shown.item_ids == listed(study), (make.__name__, seed, include)
        grid = services._grid(study, arm)
        assert shown.item_ids == set(grid.items.values())  # every item of the grid is in some list
        assert len(shown.item_ids) == shape.items, (make.__name__, seed, include)
        held = services.lists_hold(study=study, arm=arm)
        assert held.startswith(f"all {shape.items} " if shape.items == summary.items else f"{shape.items} of ")
        assert shown.source.startswith("the study's ") and shown.source.endswith(" participant lists")


def _open(study):
    arm = services.human_arm_ensure(study=study)
    arm.completion_code, arm.attention_checks, arm.practice, arm.items_per_participant = "C0MPLETE", [], [], 2
    arm.save()
    review_consent(study)
    study_services.study_transition(study=study, to=StudyStatus.OPEN)
    study.refresh_from_db()
    return study


def _answer(study, pid, *, preview=False, simulated=False, items=None):
    participant, _ = services.participant_start(study=study, prolific_pid=pid, prolific_session_id=f"s-{pid}",
                                                preview=preview) if not simulated else (None, None)
    if simulated:
        participant = Participant.objects.create(study=study, prolific_pid=f"sim:{pid}", key_mapping="f_yes",
                                                 is_simulated=True, plan=list(items))
    for index, pk in enumerate(items if items is not None else participant.plan):
        Trial.objects.create(participant=participant, item_id=pk, index=index, key="f", answer="yes", correct=True,
                             rt_ms=900.0)
    return participant


def test_a_closed_study_counts_the_items_people_answered_and_previews_and_bots_only_where_asked():
    study = _open(generated(random.Random(2)))
    every = items_people_can_be_shown(study).item_ids
    person = _answer(study, "p" * 24)
    answered = set(person.plan)
    assert answered < every
    outside = next(iter(set(Item.objects.filter(study=study).values_list("pk", flat=True)) - every))
    _answer(study, "q" * 24, preview=True, items=[outside])  # a staff preview: never counted
    assert items_people_can_be_shown(study).item_ids == every
    _answer(study, "r" * 24, simulated=True, items=[outside])  # a pilot's bot: only in a pilot's report
    assert items_people_can_be_shown(study).item_ids == every
    assert items_people_can_be_shown(study, include_simulated=True).item_ids == every | {outside}
    assert "1 items people answered outside them" in items_people_can_be_shown(study, include_simulated=True).source
    study_services.study_transition(study=study, to=StudyStatus.CLOSED)
    closed = items_people_can_be_shown(study)
    assert closed.item_ids == answered and closed.source == "the items people answered (the study is closed)"
    assert items_people_can_be_shown(study, include_simulated=True).item_ids == answered | {outside}


def test_without_lists_the_items_people_answered_say_why():
    study = generated(random.Random(2))
    arm = services.human_arm_ensure(study=study)
    arm.items_per_participant = 500
    arm.save(update_fields=["items_per_participant"])
    some = list(Item.objects.filter(study=study).values_list("pk", flat=True)[:3])
    _answer(study, "s" * 24, simulated=True, items=some)
    shown = items_people_can_be_shown(study, include_simulated=True)
    assert shown.item_ids == set(some)
    assert shown.source.startswith("the items people answered (no lists can be drawn: Items per participant (500)")
    assert items_people_can_be_shown(study).item_ids == frozenset()


def test_the_launch_panel_says_how_many_items_people_can_be_shown():
    study = pairs(random.Random(3))
    arm = services.human_arm_ensure(study=study)
    arm.items_per_participant = 2
    arm.save(update_fields=["items_per_participant"])
    shown = items_people_can_be_shown(study)
    total = Item.objects.filter(study=study).exclude(design="attention-check").count()
    panel = html.unescape(launch.launch_html(study))
    assert (f"Items people can be shown: {len(shown.item_ids)} of the study's {total} items are in its lists; the "
            f"other {total - len(shown.item_ids)} are in none") in panel
