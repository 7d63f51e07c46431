"""Structured values (a run's configuration and versions, a report's runs and warnings, a pilot's
profile, a power analysis's plan) as nested HTML tables in the researcher's words, never raw JSON.

`structured_html(value, labels=...)`: a dict is a two-column table (name, value); a list of dicts a
table with one row per dict and a column per key; a list of plain values one line, comma-separated;
numbers are rounded (`number`); nested values nest. `labels` maps a key to the words shown for it;
other keys are shown with their underscores as spaces. The admin's read-only fields call it through
`admin_field` (common/admin_display.py); templates through the `structured` filter
(studyserver/templatetags/structured.py).
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString, mark_safe

EMPTY = "—"


def number(value: float | int, *, unit: str = "") -> str:
    """A number as a person reads it: integers as they are (with thousands separators), other numbers
    to four significant digits (8.876871205 → 8.877; 0.0500001 → 0.05), large ones to whole units;
    `unit` "s" rounds seconds to 0.1 s (8.876871205 → "8.9 s")."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        shown = f"{value:,}"
    elif not math.isfinite(value):
        shown = str(value)
    elif unit == "s":
        shown = f"{value:,.1f}"
    elif abs(value) >= 1000:
        shown = f"{value:,.0f}"
    else:
        shown = f"{value:.4g}"
        if "e" in shown:  # very small: keep it readable rather than in computer notation
            shown = f"{value:.2e}".replace("e-0", " × 10^-").replace("e-", " × 10^-")
    return f"{shown} {unit}" if unit else shown


def label(key, labels: Mapping[str, str] | None = None) -> str:
    key = str(key)
    return (labels or {}).get(key) or key.replace("_", " ")


def _scalar(value) -> str:
    if value is None or value == "":
        return EMPTY
    if isinstance(value, (bool, int, float)):
        return number(value)
    return str(value)


def _is_records(value) -> bool:
    return bool(value) and all(isinstance(row, Mapping) for row in value)


def structured_html(value, *, labels: Mapping[str, str] | None = None) -> SafeString:
    """`value` (what a JSONField holds) as HTML: nested tables, rounded numbers, escaped text."""
    if isinstance(value, Mapping):
        if not value:
            return mark_safe(EMPTY)
        rows = format_html_join("", "<tr><th scope='row'>{}</th><td>{}</td></tr>",
                                ((label(k, labels), structured_html(v, labels=labels)) for k, v in value.items()))
        return format_html('<table class="structured">{}</table>', rows)
    if isinstance(value, Sequence) and not isinstance(value, (str, bytes)):
        if not value:
            return mark_safe(EMPTY)
        if _is_records(value):
            columns = list(dict.fromkeys(key for row in value for key in row))
            head = format_html_join("", "<th scope='col'>{}</th>", ((label(c, labels),) for c in columns))
            body = format_html_join("", "<tr>{}</tr>", (
                (format_html_join("", "<td>{}</td>", ((structured_html(row.get(c), labels=labels),) for c in columns)),)
                for row in value))
            return format_html('<table class="structured"><thead><tr>{}</tr></thead><tbody>{}</tbody></table>', head,
                               body)
        if any(isinstance(v, (Mapping, list, tuple, str)) for v in value):  # texts (warnings): one a line
            return format_html_join("", "<div>{}</div>", ((structured_html(v, labels=labels),) for v in value))
        return format_html_join(", ", "{}", ((_scalar(v),) for v in value))  # numbers (run ids): one line
    return format_html("{}", _scalar(value))
