"""Any bank, mapped (issue 27 part 2): a researcher's file in CSV, JSON (a list of objects, or JSON
lines) or Parquet, its columns mapped onto an imported design's bank columns (registry.BankColumn),
made into the design's own CSV and handed to the design's preview and import, which check every row.
No Django here.

    table = read_table(data, name="bank.parquet")          # BankError if it cannot be read
    mapping = suggest_mapping(design.columns, table.columns)  # {field: column or [columns]}
    mapped = apply_mapping(table, design.columns, mapping)  # BankError: an unknown column, a required field unmapped
    design.preview(study=…, data=mapped.csv, …)              # errors by row and column, in the design's names
    mapped.explain(error)                                   # … told back in the file's rows and columns

Rows are numbered as in a CSV file, the header being row 1: a CSV file's own line numbers; in JSON
and Parquet, record k (from 1) is "record k". Cells are read as text: numbers as written
(Python's text of them: 1.0 stays "1.0", 7 is "7"), booleans as true / false, null as empty; a list
is accepted only by a `many` field (premises), an object nowhere. Every format is read with its
bounds counted as it is read (bounded_reading.py: records, cells, a cell's length, nesting, a Parquet
file's decoded size); a spreadsheet workbook is refused with how to export it as CSV UTF-8.
"""
from __future__ import annotations

import csv
import io
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from logic.csv_table import EXCEL_MESSAGE, MAX_COLUMNS, CsvImportError, RowError, is_workbook, open_csv

from .bounded_reading import BankError, Cells, json_records, jsonl_records, parquet_records

FORMATS = {"csv": "CSV (UTF-8, header row)", "json": "JSON (a list of objects)", "jsonl": "JSON lines (one object "
           "a line)", "parquet": "Parquet"}
EXTENSIONS = {".csv": "csv", ".json": "json", ".jsonl": "jsonl", ".ndjson": "jsonl", ".parquet": "parquet",
              ".pq": "parquet"}
WORKBOOKS = (".xlsx", ".xlsm", ".xls", ".ods", ".numbers")  # spreadsheets: refused with how to export them as CSV
WORKBOOK_MESSAGE = EXCEL_MESSAGE[0].upper() + EXCEL_MESSAGE[1:] + "."
PREVIEW_ROWS = 5  # the file's first rows shown beside the mapping


@dataclass(frozen=True)
class BankTable:
    format: str
    columns: tuple[str, ...]
    rows: tuple[dict, ...]  # {column: value as read (text, or a list for a list cell)}
    labels: tuple[str, ...]  # where each row is, for messages: "row 7" (CSV) or "record 3"

    def first(self, n: int = PREVIEW_ROWS) -> list[list[str]]:
        """The first n rows as text, in the columns' order (for the page beside the mapping)."""
        return [[_shown(row.get(c, "")) for c in self.columns] for row in self.rows[:n]]


def _shown(value) -> str:
    return " | ".join(value) if isinstance(value, list) else str(value)


def detect_format(name: str, head: bytes) -> str:
    """The file's format from its name's extension, else from its first bytes ("workbook": a
    spreadsheet, which is not read)."""
    if name.lower().endswith(WORKBOOKS) or is_workbook(head):
        return "workbook"
    for ext, fmt in EXTENSIONS.items():
        if name.lower().endswith(ext):
            return fmt
    if head.startswith(b"PAR1"):
        return "parquet"
    text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if text.startswith(b"["):
        return "json"
    if text.startswith(b"{"):
        return "jsonl"
    return "csv"


def read_table(data: bytes, *, name: str = "", format: str | None = None) -> BankTable:
    """The file's columns and rows; BankError saying why it cannot be read (nothing else happens)."""
    fmt = format or detect_format(name, data[:64])
    if fmt == "workbook" or is_workbook(data[:8]):
        raise BankError([WORKBOOK_MESSAGE])
    if fmt not in FORMATS:
        raise BankError([f"unknown format {fmt!r}; known: {', '.join(FORMATS)}"])
    reader = {"csv": _read_csv, "json": _read_json, "jsonl": _read_jsonl, "parquet": _read_parquet}[fmt]
    table = reader(data)
    if not table.rows:
        raise BankError([f"the file ({FORMATS[fmt]}) has no rows"])
    return table


def _read_csv(data: bytes) -> BankTable:
    try:
        table = open_csv(data, required=())
        rows, labels = [], []
        cells = Cells()
        for line, record in table.records():
            cells.add(len(record))
            rows.append(record)
            labels.append(f"row {line}")
        if table.errors:
            raise CsvImportError(table.errors)
    except CsvImportError as exc:
        raise BankError([f"the file cannot be read as CSV: {e}" for e in exc.errors]) from None
    return BankTable("csv", tuple(table.header), tuple(rows), tuple(labels))


def _cell(value, where: str, column: str, problems: list[str]):
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float, str)):
        return str(value).strip()
    if isinstance(value, (list, tuple)):
        if all(isinstance(v, (str, int, float)) and not isinstance(v, bool) for v in value):
            return [str(v).strip() for v in value]
        problems.append(f"{where}, column '{column}': a list of something other than text")
        return ""
    problems.append(f"{where}, column '{column}': holds {type(value).__name__ if not isinstance(value, dict) else 'an object'}; "
                    "a column's cells must be text, numbers or (for premises) lists of text")
    return ""


def _records(objects, labels: list[str], fmt: str) -> BankTable:
    problems: list[str] = []
    columns: dict[str, None] = {}
    rows = []
    for obj, where in zip(objects, labels):
        if not isinstance(obj, dict):
            problems.append(f"{where}: is not an object ({{\"column\": value, …}})")
            continue
        for key in obj:
            columns.setdefault(str(key).strip(), None)
        rows.append({str(k).strip(): _cell(v, where, str(k), problems) for k, v in obj.items()})
        if len(problems) > 50:
            break
    if len(columns) > MAX_COLUMNS:
        problems.append(f"the file has {len(columns):,} columns; at most {MAX_COLUMNS} are read")
    if "" in columns:
        problems.append("a column has no name")
    if problems:
        raise BankError(problems)
    return BankTable(fmt, tuple(columns), tuple(rows), tuple(labels[:len(rows)]))


def _read_json(data: bytes) -> BankTable:
    records = json_records(data)
    return _records(records, [f"record {i + 1}" for i in range(len(records))], "json")


def _read_jsonl(data: bytes) -> BankTable:
    records, labels = jsonl_records(data)
    return _records(records, labels, "jsonl")


def _read_parquet(data: bytes) -> BankTable:
    columns, records = parquet_records(data)
    out = _records(records, [f"record {i + 1}" for i in range(len(records))], "parquet")
    return BankTable("parquet", columns, out.rows, out.labels)


# --- mapping ----------------------------------------------------------------------------------------------

def _norm(name: str) -> str:
    return re.sub(r"[\s_\-]+", "", name.lower())


def _numbered(base: str, columns: Sequence[str]) -> list[str]:
    """The columns named base_1, base 2, base3 … (in the number's order)."""
    found = []
    for column in columns:
        match = re.fullmatch(rf"{re.escape(base)}[\s_\-]*(\d+)", column.strip(), re.I)
        if match:
            found.append((int(match.group(1)), column))
    return [c for _, c in sorted(found)]


def suggest_mapping(fields, columns: Sequence[str]) -> dict:
    """Each field's column when the file has one of its name or aliases (any case, spaces, _ and -
    ignored); a `many` field takes its numbered columns (premise_1, premise2, …) or one column of its
    name. Fields without a column are left out."""
    by_norm = {}
    for column in columns:
        by_norm.setdefault(_norm(column), column)
    mapping: dict = {}
    for f in fields:
        names = (f.name, *f.aliases)
        if f.many:
            numbered = next((found for n in names if (found := _numbered(n, columns))), [])
            single = next((by_norm[_norm(n)] for n in names if _norm(n) in by_norm), None)
            if numbered or single:
                mapping[f.name] = numbered or [single]
            continue
        column = next((by_norm[_norm(n)] for n in names if _norm(n) in by_norm), None)
        if column is not None and column not in mapping.values():
            mapping[f.name] = column
    return mapping


def clean_mapping(fields, mapping: dict) -> dict:
    """{field: column} with a `many` field's value a list; empty values dropped. ValueError for a
    field the design does not have."""
    known = {f.name: f for f in fields}
    out: dict = {}
    for name, value in (mapping or {}).items():
        if name not in known:
            raise ValueError(f"the design has no field '{name}'; its fields: {', '.join(known)}")
        if known[name].many:
            values = re.split(r"\s*,\s*", value.strip()) if isinstance(value, str) else list(value or [])
            values = [v for v in values if v]
            if values:
                out[name] = values
        elif value:
            out[name] = str(value)
    return out


@dataclass(frozen=True)
class MappedBank:
    """The file in the design's own columns (UTF-8 CSV), and how its rows and columns read back."""

    csv: bytes
    labels: dict[int, str]  # the design CSV's line → where that row is in the file
    columns: dict[str, str]  # the design's column → the file's column it came from
    kept: tuple[str, ...] = ()  # the file's other columns, kept as descriptive columns
    dropped: tuple[str, ...] = field(default=())  # other columns whose name is a design column's

    def explain(self, error: RowError) -> str:
        where = "the header" if error.row == 1 else self.labels.get(error.row, f"row {error.row}")
        column = ""
        if error.column:
            source = self.columns.get(error.column)
            column = (f", column '{source}' (the field {error.column})" if source and source != error.column
                      else f", column '{error.column}'")
        return f"{where}{column}: {error.message}"


def apply_mapping(table: BankTable, fields, mapping: dict, *, keep_others: bool = True) -> MappedBank:
    """The table in the design's columns under `mapping` ({field: column}, a `many` field a list of
    columns). BankError naming every unknown column and every required field left unmapped."""
    try:
        mapping = clean_mapping(fields, mapping)
    except ValueError as exc:
        raise BankError([str(exc)]) from None
    available = set(table.columns)
    problems = []
    for name, value in mapping.items():
        for column in (value if isinstance(value, list) else [value]):
            if column not in available:
                problems.append(f"field '{name}': the file has no column '{column}' (its columns: "
                                f"{', '.join(table.columns)})")
    for f in fields:
        if f.required and f.name not in mapping:
            problems.append(f"the required field '{f.name}' is not mapped to any of the file's columns")
    if problems:
        raise BankError(problems)
    used = {c for v in mapping.values() for c in (v if isinstance(v, list) else [v])}
    many = {f.name for f in fields if f.many}
    width = {name: max((len(_as_list(row.get(mapping[name][0]))) if len(mapping[name]) == 1 else len(mapping[name])
                        for row in table.rows), default=1) for name in many if name in mapping}
    header: list[str] = []
    sources: dict[str, str] = {}
    for f in fields:
        if f.name not in mapping:
            continue
        if f.name in many:
            cols = mapping[f.name]
            for i in range(max(1, width[f.name])):
                header.append(f"{f.name}_{i + 1}")
                sources[f"{f.name}_{i + 1}"] = cols[i] if len(cols) > 1 else cols[0]
        else:
            header.append(f.name)
            sources[f.name] = mapping[f.name]
    reserved = {h.lower() for h in header} | {f.name.lower() for f in fields}
    others = [c for c in table.columns if c not in used] if keep_others else []
    dropped = tuple(c for c in others if c.lower() in reserved or re.fullmatch(r"premise_\d+", c.lower()))
    kept = tuple(c for c in others if c not in dropped)
    header += kept
    handle = io.StringIO()
    writer = csv.writer(handle, lineterminator="\n")
    writer.writerow(header)
    labels: dict[int, str] = {}
    line = 2
    for row, label in zip(table.rows, table.labels):
        values = []
        for f in fields:
            if f.name not in mapping:
                continue
            if f.name in many:
                cols = mapping[f.name]
                cells = _as_list(row.get(cols[0])) if len(cols) == 1 else [_text(row.get(c)) for c in cols]
                values += cells + [""] * (max(1, width[f.name]) - len(cells))
            elif isinstance(row.get(mapping[f.name]), list):
                problems.append(f"{label}, column '{mapping[f.name]}': holds a list; only a field of several "
                                "columns (premise) takes a list")
            else:
                values.append(_text(row.get(mapping[f.name])))
        values += [_text(row.get(c)) for c in kept]
        values = [v.replace("\r\n", "\n").replace("\r", "\n") for v in values]
        if not any(v.strip() for v in values):
            continue  # a blank row (the design's reader skips it too)
        writer.writerow(values)
        labels[line] = label
        line += 1 + sum(v.count("\n") for v in values)
    if problems:
        raise BankError(problems[:50] + ([f"… and {len(problems) - 50} more"] if len(problems) > 50 else []))
    return MappedBank(csv=handle.getvalue().encode("utf-8"), labels=labels, columns=sources, kept=kept,
                      dropped=dropped)


def _as_list(value) -> list[str]:
    if isinstance(value, list):
        return value
    return [value] if value not in (None, "") else []


def _text(value) -> str:
    if isinstance(value, list):
        return " | ".join(value)
    return "" if value is None else str(value)
