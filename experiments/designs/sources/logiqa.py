"""The LogiQA reader (multiple choice): the text files of lgw863/LogiQA-dataset as published."""
from __future__ import annotations

import re

from .base import Problem, Reader, Reading, Row, register

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
    reading goes on at the next blank line."""
    lines = text.splitlines()
    rows, problems = [], []
    i, number = 0, 0
    while i < len(lines):
        if not lines[i].strip():
            i += 1
            continue
        number += 1
        row_id = f"logiqa-{number:04d}"
        end = i
        while end < len(lines) and lines[end].strip():
            end += 1
        block = [line.strip() for line in lines[i:end]]
        i = end
        if len(block) != 7:
            problems.append(Problem(row_id, "", f"has {len(block)} lines between blank lines (from line "
                                                f"{i - len(block) + 1}); a question has 7: its answer, context, "
                                                "question and four options"))
            continue
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
            continue
        rows.append(Row(row_id, {"id": row_id, "context": context, "question": question,
                                 **{f"option_{l}": t for l, t in zip("abcd", texts)}, "answer": answer.upper()}))
    return Reading(tuple(rows), tuple(problems))


register(Reader(
    name="logiqa-text", design="multiple-choice", title="LogiQA, text format",
    source="github.com/lgw863/LogiQA-dataset, Eval.txt (Train.txt, Test.txt alike)", extensions=(".txt",),
    columns=LOGIQA_COLUMNS,
    transformation="none: the option letters' prefixes are dropped and the answer letter upper-cased; the design "
                   "adds its four circular orders (001)",
    read_text=read_logiqa,
))
