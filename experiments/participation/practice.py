"""Practice questions: each design's default set, and the rule that practice shares no logical form
with the items the study tests.

Practice trains the keys and the page, not the reasoning being measured. Before issue 16 every study
practised modus ponens with feedback — the form whose human accuracy is 003's headline result (§5,
Table 1) — so the practice told participants the answer to a tested form. The defaults now use forms
no design tests: conjunction elimination ("p and q, so q?" → Yes), disjunction introduction, and an
obvious non sequitur ("p, q, so r?" → No), written in the style of the design's own items (its
wording functions, its question, its number of statements).

Every default practice question carries its logical form (``logical_form``, a sequent), so the rule
is checkable: ``shared_forms`` compares normalised forms (atoms renamed in order of first appearance,
premises in any order), a test runs it over every design's defaults, and a study cannot open while a
practice question shares a form with one of its items (experiments/participation/readiness.py).
Practice stays a per-study option: HumanArm.practice is the list (empty = no practice), editable in
the admin; researcher-written questions without a logical form are not checked.

Pure Python: no Django imports; the designs' modules are imported only when a set is built.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from itertools import permutations

from studyserver.registry import Registry

from ..logic.formula import Atom, Box, Dia, Formula, Not
from ..logic.parser import ParseError, Sequent, parse_sequent

YES_NO_DEFAULT = "modal-syllogisms"  # designs without an entry practise like 003's syllogisms


# --------------------------------------------------------------------------- normal forms


def _atoms_in_order(formulas: Iterable[Formula]) -> list[str]:
    seen: list[str] = []

    def walk(f: Formula) -> None:
        if isinstance(f, Atom):
            if f.name not in seen:
                seen.append(f.name)
        elif isinstance(f, (Not, Box, Dia)):
            walk(f.sub)
        else:
            walk(f.left)
            walk(f.right)

    for formula in formulas:
        walk(formula)
    return seen


def _renamed(f: Formula, names: dict[str, str]) -> Formula:
    if isinstance(f, Atom):
        return Atom(names[f.name])
    if isinstance(f, (Not, Box, Dia)):
        return type(f)(_renamed(f.sub, names))
    return type(f)(_renamed(f.left, names), _renamed(f.right, names))


_CANONICAL = ("p", "q", "r", "s", "t", "u")


def normal_form(text: str) -> str:
    """The argument form of a sequent, whatever its atoms are called and its premises' order:
    "¬q, p ∨ q ⊢ p" and "P ∨ Q, ¬Q ⊢ P" both give "p ∨ q, ¬q ⊢ p". Raises ParseError."""
    sequent = parse_sequent(text.lower())  # RULEBREAKERS writes its forms with capital P and Q
    orders = permutations(sequent.premises) if len(sequent.premises) <= 4 else [sequent.premises]
    best = None
    for premises in orders:
        order = _atoms_in_order([*premises, sequent.conclusion])
        names = {name: (_CANONICAL[i] if i < len(_CANONICAL) else f"p{i}") for i, name in enumerate(order)}
        text = Sequent(tuple(_renamed(p, names) for p in premises), _renamed(sequent.conclusion, names)).to_unicode()
        best = text if best is None or text < best else best
    return best


def normal_forms(texts: Iterable[str]) -> frozenset[str]:
    """The normal forms of the texts that parse (others are skipped: they state no checkable form)."""
    out = set()
    for text in texts:
        try:
            out.add(normal_form(text))
        except (ParseError, ValueError):
            continue
    return frozenset(out)


def shared_forms(practice: Iterable[dict], tested: Iterable[str]) -> list[tuple[int, str]]:
    """(1-based number, normal form) of each practice question whose logical form is a tested one."""
    tested_forms = normal_forms(tested)
    shared = []
    for n, question in enumerate(practice, 1):
        form = question.get("logical_form") if isinstance(question, dict) else None
        if form and normal_forms([form]) & tested_forms:
            shared.append((n, normal_form(form)))
    return shared


# --------------------------------------------------------------------------- the registry


@dataclass(frozen=True)
class PracticeDefaults:
    design: str
    practice: Callable[[], list[dict]]
    # The logical forms the design tests, as sequents; None when they come with the data (a CSV bank,
    # a multiple-choice bank): then the study's own items say, when it opens.
    tested_forms: Callable[[], tuple[str, ...]] | None


PRACTICE: Registry[PracticeDefaults] = Registry("practice set for design")


def register(*designs: str, tested_forms: Callable[[], tuple[str, ...]] | None = None):
    """Register a design's default practice questions; a design registered twice raises."""
    def wrap(build: Callable[[], list[dict]]):
        for design in designs:
            PRACTICE.add(design, PracticeDefaults(design, build, tested_forms))
        return build
    return wrap


def defaults_for(design: str) -> PracticeDefaults:
    return PRACTICE.get(design) or PRACTICE[YES_NO_DEFAULT]


def default_for(design: str) -> list[dict]:
    """A fresh copy of the design's default practice questions (the human arm's initial value)."""
    return defaults_for(design).practice()


# --------------------------------------------------------------------------- 003's designs


def _template_forms(design: str) -> Callable[[], tuple[str, ...]]:
    def forms() -> tuple[str, ...]:
        from ..logic.designs import templates_for

        return tuple(Sequent(t.premises, t.conclusion).to_unicode() for t in templates_for(design))
    return forms


def _worded(sequent: str, meaning: dict, answer: str) -> dict:
    """A practice question in 003's wording (Appendix B.2): one sentence per premise, then
    "Can we infer that …?" — the wording functions the design's own items are written with."""
    from ..logic import wording

    parsed = parse_sequent(sequent)
    return {
        "premises": [wording.sentence(p, meaning) for p in parsed.premises],
        "question": wording.question(parsed.conclusion, meaning),
        "answer": answer,
        "logical_form": parsed.to_unicode(),
    }


def _meaning() -> dict:
    from ..logic.wording import Proposition

    return {
        "p": Proposition("Mia", "painting a fence"), "q": Proposition("Leo", "washing a car"),
        "r": Proposition("Sam", "cooking dinner"), "s": Proposition("Kim", "reading a book"),
    }


@register("modal-syllogisms", tested_forms=_template_forms("modal-syllogisms"))
def two_statement_practice() -> list[dict]:
    """Two statements and a question, like the 24 syllogisms: conjunction elimination (Yes) and a
    conclusion about someone the statements do not mention (No)."""
    meaning = _meaning()
    return [
        _worded("p ∧ q, r ⊢ q", meaning, "yes"),
        _worded("r, s ⊢ q", meaning, "no"),
    ]


register("modal-distribution", tested_forms=_template_forms("modal-distribution"))(two_statement_practice)
register("csv-import")(two_statement_practice)  # a bank's forms are its rows': checked when the study opens


@register("necessitation", tested_forms=_template_forms("necessitation"))
def one_statement_practice() -> list[dict]:
    """One statement and a question, like Appendix C.1's necessitation items ({φ} ⊢ □φ, ◇φ, φ)."""
    meaning = _meaning()
    return [
        _worded("p ∧ q ⊢ q", meaning, "yes"),
        _worded("r ∧ s ⊢ q", meaning, "no"),
    ]


# --------------------------------------------------------------------------- the paired designs


def _rulebreaker_forms() -> tuple[str, ...]:
    from ..logic.rulebreakers import LOGICAL_FORMS

    return tuple(LOGICAL_FORMS.values())


@register("rulebreakers", tested_forms=_rulebreaker_forms)
def rulebreakers_practice() -> list[dict]:
    """Seed 000's format (premises, then "Conclusion: … Does the Conclusion follow from the
    Premises? Answer Yes or No only."), with neither modus tollens nor disjunctive syllogism and no
    fact that clashes with what everyone knows."""
    from ..logic.rulebreakers import ANSWER_OPTIONS, QUESTIONS

    ask = f"{QUESTIONS[0][1]} {ANSWER_OPTIONS[0][1]}"
    return [
        {"premises": ["Anna has been to Lisbon and she is good at chess.", "Tom will be visiting Oslo."],
         "question": f"Conclusion: Anna is good at chess. {ask}", "answer": "yes", "logical_form": "p ∧ q, r ⊢ q"},
        {"premises": ["Anna has been to Lisbon.", "Tom will be visiting Oslo."],
         "question": f"Conclusion: Anna owns a piano. {ask}", "answer": "no", "logical_form": "p, q ⊢ r"},
    ]


# Seed 004 probes a rule as stated (premise ⊢ conclusion, gold Yes) and with its conclusion negated
# (premise ⊢ ¬conclusion, gold No); premise and conclusion are whole clauses, so as argument forms:
DUAL_SIDED_FORMS = ("p ⊢ q", "p ⊢ ¬q")


@register("dual-sided", tested_forms=lambda: DUAL_SIDED_FORMS)
def dual_sided_practice() -> list[dict]:
    """Seed 004's format (one "If …, then …." rule and Table 9's template-3 question), with rules
    that hold or fail by their words alone, not by what one knows about the world."""
    from ..logic.dual_sided import TEMPLATES

    ask = TEMPLATES[3][0]
    return [
        {"premises": ["If Person X is holding a cup and a pen, then Person X is holding a pen."],
         "question": ask, "answer": "yes", "logical_form": "p ∧ q ⊢ q"},
        {"premises": ["If Person X is holding a cup and a pen, then Person X is not holding a pen."],
         "question": ask, "answer": "no", "logical_form": "p ∧ q ⊢ ¬q"},
    ]


@register("multiple-choice")
def multiple_choice_practice() -> list[dict]:
    """Four-option questions (seed 001): the one conclusion that follows, by conjunction elimination
    and by disjunction introduction (a bank's own forms are checked when the study opens)."""
    return [
        {
            "premises": ["Mia is painting a fence and Leo is washing a car."],
            "question": "Which conclusion follows from the statements?",
            "options": ["Leo isn't washing a car.", "Leo is washing a car.", "Mia isn't painting a fence.",
                        "Sam is cooking dinner."],
            "answer": "B", "logical_form": "p ∧ q ⊢ q",
        },
        {
            "premises": ["Sam is cooking dinner."],
            "question": "Which conclusion follows from the statements?",
            "options": ["Sam isn't cooking dinner.", "Kim is reading a book.",
                        "Sam is cooking dinner or Kim is reading a book.", "Kim isn't reading a book."],
            "answer": "C", "logical_form": "p ⊢ p ∨ q",
        },
    ]


def all_tested_forms() -> frozenset[str]:
    """Every form some design declares that it tests (what a bank's practice is compared with too)."""
    return frozenset().union(*(normal_forms(d.tested_forms()) for d in PRACTICE.values() if d.tested_forms))

