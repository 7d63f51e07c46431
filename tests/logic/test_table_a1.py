"""The 24 modal-syllogism items under 003's Jane/John interpretation, against Table A1.

Table A1's text extraction is garbled in places; where a row is damaged the expected wording below
follows the paper's stated rules (B.2 and §3.3), which the undamaged rows also obey.
"""
from __future__ import annotations

import pytest

from designs.modal.generate import InterpretationSpec, render_item, verdicts
from logic.wording import Proposition

JANE = Proposition("Jane", "watching a show")
JOHN = Proposition("John", "reading a book")
SPEC = InterpretationSpec(index=0, condition="real", p=JANE, q=JOHN)

J, Jn = "Jane is watching a show", "Jane isn't watching a show"
N, Nn = "John is reading a book", "John isn't reading a book"

# (form_id, logical form, premise 1, premise 2, conclusion clause, gold under S5)
TABLE_A1 = [
    ("none.orL.valid", "p ∨ q, ¬p ⊢ q", f"{J} or {N}.", f"{Jn}.", N, "yes"),
    ("none.orR.valid", "p ∨ q, ¬q ⊢ p", f"{J} or {N}.", f"{Nn}.", J, "yes"),
    ("none.toL.valid", "¬p → q, ¬p ⊢ q", f"If {Jn}, then {N}.", f"{Jn}.", N, "yes"),
    ("none.toR.valid", "¬p → q, ¬q ⊢ p", f"If {Jn}, then {N}.", f"{Nn}.", J, "yes"),
    ("box.orL.valid", "□p ∨ □q, ¬□p ⊢ □q",
     "It's certain that Jane is watching a show or it's certain that John is reading a book.",
     "It's uncertain whether Jane is watching a show.", "it's certain that John is reading a book", "yes"),
    ("box.orR.valid", "□p ∨ □q, ¬□q ⊢ □p",
     "It's certain that Jane is watching a show or it's certain that John is reading a book.",
     "It's uncertain whether John is reading a book.", "it's certain that Jane is watching a show", "yes"),
    ("box.toL.valid", "¬□p → □q, ¬□p ⊢ □q",
     "If it's uncertain whether Jane is watching a show, then it's certain that John is reading a book.",
     "It's uncertain whether Jane is watching a show.", "it's certain that John is reading a book", "yes"),
    ("box.toR.valid", "¬□p → □q, ¬□q ⊢ □p",
     "If it's uncertain whether Jane is watching a show, then it's certain that John is reading a book.",
     "It's uncertain whether John is reading a book.", "it's certain that Jane is watching a show", "yes"),
    ("dia.orL.valid", "◇p ∨ ◇q, ¬◇p ⊢ ◇q",
     "It's possible that Jane is watching a show or it's possible that John is reading a book.",
     "It's impossible that Jane is watching a show.", "it's possible that John is reading a book", "yes"),
    ("dia.orR.valid", "◇p ∨ ◇q, ¬◇q ⊢ ◇p",
     "It's possible that Jane is watching a show or it's possible that John is reading a book.",
     "It's impossible that John is reading a book.", "it's possible that Jane is watching a show", "yes"),
    ("dia.toL.valid", "¬◇p → ◇q, ¬◇p ⊢ ◇q",
     "If it's impossible that Jane is watching a show, then it's possible that John is reading a book.",
     "It's impossible that Jane is watching a show.", "it's possible that John is reading a book", "yes"),
    ("dia.toR.valid", "¬◇p → ◇q, ¬◇q ⊢ ◇p",
     "If it's impossible that Jane is watching a show, then it's possible that John is reading a book.",
     "It's impossible that John is reading a book.", "it's possible that Jane is watching a show", "yes"),
    ("none.orL.fallacy", "p ∨ q, q ⊢ ¬p", f"{J} or {N}.", f"{N}.", Jn, "no"),
    ("none.orR.fallacy", "p ∨ q, p ⊢ ¬q", f"{J} or {N}.", f"{J}.", Nn, "no"),
    ("none.toL.fallacy", "¬p → q, q ⊢ ¬p", f"If {Jn}, then {N}.", f"{N}.", Jn, "no"),
    ("none.toR.fallacy", "¬p → q, p ⊢ ¬q", f"If {Jn}, then {N}.", f"{J}.", Nn, "no"),
    ("box.orL.fallacy", "□p ∨ □q, □q ⊢ ¬□p",
     "It's certain that Jane is watching a show or it's certain that John is reading a book.",
     "It's certain that John is reading a book.", "it's uncertain whether Jane is watching a show", "no"),
    ("box.orR.fallacy", "□p ∨ □q, □p ⊢ ¬□q",
     "It's certain that Jane is watching a show or it's certain that John is reading a book.",
     "It's certain that Jane is watching a show.", "it's uncertain whether John is reading a book", "no"),
    ("box.toL.fallacy", "¬□p → □q, □q ⊢ ¬□p",
     "If it's uncertain whether Jane is watching a show, then it's certain that John is reading a book.",
     "It's certain that John is reading a book.", "it's uncertain whether Jane is watching a show", "no"),
    ("box.toR.fallacy", "¬□p → □q, □p ⊢ ¬□q",
     "If it's uncertain whether Jane is watching a show, then it's certain that John is reading a book.",
     "It's certain that Jane is watching a show.", "it's uncertain whether John is reading a book", "no"),
    ("dia.orL.fallacy", "◇p ∨ ◇q, ◇q ⊢ ¬◇p",
     "It's possible that Jane is watching a show or it's possible that John is reading a book.",
     "It's possible that John is reading a book.", "it's impossible that Jane is watching a show", "no"),
    ("dia.orR.fallacy", "◇p ∨ ◇q, ◇p ⊢ ¬◇q",
     "It's possible that Jane is watching a show or it's possible that John is reading a book.",
     "It's possible that Jane is watching a show.", "it's impossible that John is reading a book", "no"),
    ("dia.toL.fallacy", "¬◇p → ◇q, ◇q ⊢ ¬◇p",
     "If it's impossible that Jane is watching a show, then it's possible that John is reading a book.",
     "It's possible that John is reading a book.", "it's impossible that Jane is watching a show", "no"),
    ("dia.toR.fallacy", "¬◇p → ◇q, ◇p ⊢ ¬◇q",
     "If it's impossible that Jane is watching a show, then it's possible that John is reading a book.",
     "It's possible that Jane is watching a show.", "it's impossible that John is reading a book", "no"),
]


def _items():
    return {v.template.form_id: render_item(v, SPEC) for v in verdicts("modal-syllogisms", "S5")}


def test_there_are_24_distinct_forms_in_table_order():
    forms = [v.template.form_id for v in verdicts("modal-syllogisms", "S5")]
    assert forms == [row[0] for row in TABLE_A1]


@pytest.mark.parametrize("form_id,logical,first,second,conclusion,gold", TABLE_A1, ids=[r[0] for r in TABLE_A1])
def test_item_matches_table_a1(form_id, logical, first, second, conclusion, gold):
    item = _items()[form_id]
    assert item.logical_form == logical
    assert item.premises == (first, second)
    assert item.question == f"Can we infer that {conclusion}?"
    assert item.prompt == (
        "Consider the following statements:\n"
        f"{first}\n{second}\n"
        f"Question: Based on these statements, can we infer that {conclusion}?\n"
        "Answer:"
    )
    assert item.gold_answer == gold
    assert item.checker_disagrees is False  # every 003 form agrees with the S5 checker


@pytest.mark.parametrize("system", ["K", "T", "S4", "S5"])
def test_checker_agrees_with_all_24_templates_in_every_system(system):
    assert [v.gold_answer for v in verdicts("modal-syllogisms", system)] == [row[5] for row in TABLE_A1]


def test_b3_exact_prompt():
    item = _items()["none.orL.valid"]
    assert item.prompt == (
        "Consider the following statements:\nJane is watching a show or John is reading a book.\n"
        "Jane isn't watching a show.\nQuestion: Based on these statements, can we infer that John is "
        "reading a book?\nAnswer:"
    )
