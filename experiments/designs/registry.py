"""The designs registry (the way lm-evaluation-harness registers tasks): every design a study can
be built from declares, in one place (catalog.py), how its items are made — generated with its
options or imported from a CSV bank, both validated before anything is written — what answers its
items take, how a perturbation (seed 002) copies them, and how a result is said to the researcher.
The commands (generate_items, import_items, perturb_items) and the admin read it; nothing else
branches on a design's name.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

GENERATE, IMPORT = "generate", "import"


@dataclass(frozen=True)
class Option:
    """One option of a generated design: the command's --flag and the admin form's field."""

    name: str
    kind: type  # int, bool, str or list (of str, or of int with item=int)
    default: object = None
    help: str = ""
    choices: Sequence[str] = ()
    item: type = str  # a list's element type

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")


@dataclass(frozen=True)
class Preview:
    """What an import would write, found without writing: how many items, and the first of them
    (unsaved Item instances, in the order the write would create them)."""

    count: int
    items: list


@dataclass(frozen=True)
class Design:
    name: str
    title: str
    paper: str  # the seed paper it comes from (../shared/seeds/README)
    source: str  # GENERATE (make(study=, **options)) or IMPORT (make(study=, data=, **options))
    make: Callable
    describe: Callable  # (report) -> the sentence that says what was made
    answers: tuple[str, ...] = ("yes", "no")
    options: tuple[Option, ...] = ()
    perturb: Callable | None = None  # (study=, kind=, seed=, mapping=, label=) -> items created
    warnings: Callable = field(default=lambda report: [])  # (report) -> lines to show as warnings
    generic: bool = False  # a study named after it says nothing yet: a more specific import renames it
    # IMPORT: (study=, data=, rows=, **options) -> Preview: every check of make(), nothing written
    # (no transaction, so no write lock); the admin shows it before the write.
    preview: Callable | None = None
    # The factors its items vary by, as columns of the report's frames (analysis/factors.py reads them):
    # Table 1 and the humans-vs-models model are by these. A bank without any names its own at import.
    factors: tuple[str, ...] = ()

    def option_values(self, given: dict) -> dict:
        """This design's options from `given` (defaults for those not there)."""
        return {o.name: given.get(o.name, o.default) for o in self.options}


_designs: dict[str, Design] = {}
# The catch items a human arm adds to every list (participation/services.py makes them from the arm's
# attention checks): not a design a study is built from, but stored under this design name.
CATCH_ITEMS = "attention-check"


def is_catch_item(item) -> bool:
    return item.design == CATCH_ITEMS
# A study created for an import gets this design name until its items say more (a yes/no bank).
UNSET = ("",)


def register(design: Design) -> Design:
    if design.name in _designs:
        raise ValueError(f"design {design.name!r} is registered twice")
    if design.source == IMPORT and design.preview is None:
        raise ValueError(f"imported design {design.name!r} declares no preview (the admin shows one before writing)")
    _designs[design.name] = design
    return design


def get(name: str) -> Design:
    """The design called `name`; ValueError naming the registered ones."""
    try:
        return _designs[name]
    except KeyError:
        raise ValueError(f"Unknown design '{name}'; choose one of: {', '.join(sorted(_designs))}.") from None


def all_designs() -> list[Design]:
    return sorted(_designs.values(), key=lambda d: d.name)


def generated() -> list[Design]:
    return [d for d in all_designs() if d.source == GENERATE]


def imported() -> list[Design]:
    return [d for d in all_designs() if d.source == IMPORT]


def choices() -> list[tuple[str, str]]:
    """(name, label) pairs for a study's design field."""
    return [(d.name, f"{d.title} ({d.name}, seed {d.paper})") for d in all_designs()]


def perturbable() -> list[str]:
    return [d.name for d in all_designs() if d.perturb is not None]


def is_generic(name: str) -> bool:
    """Whether a study's design field says nothing yet about its items: unset, or the generic yes/no
    bank, which a more specific import (multiple choice, a rule bank) then names."""
    return name in UNSET or (name in _designs and _designs[name].generic)
