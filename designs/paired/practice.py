"""The paired designs' practice questions (issue 16): RULEBREAKERS' (seed 000) and dual-sided rules' (seed 004), in
the design's own format, with forms neither design tests (logic/human_defaults.py says why). Their catch items are
003's (logic/human_defaults.py). Pure Python."""
from __future__ import annotations

from .dual_sided import TEMPLATES
from .rulebreakers import QUESTIONS


def rulebreakers_practice() -> list[dict]:
    """Seed 000's format as participants read it (premises, then "Conclusion: … Does the Conclusion
    follow from the Premises?"), with neither modus tollens nor disjunctive syllogism and no fact that
    clashes with what everyone knows."""
    ask = QUESTIONS[0][1]
    return [
        {"premises": ["Anna has been to Lisbon and she is good at chess.", "Tom will be visiting Oslo."],
         "question": f"Conclusion: Anna is good at chess. {ask}", "answer": "yes", "logical_form": "p ∧ q, r ⊢ q"},
        {"premises": ["Anna has been to Lisbon.", "Tom will be visiting Oslo."],
         "question": f"Conclusion: Anna owns a piano. {ask}", "answer": "no", "logical_form": "p, q ⊢ r"},
    ]


# Seed 004 probes a rule as stated (premise ⊢ conclusion, gold Yes) and with its conclusion negated
# (premise ⊢ ¬conclusion, gold No); premise and conclusion are whole clauses, so as argument forms:
DUAL_SIDED_FORMS = ("p ⊢ q", "p ⊢ ¬q")


def dual_sided_practice() -> list[dict]:
    """Seed 004's format (one "If …, then …." rule and Table 9's template-3 question), with rules
    that hold or fail by their words alone, not by what one knows about the world."""
    ask = TEMPLATES[3][0]
    return [
        {"premises": ["If Person X is holding a cup and a pen, then Person X is holding a pen."],
         "question": ask, "answer": "yes", "logical_form": "p ∧ q ⊢ q"},
        {"premises": ["If Person X is holding a cup and a pen, then Person X is not holding a pen."],
         "question": ask, "answer": "no", "logical_form": "p ∧ q ⊢ ¬q"},
    ]
