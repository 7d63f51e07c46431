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


# Within-participant presentation (HumanArm.paired_presentation = "within")


@pytest.mark.parametrize("seed", range(20))
def test_within_lists_hold_both_members_spaced_and_each_member_first_equally_often(seed):
    grid = lists.PairGrid.from_cells(pair_cells(24), seed=3)
    length, gap = 12, 4
    assert lists.within_pairs_count(grid, length, gap) == 2 * (24 // 6)
    first = Counter()
    for number in (0, 1):  # the two lists of block 0: the same pairs, the members' order flipped
        out = lists.within_pairs_list(grid, number, length, seed=seed, min_gap=gap)
        assert len(out) == len(set(out)) == length
        where = {item: k for k, item in enumerate(out)}
        for family in grid.rows[:6]:
            a, b = (grid.items[(family, slot)] for slot in grid.slots[family])
            assert a in where and b in where and abs(where[a] - where[b]) >= gap
            first[(family, grid.slots[family][0] if where[a] < where[b] else grid.slots[family][1])] += 1
        roles_first = Counter(slot for (_, slot), _n in first.items() if _n)
    assert all(n == 1 for n in first.values()) and len(first) == 12  # each member first once over the two lists
    assert roles_first == {"non-rulebreaker": 6, "rulebreaker": 6}


def test_within_lists_are_refused_with_a_reason():
    grid = lists.PairGrid.from_cells(pair_cells(8), seed=0)
    with pytest.raises(lists.ListError, match="must be even"):
        lists.within_pairs_count(grid, 7, 2)
    with pytest.raises(lists.ListError, match="needs 10 pairs; the study has 8"):
        lists.within_pairs_count(grid, 20, 2)
    with pytest.raises(lists.ListError, match="at least 5 trials apart, which needs at least 5 pairs"):
        lists.within_pairs_count(grid, 8, 5)
    triple = lists.PairGrid.from_cells(pair_cells(8, slots=("a", "b", "c")), seed=0)
    with pytest.raises(lists.ListError, match="exactly two members"):
        lists.within_pairs_count(triple, 8, 2)
