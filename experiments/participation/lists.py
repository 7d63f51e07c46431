"""Which items a participant sees, and in which order. Pure Python (no Django).

The item pool is a grid: rows are interpretations, columns are logical forms, each cell one item.
List m of a Latin square over the grid takes a block of `length` consecutive rows (block m // F)
and gives row g the form (g + m) mod F, F being the number of forms. So within a list every
form appears equally often (exactly when `length` is a multiple of F, else within one), no
interpretation appears twice, and F consecutive lists of one block cover each of its
form × interpretation cells exactly once. Participants take the least-used list, so the cells are
covered evenly across the sample. The order within a list is shuffled with a recorded seed.
"""
from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass


class ListError(ValueError):
    """The pool cannot give lists of the asked length."""


@dataclass(frozen=True)
class Cell:
    item_id: int
    form: str
    row: Hashable  # the interpretation (or, for items without one, the item itself)


def _row_order(row: Hashable) -> tuple:
    """Numbers in numeric order, then anything else by its text (rows mix ids and tuples)."""
    return (0, row, "") if isinstance(row, int) else (1, 0, repr(row))


@dataclass(frozen=True)
class Grid:
    forms: tuple[str, ...]
    rows: tuple[Hashable, ...]
    items: Mapping[tuple[Hashable, str], int]  # (row, form) -> item id

    @classmethod
    def from_cells(cls, cells: Iterable[Cell]) -> Grid:
        by_row: dict[Hashable, dict[str, int]] = defaultdict(dict)
        for cell in cells:
            by_row[cell.row].setdefault(cell.form, cell.item_id)
        forms = tuple(sorted({form for row in by_row.values() for form in row}))
        complete = tuple(sorted((r for r, row in by_row.items() if len(row) == len(forms)), key=_row_order))
        items = {(r, f): by_row[r][f] for r in complete for f in forms}
        return cls(forms=forms, rows=complete, items=items)

    def list_count(self, length: int) -> int:
        """How many distinct lists the Latin square has for lists of `length` items."""
        self.check(length)
        return len(self.forms) * (len(self.rows) // length)

    def check(self, length: int) -> None:
        if length < 1:
            raise ListError("Items per participant must be at least 1.")
        if not self.forms:
            raise ListError("The study has no items to draw lists from.")
        if length > len(self.rows):
            raise ListError(
                f"Items per participant ({length}) exceeds the {len(self.rows)} interpretations that "
                f"have an item for every one of the {len(self.forms)} forms; an interpretation may "
                "not repeat within a participant."
            )

    def latin_square_list(self, number: int, length: int) -> list[int]:
        """The item ids of list `number` (taken modulo the number of lists), in grid order."""
        total = self.list_count(length)
        number %= total
        n_forms = len(self.forms)
        shift, block = number % n_forms, number // n_forms
        out = []
        for g in range(block * length, (block + 1) * length):
            form = self.forms[(g + shift) % n_forms]
            out.append(self.items[(self.rows[g], form)])
        return out


def least_used(counts: Mapping[int, int], total: int) -> int:
    """The list number held by fewest participants (lowest number on ties)."""
    return min(range(total), key=lambda m: (counts.get(m, 0), m))


def balanced_choice(counts: Mapping[str, int], options: Sequence[str], seed: int) -> str:
    """The option with the fewest holders; ties broken by the seed (so lists and keys don't lock-step)."""
    fewest = min(counts.get(o, 0) for o in options)
    tied = [o for o in options if counts.get(o, 0) == fewest]
    return tied[seed % len(tied)]


def shuffled(ids: Sequence[int], seed: int) -> list[int]:
    out = list(ids)
    random.Random(seed).shuffle(out)
    return out


def with_checks(ids: Sequence[int], checks: Sequence[int], seed: int) -> list[int]:
    """Spread catch items evenly through a list (never first), their order shuffled by the seed."""
    checks = list(checks)
    random.Random(seed + 1).shuffle(checks)
    out = list(ids)
    n = len(out)
    # insert from the back so earlier positions stay valid
    for a in range(len(checks), 0, -1):
        position = max(1, round(a * n / (len(checks) + 1)))
        out.insert(position, checks[a - 1])
    return out
