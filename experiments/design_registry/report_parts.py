"""What the design packages (designs/<family>/) register besides a design's facts: the report parts that read
each design, in the report's order, and the designs whose own real items alone the study-wide tables read.
The registry (experiments/design_registry/__init__.py) checks the names and re-exports these; `Design.report_sections` reads them. Plain Python: a part is any
object with a `key` (analysis.sections.ModelSpec or SectionBuilder), kept as the object, never by name.
"""
from __future__ import annotations

from collections.abc import Callable

# What each design's package adds at start-up (designs/<family>/report_parts.py, run by designs.apps): its
# report parts, in the report's order, each with the designs it reads; and the designs whose own real
# items alone the study-wide tables read where a study has them (003's syllogisms: its Table 1).
_parts: list[tuple[object, set[str]]] = []
_analysed_alone: set[str] = set()
# The packages' registrations, run the first time a report part is asked for: a package's parts import
# pandas and the R bridge, which the web process never loads (tests/analysis/test_web_process.py).
_pending: list[Callable[[], None]] = []


def package_add(load: Callable[[], None]) -> None:
    """A design package's registration (designs/apps.py adds each at start-up), run on first need."""
    _pending.append(load)


def _loaded() -> None:
    while _pending:
        _pending.pop(0)()


def part_add(part, names: set[str]) -> None:
    """Add a report part reading `names` (registry.report_part_add checks the names first). A key twice raises."""
    if any(known.key == part.key for known, _ in _parts):
        raise ValueError(f"report part '{part.key}' is registered twice")
    _parts.append((part, set(names)))


def report_part_remove(key: str) -> None:
    """Take the report part `key` out (a test's toy design cleans up after itself)."""
    _parts[:] = [(part, names) for part, names in _parts if part.key != key]


def report_parts(designs=None) -> list:
    """The report parts that read any of `designs` (None: every registered part), in the report's order."""
    _loaded()
    wanted = None if designs is None else set(designs)
    return [part for part, names in _parts if wanted is None or names & wanted]


def designs_for_section(key: str) -> list[str]:
    """The designs (names, sorted) whose items report part `key` reads."""
    _loaded()
    return sorted(n for part, names in _parts if part.key == key for n in names)


def alone_add(name: str) -> None:
    """Declare design `name` read alone by the study-wide tables where present (registry.analysed_alone_add)."""
    _analysed_alone.add(name)


def analysed_alone() -> frozenset[str]:
    _loaded()
    return frozenset(_analysed_alone)


def design_forget(name: str) -> None:
    """Drop design `name` from every part and declaration (registry.unregister)."""
    _analysed_alone.discard(name)
    _parts[:] = [(part, names - {name}) for part, names in _parts if names - {name}]
