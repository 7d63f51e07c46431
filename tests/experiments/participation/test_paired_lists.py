"""Lists for paired designs (issue 6): at most one member of a pair per participant, members
balanced across participants, strata spread along each list. Pure (no database)."""
from __future__ import annotations

from collections import Counter

import pytest

from experiments.participation import lists


def pair_cells(pairs: int, strata: int = 4, slots=("non-rulebreaker", "rulebreaker")) -> list[lists.PairedCell]:
    return [
        lists.PairedCell(item_id=p * 10 + s, family=f"pair-{p:03d}", slot=slot, stratum=f"S{p % strata}")
        for p in range(pairs) for s, slot in enumerate(slots)
    ]


def test_no_list_holds_both_members_of_a_pair_and_roles_are_half_and_half():
    grid = lists.PairGrid.from_cells(pair_cells(40), seed=3)
    assert grid.list_count(20) == 4  # 2 blocks of 20 pairs × 2 rotations
    for number in range(grid.list_count(20)):
        ids = grid.latin_square_list(number, 20)
        assert len(ids) == 20
        assert len({i // 10 for i in ids}) == 20  # 20 different pairs
        assert Counter(i % 10 for i in ids) == Counter({0: 10, 1: 10})  # 10 of each role


def test_over_participants_each_member_of_each_pair_is_shown_equally_often():
    grid = lists.PairGrid.from_cells(pair_cells(30), seed=0)
    total = grid.list_count(10)  # 3 blocks × 2
    shown = Counter(i for number in range(total) for i in grid.latin_square_list(number, 10))
    assert len(shown) == 60 and set(shown.values()) == {1}  # every member of every pair exactly once
    twice = Counter(i for number in range(2 * total) for i in grid.latin_square_list(number, 10))
    assert set(twice.values()) == {2}


def test_strata_are_spread_evenly_along_the_family_order():
    grid = lists.PairGrid.from_cells(pair_cells(40, strata=4), seed=1)
    for number in range(grid.list_count(8)):
        strata = Counter(int(i // 10) % 4 for i in grid.latin_square_list(number, 8))
        assert strata == Counter({0: 2, 1: 2, 2: 2, 3: 2})


def test_perturbed_copies_join_their_pair_and_partial_families_keep_their_own_rotation():
    cells = pair_cells(8, strata=1, slots=("real/non-rulebreaker", "real/rulebreaker", "names/non-rulebreaker",
                                            "names/rulebreaker"))
    cells = [c for c in cells if not (c.family == "pair-007" and c.slot.startswith("names"))]  # not perturbed
    grid = lists.PairGrid.from_cells(cells)
    assert grid.period == 4 and grid.slots["pair-007"] == ("real/non-rulebreaker", "real/rulebreaker")
    shown = Counter()
    for number in range(grid.list_count(8)):
        ids = grid.latin_square_list(number, 8)
        assert len({i // 10 for i in ids}) == 8  # one item per family
        shown.update(ids)
    assert {shown[70], shown[71]} == {2}  # the unperturbed pair: each member in 2 of the 4 lists
    assert all(shown[p * 10 + s] == 1 for p in range(7) for s in range(4))


def test_too_long_lists_are_refused_with_a_reason():
    grid = lists.PairGrid.from_cells(pair_cells(5))
    with pytest.raises(lists.ListError, match="exceeds the study's 5 pairs"):
        grid.list_count(6)
    with pytest.raises(lists.ListError, match="no complete pairs"):
        lists.PairGrid.from_cells([]).list_count(1)
