"""003's practice questions and catch items of one statement, for Appendix C.1's necessitation items ({φ} ⊢ □φ,
◇φ, φ): the instructions then promise "a statement", and practice and checks keep that promise. The syllogisms and
modal distribution take the defaults of two statements (logic/human_defaults.py, which says why the forms are
ones no design tests). Pure Python."""
from __future__ import annotations

from logic.human_defaults import example_meaning, worded


def one_statement_practice() -> list[dict]:
    """One statement and a question, like Appendix C.1's necessitation items ({φ} ⊢ □φ, ◇φ, φ)."""
    meaning = example_meaning()
    return [
        worded("p ∧ q ⊢ q", meaning, "yes"),
        worded("r ∧ s ⊢ q", meaning, "no"),
    ]


def one_statement_checks() -> list[dict]:
    """Catch items of one statement each, for designs whose items have one (003 Appendix C.1): the
    instructions then promise "a statement" and the checks keep that promise. Their forms (p ∧ q ⊢ p,
    p ⊢ ¬p) are neither the design's ({φ} ⊢ □φ, ◇φ, φ) nor its practice's."""
    return [
        {
            "premises": ["Anna is reading a book and Tom is baking bread."],
            "question": "Can we infer that Anna is reading a book?",
            "answer": "yes",
        },
        {
            "premises": ["Ben is washing a car."],
            "question": "Can we infer that Ben isn't washing a car?",
            "answer": "no",
        },
    ]
