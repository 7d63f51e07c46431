"""The dual-sided rule bank's columns (seed 004; registry.BankColumn) and two valid example rows: what the admin maps
a file's columns onto, the downloadable template (header plus the two rows) and docs/designs.md's table
(experiments/items/bank_columns.py makes them from `Design.columns` and `Design.examples`). The parser that reads
them is dual_sided.py's `parse_rule_bank`, which names the same columns. RULEBREAKERS has no bank of its own."""
from __future__ import annotations

from experiments.design_registry import BankColumn

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
