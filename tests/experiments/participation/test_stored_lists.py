"""Stored lists (issue 38 item 7): an entry draws the participant's list from lists built once and kept
(participation/list_store.py), and gets exactly the list the rules give when drawn from the item pool:
the same list number (least used), the same items in the same order, the same catch items; the stored
lists are rebuilt when the items or the settings change; and an entry's queries do not grow with the
study's items."""
from __future__ import annotations

import re

import pytest
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext
from hypothesis import given, settings
from hypothesis import strategies as st

from designs.modal.items import items_generate

from designs.csv_bank.items import items_import_csv
from experiments import services as study_services
from experiments.items.perturbing import items_perturb
from experiments.models import Item, Study, StudyStatus
from experiments.participation import choice, lists, services
from experiments.models import PairedPresentation
from experiments.participation.list_store import StoredList, StoredLists
from tests.factories import StudyFactory, review_consent

from .conftest import make_open_study


# --- the pure part: a stored list, drawn with a seed, is the rules' list -------------------------
@st.composite
def grids(draw):
    forms = draw(st.integers(1, 6))
    rows = draw(st.integers(1, 30))
    missing = draw(st.sets(st.tuples(st.integers(0, rows - 1), st.integers(0, forms - 1)), max_size=5))
    cells = [lists.Cell(item_id=r * 100 + f, form=f"f{f}", row=r) for r in range(rows) for f in range(forms)
             if (r, f) not in missing]
    return lists.Grid.from_cells(draw(st.permutations(cells)))


@st.composite
def pair_grids(draw, two: bool = False):
    families = draw(st.integers(1, 25))
    cells = []
    for f in range(families):
        slots = 2 if two else draw(st.integers(1, 4))
        cells += [lists.PairedCell(item_id=f * 10 + s, family=f, slot=f"s{s}", stratum=f"r{f % 3}")
                  for s in range(slots)]
    return lists.PairGrid.from_cells(cells, seed=draw(st.integers(0, 50)))


def _stored_then_drawn(grid, length, number, seed, *, within=False, every_form=False, min_gap=0):
    every = lists.every_list(grid, length, within=within, every_form=every_form, min_gap=min_gap)
    return len(every), lists.drawn(every[number % len(every)], within=within, seed=seed, min_gap=min_gap)


@settings(max_examples=150)
@given(grid=grids(), data=st.data())
def test_a_stored_latin_square_list_drawn_with_a_seed_is_the_rules_list(grid, data):
    length = data.draw(st.integers(1, max(1, len(grid.rows))))
    number, seed = data.draw(st.integers(0, 500)), data.draw(st.integers(0, 2**48 - 1))
    try:
        total = grid.list_count(length)
    except lists.ListError as exc:
        with pytest.raises(lists.ListError, match=re.escape(str(exc))):
            _stored_then_drawn(grid, length, number, seed)
        return
    assert _stored_then_drawn(grid, length, number, seed) == (
        total, lists.shuffled(grid.latin_square_list(number, length), seed))
    if grid.rows and length % len(grid.forms) == 0 and length // len(grid.forms) <= len(grid.rows):
        assert _stored_then_drawn(grid, length, number, seed, every_form=True) == (
            lists.full_rows_count(grid, length), lists.shuffled(lists.full_rows_list(grid, number, length), seed))


@settings(max_examples=150)
@given(grid=pair_grids(), data=st.data())
def test_stored_pair_lists_across_participants_are_the_rules_lists(grid, data):
    length = data.draw(st.integers(1, len(grid.rows)))
    number, seed = data.draw(st.integers(0, 500)), data.draw(st.integers(0, 2**48 - 1))
    assert _stored_then_drawn(grid, length, number, seed) == (
        grid.list_count(length), lists.shuffled(grid.latin_square_list(number, length), seed))


@settings(max_examples=150)
@given(grid=pair_grids(two=True), data=st.data())
def test_stored_pairs_within_participants_keep_the_rules_order_and_gaps(grid, data):
    pairs = data.draw(st.integers(1, len(grid.rows)))
    min_gap = data.draw(st.integers(0, pairs))
    number, seed = data.draw(st.integers(0, 500)), data.draw(st.integers(0, 2**48 - 1))
    total, drawn = _stored_then_drawn(grid, 2 * pairs, number, seed, within=True, min_gap=min_gap)
    assert total == lists.within_pairs_count(grid, 2 * pairs, min_gap)
    assert drawn == lists.within_pairs_list(grid, number, 2 * pairs, seed=seed, min_gap=min_gap)


# --- the database part: participant_start gives what the rules give from the item pool -----------
pytestmark = pytest.mark.django_db


def rules_plan(study: Study, number: int, seed: int) -> tuple[int, list[int]]:
    """The list count and participant `number`'s plan as the rules draw it from the item pool (the path
    every entry took before the lists were stored)."""
    study.refresh_from_db()
    arm = services.human_arm_ensure(study=study)
    grid = services._grid(study, arm)
    length = arm.items_per_participant
    total = services._list_total(study, arm, grid)
    if services._within(grid, arm):
        ids = lists.within_pairs_list(grid, number, length, seed=seed, min_gap=arm.paired_min_gap)
    elif choice.all_mutants(study):
        ids = lists.shuffled(lists.full_rows_list(grid, number, length), seed)
    else:
        ids = lists.shuffled(grid.latin_square_list(number, length), seed)
    return total, lists.with_checks(ids, services._attention_items(study, arm), seed)


def arrive(study: Study, people: list, n: int) -> None:
    """n more participants arrive and agree; each must get the least-used list and the rules' plan."""
    counts: dict[int, int] = {}
    for p in people:
        counts[p.list_number] = counts.get(p.list_number, 0) + 1
    for _ in range(n):
        k = len(people)
        p, created = services.participant_start(study=study, prolific_pid=f"pid{k:021d}", prolific_session_id=f"s{k}")
        assert created
        p = services.participant_consent(participant=p, agree=True)
        total, plan = rules_plan(study, p.list_number, p.list_seed)
        assert p.list_number == lists.least_used(counts, total)
        assert p.plan == plan
        counts[p.list_number] = counts.get(p.list_number, 0) + 1
        people.append(p)


def configure(study: Study, **arm_settings) -> Study:
    arm = services.human_arm_ensure(study=study)
    for name, value in {"completion_code": "C0MPLETE", **arm_settings}.items():
        setattr(arm, name, value)
    arm.full_clean()
    arm.save()
    if study.status != StudyStatus.OPEN:
        review_consent(study)
        study_services.study_transition(study=study, to=StudyStatus.OPEN)
    study.refresh_from_db()
    return study


def test_a_yes_no_study_gets_the_rules_lists_and_a_new_generation_rebuilds_them():
    study = make_open_study(interpretations=24, items_per_participant=12)
    people: list = []
    arrive(study, people, 5)
    header = StoredLists.objects.get(study=study)
    assert header.total == 24 * 2 and StoredList.objects.filter(owner=header).count() == 48
    items_generate(study=study, design="modal-syllogisms", interpretations=48, seed=0, replace=True)
    arrive(study, people, 3)
    assert StoredLists.objects.get(study=study).total == 24 * 4  # 48 interpretations: 4 windows of 12
    configure(study, items_per_participant=24)  # a setting the lists depend on
    arrive(study, people, 2)
    assert StoredLists.objects.get(study=study).total == 24 * 2


def test_paired_studies_across_and_within_and_perturbed_copies_added_later():
    call_command("generate_items", "rulebreakers", "rbs", "--pairs", "16")
    study = configure(Study.objects.get(slug="rbs"), items_per_participant=8, include_nonsense=True)
    people: list = []
    arrive(study, people, 4)
    before = StoredLists.objects.get(study=study).total
    items_perturb(study=study, kind="names", seed=1)
    arrive(study, people, 4)
    assert StoredLists.objects.get(study=study).total != before  # perturbed copies are new members
    call_command("generate_items", "rulebreakers", "rbw", "--pairs", "16")
    within = configure(Study.objects.get(slug="rbw"), items_per_participant=8,
                       paired_presentation=PairedPresentation.WITHIN, paired_min_gap=3)
    arrive(within, [], 5)
    assert StoredLists.objects.get(study=within).within


@pytest.mark.parametrize("all_mutants", [False, True])
def test_four_option_studies_with_one_or_every_mutant_per_question(all_mutants):
    from .test_multiple_choice_trials import make_mc_study

    study = make_mc_study(questions=8, all_mutants=all_mutants)
    arrive(study, [], 6)


def test_an_imported_bank_and_an_edited_item_rebuild_the_lists():
    study = StudyFactory(design="csv-bank")
    bank = "item_id,premise_1,question,gold_answer\n" + "".join(
        f"i{n},Ann is reading {n}.,Can we infer that Ann is reading?,yes\n" for n in range(10))
    items_import_csv(study=study, data=bank.encode())
    study = configure(study, items_per_participant=4)
    people: list = []
    arrive(study, people, 3)
    more = "item_id,premise_1,question,gold_answer\n" + "".join(
        f"j{n},Bo is singing {n}.,Can we infer that Bo is singing?,no\n" for n in range(6))
    items_import_csv(study=study, data=more.encode())
    arrive(study, people, 3)
    assert StoredLists.objects.get(study=study).total == 4  # 16 items, lists of 4
    item = Item.objects.filter(study=study, code="j0").get()
    item.question = "Can we infer that Bo sings?"
    item.save()
    assert not StoredLists.objects.filter(study=study).exists()
    arrive(study, people, 1)


def _entry_queries(study: Study, k: int) -> list[str]:
    with CaptureQueriesContext(connection) as seen:
        services.participant_start(study=study, prolific_pid=f"pid{k:021d}", prolific_session_id=f"s{k}")
    return [q["sql"] for q in seen.captured_queries]


def test_an_entry_reads_one_list_whatever_the_study_size():
    small, large = make_open_study(interpretations=24), make_open_study(interpretations=48)
    for study in (small, large):
        _entry_queries(study, 0)  # the first entry builds the stored lists
    queries = {study.pk: _entry_queries(study, 1) for study in (small, large)}
    assert len(queries[small.pk]) == len(queries[large.pk])
    reads = [sql for sql in queries[large.pk] if re.search(r'(FROM|JOIN) "experiments_item"', sql)]
    # the catch items only: no pool item is read, nothing is counted
    assert len(reads) == 1 and "COUNT(" not in reads[0] and "= 'attention-check'" in reads[0], reads
    # whether the items changed since the lists were built: the study's items version, in the header's read,
    # its row found by the study's primary key (no item read, whatever the database's plan)
    header = [sql for sql in queries[large.pk] if 'FROM "experiments_storedlists"' in sql]
    assert len(header) == 1 and re.search(r'FROM "experiments_studyitemsversion" U0 WHERE U0."study_id" = '
                                          r'\("experiments_storedlists"."study_id"\)', header[0]), header


def test_a_deleted_item_drops_the_lists():
    study = make_open_study(interpretations=24, items_per_participant=12)
    people: list = []
    arrive(study, people, 2)
    Item.objects.filter(study=study, interpretation__index=3).delete()  # one interpretation's items, as the admin
    assert not StoredLists.objects.filter(study=study).exists()
    arrive(study, people, 2)
    assert StoredLists.objects.get(study=study).total == 24 * 2  # 23 complete interpretations: two windows of 12
    Item.objects.filter(study=study).first().delete()
    assert not StoredLists.objects.filter(study=study).exists()
    arrive(study, people, 1)


def test_the_lists_stored_when_the_study_opens_are_the_ones_the_first_entry_reads():
    """Opening stores the lists from the study as stored (a generation sets the study's lexicon after the
    caller read it): the first arrivals of a launch find them current and build nothing."""
    study = make_open_study(interpretations=24)  # the factory's copy of the study, from before the generation
    header = StoredLists.objects.get(study=study)
    services.participant_start(study=study, prolific_pid=f"pid{1:021d}", prolific_session_id="s1")
    assert StoredLists.objects.get(study=study).pk == header.pk
