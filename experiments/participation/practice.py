"""Practice questions: the rule that practice shares no logical form with the items the study tests
(each design's default set is its registry entry's: logic/human_defaults.py).

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

Pure Python: no Django imports. The normal form itself is logic's (logic/sequent_forms.py).
"""
from __future__ import annotations

from collections.abc import Iterable

from logic.sequent_forms import normal_form, normal_forms

from .. import design_registry as registry

# --------------------------------------------------------------------------- normal forms


def shared_forms(practice: Iterable[dict], tested: Iterable[str]) -> list[tuple[int, str]]:
    """(1-based number, normal form) of each practice question whose logical form is a tested one."""
    tested_forms = normal_forms(tested)
    shared = []
    for n, question in enumerate(practice, 1):
        form = question.get("logical_form") if isinstance(question, dict) else None
        if form and normal_forms([form]) & tested_forms:
            shared.append((n, normal_form(form)))
    return shared


# --------------------------------------------------------------------------- the designs' sets


def default_for(design: str) -> list[dict]:
    """A fresh copy of the design's default practice questions (the human arm's initial value); each
    design declares its set in the designs registry (logic/human_defaults.py)."""
    return registry.practice_for(design)


def tested_forms(design: str) -> tuple[str, ...] | None:
    """The forms the design declares it tests (None: its items carry their own, a bank's rows)."""
    return registry.tested_forms(design)


def all_tested_forms() -> frozenset[str]:
    """Every form some design declares that it tests (what a bank's practice is compared with too)."""
    return frozenset().union(*(normal_forms(d.tested_forms()) for d in registry.all_designs() if d.tested_forms))
