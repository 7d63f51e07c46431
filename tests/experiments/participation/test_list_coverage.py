"""Every complete row of a study's grid is in some list (issue 44 item 1): the lists are windows of rows that
wrap around the row order, so over one full rotation of the lists every row appears, in one window or two
(so every item, a row × form cell, is shown once or twice: frequencies that differ by at most one), and the
Latin square's balance of forms (a pair's sides, a family's members) holds.
And `shortfall` says what a sample smaller than the number of lists leaves unshown, as the lists themselves
give it. Pure (no database); the examples are derandomised in CI (tests/conftest.py's `ci` profile)."""
from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from experiments.participation import lists


def latin_grid(rows: int, forms: int) -> lists.Grid:
    return lists.Grid.from_cells(lists.Cell(item_id=r * 100 + f, form=f"f{f}", row=r)
                                 for r in range(rows) for f in range(forms))


def pair_grid(sizes: list[int], seed: int = 0) -> lists.PairGrid:
    return lists.PairGrid.from_cells(
        (lists.PairedCell(item_id=g * 10 + s, family=g, slot=f"s{s}", stratum=f"r{g % 3}")
         for g, size in enumerate(sizes) for s in range(size)), seed=seed)


def rotation(grid, length: int, **rules) -> list[list[int]]:
    every = lists.every_list(grid, length, **{"within": False, "every_form": False, "min_gap": 0, **rules})
    return [[i for member in ids for i in (member if isinstance(member, list) else [member])] for ids in every]


def assert_rows_even(shown: Counter, rows: int) -> None:
    """Every row is shown (`shown`: in how many windows), and none in more than one window more than another."""
    assert len(shown) == rows, f"{rows - len(shown)} rows in no list"
    assert max(shown.values()) - min(shown.values()) <= 1, shown


@settings(max_examples=300)
@given(rows=st.integers(1, 60), forms=st.integers(1, 6), data=st.data())
def test_latin_square_lists_hold_every_row_evenly_with_every_form_of_it(rows, forms, data):
    length = data.draw(st.integers(1, rows))
    grid = latin_grid(rows, forms)
    every = rotation(grid, length)
    assert len(every) == forms * -(-rows // length)  # the fewest windows that hold every row, × the forms
    cells = Counter(i for ids in every for i in ids)
    windows = Counter({r: n // forms for r, n in Counter(i // 100 for ids in every for i in ids).items()})
    assert_rows_even(windows, rows)
    for (row, form), n in ((divmod(i, 100), n) for i, n in cells.items()):
        assert n == windows[row], "a row in k windows is shown in every form k times"
    assert len(cells) == rows * forms  # every item of the grid is in some list
    assert max(cells.values()) - min(cells.values()) <= 1
    for ids in every:
        assert len(ids) == length and len({i // 100 for i in ids}) == length  # no row twice in a list
        per_form = Counter(i % 100 for i in ids)
        assert max(per_form.values()) - min(per_form.get(f, 0) for f in range(forms)) <= 1  # forms within one


@settings(max_examples=300)
@given(sizes=st.lists(st.integers(1, 4), min_size=1, max_size=45), seed=st.integers(0, 20), data=st.data())
def test_pair_lists_hold_every_family_evenly_and_each_member_equally_often(sizes, seed, data):
    length = data.draw(st.integers(1, len(sizes)))
    grid = pair_grid(sizes, seed)
    every = rotation(grid, length)
    assert len(every) == grid.period * -(-len(sizes) // length)
    items = Counter(i for ids in every for i in ids)
    by_family = Counter(i // 10 for ids in every for i in ids)
    windows = {g: n // grid.period for g, n in by_family.items()}  # how many windows hold the family
    assert_rows_even(Counter(windows), len(sizes))
    for g, size in enumerate(sizes):
        assert {items[g * 10 + s] for s in range(size)} == {windows[g] * grid.period // size}  # members alike
    for ids in every:
        assert len(ids) == length and len({i // 10 for i in ids}) == length  # one member of a family per list
    if set(sizes) == {2}:  # a pair's sides (and the roles) within one in every list
        for ids in every:
            sides = Counter(i % 10 for ids_ in [ids] for i in ids_)
            assert abs(sides[0] - sides[1]) <= 1


@settings(max_examples=200)
@given(rows=st.integers(1, 40), forms=st.integers(1, 4), data=st.data())
def test_lists_of_every_form_of_their_questions_hold_every_question_evenly(rows, forms, data):
    per = data.draw(st.integers(1, rows))
    every = rotation(latin_grid(rows, forms), per * forms, every_form=True)
    assert len(every) == -(-rows // per)
    for ids in every:
        assert Counter(i // 100 for i in ids) == Counter({r: forms for r in {i // 100 for i in ids}})
        assert len({i // 100 for i in ids}) == per
    assert_rows_even(Counter(i // 100 for ids in every for i in ids if i % 100 == 0), rows)


@settings(max_examples=200)
@given(pairs=st.integers(1, 40), data=st.data())
def test_within_participant_lists_hold_every_pair_evenly_first_member_balanced(pairs, data):
    per = data.draw(st.integers(1, pairs))
    grid = pair_grid([2] * pairs)
    every = lists.every_list(grid, 2 * per, within=True, every_form=False, min_gap=0)
    assert len(every) == 2 * -(-pairs // per)
    in_lists = Counter(first // 10 for members in every for first, _ in members)
    assert_rows_even(Counter({g: n // 2 for g, n in in_lists.items()}), pairs)  # two lists per window
    first = Counter(f for members in every for f, _ in members)
    for g in range(pairs):  # each member first as often as the other
        assert first[g * 10] == first[g * 10 + 1]


def test_the_issues_studies_are_covered():
    """Issue 44: 40 pairs, 24 per participant (2 lists, 16 pairs unseen before); 32 questions in 4 orders."""
    pairs = rotation(pair_grid([2] * 40), 24)
    assert len(pairs) == 4 and len({i for ids in pairs for i in ids}) == 80
    questions = rotation(latin_grid(32, 4), 24)
    assert len(questions) == 8 and len({i for ids in questions for i in ids}) == 128


def test_whole_blocks_keep_their_lists_and_numbers():
    """Where the items per participant divide the rows the windows are the old blocks, numbered as before."""
    grid = latin_grid(48, 4)
    assert [grid.latin_square_list(m, 12) for m in range(4)] == [
        [r * 100 + (r + m) % 4 for r in range(12)] for m in range(4)]
    assert grid.latin_square_list(4, 12) == [r * 100 + r % 4 for r in range(12, 24)]


# --- what fewer places than lists leave unshown ---------------------------------------------------

def _unshown(grid, length: int, places: int, **rules) -> tuple[int, int]:
    """(rows, items) in none of the first `places` lists: the lists people are given, least used first."""
    every = rotation(grid, length, **rules)
    given_ = {i for ids in every[:places] for i in ids}
    items = {i for ids in every for i in ids}
    rows = {i // 100 if isinstance(grid, lists.Grid) else i // 10 for i in items}
    seen = {i // 100 if isinstance(grid, lists.Grid) else i // 10 for i in given_}
    return len(rows - seen), len(items - given_)


@settings(max_examples=300)
@given(rows=st.integers(1, 40), forms=st.integers(1, 5), data=st.data())
def test_the_shortfall_of_a_latin_square_is_what_its_lists_leave_out(rows, forms, data):
    length = data.draw(st.integers(1, rows))
    grid = latin_grid(rows, forms)
    total = grid.list_count(length)
    places = data.draw(st.integers(1, total + 2))
    short = lists.shortfall(grid.shape, length, places, within=False, every_form=False, min_gap=0)
    if places >= total:
        assert short is None
        return
    assert (short.rows_unseen, short.items_unseen) == _unshown(grid, length, places)
    assert (short.lists, short.places, short.rows, short.items) == (total, places, rows, rows * forms)


@settings(max_examples=300)
@given(sizes=st.lists(st.integers(1, 4), min_size=1, max_size=30), data=st.data())
def test_the_shortfall_of_pairs_is_what_their_lists_leave_out(sizes, data):
    uniform = data.draw(st.booleans())
    sizes = [sizes[0]] * len(sizes) if uniform else sizes
    length = data.draw(st.integers(1, len(sizes)))
    grid = pair_grid(sizes, data.draw(st.integers(0, 9)))
    places = data.draw(st.integers(1, grid.list_count(length)))
    short = lists.shortfall(grid.shape, length, places, within=False, every_form=False, min_gap=0)
    if places == grid.list_count(length):
        assert short is None
        return
    rows_unseen, items_unseen = _unshown(grid, length, places)
    assert short.rows_unseen == rows_unseen
    assert short.items_unseen == (items_unseen if len(set(sizes)) == 1 else None)


@settings(max_examples=150)
@given(rows=st.integers(1, 30), data=st.data())
def test_the_shortfall_of_whole_row_lists_is_what_they_leave_out(rows, data):
    within = data.draw(st.booleans())
    if within:
        grid, per, rules = pair_grid([2] * rows), 2, {"within": True}
    else:
        grid, per, rules = latin_grid(rows, 3), 3, {"every_form": True}
    length = per * data.draw(st.integers(1, rows))
    total = len(rotation(grid, length, **rules))
    places = data.draw(st.integers(1, total))
    short = lists.shortfall(grid.shape, length, places, **{"within": False, "every_form": False, "min_gap": 0,
                                                            **rules})
    if places == total:
        assert short is None
        return
    assert (short.rows_unseen, short.items_unseen) == _unshown(grid, length, places, **rules)


def test_the_shortfall_says_how_many_items_and_why():
    short = lists.shortfall(pair_grid([2] * 40).shape, 24, 1, within=False, every_form=False, min_gap=0)
    assert short.message() == (
        "people will never see 56 of the study's 80 items, 16 of its 40 pairs not at all: the settings draw 4 lists "
        "and each participant is given one, the least used, so with 1 place (the target sample size) 3 of them are "
        "never given. Set the target sample size to at least 4 (a multiple of 4 uses the lists equally), or show more "
        "items per participant")
    mixed = lists.shortfall(pair_grid([2, 4] * 10).shape, 10, 2, within=False, every_form=False, min_gap=0)
    assert mixed.items_unseen is None and mixed.message().startswith(
        "people will never see 10 of the study’s 20 pairs (nor, it may be, some members of others)")


@pytest.mark.parametrize("places", [4, 100])
def test_enough_places_leave_nothing_unshown(places):
    assert lists.shortfall(pair_grid([2] * 40).shape, 24, places, within=False, every_form=False, min_gap=0) is None
