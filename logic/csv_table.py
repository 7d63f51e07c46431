"""Reading an uploaded CSV bank row by row, with errors that name the row and the column. Pure.

Every importer (yes/no items, dual-sided rule banks, …) shares this: UTF-8 decoding, a header row
(names stripped; the importer's own columns matched in any case and lower-cased, every other column
kept as written: a descriptive column `entityA` stays `entityA`), blank lines skipped, rows with the
wrong number of fields and unreadable quoting reported with their line number, ids unique within the
file and the study. The importer collects every error and raises CsvImportError once, so nothing is
saved from a file with an error.

Bounds (issue 26 item 5): the file may be a binary stream, read and decoded a line at a time as the
rows are taken, so nothing holds the whole text and a byte that is not UTF-8 is reported on its own
line with how to save the file as CSV UTF-8 (issue 34); a spreadsheet workbook (.xlsx, .xls, .ods) is
recognised by its first bytes and refused with how to export it as CSV; at most MAX_ROWS records are
read (the rest of the file is not), at most MAX_COLUMNS columns, and repeated column names are found
in one pass.
"""
from __future__ import annotations

import csv
import io
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import BinaryIO

MAX_ERRORS = 50
MAX_ROWS = 20_000  # records one file may hold (a bank of more is split into several files)
MAX_COLUMNS = 500


def _unquote(value: str) -> str:
    """A cell Duet exported with a quote in front of = + - @ (so that spreadsheets show it as text:
    common/csvsafe.py) reads back as the text it stood for."""
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
    rows_read: int = 0  # records taken from the file so far (blank lines not counted)

    def records(self) -> Iterator[tuple[int, dict[str, str]]]:
        """(line where the record starts, {column: stripped value}) for each well-formed row; past
        MAX_ROWS records an error, and the rest of the file is not read."""
        reader = self._reader
        try:
            for values in reader:
                line = reader.line_num - sum(v.count("\n") for v in values)
                if not any(v.strip() for v in values):
                    continue  # blank line
                self.rows_read += 1
                if self.rows_read > MAX_ROWS:
                    self.fail(line, "", f"the file has more than {MAX_ROWS:,} rows; split it into files of at "
                                        f"most {MAX_ROWS:,} (nothing after this row was read)")
                    return
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
        except NotUtf8 as exc:  # decoded a line at a time: the bad byte is on this line
            self.fail(exc.line, "", f"{exc} (nothing after this line was read)")

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


SAVE_AS_UTF8 = ("save it as UTF-8 text: in Excel, File › Save As › “CSV UTF-8 (Comma delimited) (*.csv)”; in "
                "LibreOffice, Text CSV with the character set “Unicode (UTF-8)”")
# The first bytes of a spreadsheet workbook: a zip archive (.xlsx, .xlsm, .ods) or an OLE file (.xls).
WORKBOOK_MAGIC = (b"PK\x03\x04", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1")
EXCEL_MESSAGE = ("the file is a spreadsheet workbook (Excel .xlsx/.xls, or .ods), and Duet does not read workbooks: "
                 "export the sheet as CSV first (Excel: File › Save As › “CSV UTF-8 (Comma delimited) (*.csv)”; "
                 "LibreOffice: File › Save As › Text CSV, character set “Unicode (UTF-8)”) and upload that file")


def is_workbook(head: bytes) -> bool:
    """Whether the file's first bytes are a spreadsheet workbook's (not text at all)."""
    return bytes(head[:8]).startswith(WORKBOOK_MAGIC)


class NotUtf8(ValueError):
    """A line of the file is not UTF-8: `line` is its number in the file (from 1), `column` the
    character at which the bad byte stands (from 1)."""

    def __init__(self, line: int, column: int, byte: int, reason: str):
        self.line, self.column = line, column
        super().__init__(f"the file is not UTF-8 text (on this line, character {column}: the byte 0x{byte:02x}, "
                         f"{reason}); {SAVE_AS_UTF8}")


_LINE_END = re.compile(r"(?<=\r)(?!\n)")  # a lone CR also ends a line (as universal newlines read it)


def _lines(data: bytes | str | BinaryIO) -> Iterator[str]:
    """The file's lines as text, decoded one line at a time, so that a byte that is not UTF-8 is
    reported on its own line (NotUtf8), and a workbook is recognised by its first bytes."""
    if isinstance(data, str):
        yield from io.StringIO(data, newline="")
        return
    if isinstance(data, (bytes, bytearray, memoryview)):
        data = io.BytesIO(bytes(data))
    number = 0
    for raw in iter(data.readline, b""):
        if number == 0:
            if is_workbook(raw):
                raise CsvImportError([RowError(1, "", EXCEL_MESSAGE)])
            raw = raw[3:] if raw.startswith(b"\xef\xbb\xbf") else raw
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            before = raw[:exc.start].decode("utf-8", "replace")
            lone = before.count("\r") - before.count("\r\n")
            raise NotUtf8(number + 1 + lone, len(before.rsplit("\r", 1)[-1]) + 1, raw[exc.start], exc.reason) from None
        for piece in (_LINE_END.split(text) if "\r" in text else (text,)):
            if piece:
                number += 1
                yield piece


def open_csv(data: bytes | str | BinaryIO, *, required: Iterable[str],
             known: Iterable[str] | Callable[[str], bool] = ()) -> CsvTable:
    """Read the header (bytes, text, or a binary stream read as the rows are taken); a file that
    cannot be read at all raises CsvImportError now.

    `known` (names, or a test of a lower-cased name) are the importer's own columns: they and the
    required ones are matched in any case and named in lower case; every other column keeps its name
    as written (stripped)."""
    is_known = known if callable(known) else frozenset(known).__contains__
    required = tuple(required)
    reader = csv.reader(_lines(data), strict=True)
    try:
        first = next((row for row in reader if any(v.strip() for v in row)), None)
    except csv.Error as exc:
        raise CsvImportError([RowError(1, "", f"unreadable CSV header ({exc})")]) from None
    except NotUtf8 as exc:
        raise CsvImportError([RowError(exc.line, "", str(exc))]) from None
    if first is None:
        raise CsvImportError([RowError(1, "", "the file is empty")])
    if len(first) > MAX_COLUMNS:
        raise CsvImportError([RowError(reader.line_num, "", f"the header has {len(first):,} columns; at most "
                                                              f"{MAX_COLUMNS} are read")])
    header = []
    for raw in first:
        name = raw.strip()
        header.append(name.lower() if name.lower() in required or is_known(name.lower()) else name)
    table = CsvTable(header=header, _reader=reader)
    for name in required:
        if name not in header:
            table.fail(1, name, "required column is missing")
    counts = Counter(h.lower() for h in header)  # one pass; "Domain" and "domain" are one name
    for name in sorted(name for name, n in counts.items() if n > 1):
        table.fail(1, name, "column appears more than once")
    if any(not h for h in header):
        table.fail(1, "", "a column has no name")
    if any("\x00" in h for h in header):
        table.fail(1, "", "the header contains a NUL character (\\0); save the file as plain text")
    return table
