"""Published formats: a dataset read as its authors published it, into a design (issue 27, part 1).

A design declares the formats it reads (``registry.Design.formats``, reader names); each format is a
``Reader`` registered here by name (registering a name twice raises). A reader maps the file's own
columns onto the design's fields — the columns of the design's own bank (docs/designs.md) — and
derives, by a declared transformation, what the file lacks (ULogic's flipped conclusions). It never
guesses: every row it cannot map or transform is a ``Problem`` (the row's id, the column, the reason),
and the row is left out of ``Reading.rows``. The design then builds its items from the rows exactly
as it builds generated or banked ones (its templates and phrasings, its pairs), and adds the rows its
own checks refuse to the problems.

    from experiments.items import sources
    reader = sources.get("ulogic-json")               # ValueError naming the known formats
    sources.for_design(design)                        # [Reader(name="ulogic-json", …)], in the design's order
    reading = reader.read(data, filename="probing_subset.json")   # data: bytes, str or a binary file
    reading.rows        # (Row(id="ulogic-0001", fields={"premise": …, "conclusion": …, "flipped_conclusion": …}), …)
    reading.problems    # (Problem(row="ulogic-0147", column="v_rule", reason="…"), …)
    rows, problems = reading                          # a Reading unpacks as (rows, problems)

A file that cannot be read at all (not JSON, a required column missing) raises ``ReaderError`` (a
ValueError) with a message for the researcher. ``BANK`` ("bank") names a design's own CSV columns:
it is no reader here, the design's ``make``/``importer`` reads it (the default for the designs that
have a bank; the rulebreakers design has none and defaults to its first published format).

Importing: ``design.importer(study=, data=, format=NAME, skip_problems=False, **options)`` writes;
``design.import_preview(study=, data=, format=NAME, rows=10, **options)`` checks without writing and
returns ``registry.Preview`` with ``problems`` (Problem, …). With problems, the write refuses
(``RowProblems``, a ValidationError listing them by row id) unless ``skip_problems=True``: then the
other rows are written and the report's ``left_out`` lists the problems (the admin shows the
preview's problems and passes skip_problems=True when the researcher confirms).

The readers live with their designs, one module each (designs/paired/rulebreakers_source.py and
ulogic_source.py, designs/multiple_choice/logiqa_source.py), registered when the design's family is declared at
start-up (designs/apps.py); plain Python over text (no models, no database; only RowProblems and read_for speak
Django's ValidationError). Their formats, sources and transformations are listed in docs/designs.md ("Published
formats").
"""
from __future__ import annotations

from .base import (  # noqa: F401  (the package's API)
    BANK, Meter, Problem, Reader, ReaderError, Reading, Row, RowProblems, _readers, all_readers, check_utf8,
    for_design, get, left_out_lines, max_bytes, max_records, read_for, reader_for, refuse_or_keep, register,
)

__all__ = ["BANK", "Meter", "Problem", "Reader", "ReaderError", "Reading", "Row", "RowProblems", "all_readers",
           "check_utf8", "for_design", "get", "left_out_lines", "max_bytes", "max_records", "read_for", "reader_for",
           "refuse_or_keep", "register"]
