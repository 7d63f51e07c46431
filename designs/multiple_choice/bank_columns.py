"""The multiple-choice bank's columns (seed 001; registry.BankColumn) and two valid example rows: what the admin maps a
file's columns onto, the downloadable template (header plus the two rows) and docs/designs.md's table
(experiments/items/bank_columns.py makes them from `Design.columns` and `Design.examples`). The parser that reads
them is questions.py, which names the same columns."""
from __future__ import annotations

from experiments.design_registry import BankColumn

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
