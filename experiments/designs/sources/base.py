"""The published-format readers' shared parts (see the package docstring): Problem, Row, Reading,
Reader and the registry of readers by name. The reader modules import this, never the package, so no
import runs in a circle."""
from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

from django.core.exceptions import ValidationError

from logic.csv_table import EXCEL_MESSAGE, SAVE_AS_UTF8, is_workbook
from studyserver.registry import Registry

from .. import registry
from ..registry import BANK  # noqa: F401  (a design's own CSV columns, read by the design, not by a reader here)

MAX_BYTES = 64 * 1024 * 1024  # a published file read whole; the admin's upload limit is lower
# Records one published file may hold (RULEBREAKERS' whole file has 25,600 rows; LogiQA's Train.txt
# 7,376 questions; ULogic's are read within bounded_reading's 20,000): past it the reader stops.
MAX_RECORDS = 50_000


def text_lines(text: str):
    """(number from 1, line without its line end) of a text, one at a time (no list of every line)."""
    start, number = 0, 0
    while start < len(text):
        end = text.find("\n", start)
        end = len(text) if end < 0 else end
        number += 1
        yield number, text[start:end].rstrip("\r")
        start = end + 1


@dataclass(frozen=True)
class Problem:
    """A row the import leaves out: its id in the file, the file's column, and why."""

    row: str
    column: str
    reason: str

    def __str__(self) -> str:
        return f"{self.row}" + (f", {self.column}" if self.column else "") + f": {self.reason}"


@dataclass(frozen=True)
class Row:
    """One row of the file mapped onto the design's fields (the design's bank columns → text)."""

    id: str  # the file's id for the row (its own id column, or its position: 'ulogic-0007')
    fields: dict = field(hash=False)


@dataclass(frozen=True)
class Reading:
    rows: tuple[Row, ...]
    problems: tuple[Problem, ...]

    def __iter__(self) -> Iterator:  # rows, problems = reader.read(…)
        return iter((self.rows, self.problems))


class ReaderError(ValueError):
    """The file cannot be read in this format at all (nothing of it is imported)."""


class RowProblems(ValidationError):
    """Rows that cannot be imported; nothing was written. ``problems`` lists them (Problem)."""

    def __init__(self, problems: Sequence[Problem], *, importable: int, limit: int = 50):
        self.problems = tuple(problems)
        head = (f"{len({p.row for p in self.problems})} row(s) of the file cannot be imported; nothing was written. "
                "Fix them, or "
                f"import the other {importable} row(s) and leave these out (import_items --skip-problems; in the "
                "admin, confirm the preview):")
        lines = [str(p) for p in self.problems[:limit]]
        if len(self.problems) > limit:
            lines.append(f"… and {len(self.problems) - limit} more")
        super().__init__([head, *lines])


@dataclass(frozen=True)
class Reader:
    """A published format: what it is, where it comes from, how its columns become the design's fields."""

    name: str
    design: str  # the design (registry name) it reads into
    title: str
    source: str  # where the format is published: repository and path
    extensions: tuple[str, ...]  # file name endings it is published with (".csv", ".json", ".txt")
    columns: dict  # the file's own column → the design field it fills (or how it is used)
    transformation: str  # what the reader derives, and how ("" when it derives nothing)
    read_text: Callable[[str], Reading] = field(repr=False)

    def read(self, data, *, filename: str = "") -> Reading:
        """The file (bytes, str or a binary file) read as this format; ReaderError if it cannot be."""
        return self.read_text(_text(data, filename or self.name))


def _text(data, filename: str) -> str:
    if hasattr(data, "read"):
        data = data.read(MAX_BYTES + 1)
    if isinstance(data, (bytes, bytearray, memoryview)):
        data = bytes(data)
        if len(data) > MAX_BYTES:
            raise ReaderError(f"{filename}: larger than {MAX_BYTES // 2**20} MiB; split it")
        if is_workbook(data[:8]):
            raise ReaderError(f"{filename}: {EXCEL_MESSAGE}")
        try:
            data = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            line = data.count(b"\n", 0, exc.start) + 1
            raise ReaderError(f"{filename}: not UTF-8 text (line {line}: the byte 0x{data[exc.start]:02x}, {exc.reason}); "
                              f"{SAVE_AS_UTF8}") from None
    if not isinstance(data, str):
        raise ReaderError(f"{filename}: expected the file's bytes or text, got {type(data).__name__}")
    if "\x00" in data:
        raise ReaderError(f"{filename}: contains a NUL character (\\0); not a text file")
    return data


_readers: Registry[Reader] = Registry("format")


def register(reader: Reader) -> Reader:
    return _readers.add(reader.name, reader)  # raises on a name registered twice


def get(name: str) -> Reader:
    """The reader called `name`; ValueError naming the known formats."""
    return _readers.get_or_raise(name)


def all_readers() -> list[Reader]:
    return sorted(_readers.values(), key=lambda r: r.name)


def for_design(design) -> list[Reader]:
    """The readers a design (a Design or its name) declares, in its order (the first is its default
    published format)."""
    declared = design if isinstance(design, registry.Design) else registry.get(design)
    return [get(name) for name in declared.formats]


def read_for(design: str, format: str, data, *, filename: str = "") -> Reading:
    """`data` read by the reader `format`, which must read into `design`; ValidationError (a message for
    the researcher) for an unknown format, another design's format or a file it cannot read."""
    try:
        reader = get(format)
    except ValueError as exc:
        raise ValidationError(str(exc)) from None
    if reader.design != design:
        known = ", ".join(registry.get(design).import_formats) or "none"
        raise ValidationError(f"The format '{format}' reads into the design '{reader.design}', not '{design}'; "
                              f"{design} reads: {known}.")
    try:
        return reader.read(data, filename=filename)
    except ReaderError as exc:
        raise ValidationError(str(exc)) from None


def refuse_or_keep(problems: Sequence[Problem], *, importable: int, skip_problems: bool) -> tuple[Problem, ...]:
    """The problems, when the caller leaves those rows out; RowProblems (nothing written) otherwise."""
    if problems and not skip_problems:
        raise RowProblems(problems, importable=importable)
    return tuple(problems)


# The readers register themselves (one module each); their names are re-exported for callers and tests.
