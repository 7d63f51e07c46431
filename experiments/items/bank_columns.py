"""What every imported design's bank columns make: the downloadable template (header plus the design's two example
rows), and docs/designs.md's table of every design's columns (`columns_markdown`, checked by a test).

Each design declares its columns (registry.BankColumn) and two valid example rows in its folder
(designs/<family>/bank_columns.py), beside the parser that reads them, and names them in its registry entry
(`Design.columns`, `Design.examples`); this module reads them from there and names no design.
"""
from __future__ import annotations

import csv
import io

from ..design_registry import Design


def header(design: Design) -> list[str]:
    """The template's header: each column by name; a `many` column as name_1, name_2 (the examples' width)."""
    out = []
    for column in design.columns:
        if column.many:
            width = max(2, *(len(row.get(column.name) or []) for row in design.examples))
            out += [f"{column.name}_{i + 1}" for i in range(width)]
        else:
            out.append(column.name)
    return out


def template_csv(design: Design) -> str:
    """The design's template: its header and its two example rows (valid: they import as they are)."""
    names = header(design)
    handle = io.StringIO()
    writer = csv.writer(handle, lineterminator="\n")
    writer.writerow(names)
    for example in design.examples:
        row = {}
        for column in design.columns:
            value = example.get(column.name, "")
            if column.many:
                row.update({f"{column.name}_{i + 1}": v for i, v in enumerate(value or [])})
            else:
                row[column.name] = value
        writer.writerow([row.get(name, "") for name in names])
    return handle.getvalue()


def columns_markdown(designs) -> str:
    """docs/designs.md's table of every imported design's columns (between its markers)."""
    lines = []
    for design in designs:
        lines += [f"### {design.title} (`{design.name}`, seed {design.paper})", "",
                  "| column | required | meaning | also read as |", "| --- | --- | --- | --- |"]
        for column in design.columns:
            name = f"{column.name}_1, {column.name}_2, …" if column.many else column.name
            also = ", ".join(column.aliases)
            lines.append(f"| {name} | {'yes' if column.required else 'no'} | {column.help} | {also} |")
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


BEGIN, END = "<!-- bank columns: begin (generated from the registry) -->", "<!-- bank columns: end -->"


def docs_section() -> str:
    from ..design_registry import imported

    return f"{BEGIN}\n{columns_markdown([d for d in imported() if d.columns])}{END}"


def write_docs(path: str = "docs/designs.md") -> None:
    """Rewrite docs/designs.md's table of bank columns from the registry:
    `.venv/bin/python manage.py shell -c "from experiments.items.bank_columns import write_docs; write_docs()"`."""
    from pathlib import Path

    text = Path(path).read_text(encoding="utf-8")
    before, rest = text.split(BEGIN, 1)
    _, after = rest.split(END, 1)
    Path(path).write_text(before + docs_section() + after, encoding="utf-8")
