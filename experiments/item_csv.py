"""Reading and writing item banks as CSV. Validation is pure: no database access here.

Import columns (header row required, UTF-8, comma-separated; names are case-insensitive):

| column | required | meaning |
| --- | --- | --- |
| item_id | yes | identifier, unique within the file and the study |
| premise_1, premise_2, … | at least premise_1 | the statements, in order; empty trailing premises are skipped |
| question | yes | the question shown to participants, e.g. "Can we infer that John is reading a book?" |
| gold_answer | unless logical_form is given | yes / no (also true / false, 1 / 0) |
| logical_form | no | a sequent such as "□p ∨ □q, ¬□p ⊢ □q" (Unicode or ASCII); the model checker then decides the gold answer, and a stated gold_answer that disagrees is recorded as a checker disagreement |
| consequence | no | local (default) / global: the consequence relation the checker decides logical_form under (global: premises true at every world ⇒ conclusion true at every world, 003 §3.1); the other relation's answer is stored too |
| template_valid | no | true / false: the validity the source states (kept beside the checker's answer) |
| prompt | no | the full model prompt; built from premises and question with 003's format when absent |
| modality | no | none / box / dia (or ∅ / □ / ◇) |
| argument_form, form_id, condition | no | labels used by the analyses; condition defaults to "real" |
| pair_id, pair_role | no | both or neither: the item's pair and its role in it (rulebreaker / non-rulebreaker, original / flipped); a bank whose rows carry them is stored in its paired design (designs/csv_bank/items.py) |

Every other column is kept as a descriptive attribute of the item, under its name as written (`entityA`
stays `entityA`; the columns above are matched in any case).
"""
from __future__ import annotations

import csv
import re
from dataclasses import dataclass, field

from common import csvsafe

from . import design_registry as registry
from . import schema
from logic import wording
from logic.checker import MAX_NODES, Consequence, System, TooComplex, entails
from logic.csv_table import CsvImportError, RowError, open_csv  # noqa: F401 (re-exported)
from logic.parser import ParseError, parse_sequent

REQUIRED = ("item_id", "premise_1", "question")
KNOWN = {"item_id", "question", "gold_answer", "logical_form", "prompt", "modality",
         "argument_form", "form_id", "condition", "template_valid", "consequence", "pair_id", "pair_role"}
PREMISE = re.compile(r"^premise_(\d+)$")
ANSWERS = {"yes": "yes", "no": "no", "true": "yes", "false": "no", "1": "yes", "0": "no"}
# The widest value each short column holds (experiments.models.Item); longer ones are refused by name.
MAX_LENGTH = {"form_id": 60, "argument_form": 30, "condition": 12, "logical_form": 300, "pair_id": 120}


def modalities() -> dict[str, str]:
    """The spellings a bank's modality may take → the value stored: blank, and each level the designs declare for
    the modality by its value or one of its aliases (none / box / dia, or ∅ / □ / ◇; experiments/design_registry/)."""
    return {"": "", **{spelling: level.value for level in registry.levels("modality")
                       for spelling in (*level.aliases, level.value)}}


def _modality_choices() -> str:
    """'none, box, dia (∅, □, ◇)': the values, then the aliases, of the declared modality levels."""
    found = registry.levels("modality")
    aliases = [alias for level in found for alias in level.aliases]
    return ", ".join(level.value for level in found) + (f" ({', '.join(aliases)})" if aliases else "")


def pair_roles() -> tuple[str, ...]:
    """The roles a bank's pair_role may give: every paired design's, as the designs declare them
    (experiments/design_registry/); each names its paired design."""
    return tuple(role for roles in registry.pair_roles().values() for role in roles)


# The checker's budget for a whole file (each row has logic.checker.MAX_NODES): past it, the rows
# left are refused as too complex, so a file of hard forms costs seconds, not hours. A form decided
# once in the file costs nothing the next time; 20,000 distinct forms of 003's size need 480,000.
FILE_NODES = 1_000_000


class _Budget:
    """The search nodes left to one file's rows, and the answers already found in it."""

    def __init__(self, total: int | None = None) -> None:
        self.left = FILE_NODES if total is None else total
        self.decided: dict[tuple, bool] = {}

    def per_row(self) -> int:
        return max(1, min(MAX_NODES, self.left))


@dataclass(frozen=True)
class ImportedRow:
    row: int
    item_id: str
    premises: tuple[str, ...]
    question: str
    prompt: str
    gold_answer: str
    template_valid: bool | None
    checker_disagrees: bool
    logical_form: str
    modality: str
    argument_form: str
    form_id: str
    condition: str
    attributes: dict = field(default_factory=dict)
    consequence: str = ""  # the relation the checker keyed logical_form by ("" without one)
    gold_other: str = ""  # the checker's answer under the other relation
    pair_id: str = ""
    pair_role: str = ""


def _question_clause(question: str) -> str:
    """'Can we infer that X?' -> 'X', for building the model prompt."""
    text = question.strip()
    match = re.match(r"^(?:based on these statements, )?can we infer that (.*?)\??$", text, re.I)
    return match.group(1) if match else text.rstrip("?")


def parse_item_csv(
    data: bytes | str, *, system: str = "S5", existing_ids: frozenset[str] = frozenset()
) -> list[ImportedRow]:
    """Validate every row; return them all, or raise CsvImportError naming each bad row/column."""
    table = open_csv(data, required=REQUIRED, known=lambda name: name in KNOWN or PREMISE.match(name))
    header = table.header
    if "gold_answer" not in header and "logical_form" not in header:
        table.fail(1, "gold_answer", "need a gold_answer or a logical_form column")
    if table.errors:
        raise CsvImportError(table.errors)
    premise_columns = sorted(
        (int(PREMISE.match(h).group(1)), i) for i, h in enumerate(header) if PREMISE.match(h)
    )
    logic = System.parse(system)
    rows: list[ImportedRow] = []
    budget = _Budget()
    for line, record in table.records():
        row = _parse_row(line, record, header, premise_columns, logic, table.errors, budget)
        if row is not None:
            table.claim_id(line, "item_id", row.item_id, existing_ids)
            rows.append(row)
    return table.finish(rows, "items")


def _parse_row(line, record, header, premise_columns, logic, errors, budget) -> ImportedRow | None:
    before = len(errors)

    def fail(column: str, message: str) -> None:
        errors.append(RowError(line, column, message))

    # Lengths first (issue 26 item 4): a cell too long for its column is refused before any parsing
    # or checking; logical_form is checked again below as it will be stored (in Unicode).
    too_long = {name for name in MAX_LENGTH if len(record.get(name, "")) > MAX_LENGTH[name]}
    for name in sorted(too_long):
        fail(name, f"is longer than {MAX_LENGTH[name]} characters")

    item_id = record["item_id"]
    if not item_id:
        fail("item_id", "is empty")
    elif len(item_id) > 120:
        fail("item_id", "is longer than 120 characters")
    premises = tuple(record[header[i]] for _, i in premise_columns if record[header[i]])
    if not record["premise_1"]:
        fail("premise_1", "is empty")
    question = record["question"]
    if not question:
        fail("question", "is empty")
    stated = None
    raw_gold = record.get("gold_answer", "")
    if raw_gold:
        if raw_gold.lower() not in ANSWERS:
            fail("gold_answer", f"'{raw_gold}' is not yes or no")
        else:
            stated = ANSWERS[raw_gold.lower()]
    logical_form, checked, other = record.get("logical_form", ""), None, ""
    relation = None
    try:
        relation = Consequence.parse(record.get("consequence") or "local")
    except ValueError:
        fail("consequence", f"'{record.get('consequence')}' is not local or global")
    if logical_form and "logical_form" not in too_long:
        try:
            sequent = parse_sequent(logical_form)
        except ParseError as exc:
            fail("logical_form", f"cannot be parsed: {exc}")
        else:
            logical_form = sequent.to_unicode()
            if relation is not None:
                rest = Consequence.GLOBAL if relation is Consequence.LOCAL else Consequence.LOCAL
                try:
                    answer = {c: _decide(sequent, logic, c, budget) for c in (relation, rest)}
                except TooComplex as exc:
                    fail("logical_form", str(exc) if budget.left > 0 else
                         f"this form is too complex to check (limit {FILE_NODES:,} search nodes for the whole "
                         "file's forms together; split the file)")
                else:
                    checked, other = ("yes" if answer[relation] else "no"), ("yes" if answer[rest] else "no")
    elif not logical_form and not raw_gold:
        fail("gold_answer", "is empty and there is no logical_form to decide it")
    raw_valid, stated_valid = record.get("template_valid", ""), None
    if raw_valid:
        if raw_valid.lower() not in ANSWERS:
            fail("template_valid", f"'{raw_valid}' is not true or false")
        else:
            stated_valid = ANSWERS[raw_valid.lower()]
    modality, spellings = record.get("modality", ""), modalities()
    if modality.lower() not in spellings and modality not in spellings:
        fail("modality", f"'{modality}' is not one of {_modality_choices()}")
    if "logical_form" not in too_long and len(logical_form) > MAX_LENGTH["logical_form"]:
        fail("logical_form", f"is longer than {MAX_LENGTH['logical_form']} characters (as stored, in Unicode)")
    pair_id, pair_role = record.get("pair_id", ""), record.get("pair_role", "").lower()
    if pair_role and pair_role not in pair_roles():
        fail("pair_role", f"'{record.get('pair_role')}' is not one of {', '.join(pair_roles())}")
    if bool(pair_id) != bool(pair_role):
        fail("pair_role" if pair_id else "pair_id", "give both pair_id and pair_role, or neither")
    if len(errors) > before:
        return None
    gold = checked or stated
    stated = stated_valid or stated  # the validity the source claims, compared with the checker
    return ImportedRow(
        row=line,
        item_id=item_id,
        premises=premises,
        question=question,
        prompt=record.get("prompt") or wording.prompt_from_text(premises, _question_clause(question)),
        gold_answer=gold,
        template_valid=None if stated is None else stated == "yes",
        checker_disagrees=checked is not None and stated is not None and checked != stated,
        logical_form=logical_form,
        modality=spellings.get(modality.lower(), spellings.get(modality, "")),
        argument_form=record.get("argument_form", ""),
        form_id=record.get("form_id", ""),
        condition=record.get("condition") or "real",
        attributes={k: v for k, v in record.items() if k not in KNOWN and not PREMISE.match(k)},
        consequence=relation.value if checked is not None else "",
        gold_other=other,
        pair_id=pair_id,
        pair_role=pair_role,
    )


def _decide(sequent, logic, relation, budget: _Budget) -> bool:
    """The checker's answer within what is left of the file's budget (TooComplex past it)."""
    key = (sequent, relation)
    if key in budget.decided:
        return budget.decided[key]
    try:
        verdict = entails(sequent.premises, sequent.conclusion, logic, relation, max_nodes=budget.per_row())
    except TooComplex:
        budget.left -= budget.per_row()
        raise
    budget.left -= verdict.nodes
    budget.decided[key] = verdict.valid
    return verdict.valid


EXPORT_COLUMNS = schema.names(schema.ITEM_BANK)  # then premise_1 … premise_k, question, prompt
_BANK_ROWS = schema.Rows(schema.ITEM_BANK)


def write_items_csv(handle, items) -> int:
    """Write Item instances (with interpretation and original selected); returns the count. The
    columns are schema.ITEM_BANK's, each read from the item as declared there.

    The premise columns (premise_1 … premise_k) follow the longest item, then question and prompt,
    so an exported file can be imported again.
    """
    items = list(items)
    width = max((len(item.premises) for item in items), default=2)
    writer = csv.writer(handle)
    writer.writerow([*EXPORT_COLUMNS, *(f"premise_{i + 1}" for i in range(width)), "question", "prompt"])
    for item in items:
        writer.writerow(csvsafe.row([
            *_BANK_ROWS.from_object(item),
            *(list(item.premises) + [""] * (width - len(item.premises))),
            item.question, item.prompt,
        ]))
    return len(items)
