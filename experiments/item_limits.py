"""Every text an importer is about to write, checked against its column's length before anything is
written (issue 17 hole 12): PostgreSQL refuses a value longer than a varchar column with a
DataError (a 500 in the admin), SQLite stores it silently. The check names the file's row and
column, so a too-long cell is refused like any other bad cell, and nothing is saved.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping

from django.db import models

from logic.csv_table import CsvImportError, RowError


def _limits(model) -> dict[str, int]:
    return {f.name: f.max_length for f in model._meta.concrete_fields
            if isinstance(f, models.CharField) and f.max_length}


def length_errors(rows: Iterable[tuple[int, models.Model]], columns: Mapping[str, str]) -> list[RowError]:
    """(row number, unsaved instance) pairs → a RowError for each text longer than its field allows.
    `columns` maps a field to the file's column it came from (fields not named are the importer's
    own and are reported under their field name)."""
    errors: list[RowError] = []
    limits: dict[type, dict[str, int]] = {}
    for row, instance in rows:
        model = type(instance)
        if model not in limits:  # once per model, not per row (256,000 rows in a whole dataset)
            limits[model] = _limits(model)
        values = {name: getattr(instance, name, "") for name in limits[model]}
        errors += [RowError(row, columns.get(name, name), message)
                   for name, message in value_errors(model, values, limits[model])]
    return errors


def value_errors(model, values: Mapping[str, object], limits: Mapping[str, int] | None = None
                 ) -> list[tuple[str, str]]:
    """(field, message) for each text of `values` (field name → value, not yet in an instance) longer than
    its field allows; `limits` (the model's, when given) saves reading the model's fields each time."""
    out, limits = [], limits if limits is not None else _limits(model)
    for name, value in values.items():
        limit = limits.get(name)
        if limit is not None and isinstance(value, str) and len(value) > limit:
            out.append((name, f"is {len(value)} characters long; at most {limit} fit "
                              f"(stored as {model.__name__}.{name})"))
    return out


def char_limits(model) -> dict[str, int]:
    """{field: max_length} of the model's text columns."""
    return _limits(model)


def check_lengths(rows: Iterable[tuple[int, models.Model]], columns: Mapping[str, str]) -> None:
    """Raise CsvImportError (nothing imported) when any text is too long for its column."""
    errors = length_errors(rows, columns)
    if errors:
        raise CsvImportError(errors)
