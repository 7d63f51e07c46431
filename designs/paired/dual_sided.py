"""Dual-sided rule probing (seed 004 §3.1, Appendix B): rule banks from CSV, paired items. Pure.

Each rule "If Premise, then Conclusion" is probed twice: as stated (the original, gold Yes) and
with its conclusion negated (the flipped rule, gold No); a rule counts as captured only if the
original is affirmed and the flipped one denied. Each item carries up to five phrasings, the
templates of Table 9, as prompt variants (models answer every one, humans see the first).

Rule-bank columns (header row required, UTF-8, comma-separated; names are case-insensitive):

| column | required | meaning |
| --- | --- | --- |
| premise | yes | the condition as a clause, without "If": "Person X is allergic to Substance Z and Food Y contains Substance Z" |
| conclusion | yes | the consequence as a clause, without "then": "Person X cannot eat Food Y" |
| flipped_conclusion | yes | the negated conclusion: "Person X can eat Food Y" |
| rule_id | no | letters, digits, "." "_" "-" (up to 100); unique in the file and the study; rule-00001, … by default |
| length | no | a whole number from 1 to 20 (the rule's number of facts) |
| any other column | no | kept as a descriptive attribute (structure, polarity, domain, …) for the analyses |

One trailing full stop on a clause is dropped. Validation is all-or-nothing: any bad row or column
raises ``CsvImportError`` naming every problem, and nothing is returned.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from logic.csv_table import CsvImportError, RowError, open_csv
from logic.pairs import PairedItem, PromptVariant, register_kind

DESIGN = "dual-sided"
ROLES = ("original", "flipped")  # the rule as stated, and with its conclusion negated
GOLD = ("yes", "no")  # 004 §3.1
register_kind(DESIGN, ROLES, GOLD)
REQUIRED = ("premise", "conclusion", "flipped_conclusion")
KNOWN = {*REQUIRED, "rule_id"}
RULE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")
MAX_CLAUSE = 1000

# Table 9: (instruction, positive word, negative word); templates 4 and 5 quote premise and conclusion.
TEMPLATES = {
    1: ("True or False? Please predict whether the input rule is very likely to be true.", "True", "False"),
    2: ("Right or Wrong? Please predict whether the input rule is valid and correct.", "Right", "Wrong"),
    3: ("Yes or No? Please predict whether the premise entails the conclusion.", "Yes", "No"),
    4: ("Does premise entail conclusion? Please answer Yes or No.", "Yes", "No"),
    5: ("Given the observations {premise}, can we draw the conclusion {conclusion}? Please answer Yes or No.",
        "Yes", "No"),
}


@dataclass(frozen=True)
class DualSidedRule:
    row: int  # line of the file where the rule starts (0 for rules made in code)
    rule_id: str
    premise: str
    conclusion: str
    flipped_conclusion: str
    attributes: dict = field(default_factory=dict, hash=False)
    condition: str = "real"
    original_id: str | None = None  # for a perturbed rule, the rule it perturbs

    def rule_text(self, flipped: bool = False) -> str:
        return f"If {self.premise}, then {self.flipped_conclusion if flipped else self.conclusion}."


def _clause(text: str) -> str:
    return text[:-1].rstrip() if text.endswith(".") and not text.endswith("..") else text


def _norm(text: str) -> str:
    return " ".join(text.lower().split())


def parse_rule_bank(data: bytes | str, *, existing_ids: frozenset[str] = frozenset()) -> list[DualSidedRule]:
    """Validate every row; return all rules, or raise CsvImportError naming each bad row/column."""
    table = open_csv(data, required=REQUIRED, known={*KNOWN, "length"})
    if table.errors:
        raise CsvImportError(table.errors)
    rules: list[DualSidedRule] = []
    for line, record in table.records():
        rule = _parse_row(line, record, len(rules) + 1, table.errors)
        if rule is not None:
            table.claim_id(line, "rule_id", rule.rule_id, existing_ids)
            rules.append(rule)
    return table.finish(rules, "rules")


def _parse_row(line: int, record: dict[str, str], number: int, errors: list[RowError]) -> DualSidedRule | None:
    before = len(errors)

    def fail(column: str, message: str) -> None:
        errors.append(RowError(line, column, message))

    clauses = {}
    for column in REQUIRED:
        text = _clause(record[column])
        if not text:
            fail(column, "is empty")
        elif "\n" in text or "\r" in text:
            fail(column, "must be on one line")
        elif len(text) > MAX_CLAUSE:
            fail(column, f"is longer than {MAX_CLAUSE} characters")
        clauses[column] = text
    if re.match(r"^if\b", clauses["premise"], re.I):
        fail("premise", "starts with 'If'; write the condition alone (the templates add 'If … then')")
    for column in ("conclusion", "flipped_conclusion"):
        if re.match(r"^then\b", clauses[column], re.I):
            fail(column, "starts with 'then'; write the consequence alone")
    if clauses["conclusion"] and _norm(clauses["conclusion"]) == _norm(clauses["flipped_conclusion"]):
        fail("flipped_conclusion", "is the same as the conclusion; it must negate it")
    rule_id = record.get("rule_id", "") or f"rule-{number:05d}"
    if not RULE_ID.match(rule_id):
        fail("rule_id", f"'{rule_id}' must be 1–100 letters, digits, '.', '_' or '-', starting with a letter or digit")
    length = record.get("length", "")
    if length and not (length.isdigit() and 1 <= int(length) <= 20):
        fail("length", f"'{length}' is not a whole number from 1 to 20")
    if len(errors) > before:
        return None
    return DualSidedRule(
        row=line,
        rule_id=rule_id,
        premise=clauses["premise"],
        conclusion=clauses["conclusion"],
        flipped_conclusion=clauses["flipped_conclusion"],
        attributes={k: v for k, v in record.items() if k not in KNOWN},
    )


# 004 reads the word a model generates after Table 9's prompt; the answer cue ends the raw prompt so
# that the next token is that word (the chat format drops it: the assistant's turn follows).
ANSWER_CUE = "Answer:"


def _variant(number: int, premise: str, conclusion: str) -> PromptVariant:
    """Table 9's template `number`: the participants' question (the template's question) and the
    model's prompt (the template with the rule, then the answer cue)."""
    instruction, positive, negative = TEMPLATES[number]
    if number == 4:
        text = f"Premise: {premise}.\nConclusion: {conclusion}.\n{instruction}"
        question = instruction
    elif number == 5:
        text = question = instruction.format(premise=premise, conclusion=conclusion)
    else:
        text = f"{instruction}\nRule: If {premise}, then {conclusion}."  # the rule line as 004 Table 12 prints it
        question = instruction
    return PromptVariant(f"template-{number}", question, positive, negative, f"{text}\n{ANSWER_CUE}")


def check_templates(templates: Sequence[int]) -> tuple[int, ...]:
    chosen = tuple(templates)
    if not chosen or len(set(chosen)) != len(chosen) or any(t not in TEMPLATES for t in chosen):
        raise ValueError(f"templates must be distinct numbers from 1 to 5 (at least one); got {list(chosen)}")
    return chosen


def dual_sided_items(rules: Sequence[DualSidedRule], *, templates: Sequence[int] = (1, 2, 3, 4, 5)) -> tuple[PairedItem, ...]:
    """For every rule, the original item (gold "yes") then the flipped item (gold "no")."""
    chosen = check_templates(templates)
    out = []
    for rule in rules:
        pair = f"{DESIGN}:{rule.condition}:{rule.rule_id}"
        for role, conclusion, gold in (("original", rule.conclusion, "yes"), ("flipped", rule.flipped_conclusion, "no")):
            variants = tuple(_variant(n, rule.premise, conclusion) for n in chosen)
            original = None if rule.original_id is None else f"{DESIGN}:real:{rule.original_id}:{role}"
            out.append(PairedItem(
                code=f"{pair}:{role}",
                design=DESIGN,
                pair_id=pair,
                role=role,
                form_id=f"rule.{role}",
                rule=rule.rule_id,
                premises=(f"If {rule.premise}, then {conclusion}.",),
                conclusion=f"{conclusion}.",
                gold_answer=gold,
                question=variants[0].question,
                prompt=variants[0].text,
                variants=variants,
                condition=rule.condition,
                original_code=original,
                attributes={"rule_id": rule.rule_id, **rule.attributes},
            ))
    return tuple(out)


def with_condition(rule: DualSidedRule, condition: str, **changes) -> DualSidedRule:
    """A perturbed copy of a real rule, linked to it by id."""
    return replace(rule, condition=condition, original_id=rule.rule_id, **changes)


def parse_rule_record(record: dict[str, str], *, number: int) -> tuple[DualSidedRule | None, list[tuple[str, str]]]:
    """One rule from a record keyed by the bank's columns (a published format's row mapped onto them,
    experiments/items/sources/), checked as a bank row is: (the rule, []) or (None, [(column,
    reason), …]). `number` gives the default rule id."""
    errors: list[RowError] = []
    record = {**{column: "" for column in REQUIRED}, **{k: ("" if v is None else str(v)) for k, v in record.items()}}
    rule = _parse_row(0, record, number, errors)
    return rule, [(e.column, e.message) for e in errors]
