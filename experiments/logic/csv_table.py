"""Reading an uploaded CSV bank row by row, with errors that name the row and the column. Pure.

Every importer (yes/no items, dual-sided rule banks, …) shares this: UTF-8 decoding, a header row
(names stripped and lower-cased), blank lines skipped, rows with the wrong number of fields and
unreadable quoting reported with their line number, ids unique within the file and the study.
The importer collects every error and raises CsvImportError once, so nothing is saved from a file
with an error.
"""
from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

MAX_ERRORS = 50


def _unquote(value: str) -> str:
    """A cell Duet exported with a quote in front of = + - @ (so that spreadsheets show it as text:
    studyserver/csvsafe.py) reads back as the text it stood for."""
    if len(value) > 1 and value[0] == "'" and value[1] in "=+-@":
        return value[1:]
    return value


@dataclass(frozen=True)
class RowError:
    row: int  # 1-based line number in the file (the header is row 1)
    column: str
    message: str

    def __str__(self) -> str:
        where = f"row {self.row}" + (f", column '{self.column}'" if self.column else "")
        return f"{where}: {self.message}"


class CsvImportError(ValueError):
    def __init__(self, errors: list[RowError]):
        self.errors = errors
        shown = "\n".join(f"  {e}" for e in errors[:MAX_ERRORS])
        more = f"\n  … and {len(errors) - MAX_ERRORS} more" if len(errors) > MAX_ERRORS else ""
        super().__init__(f"{len(errors)} error(s); nothing was imported:\n{shown}{more}")


@dataclass
class CsvTable:
    header: list[str]
    errors: list[RowError] = field(default_factory=list)
    _reader: Iterator[list[str]] | None = None
    _seen: dict[str, int] = field(default_factory=dict)

    def records(self) -> Iterator[tuple[int, dict[str, str]]]:
        """(line where the record starts, {column: stripped value}) for each well-formed row."""
        reader = self._reader
        try:
            for values in reader:
                line = reader.line_num - sum(v.count("\n") for v in values)
                if not any(v.strip() for v in values):
                    continue  # blank line
                if len(values) != len(self.header):
                    self.fail(line, "", f"has {len(values)} fields; the header has {len(self.header)}")
                    continue
                nul = [name for name, v in zip(self.header, values) if "\x00" in v]
                if nul:  # not text; PostgreSQL cannot store it either (found by tests/security)
                    for name in nul:
                        self.fail(line, name, "contains a NUL character (\\0); save the file as plain text")
                    continue
                yield line, dict(zip(self.header, (_unquote(v.strip()) for v in values)))
        except csv.Error as exc:
            self.fail(reader.line_num, "", f"unreadable CSV ({exc})")

    def fail(self, row: int, column: str, message: str) -> None:
        self.errors.append(RowError(row, column, message))

    def claim_id(self, line: int, column: str, value: str, existing: Iterable[str] = ()) -> None:
        """Record an id; a repeat within the file or an id the study already has is an error."""
        if value in self._seen:
            self.fail(line, column, f"'{value}' repeats row {self._seen[value]}")
        elif value in existing:
            self.fail(line, column, f"'{value}' already exists in this study")
        self._seen.setdefault(value, line)

    def finish(self, parsed: list, what: str) -> list:
        """Return the parsed rows, or raise every collected error at once."""
        if not parsed and not self.errors:
            self.fail(2, "", f"the file has a header but no {what}")
        if self.errors:
            raise CsvImportError(self.errors)
        return parsed


def open_csv(data: bytes | str, *, required: Iterable[str]) -> CsvTable:
    """Decode and read the header; a file that cannot be read at all raises CsvImportError now."""
    if isinstance(data, bytes):
        try:
            data = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise CsvImportError([RowError(1, "", f"the file is not UTF-8 text ({exc.reason})")]) from None
    if not data.strip():
        raise CsvImportError([RowError(1, "", "the file is empty")])
    reader = csv.reader(io.StringIO(data, newline=""), strict=True)
    try:
        header = [h.strip().lower() for h in next(reader)]
    except csv.Error as exc:
        raise CsvImportError([RowError(1, "", f"unreadable CSV header ({exc})")]) from None
    table = CsvTable(header=header, _reader=reader)
    for name in required:
        if name not in header:
            table.fail(1, name, "required column is missing")
    for name in sorted({h for h in header if header.count(h) > 1}):
        table.fail(1, name, "column appears more than once")
    if any(not h for h in header):
        table.fail(1, "", "a column has no name")
    if any("\x00" in h for h in header):
        table.fail(1, "", "the header contains a NUL character (\\0); save the file as plain text")
    return table
