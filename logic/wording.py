"""English wording of formulas, following 003 Appendix B.2 and Table A1.

p := "Jane is watching a show":  ¬p "Jane isn't watching a show"; □p "it's certain that …";
¬□p "it's uncertain whether …"; ◇p "it's possible that …"; ¬◇p "it's impossible that …";
φ ∨ ψ "X or Y"; φ → ψ "if X, then Y". Sentences start with a capital and end with a full stop.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from .formula import And, Atom, Box, Dia, Formula, Implies, Not, Or

PROMPT_HEAD = "Consider the following statements:"
PROMPT_QUESTION = "Question: Based on these statements, can we infer that {conclusion}?"
PROMPT_TAIL = "Answer:"


@dataclass(frozen=True)
class Proposition:
    """The meaning of one propositional variable: a subject and a present-progressive predicate."""

    subject: str
    predicate: str

    def affirmed(self) -> str:
        return f"{self.subject} is {self.predicate}"

    def denied(self) -> str:
        return f"{self.subject} isn't {self.predicate}"


Meaning = Mapping[str, Proposition]


def clause(formula: Formula, meaning: Meaning) -> str:
    """The formula as a lower-case clause (names keep their capitals)."""
    if isinstance(formula, Atom):
        return _prop(formula, meaning).affirmed()
    if isinstance(formula, Not):
        inner = formula.sub
        if isinstance(inner, Atom):
            return _prop(inner, meaning).denied()
        if isinstance(inner, Box):
            return f"it's uncertain whether {clause(inner.sub, meaning)}"
        if isinstance(inner, Dia):
            return f"it's impossible that {clause(inner.sub, meaning)}"
        return f"it's not the case that {clause(inner, meaning)}"
    if isinstance(formula, Box):
        return f"it's certain that {clause(formula.sub, meaning)}"
    if isinstance(formula, Dia):
        return f"it's possible that {clause(formula.sub, meaning)}"
    if isinstance(formula, Or):
        return f"{clause(formula.left, meaning)} or {clause(formula.right, meaning)}"
    if isinstance(formula, And):
        return f"{clause(formula.left, meaning)} and {clause(formula.right, meaning)}"
    if isinstance(formula, Implies):
        return f"if {clause(formula.left, meaning)}, then {clause(formula.right, meaning)}"
    raise TypeError(f"not a formula: {formula!r}")


def _prop(atom: Atom, meaning: Meaning) -> Proposition:
    try:
        return meaning[atom.name]
    except KeyError:
        raise ValueError(f"no interpretation given for variable {atom.name!r}") from None


def sentence(formula: Formula, meaning: Meaning) -> str:
    text = clause(formula, meaning)
    return text[0].upper() + text[1:] + "."


def question(conclusion: Formula, meaning: Meaning) -> str:
    """The question as Table A1 shows it to a reader: "Can we infer that …?"."""
    return f"Can we infer that {clause(conclusion, meaning)}?"


def prompt(premises: Sequence[Formula], conclusion: Formula, meaning: Meaning) -> str:
    """The exact prompt of 003 Appendix B.3."""
    return prompt_from_text([sentence(p, meaning) for p in premises], clause(conclusion, meaning))


def prompt_from_text(premise_sentences: Sequence[str], conclusion_clause: str) -> str:
    lines = [PROMPT_HEAD, *premise_sentences]
    lines.append(PROMPT_QUESTION.format(conclusion=conclusion_clause))
    lines.append(PROMPT_TAIL)
    return "\n".join(lines)
