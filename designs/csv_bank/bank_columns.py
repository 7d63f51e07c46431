"""The yes/no bank's columns (registry.BankColumn) and two valid example rows: what the admin maps a file's columns
onto, the downloadable template (header plus the two rows) and docs/designs.md's table (experiments/items/
bank_columns.py makes them from `Design.columns` and `Design.examples`). The parser that reads them is
experiments/item_csv.py, which names the same columns."""
from __future__ import annotations

from experiments.design_registry import BankColumn

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
