"""Practice never shares a logical form with the tested items (issue 16): every design's default set,
the normal forms the rule compares, and the refusal to open a study whose practice would."""
from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from designs.modal.items import items_generate

from experiments import services
from experiments import design_registry as registry
from designs.paired import dual_sided, rulebreakers
from logic.checker import entails
from designs.modal.forms import DESIGNS, templates_for
from logic.parser import parse_sequent
from designs.multiple_choice.items import DESIGN as MULTIPLE_CHOICE
from experiments.models import StudyStatus
from experiments.participation import practice
from experiments.models.human_arm import validate_practice
from experiments.participation.services import human_arm_ensure
from tests.factories import ItemFactory, StudyFactory, review_consent

EVERY_DESIGN = sorted({*DESIGNS, rulebreakers.DESIGN, dual_sided.DESIGN, MULTIPLE_CHOICE, "csv-import"})
assert EVERY_DESIGN == [d.name for d in registry.all_designs()]
MODUS_PONENS = {"premises": ["If Mia isn't painting a fence, then Leo is washing a car.", "Mia isn't painting a fence."],
                "question": "Can we infer that Leo is washing a car?", "answer": "yes", "logical_form": "¬p → q, ¬p ⊢ q"}


def test_every_design_has_a_default_practice_set():
    assert all(registry.get(name).practice() for name in EVERY_DESIGN)


@pytest.mark.parametrize("design", EVERY_DESIGN)
def test_no_default_practice_question_shares_a_form_with_any_tested_item(design):
    defaults = registry.get(design)
    questions = defaults.practice()
    assert questions and all(q.get("logical_form") for q in questions)  # every default states its form
    tested = defaults.tested_forms() if defaults.tested_forms else ()
    assert practice.shared_forms(questions, tested) == []
    # nor with a form any other design tests (a bank's own forms are checked when its study opens)
    assert not practice.normal_forms(q["logical_form"] for q in questions) & practice.all_tested_forms()
    validate_practice(questions)


@pytest.mark.parametrize("design", sorted(DESIGNS))
def test_the_tested_forms_are_the_designs_templates(design):
    declared = practice.normal_forms(registry.get(design).tested_forms())
    templates = templates_for(design)
    assert len(declared) == len({(t.premises, t.conclusion) for t in templates})


def test_modus_ponens_the_old_practice_form_counts_as_tested():
    assert practice.normal_form("¬p → q, ¬p ⊢ q") in practice.all_tested_forms()


@pytest.mark.parametrize("design", EVERY_DESIGN)
def test_each_default_answer_is_the_checkers(design):
    for question in registry.get(design).practice():
        sequent = parse_sequent(question["logical_form"])
        for consequence in ("local", "global"):
            valid = entails(sequent.premises, sequent.conclusion, "K", consequence).valid
            if "options" in question:  # four options: the right one is the conclusion that follows
                assert valid
            else:
                assert question["answer"] == ("yes" if valid else "no"), question


@pytest.mark.parametrize("design, statements", [
    ("modal-syllogisms", 2), ("modal-distribution", 2), ("necessitation", 1), ("rulebreakers", 2), ("dual-sided", 1),
])
def test_the_defaults_are_written_like_the_designs_items(design, statements):
    questions = registry.get(design).practice()
    assert all(len(q["premises"]) == statements for q in questions)
    if design in DESIGNS:
        assert {len(t.premises) for t in templates_for(design)} == {statements}
        assert all(q["question"].startswith("Can we infer that ") for q in questions)
    if design == "rulebreakers":
        assert all(q["question"].startswith("Conclusion: ") and q["question"].endswith(
            "Does the Conclusion follow from the Premises?") for q in questions)
    if design == "dual-sided":
        assert all(q["premises"][0].startswith("If ") and q["question"] == dual_sided.TEMPLATES[3][0] for q in questions)
    assert {q["answer"] for q in questions} == {"yes", "no"}  # one of each key


def test_normal_forms_ignore_atom_names_premise_order_and_capitals():
    assert practice.normal_form("¬q, p ∨ q ⊢ p") == practice.normal_form("r ∨ s, ¬s ⊢ r") == "p ∨ q, ¬q ⊢ p"
    assert practice.normal_form("P → ¬Q, Q ⊢ ¬P") == practice.normal_form("a -> ~b, b |- ~a")
    assert practice.normal_form("p ∧ q ⊢ q") != practice.normal_form("p ∧ q ⊢ p")  # a different rule
    assert practice.shared_forms([MODUS_PONENS, {"premises": ["x"], "question": "y", "answer": "no"}],
                                 ["¬p → q, ¬p ⊢ q"]) == [(1, "¬p → q, ¬p ⊢ q")]


@pytest.mark.django_db
@pytest.mark.parametrize("design, statements", [("necessitation", 1), ("modal-syllogisms", 2)])
def test_a_new_human_arm_practises_on_its_designs_set(design, statements):
    arm = human_arm_ensure(study=StudyFactory(design=design))
    assert arm.practice == practice.default_for(design)
    assert {len(q["premises"]) for q in arm.practice} == {statements}


@pytest.mark.django_db
def test_a_study_whose_practice_shares_a_tested_form_does_not_open():
    study = StudyFactory(design="modal-syllogisms")
    items_generate(study=study, design="modal-syllogisms", interpretations=24, seed=0)
    arm = review_consent(study)
    arm.practice = [practice.default_for("modal-syllogisms")[0], MODUS_PONENS]
    arm.save()
    with pytest.raises(ValidationError, match=r"Practice question\(s\) #2 \(¬p → q, ¬p ⊢ q\) share a logical form"):
        services.study_transition(study=study, to=StudyStatus.OPEN)
    arm.practice = practice.default_for("modal-syllogisms")
    arm.save()
    services.study_transition(study=study, to=StudyStatus.OPEN)


@pytest.mark.django_db
def test_a_banks_own_forms_are_checked_when_it_opens():
    study = StudyFactory(design="csv-import")
    ItemFactory(study=study, logical_form="p ∧ q ⊢ q")  # the bank tests conjunction elimination itself
    arm = review_consent(study)
    assert arm.practice == practice.default_for("csv-import")
    arm.practice = practice.default_for("necessitation")  # its first question is p ∧ q ⊢ q
    arm.save()
    with pytest.raises(ValidationError, match="#1"):
        services.study_transition(study=study, to=StudyStatus.OPEN)


def test_a_practice_questions_logical_form_must_parse():
    with pytest.raises(ValidationError, match="cannot be parsed"):
        validate_practice([{**MODUS_PONENS, "logical_form": "p ⊢"}])
    with pytest.raises(ValidationError, match="must be a sequent"):
        validate_practice([{**MODUS_PONENS, "logical_form": 3}])
    validate_practice([{k: v for k, v in MODUS_PONENS.items() if k != "logical_form"}])  # a form is optional
