"""The LogiQA reader (multiple choice): the text files of lgw863/LogiQA-dataset as published."""
from __future__ import annotations

import re
from itertools import chain

from experiments.items.sources.base import Problem, Reader, ReaderError, Reading, Row, max_records, register, text_lines, too_many_records

LOGIQA_COLUMNS = {
    "line 1": "blank (separates questions)",
    "line 2": "answer (a–d → A–D)",
    "line 3": "context", "line 4": "question",
    "lines 5–8": "option_a … option_d (their 'A.' … 'D.' prefixes dropped)",
}


def read_logiqa(text: str) -> Reading:
    """LogiQA's text files (Train.txt, Eval.txt, Test.txt): eight lines a question — a blank line, the
    right choice (a–d), the context, the question and the four options 'A.…' to 'D.…'. A question's
    id is its position (logiqa-0001 is the first); a block that is not of this shape is a problem, and
    reading goes on at the next blank line. Read a line at a time, a block's first eight lines kept:
    more than DUET_IMPORT_MAX_RECORDS blocks is a ReaderError."""
    rows, problems = [], []
    limit = max_records()
    number = 0
    block: list[str] = []
    size = first = 0
    for line_number, line in chain(text_lines(text), [(0, "")]):  # a last blank line closes the last block
        if line.strip():
            if not size:
                first = line_number
            size += 1
            if size <= 8:
                block.append(line.strip())
            continue
        if not size:
            continue
        number += 1
        if number > limit:
            raise ReaderError(too_many_records("LogiQA text", "questions", limit))
        _question(f"logiqa-{number:04d}", block, size, first, rows, problems)
        block, size = [], 0
    return Reading(tuple(rows), tuple(problems))


def _question(row_id: str, block: list[str], size: int, first: int, rows: list, problems: list) -> None:
    if size != 7:
        problems.append(Problem(row_id, "", f"has {size} lines between blank lines (from line {first}); a question "
                                            "has 7: its answer, context, question and four options"))
        return
    answer, context, question, *options = block
    bad = []
    if answer.lower() not in ("a", "b", "c", "d"):
        bad.append(("answer", f"'{answer}' is not one of a, b, c, d"))
    texts = []
    for letter, option in zip("ABCD", options):
        if not re.match(rf"^{letter}\s*[.．]", option, re.IGNORECASE):
            bad.append((f"option_{letter.lower()}", f"does not start with '{letter}.'"))
        texts.append(re.sub(rf"^{letter}\s*[.．]\s*", "", option, flags=re.IGNORECASE))
    if bad:
        problems += [Problem(row_id, column, reason) for column, reason in bad]
        return
    rows.append(Row(row_id, {"id": row_id, "context": context, "question": question,
                             **{f"option_{l}": t for l, t in zip("abcd", texts)}, "answer": answer.upper()}))


register(Reader(
    name="logiqa-text", design="multiple-choice", title="LogiQA, text format",
    source="github.com/lgw863/LogiQA-dataset, Eval.txt (Train.txt, Test.txt alike)", extensions=(".txt",),
    columns=LOGIQA_COLUMNS,
    transformation="none: the option letters' prefixes are dropped and the answer letter upper-cased; the design "
                   "adds its four circular orders (001)",
    read_text=read_logiqa,
))
