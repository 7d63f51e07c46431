"""Which items a participant sees, and in which order. Pure Python (no Django).

The item pool is a grid: rows are interpretations, columns are logical forms, each cell one item.
The rows are cut into windows of `length` consecutive rows that wrap around the row order (issue 44
item 1): window w holds the rows at positions w·length … (w + 1)·length − 1, taken modulo the number
of rows R, and there are ceil(R / length) windows, the fewest that hold every row. So every complete
row is in some list, and over the windows each row appears once or twice (twice only for the first
few rows, which the last window wraps back to): frequencies that differ by at most one. Where
`length` divides R the windows are the old whole blocks, numbered as before.
List m of the Latin square takes window m // F and gives the row at position p the form
(p + m) mod F, F being the number of forms. So within a list every form appears equally often
(exactly when `length` is a multiple of F, else within one), no interpretation appears twice, and F
consecutive lists of one window cover each of its form × interpretation cells exactly once.
Participants take the least-used list, so the cells are covered evenly across the sample. The order
within a list is shuffled with a recorded seed. `shortfall` says what a sample smaller than the
number of lists leaves unshown.
"""
from __future__ import annotations

import math
import random
from collections import defaultdict
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass


class ListError(ValueError):
    """The pool cannot give lists of the asked length."""


def window_count(row_count: int, per: int) -> int:
    """How many windows of `per` consecutive rows (wrapping around) it takes to hold every row."""
    return -(-row_count // per)


def window_positions(window: int, per: int) -> range:
    """The positions of window `window`'s rows in the row order, before wrapping (row = position mod R):
    a position past the last row comes back to the first, so the parity of the positions, which the
    forms follow, runs on across the wrap."""
    return range(window * per, (window + 1) * per)


@dataclass(frozen=True)
class Cell:
    item_id: int
    form: str
    row: Hashable  # the interpretation (or, for items without one, the item itself)


def _row_order(row: Hashable) -> tuple:
    """Numbers in numeric order, then anything else by its text (rows mix ids and tuples)."""
    return (0, row, "") if isinstance(row, int) else (1, 0, repr(row))


@dataclass(frozen=True)
class GridWords:
    """What a grid's rows and columns are called in the study's own design (issue 37 item 5): 003's
    interpretations × forms, a multiple-choice bank's questions × circular orders, a bank's items."""

    rows: str = "interpretations"
    row: str = "an interpretation"
    forms: str = "forms"


MODAL_WORDS = GridWords()
QUESTION_WORDS = GridWords(rows="questions", row="a question", forms="circular orders of its options")
ITEM_WORDS = GridWords(rows="items", row="an item", forms="columns")


@dataclass(frozen=True)
class Shape:
    """What the number of lists (and why none can be drawn) depends on, without the items: the forms
    (a pair grid's slots), how many complete rows, and for a pair grid the member counts of its
    families. Every Grid and PairGrid has one (.shape); the launch panel gets one from aggregate
    queries (participation/shapes.py), so its checks never load a study's items."""

    forms: tuple[str, ...]
    row_count: int
    sizes: tuple[int, ...] | None = None  # None: a Latin-square grid; else a pair grid's family sizes
    words: GridWords = MODAL_WORDS  # what its rows and forms are called in the study's design
    members: int = 0  # a pair grid's items (its families' sizes summed); a Latin-square grid's are rows × forms

    @property
    def items(self) -> int:
        """The grid's items: every one is in some list (the windows cover every row), so these are the items
        the lists hold, the items people could be shown (test_items_people_can_be_shown.py holds the two)."""
        return self.members if self.paired else self.row_count * len(self.forms)

    @property
    def shape(self) -> Shape:
        return self

    @property
    def paired(self) -> bool:
        return self.sizes is not None

    @property
    def period(self) -> int:
        out = 1
        for n in set(self.sizes or ()):
            out = out * n // math.gcd(out, n)
        return out

    def check(self, length: int) -> None:
        if length < 1:
            raise ListError("Items per participant must be at least 1.")
        if self.paired:
            if not self.row_count:
                raise ListError("The study has no complete pairs to draw lists from.")
            if length > self.row_count:
                raise ListError(
                    f"Items per participant ({length}) exceeds the study's {self.row_count} pairs; a participant "
                    "sees at most one member of each pair."
                )
            return
        if not self.forms:
            raise ListError("The study has no items to draw lists from.")
        if length > self.row_count:
            words = self.words
            if len(self.forms) == 1:
                raise ListError(f"Items per participant ({length}) exceeds the study's {self.row_count} "
                                f"{words.rows}; {words.row} is not shown twice to a participant.")
            raise ListError(
                f"Items per participant ({length}) exceeds the {self.row_count} {words.rows} that "
                f"have an item for every one of the {len(self.forms)} {words.forms}; {words.row} may "
                "not repeat within a participant."
            )

    def list_count(self, length: int) -> int:
        self.check(length)
        return (self.period if self.paired else len(self.forms)) * window_count(self.row_count, length)


@dataclass(frozen=True)
class Grid:
    forms: tuple[str, ...]
    rows: tuple[Hashable, ...]
    items: Mapping[tuple[Hashable, str], int]  # (row, form) -> item id
    words: GridWords = MODAL_WORDS

    @classmethod
    def from_cells(cls, cells: Iterable[Cell], words: GridWords = MODAL_WORDS) -> Grid:
        by_row: dict[Hashable, dict[str, int]] = defaultdict(dict)
        for cell in cells:
            by_row[cell.row].setdefault(cell.form, cell.item_id)
        forms = tuple(sorted({form for row in by_row.values() for form in row}))
        complete = tuple(sorted((r for r, row in by_row.items() if len(row) == len(forms)), key=_row_order))
        items = {(r, f): by_row[r][f] for r in complete for f in forms}
        return cls(forms=forms, rows=complete, items=items, words=words)

    @property
    def shape(self) -> Shape:
        return Shape(forms=self.forms, row_count=len(self.rows), words=self.words)

    def list_count(self, length: int) -> int:
        """How many distinct lists the Latin square has for lists of `length` items."""
        return self.shape.list_count(length)

    def check(self, length: int) -> None:
        self.shape.check(length)

    def latin_square_list(self, number: int, length: int) -> list[int]:
        """The item ids of list `number` (taken modulo the number of lists), in grid order."""
        total = self.list_count(length)
        number %= total
        n_forms, n_rows = len(self.forms), len(self.rows)
        shift, window = number % n_forms, number // n_forms
        return [self.items[(self.rows[p % n_rows], self.forms[(p + shift) % n_forms])]
                for p in window_positions(window, length)]


def least_used(counts: Mapping[int, int], total: int, then: Mapping[int, int] | None = None) -> int:
    """The list number held by fewest participants; on ties, the one fewest `then` were given (entries
    not counted yet: a launch's burst arrives before anyone consents), then the lowest number."""
    then = then or {}
    # Every list named in neither mapping has the key (0, 0, m): of those only the lowest can win, so the
    # minimum is taken over the named lists and that one (a launch names a few lists of thousands).
    named = {m for m in (*counts, *then) if 0 <= m < total}
    unnamed = next((m for m in range(total) if m not in named), None)
    candidates = named if unnamed is None else named | {unnamed}
    return min(candidates, key=lambda m: (counts.get(m, 0), then.get(m, 0), m))


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


# Designs where a participant answers every form of each row shown (every circular mutant of a
# multiple-choice question, seed 001, when the study asks for all): lists are windows of whole rows.


def full_rows_count(grid: Grid | Shape, length: int) -> int:
    """How many lists of `length` items hold all forms of `length / F` rows each (windows of rows that
    wrap around, as the Latin square's)."""
    shape = grid.shape
    shape.check(1)
    forms = len(shape.forms)
    if length < forms or length % forms:
        raise ListError(f"Items per participant ({length}) must be a multiple of {forms}: each question is "
                        f"shown in all its {forms} versions.")
    if length // forms > shape.row_count:
        raise ListError(f"Items per participant ({length}) needs {length // forms} questions; the study has "
                        f"{shape.row_count}.")
    return window_count(shape.row_count, length // forms)


def full_rows_list(grid: Grid, number: int, length: int) -> list[int]:
    """List `number` (modulo the count): every form of the rows of window `number`, in grid order."""
    number %= full_rows_count(grid, length)
    per, n_rows = length // len(grid.forms), len(grid.rows)
    return [grid.items[(grid.rows[p % n_rows], form)] for p in window_positions(number, per) for form in grid.forms]


# Paired designs (issue 6: rulebreakers, dual-sided rules, matched-pair perturbations): a
# participant sees at most one member of each pair; the pairing is across participants.


@dataclass(frozen=True)
class PairedCell:
    item_id: int
    family: Hashable  # a pair with its perturbed copies: a participant sees at most one item of it
    slot: str  # which member: role, or condition/role when perturbed copies share the family
    stratum: str = ""  # e.g. rule × entity kind: spread evenly along the order of families


@dataclass(frozen=True)
class PairGrid:
    """Rows are families, each with its own slots (a perturbation may cover only some pairs).

    List m takes a window of `length` consecutive families (window m // L, wrapping around the family
    order as the Latin square's windows do) and gives the family at position p the slot (p + m) mod S_g
    of its own S_g slots, L being the least common multiple of the S_g. So no list holds two items of
    one family; every family is in some window; L consecutive lists of a window show every member of
    each family of the window equally often (exactly once per S_g lists); within a list the slots
    alternate along the families, whose order interleaves the strata, so roles and subsets stay balanced.
    """

    rows: tuple[Hashable, ...]
    slots: Mapping[Hashable, tuple[str, ...]]  # family → its slots, sorted
    items: Mapping[tuple[Hashable, str], int]

    @property
    def forms(self) -> tuple[str, ...]:
        return tuple(sorted({s for slots in self.slots.values() for s in slots}))

    @property
    def shape(self) -> Shape:
        return Shape(forms=self.forms, row_count=len(self.rows),
                     sizes=tuple(sorted({len(s) for s in self.slots.values()})), members=len(self.items))

    @property
    def period(self) -> int:
        return self.shape.period

    @classmethod
    def from_cells(cls, cells: Iterable[PairedCell], seed: int = 0) -> PairGrid:
        by_family: dict[Hashable, dict[str, int]] = defaultdict(dict)
        strata: dict[Hashable, str] = {}
        for cell in cells:
            by_family[cell.family].setdefault(cell.slot, cell.item_id)
            strata.setdefault(cell.family, cell.stratum)
        families = list(by_family)
        grouped: dict[str, list[Hashable]] = defaultdict(list)
        for family in sorted(families, key=_row_order):
            grouped[strata[family]].append(family)
        keyed = []
        for stratum, members in grouped.items():
            random.Random(f"{seed}:{stratum}").shuffle(members)
            keyed += [((k + 0.5) / len(members), stratum, family) for k, family in enumerate(members)]
        rows = tuple(family for _, _, family in sorted(keyed, key=lambda t: (t[0], t[1])))
        slots = {f: tuple(sorted(by_family[f])) for f in rows}
        items = {(f, s): by_family[f][s] for f in rows for s in slots[f]}
        return cls(rows=rows, slots=slots, items=items)

    def check(self, length: int) -> None:
        self.shape.check(length)

    def list_count(self, length: int) -> int:
        return self.shape.list_count(length)

    def latin_square_list(self, number: int, length: int) -> list[int]:
        number %= self.list_count(length)
        shift, window = number % self.period, number // self.period
        out = []
        for p in window_positions(window, length):
            family = self.rows[p % len(self.rows)]
            slots = self.slots[family]
            out.append(self.items[(family, slots[(p + shift) % len(slots)])])
        return out


# Paired designs shown within participants (HumanArm.paired_presentation = "within"): a participant
# answers both members of each pair in the list, so their two answers form a true pair (000's τ,
# 004's dual-sided accuracy and 002's McNemar test are then each person's own quantities).


def within_pairs_count(grid: PairGrid | Shape, length: int, min_gap: int) -> int:
    """How many lists of `length` trials (length / 2 pairs, both members) there are: two per window of
    pairs (wrapping around, as the Latin square's), one for each order of the members."""
    shape = grid.shape
    shape.check(1)
    sizes = list(shape.sizes or ())
    if sizes != [2]:
        raise ListError("Within-participant presentation needs pairs of exactly two members; this study's pairs "
                        f"have {', '.join(map(str, sizes))} (perturbed copies share a pair): present them across "
                        "participants instead.")
    if length < 2 or length % 2:
        raise ListError(f"Items per participant ({length}) must be even: each pair is shown with both members.")
    pairs = length // 2
    if pairs > shape.row_count:
        raise ListError(f"Items per participant ({length}) needs {pairs} pairs; the study has {shape.row_count}.")
    if min_gap > pairs:
        raise ListError(f"The members of a pair are to be at least {min_gap} trials apart, which needs at least "
                        f"{min_gap} pairs per list ({2 * min_gap} items per participant); the list has {pairs}.")
    return 2 * window_count(shape.row_count, pairs)


def within_pairs_list(grid: PairGrid, number: int, length: int, *, seed: int, min_gap: int) -> list[int]:
    """List `number` (modulo the count): the pairs of window number // 2, both members each. The first
    half of the list holds one member of every pair, the second half the other, so the two members
    of a pair are at least `min_gap` trials apart (catch items inserted later only widen the gaps).
    Which member comes first alternates along the pairs and flips between the two lists of a window,
    so each member is first equally often. The order within each half is shuffled by `seed`, redrawn
    until every gap is at least min_gap (the same order in both halves, a gap of exactly length / 2,
    if no draw in 200 does)."""
    return within_pairs_ordered(within_pairs_members(grid, number, length, min_gap), seed=seed, min_gap=min_gap)


def within_pairs_members(grid: PairGrid, number: int, length: int, min_gap: int) -> list[tuple[int, int]]:
    """The (first, second) member of each pair of list `number`, in the order of the families."""
    total = within_pairs_count(grid, length, min_gap)
    number %= total
    pairs, window, flip = length // 2, number // 2, number % 2
    families = [grid.rows[p % len(grid.rows)] for p in window_positions(window, pairs)]
    out = []
    for g, family in enumerate(families):
        slots = grid.slots[family]
        out.append((grid.items[(family, slots[(g + flip) % 2])], grid.items[(family, slots[(g + flip + 1) % 2])]))
    return out


def within_pairs_ordered(members: Sequence[Sequence[int]], *, seed: int, min_gap: int) -> list[int]:
    """within_pairs_list's order: both halves shuffled by `seed` (the second redrawn for the gaps)."""
    pairs = len(members)
    rng = random.Random(seed)
    order_a = list(range(pairs))
    rng.shuffle(order_a)
    order_b = list(order_a)
    at_a = {g: i for i, g in enumerate(order_a)}
    for _ in range(200):
        candidate = list(range(pairs))
        rng.shuffle(candidate)
        if all(pairs - at_a[g] + j >= min_gap for j, g in enumerate(candidate)):
            order_b = candidate
            break
    return [members[g][0] for g in order_a] + [members[g][1] for g in order_b]


# Stored lists (issue 38 item 7): every list a study's settings can draw, computed once from its items
# (participation/list_store.py keeps them), so that a participant's entry reads one list, not the pool.
# A stored list is what the rules fix before the participant's seed: item ids in grid order, or for
# pairs shown within participants the (first, second) members of each pair; drawn() applies the seed.


def list_total(grid, length: int, *, within: bool, every_form: bool, min_gap: int) -> int:
    """How many distinct lists the settings draw from `grid` (a grid or its Shape; ListError saying why
    none can be drawn)."""
    if within:
        return within_pairs_count(grid, length, min_gap)
    return full_rows_count(grid, length) if every_form else grid.shape.list_count(length)


def every_list(grid, length: int, *, within: bool, every_form: bool, min_gap: int) -> list[list]:
    """Every list, by number, as stored (ListError when the settings draw none)."""
    if within:
        total = within_pairs_count(grid, length, min_gap)
        return [[list(pair) for pair in within_pairs_members(grid, n, length, min_gap)] for n in range(total)]
    if every_form:
        return [full_rows_list(grid, n, length) for n in range(full_rows_count(grid, length))]
    return [grid.latin_square_list(n, length) for n in range(grid.list_count(length))]


def drawn(stored: Sequence, *, within: bool, seed: int, min_gap: int) -> list[int]:
    """A stored list in the participant's order (before catch items): the rules' own shuffle by `seed`."""
    if within:
        return within_pairs_ordered(stored, seed=seed, min_gap=min_gap)
    return shuffled(stored, seed)


# A sample smaller than the number of lists (issue 44 item 1): participants take the least-used list, the
# lowest number on ties, so with fewer places than lists the lists past the places are never given and the
# rows only they hold are never shown. Read from the grid's shape alone (the launch panel's), so the figure
# comes without the items.


@dataclass(frozen=True)
class Shortfall:
    """What `places` participants leave unshown of a grid whose settings draw `lists` lists."""

    lists: int
    places: int
    rows: int  # the grid's complete rows
    rows_unseen: int  # rows in no list a participant is given
    items: int | None  # the grid's items (None: families of several sizes, whose items the shape cannot place)
    items_unseen: int | None
    row_words: str  # what the rows are called ("pairs", "questions", …)

    def message(self) -> str:
        rows = f"{self.rows_unseen} of its {self.rows} {self.row_words}"
        if self.items_unseen is not None:
            unseen = f"{self.items_unseen} of the study's {self.items} items"
            unseen += f", {rows} not at all" if self.rows_unseen else ""
        else:  # families of several sizes: the shape places rows, not their members
            unseen = f"{rows.replace('its', 'the study’s', 1)} (nor, it may be, some members of others)"
        never = self.lists - self.places
        places = f"{self.places} place{'' if self.places == 1 else 's'}"
        return (f"people will never see {unseen}: the settings draw {self.lists} lists and each participant is "
                f"given one, the least used, so with {places} (the target sample size) {never} of them "
                f"{'is' if never == 1 else 'are'} never given. Set the target sample size to at least {self.lists} "
                f"(a multiple of {self.lists} uses the lists equally), or show more items per participant")


def shortfall(shape: Shape, length: int, places: int, *, within: bool, every_form: bool,
              min_gap: int) -> Shortfall | None:
    """What `places` participants never see of the lists the settings draw from a grid of `shape` (None
    when every list is given to someone). ListError when the settings draw no lists."""
    total = list_total(shape, length, within=within, every_form=every_form, min_gap=min_gap)
    if places >= total:
        return None
    n_rows, forms = shape.row_count, len(shape.forms)
    sizes = list(shape.sizes or ())
    size = forms if not shape.paired else sizes[0] if len(sizes) == 1 else None
    if within:
        per, cycle, whole = length // 2, 2, True
    elif every_form:
        per, cycle, whole = length // forms, 1, True
    else:
        per, cycle, whole = length, (shape.period if shape.paired else forms), False
    covered: dict[int, set[int]] = defaultdict(set)
    for number in range(places):
        window, shift = divmod(number, cycle)
        for p in window_positions(window, per):
            covered[p % n_rows].add(-1 if whole or size is None else (p + shift) % size)
    rows_unseen = n_rows - len(covered)
    items = items_unseen = None
    if size is not None:
        items = n_rows * size
        items_unseen = items - sum(size if -1 in slots else len(slots) for slots in covered.values())
    words = "pairs" if shape.paired else shape.words.rows
    return Shortfall(lists=total, places=places, rows=n_rows, rows_unseen=rows_unseen, items=items,
                     items_unseen=items_unseen, row_words=words)
