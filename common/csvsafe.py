"""CSV cells a spreadsheet will not run (issue 17 hole 2; OWASP's "CSV injection").

A text cell beginning with = + - @, a tab or a carriage return is read by Excel, LibreOffice and
Google Sheets as a formula (=HYPERLINK(…&B2) can send a neighbouring cell, e.g. a Prolific id, to
another site). Every CSV Duet writes — the admin's trial export, the report's tables and data files,
item exports — passes its text cells through `cell`, which puts a single quote in front of such a
text (spreadsheets show the text, not a formula). Numbers are never touched: -0.5 stays a number.
Duet's importers read a quote before one of those characters back as the bare text
(logic/csv_table.py, which stays free of Django), so an exported item file imports again
unchanged.
"""
from __future__ import annotations

from collections.abc import Iterable

TRIGGERS = ("=", "+", "-", "@", "\t", "\r")


def cell(value):
    """The value as a safe CSV cell (text starting with a trigger gets a leading quote)."""
    if isinstance(value, str) and value.startswith(TRIGGERS):
        return "'" + value
    return value


def row(values: Iterable) -> list:
    return [cell(v) for v in values]


def value(value):
    """A Python value as Duet's CSV files write it (experiments/schema.py): booleans TRUE/FALSE (what R's
    read.csv and pandas both read as logical), None blank, times ISO 8601, text made safe."""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if value is None:
        return ""
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return cell(value)


def values(items: Iterable) -> list:
    return [value(v) for v in items]


def logical(table):
    """A DataFrame with every boolean column (nullable or not) as TRUE/FALSE text, blank for missing."""
    import pandas as pd

    out = table
    for name in table.columns:
        column = table[name]
        dtype = str(column.dtype)
        if dtype not in ("bool", "boolean", "object"):
            continue
        present = column.dropna()
        if dtype == "object" and (present.empty or not present.map(lambda v: type(v).__name__ in ("bool", "bool_")).all()):
            continue
        if out is table:
            out = table.copy()
        out[name] = column.astype(object).map(lambda v: "" if pd.isna(v) else ("TRUE" if v else "FALSE"))
    return out


def frame(table):
    """A pandas DataFrame with every text cell made safe (numeric columns as they are)."""
    out = table.copy()
    for name in out.columns:
        column = out[name]
        if column.dtype == object or str(column.dtype) in ("string", "category"):
            values = column.astype(object)
            mask = values.map(lambda v: isinstance(v, str) and v.startswith(TRIGGERS))
            if mask.any():
                out[name] = values.where(~mask, "'" + values[mask].astype(str))
    return out
