"""What a new study's human arm starts with: practice questions and catch items (attention checks) of two statements
in 003's wording, which a yes/no design uses unless it declares its own (Design.practice, Design.catch_items: each
design's own are in its folder, designs/<family>/practice.py). Pure Python: no Django imports.

Practice trains the keys and the page, not the reasoning being measured. Before issue 16 every study
practised modus ponens with feedback — the form whose human accuracy is 003's headline result (§5,
Table 1) — so the practice told participants the answer to a tested form. The defaults use forms no
design tests: conjunction elimination ("p and q, so q?" → Yes), disjunction introduction, and an
obvious non sequitur ("p, q, so r?" → No), written in the style of the design's own items (its
wording functions, its participants' question, its number of statements). Every default practice
question states its logical form (a sequent), so experiments/participation/practice.py can check
that no practice question shares a form with the items a study tests.

Catch items have an obvious answer (it is stated in a premise). A design whose items have one statement declares
practice and catch items of one statement (the instructions then promise "a statement").
"""
from __future__ import annotations

from .parser import parse_sequent


def worded(sequent: str, meaning: dict, answer: str) -> dict:
    """A practice question in 003's wording (Appendix B.2): one sentence per premise, then
    "Can we infer that …?" — the wording functions the design's own items are written with."""
    from . import wording

    parsed = parse_sequent(sequent)
    return {
        "premises": [wording.sentence(p, meaning) for p in parsed.premises],
        "question": wording.question(parsed.conclusion, meaning),
        "answer": answer,
        "logical_form": parsed.to_unicode(),
    }


def example_meaning() -> dict:
    """The propositions p, q, r, s of the practice questions written in 003's wording."""
    from .wording import Proposition

    return {
        "p": Proposition("Mia", "painting a fence"), "q": Proposition("Leo", "washing a car"),
        "r": Proposition("Sam", "cooking dinner"), "s": Proposition("Kim", "reading a book"),
    }


# --------------------------------------------------------------------------- practice


def two_statement_practice() -> list[dict]:
    """Two statements and a question, like the 24 syllogisms: conjunction elimination (Yes) and a
    conclusion about someone the statements do not mention (No)."""
    meaning = example_meaning()
    return [
        worded("p ∧ q, r ⊢ q", meaning, "yes"),
        worded("r, s ⊢ q", meaning, "no"),
    ]


# --------------------------------------------------------------------------- catch items

# The design name the catch items are stored under (experiments.design_registry.CATCH_ITEMS; not a design a
# study is built from): declared here, once, so that analysis/ reads it without naming it.
CATCH_ITEMS = "attention-check"
CATCH_ANSWER_CUE = "Answer:"  # models score catch items too: their prompt ends in the cue, as every design's


def catch_item_prompt(check: dict) -> str:
    """The model's prompt of a catch item: its statements, its question, its options (A–D), then the
    answer cue, so that the next token is the answer."""
    options = [f"{letter}. {text}" for letter, text in zip("ABCD", check.get("options", []))]
    return "\n".join([*check["premises"], check["question"], *options, CATCH_ANSWER_CUE])



def two_statement_checks() -> list[dict]:
    """Catch items with an obvious answer (the answer is stated in a premise)."""
    return [
        {
            "premises": ["Anna is reading a book.", "Tom is baking bread."],
            "question": "Can we infer that Anna is reading a book?",
            "answer": "yes",
        },
        {
            "premises": ["Ben is washing a car.", "Eva is singing a song."],
            "question": "Can we infer that Ben isn't washing a car?",
            "answer": "no",
        },
    ]
