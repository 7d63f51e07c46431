"""The bank columns of each imported design (registry.BankColumn) and two valid example rows each:
what the admin maps a file's columns onto, the downloadable template (header plus the two rows) and
docs/designs.md's table of every design's columns (`columns_markdown`, checked by a test).

The parsers that read the columns live beside their designs (experiments/item_csv.py,
designs/paired/dual_sided.py, designs/multiple_choice/questions.py); these declarations name the same columns.
"""
from __future__ import annotations

import csv
import io

from ..design_registry import BankColumn, Design

YES_NO_COLUMNS = (
    BankColumn("item_id", True, "identifier, unique within the file and the study", ("id",)),
    BankColumn("premise", True, "the statements, in order (premise_1, premise_2, …; or one column holding a list)",
               ("premises",), many=True),
    BankColumn("question", True, "the question shown to participants, e.g. \"Can we infer that John is reading a book?\""),
    BankColumn("gold_answer", False, "yes / no (also true / false, 1 / 0); needed unless logical_form is given",
               ("answer", "gold", "label")),
    BankColumn("logical_form", False, "a sequent such as \"□p ∨ □q, ¬□p ⊢ □q\"; the model checker then decides the "
               "gold answer"),
    BankColumn("consequence", False, "local (default) / global: the relation the checker decides logical_form under"),
    BankColumn("template_valid", False, "true / false: the validity the source states"),
    BankColumn("prompt", False, "the full model prompt; built from premises and question with 003's format when absent"),
    BankColumn("modality", False, "none / box / dia (or ∅ / □ / ◇)"),
    BankColumn("argument_form", False, "a label the analyses use (the rule, for a paired bank)"),
    BankColumn("form_id", False, "a label the analyses use"),
    BankColumn("condition", False, "defaults to \"real\""),
    BankColumn("pair_id", False, "the item's pair (both or neither of pair_id and pair_role): a bank with pairs goes "
               "into its paired design"),
    BankColumn("pair_role", False, "rulebreaker / non-rulebreaker (the rulebreakers design) or original / flipped "
               "(dual-sided)", ("role",)),
)
YES_NO_EXAMPLES = (
    {"item_id": "a1", "premise": ["Ann is baking a cake or Bo is painting a fence.", "Ann isn't baking a cake."],
     "question": "Can we infer that Bo is painting a fence?", "gold_answer": "yes", "logical_form": "p ∨ q, ¬p ⊢ q",
     "modality": "none", "argument_form": "disjunctive syllogism"},
    {"item_id": "a2", "premise": ["Ann is baking a cake or Bo is painting a fence.", "Bo is painting a fence."],
     "question": "Can we infer that Ann isn't baking a cake?", "gold_answer": "no", "modality": "none",
     "argument_form": "affirming a disjunct"},
)

DUAL_SIDED_COLUMNS = (
    BankColumn("rule_id", False, "letters, digits, \".\" \"_\" \"-\"; unique in the file and the study "
               "(rule-00001, … by default)", ("id",)),
    BankColumn("premise", True, "the condition as a clause, without \"If\""),
    BankColumn("conclusion", True, "the consequence as a clause, without \"then\""),
    BankColumn("flipped_conclusion", True, "the negated conclusion", ("flipped",)),
    BankColumn("length", False, "a whole number from 1 to 20 (the rule's number of facts)"),
)
DUAL_SIDED_EXAMPLES = (
    {"rule_id": "r1", "premise": "Person X is allergic to Substance Z and Food Y contains Substance Z",
     "conclusion": "Person X cannot eat Food Y", "flipped_conclusion": "Person X can eat Food Y", "length": "2"},
    {"rule_id": "r2", "premise": "Person X is a parent of Person Y",
     "conclusion": "Person Y is a child of Person X", "flipped_conclusion": "Person Y is not a child of Person X",
     "length": "1"},
)

MULTIPLE_CHOICE_COLUMNS = (
    BankColumn("id", True, "the question's id, unique within the file and the study", ("item_id",)),
    BankColumn("context", True, "the passage the question is about", ("passage", "content")),
    BankColumn("question", True, "the question"),
    *(BankColumn(f"option_{letter}", True, f"option {letter.upper()}") for letter in "abcd"),
    BankColumn("answer", True, "A–D, or the correct option's exact text", ("label",)),
    BankColumn("type", False, "3e1c, 3c1e or missing (001 §2.1); other labels kept as given"),
)
MULTIPLE_CHOICE_EXAMPLES = (
    {"id": "q1", "context": "Every member of the choir sings on Sundays. Maria is a member of the choir.",
     "question": "Which of the following must be true?", "option_a": "Maria sings on Sundays.",
     "option_b": "Maria sings only on Sundays.", "option_c": "Maria does not sing on Sundays.",
     "option_d": "Maria leads the choir.", "answer": "A", "type": "3e1c"},
    {"id": "q2", "context": "No reptile has fur. Every lizard is a reptile.",
     "question": "Which of the following must be true?", "option_a": "Some lizards have fur.",
     "option_b": "No lizard has fur.", "option_c": "Every animal without fur is a lizard.",
     "option_d": "Some reptiles are not lizards.", "answer": "B", "type": "3e1c"},
)


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
