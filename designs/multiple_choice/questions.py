"""Four-option multiple-choice banks (seed 001, DivLogicEval): CSV rows, circular mutants, prompts. Pure.

A bank row is one question: a context (DivLogicEval's "content", the premises), a question, four
options and the correct one. Each question becomes four items, its circular mutants (001 §2.2,
footnote 1): for options (o1, o2, o3, o4) the mutants are (o1, o2, o3, o4), (o2, o3, o4, o1),
(o3, o4, o1, o2) and (o4, o1, o2, o3); the first is the original order. The gold letter follows the
correct option to its new position.

Import columns (header row required, UTF-8, comma-separated; names are case-insensitive):

| column | required | meaning |
| --- | --- | --- |
| id (or item_id) | yes | identifier of the question, unique within the file and the study |
| context (or passage, content) | yes | the statements the question is about |
| question | yes | e.g. "Given the information provided, which conclusion is least likely to be accurate?" |
| option_a … option_d | yes, unless `options` | the four options in their original order |
| options | instead of option_a … option_d | the four options separated by " | " (or a JSON list) |
| answer | yes | the correct option: its letter A–D, or its exact text |
| type | no | the question type: 3e1c, 3c1e or missing (missing premise); other labels are kept as given |

Every other column is kept as a descriptive attribute of the question.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from logic.csv_table import CsvImportError, RowError, open_csv  # noqa: F401 (CsvImportError re-exported)

LETTERS = ("A", "B", "C", "D")
ROLES = tuple(f"rot{k}" for k in range(4))
ROLES_SUFFIXES = tuple(f".{role}" for role in ROLES)
# 001 Appendix I: the instruction every model is given (§4.1 quotes it without "without explanation").
INSTRUCTION = "You need to answer in the form of 'Answer: <A/B/C/D>' without explanation."
ANSWER_CUE = "Answer:"

ID_COLUMNS = ("id", "item_id")
CONTEXT_COLUMNS = ("context", "passage", "content")
OPTION_COLUMNS = tuple(f"option_{letter.lower()}" for letter in LETTERS)
KNOWN = {*ID_COLUMNS, *CONTEXT_COLUMNS, *OPTION_COLUMNS, "question", "options", "answer", "type"}
# Question types of 001 §2.1 (Appendix D); spellings people use for them → the paper's label.
TYPES = {
    "3e1c": "3e1c", "3c1e": "3c1e", "missing": "missing", "missing premise": "missing",
    "missing_premise": "missing", "missing-premise": "missing",
}


@dataclass(frozen=True)
class Question:
    """One bank row: a question with its options in the original order and the correct position."""

    row: int
    question_id: str
    context: str
    question: str
    options: tuple[str, str, str, str]
    gold_index: int  # 0..3: the correct option's position in the original order
    qtype: str = ""
    attributes: dict = field(default_factory=dict)

    @property
    def gold_letter(self) -> str:
        return LETTERS[self.gold_index]


@dataclass(frozen=True)
class Mutant:
    """One circular mutant: the options rotated left by `shift`; the gold letter moved with them."""

    question: Question
    shift: int  # 0 = the original order

    @property
    def role(self) -> str:
        return ROLES[self.shift]

    @property
    def code(self) -> str:
        return f"{self.question.question_id}.{self.role}"

    @property
    def options(self) -> tuple[str, ...]:
        return rotate(self.question.options, self.shift)

    @property
    def gold_letter(self) -> str:
        return LETTERS[rotated_index(self.question.gold_index, self.shift)]

    @property
    def prompt(self) -> str:
        return build_prompt(self.question.context, self.question.question, self.options)

    def original_index(self, letter: str) -> int:
        """Which original option (0..3) sits at `letter` in this mutant."""
        return (LETTERS.index(letter) + self.shift) % 4


def rotate(options, shift: int) -> tuple:
    """(o1, o2, o3, o4) rotated left by shift: shift 1 gives (o2, o3, o4, o1) (001 footnote 1)."""
    options = tuple(options)
    k = shift % len(options)
    return options[k:] + options[:k]


def rotated_index(index: int, shift: int) -> int:
    """Where the option at `index` of the original order sits after rotating left by `shift`."""
    return (index - shift) % 4


def mutants(question: Question) -> list[Mutant]:
    return [Mutant(question, shift) for shift in range(4)]


def build_prompt(context: str, question: str, options) -> str:
    """001 Appendix I's prompt: the instruction, the content, the question, the options A–D, then
    the answer cue, so that the next token after the prompt is the option letter."""
    lines = [INSTRUCTION, context.strip(), question.strip()]
    lines += [f"{letter}. {text.strip()}" for letter, text in zip(LETTERS, options)]
    lines.append(ANSWER_CUE)
    return "\n".join(lines)


# --------------------------------------------------------------------------- reading a bank


def _split_options(raw: str) -> list[str] | None:
    text = raw.strip()
    if text.startswith("["):
        try:
            value = json.loads(text)
        except ValueError:
            return None
        return [str(v).strip() for v in value] if isinstance(value, list) else None
    return [part.strip() for part in text.split("|")]


def parse_mc_csv(data: bytes | str, *, existing_ids: frozenset[str] = frozenset()) -> list[Question]:
    """Validate every row; return the questions, or raise CsvImportError naming each bad row/column.

    `existing_ids` are the question ids (pair ids) the study already has.
    """
    table = open_csv(data, required=("question", "answer"), known=KNOWN)
    header = table.header
    id_column = next((c for c in ID_COLUMNS if c in header), None)
    context_column = next((c for c in CONTEXT_COLUMNS if c in header), None)
    if id_column is None:
        table.fail(1, "id", "required column is missing (id or item_id)")
    if context_column is None:
        table.fail(1, "context", "required column is missing (context, passage or content)")
    has_option_columns = all(c in header for c in OPTION_COLUMNS)
    if not has_option_columns and "options" not in header:
        missing = [c for c in OPTION_COLUMNS if c not in header]
        table.fail(1, missing[0] if missing else "options",
                   "need the columns option_a, option_b, option_c and option_d (or one 'options' column)")
    if table.errors:
        raise CsvImportError(table.errors)
    questions: list[Question] = []
    for line, record in table.records():
        question = _parse_row(line, record, id_column, context_column, has_option_columns, table.errors)
        if question is not None:
            table.claim_id(line, id_column, question.question_id, existing_ids)
            questions.append(question)
    return table.finish(questions, "questions")


def _parse_row(line, record, id_column, context_column, has_option_columns, errors) -> Question | None:
    before = len(errors)

    def fail(column: str, message: str) -> None:
        errors.append(RowError(line, column, message))

    question_id = record[id_column]
    if not question_id:
        fail(id_column, "is empty")
    elif len(question_id) > 110:  # the item codes add ".rotN"
        fail(id_column, "is longer than 110 characters")
    elif not re.fullmatch(r"[^\s]+", question_id):
        fail(id_column, f"'{question_id}' contains white space")
    context = record[context_column]
    if not context:
        fail(context_column, "is empty")
    text = record["question"]
    if not text:
        fail("question", "is empty")
    if has_option_columns:
        options = [record[c] for c in OPTION_COLUMNS]
        for column, value in zip(OPTION_COLUMNS, options):
            if not value:
                fail(column, "is empty")
    else:
        options = _split_options(record["options"]) or []
        if len(options) != 4 or not all(options):
            fail("options", f"needs exactly four non-empty options separated by ' | ' (found {len(options)})")
            options = []
    if options and len({o.casefold() for o in options}) < len(options):
        fail(OPTION_COLUMNS[0] if has_option_columns else "options", "two options have the same text")
    gold_index = None
    answer = record["answer"]
    letter = answer.rstrip(".)").upper()
    if not answer:
        fail("answer", "is empty")
    elif letter in LETTERS:
        gold_index = LETTERS.index(letter)
    elif options:
        matches = [i for i, o in enumerate(options) if o.casefold() == answer.casefold()]
        if len(matches) == 1:
            gold_index = matches[0]
        else:
            fail("answer", f"'{answer}' is neither a letter A–D nor the exact text of one of the options")
    raw_type = record.get("type", "")
    qtype = TYPES.get(raw_type.strip().lower(), raw_type.strip())
    if len(qtype) > 60:
        fail("type", "is longer than 60 characters")
    if len(errors) > before or gold_index is None:
        return None
    return Question(
        row=line, question_id=question_id, context=context, question=text,
        options=tuple(options), gold_index=gold_index, qtype=qtype,
        attributes={k: v for k, v in record.items() if k not in KNOWN},
    )


def parse_question_record(record: dict[str, str]) -> tuple[Question | None, list[tuple[str, str]]]:
    """One question from a record keyed by the bank's columns id, context, question, option_a …
    option_d, answer (a published format's row mapped onto them, experiments/items/sources/),
    checked as a bank row is: (the question, []) or (None, [(column, reason), …])."""
    errors: list[RowError] = []
    wanted = ("id", "context", "question", *OPTION_COLUMNS, "answer")
    record = {**{column: "" for column in wanted}, **{k: ("" if v is None else str(v)) for k, v in record.items()}}
    question = _parse_row(0, record, "id", "context", True, errors)
    return question, [(e.column, e.message) for e in errors]
