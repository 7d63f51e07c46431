"""The published-format readers' shared parts (see the package docstring): Problem, Row, Reading,
Reader and the registry of readers by name. The reader modules import this, never the package, so no
import runs in a circle."""
from __future__ import annotations

import codecs
import io
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from django.core.exceptions import ValidationError

from logic.csv_table import EXCEL_MESSAGE, SAVE_AS_UTF8, is_workbook
from common.registry import Registry

from ... import design_registry as registry
from ...design_registry import BANK  # noqa: F401  (a design's own CSV columns, read by the design, not by a reader here)

MAX_LINE_BYTES = 1024 * 1024  # one line of a streamed file (a CSV cell is at most 131,072 characters)


def max_bytes() -> int:
    """The largest published file read: the deployment's DUET_IMPORT_MAX_MB (common/env.py, 64)."""
    from common import env

    return env.import_max_bytes()


def max_records() -> int:
    """Records one published file may hold (RULEBREAKERS' whole file has 25,600 rows; LogiQA's Train.txt
    7,376 questions; ULogic's are read within bounded_reading's 20,000): the deployment's
    DUET_IMPORT_MAX_RECORDS (common/env.py, 100,000); past it the reader stops."""
    from common import env

    return env.import_max_records()


def too_many_records(what: str, unit: str, limit: int) -> str:
    return (f"{what}: more than {limit:,} {unit}, the deployment's bound (the setting DUET_IMPORT_MAX_RECORDS); "
            "raise it, or split the file")


def too_large(filename: str, limit: int) -> str:
    return (f"{filename}: larger than {round(limit / 2**20, 2):g} MB, the deployment's bound (the setting "
            "DUET_IMPORT_MAX_MB); raise it, or split the file")


@dataclass
class Meter:
    """How far a streamed import has got (issue 37 item 1): bytes and records read, items counted and
    written; `total_bytes` is the file's size when known (time left is estimated from it)."""

    total_bytes: int = 0
    bytes_read: int = 0
    records: int = 0
    items: int = 0  # items checked (the preview's count)
    written: int = 0  # items written


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
    # a reader that can stream: (the file's lines, a Meter) → Row and Problem one at a time, as read
    stream_lines: Callable[[Iterable[str], Meter], Iterator] | None = field(default=None, repr=False)

    def read(self, data, *, filename: str = "") -> Reading:
        """The file (bytes, str or a binary file) read as this format; ReaderError if it cannot be."""
        if self.stream_lines is not None:
            rows, problems = [], []
            for one in self.stream(data, filename=filename):
                (rows if isinstance(one, Row) else problems).append(one)
            return Reading(tuple(rows), tuple(problems))
        return self.read_text(_text(data, filename or self.name))

    def stream(self, data, *, filename: str = "", meter: Meter | None = None) -> Iterator:
        """Row and Problem objects as the file is read, a line at a time (a reader without stream_lines
        reads the file whole and gives its rows, then its problems); ReaderError if it cannot be read."""
        meter = meter if meter is not None else Meter()
        if self.stream_lines is None:
            rows, problems = self.read(data, filename=filename)
            meter.records = len(rows) + len(problems)
            yield from rows
            yield from problems
            return
        yield from self.stream_lines(_lines(data, filename or self.name, meter), meter)


def _lines(data, filename: str, meter: Meter) -> Iterator[str]:
    """The file's lines (with their line ends, as csv wants them), decoded as UTF-8 a line at a time,
    its size counted as it is read against DUET_IMPORT_MAX_MB."""
    if isinstance(data, str):
        _check_text(data, filename)
        meter.total_bytes = len(data)
        for line in io.StringIO(data, newline=""):
            meter.bytes_read += len(line)
            yield line
        return
    if isinstance(data, (bytes, bytearray, memoryview)):  # already whole in memory: checked whole, as before
        yield from _lines(_text(data, filename), filename, meter)
        return
    limit = max_bytes()
    try:
        start = data.tell()
        data.seek(0, io.SEEK_END)
        meter.total_bytes = data.tell() - start
        data.seek(start)
    except (AttributeError, OSError, ValueError):
        pass
    head = data.read(8)
    if is_workbook(head):
        raise ReaderError(f"{filename}: {EXCEL_MESSAGE}")
    decoder = codecs.getincrementaldecoder("utf-8-sig")()
    number, pending = 0, head
    while True:
        raw = pending + data.readline(MAX_LINE_BYTES)
        pending = b""
        if not raw:
            break
        number += 1
        meter.bytes_read += len(raw)
        if meter.bytes_read > limit:
            raise ReaderError(too_large(filename, limit))
        if not raw.endswith(b"\n") and len(raw) >= MAX_LINE_BYTES:
            raise ReaderError(f"{filename}: line {number} is longer than {MAX_LINE_BYTES // 2**20} MiB")
        try:
            line = decoder.decode(raw)
        except UnicodeDecodeError as exc:
            raise ReaderError(f"{filename}: not UTF-8 text (line {number}: the byte 0x{raw[exc.start]:02x}, "
                              f"{exc.reason}); {SAVE_AS_UTF8}") from None
        if "\x00" in line:
            raise ReaderError(f"{filename}: contains a NUL character (\\0); not a text file")
        yield line
    rest = decoder.decode(b"", final=True)
    if rest:
        yield rest


def check_utf8(handle, filename: str, chunk_bytes: int = 1 << 20) -> None:
    """ReaderError (as a file read whole gets it: the line and the byte) when a binary file is not UTF-8,
    read a chunk at a time; before a reader streams it, so that a wrong encoding is named before any
    row's problem."""
    decoder, line = codecs.getincrementaldecoder("utf-8-sig")(), 1
    for chunk in iter(lambda: handle.read(chunk_bytes), b""):
        try:
            decoder.decode(chunk)
        except UnicodeDecodeError as exc:
            at = max(min(exc.start, len(chunk) - 1), 0)
            line += chunk.count(b"\n", 0, at)
            raise ReaderError(f"{filename}: not UTF-8 text (line {line}: the byte "
                              f"0x{chunk[at]:02x}, {exc.reason}); {SAVE_AS_UTF8}") from None
        line += chunk.count(b"\n")
    handle.seek(0)


def _check_text(data: str, filename: str) -> None:
    limit = max_bytes()
    if len(data) > limit:
        raise ReaderError(too_large(filename, limit))
    if "\x00" in data:
        raise ReaderError(f"{filename}: contains a NUL character (\\0); not a text file")


def _text(data, filename: str) -> str:
    limit = max_bytes()
    if hasattr(data, "read"):
        data = data.read(limit + 1)
    if isinstance(data, (bytes, bytearray, memoryview)):
        data = bytes(data)
        if len(data) > limit:
            raise ReaderError(too_large(filename, limit))
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


def reader_for(design: str, format: str) -> Reader:
    """The reader `format`, which must read into `design`; ValidationError (a message for the researcher)
    for an unknown format or another design's format."""
    try:
        reader = get(format)
    except ValueError as exc:
        raise ValidationError(str(exc)) from None
    if reader.design != design:
        known = ", ".join(registry.get(design).import_formats) or "none"
        raise ValidationError(f"The format '{format}' reads into the design '{reader.design}', not '{design}'; "
                              f"{design} reads: {known}.")
    return reader


def read_for(design: str, format: str, data, *, filename: str = "") -> Reading:
    """`data` read by the reader `format`, which must read into `design`; ValidationError (a message for
    the researcher) for an unknown format, another design's format or a file it cannot read."""
    reader = reader_for(design, format)
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


def left_out_lines(report) -> list[str]:
    """A published format's rows left out of an import (skip_problems), one line each by row id: the warnings of
    every design that reads published files (its `Design.warnings`)."""
    problems = getattr(report, "left_out", ())
    if not problems:
        return []
    rows = len({p.row for p in problems})
    return [f"{rows} row(s) of the file were left out:", *(f"  {p}" for p in problems)]
