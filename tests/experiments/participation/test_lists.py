"""List construction: Latin-square rotation, form balance, no repeated interpretation, seeded order."""
from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from experiments.participation import lists


def grid(forms: int, rows: int) -> lists.Grid:
    cells = [
        lists.Cell(item_id=r * 1000 + f, form=f"form{f:02d}", row=r) for r in range(rows) for f in range(forms)
    ]
    return lists.Grid.from_cells(cells)


def decode(item_id: int) -> tuple[int, int]:
    return divmod(item_id, 1000)  # (row, form)


def test_every_list_has_each_form_once_and_no_repeated_interpretation():
    g = grid(24, 48)
    assert g.list_count(24) == 48
    for number in range(48):
        cells = [decode(i) for i in g.latin_square_list(number, 24)]
        assert Counter(f for _, f in cells) == Counter(range(24))
        assert len({r for r, _ in cells}) == 24


def test_the_square_covers_every_form_by_interpretation_cell_exactly_once():
    g = grid(24, 48)
    seen = Counter(i for number in range(g.list_count(24)) for i in g.latin_square_list(number, 24))
    assert set(seen.values()) == {1}
    assert len(seen) == 24 * 48


def test_lists_shorter_than_the_forms_stay_balanced_across_participants():
    g = grid(24, 30)  # lists of 10: 3 blocks (rows 0-29), 72 lists
    assert g.list_count(10) == 72
    per_form = Counter()
    for number in range(72):
        cells = [decode(i) for i in g.latin_square_list(number, 10)]
        assert len({f for _, f in cells}) == 10 and len({r for r, _ in cells}) == 10
        per_form.update(f for _, f in cells)
    assert set(per_form.values()) == {30}  # 720 trials, 24 forms, 30 each
    g2 = grid(24, 60)  # lists of 30: each form once, six forms twice
    counts = Counter(f for _, f in map(decode, g2.latin_square_list(5, 30)))
    assert sorted(counts.values()) == [1] * 18 + [2] * 6


def test_incomplete_interpretations_are_left_out_and_too_long_lists_refused():
    cells = [lists.Cell(item_id=r * 10 + f, form=str(f), row=r) for r in range(5) for f in range(3)]
    cells.append(lists.Cell(item_id=999, form="0", row=99))  # row 99 lacks forms 1 and 2
    g = lists.Grid.from_cells(cells)
    assert 99 not in g.rows and len(g.rows) == 5
    with pytest.raises(lists.ListError, match="exceeds the 5 interpretations"):
        g.list_count(6)
    with pytest.raises(lists.ListError, match="no items"):
        lists.Grid.from_cells([]).list_count(1)


def test_a_grid_speaks_its_designs_words():
    """Issue 37 item 5: a bank's single column of items is refused in items, not interpretations."""
    bank = lists.Grid.from_cells([lists.Cell(item_id=n, form="*", row=n) for n in range(3)], words=lists.ITEM_WORDS)
    with pytest.raises(lists.ListError) as refused:
        bank.list_count(4)
    assert str(refused.value) == ("Items per participant (4) exceeds the study's 3 items; an item is not shown "
                                  "twice to a participant.")


def test_least_used_list_fills_gaps_first():
    assert lists.least_used({}, 5) == 0
    assert lists.least_used({0: 1, 1: 1}, 5) == 2
    assert lists.least_used({0: 2, 1: 1, 2: 2, 3: 2, 4: 2}, 5) == 1


counts_of_lists = st.dictionaries(st.integers(-2, 40), st.integers(0, 3), max_size=30)


@settings(max_examples=400, deadline=None)
@given(counts=counts_of_lists, then=st.one_of(st.none(), counts_of_lists), total=st.integers(1, 40))
def test_least_used_is_the_minimum_over_every_list(counts, then, total):
    """least_used looks only at the lists the mappings name and the lowest one they do not (a launch names
    a few lists of thousands); the rule is the minimum over every list number."""
    rule = min(range(total), key=lambda m: (counts.get(m, 0), (then or {}).get(m, 0), m))
    assert lists.least_used(counts, total, then=then) == rule


def test_balanced_choice_takes_the_smaller_group_and_breaks_ties_by_seed():
    options = ["f_yes", "j_yes"]
    assert lists.balanced_choice({"f_yes": 3, "j_yes": 2}, options, seed=0) == "j_yes"
    assert lists.balanced_choice({"f_yes": 1, "j_yes": 2}, options, seed=1) == "f_yes"
    assert {lists.balanced_choice({}, options, seed=s) for s in range(4)} == set(options)


def test_order_is_a_seeded_shuffle_and_checks_are_spread_out():
    ids = list(range(1, 25))
    assert lists.shuffled(ids, 7) == lists.shuffled(ids, 7) != lists.shuffled(ids, 8)
    assert sorted(lists.shuffled(ids, 7)) == ids
    out = lists.with_checks(ids, [101, 102], seed=3)
    assert len(out) == 26 and set(out) == set(ids) | {101, 102}
    positions = sorted(out.index(c) for c in (101, 102))
    assert positions[0] > 0 and positions[1] - positions[0] >= 8


def test_rows_are_ordered_numerically_whatever_their_kind():
    cells = [lists.Cell(item_id=r, form="a", row=r) for r in (10, 9, 100)]
    cells += [lists.Cell(item_id=500, form="a", row=("item", 500))]
    assert lists.Grid.from_cells(cells).rows == (9, 10, 100, ("item", 500))
