"""Generating designs into studies: counts, determinism, checker gold answers, disagreements."""
from __future__ import annotations

import pytest
from django.db import models
from django.core.exceptions import ValidationError

from designs.modal.items import items_generate
from logic.checker import entails
from logic.parser import parse_sequent
from experiments.models import Interpretation, Item
from tests.factories import StudyFactory

pytestmark = pytest.mark.django_db


def _fingerprint(study, design="modal-syllogisms"):
    return list(
        Item.objects.filter(study=study, design=design)
        .order_by("code")
        .values_list("code", "prompt", "gold_answer", "condition")
    )


def test_counts_forms_and_interpretations():
    study = StudyFactory()
    report = items_generate(study=study, design="modal-syllogisms", interpretations=7, seed=3)
    assert report.items == 24 * 7
    assert Item.objects.filter(study=study).count() == 168
    assert Interpretation.objects.filter(study=study).count() == 7
    per_form = Item.objects.filter(study=study).values_list("form_id", flat=True)
    assert {f: list(per_form).count(f) for f in set(per_form)} == {f: 7 for f in set(per_form)}
    assert len(set(per_form)) == 24
    gold = Item.objects.filter(study=study)
    assert gold.filter(gold_answer="yes").count() == gold.filter(gold_answer="no").count() == 84


def test_interpretations_pair_distinct_names_and_phrases():
    study = StudyFactory()
    items_generate(study=study, design="modal-syllogisms", interpretations=50, seed=1)
    rows = list(Interpretation.objects.filter(study=study))
    assert len({(r.p_subject, r.p_predicate, r.q_subject, r.q_predicate) for r in rows}) == 50
    for r in rows:
        assert r.p_subject != r.q_subject and r.p_predicate != r.q_predicate


def test_same_seed_same_items_other_seed_other_items():
    a, b, c = StudyFactory(), StudyFactory(), StudyFactory()
    for study, seed in ((a, 11), (b, 11), (c, 12)):
        items_generate(study=study, design="modal-syllogisms", interpretations=20, seed=seed)
    assert _fingerprint(a) == _fingerprint(b)
    assert _fingerprint(a) != _fingerprint(c)


@pytest.mark.parametrize("consequence", ["local", "global"])
def test_gold_answer_is_the_checkers_under_the_studys_system_and_relation(consequence):
    study = StudyFactory(logic_system="K")
    items_generate(study=study, design="necessitation", interpretations=3, seed=0, consequence=consequence)
    other = "local" if consequence == "global" else "global"
    for item in Item.objects.filter(study=study):
        sequent = parse_sequent(item.logical_form)
        expected = "yes" if entails(sequent.premises, sequent.conclusion, "K", consequence).valid else "no"
        expected_other = "yes" if entails(sequent.premises, sequent.conclusion, "K", other).valid else "no"
        assert (item.gold_answer, item.gold_other, item.consequence) == (expected, expected_other, consequence)
        assert item.logic_system == "K"
    by_form = dict(Item.objects.filter(study=study).values_list("form_id", "gold_answer").distinct())
    # {p} ⊢ p holds; {p} ⊢ □p holds only globally; without reflexivity {p} ⊢ ◇p fails under both (a dead end).
    box = "yes" if consequence == "global" else "no"
    assert by_form == {"none.necessitation": "yes", "box.necessitation": box, "dia.necessitation": "no"}
    flagged = set(Item.objects.filter(study=study, checker_disagrees=True).values_list("form_id", flat=True))
    assert flagged == ({"dia.necessitation"} if consequence == "global" else {"box.necessitation", "dia.necessitation"})


def test_the_necessitation_design_is_keyed_by_the_papers_global_consequence_by_default():
    study = StudyFactory()
    assert study.consequence == "paper"
    report = items_generate(study=study, design="necessitation", interpretations=2, seed=0)
    box = Item.objects.filter(study=study, form_id="box.necessitation").first()
    assert (box.gold_answer, box.gold_other, box.consequence) == ("yes", "no", "global")
    assert report.disagreements == ()  # the paper's key: every necessitation form is a rule (C.1)
    syllogism = StudyFactory()
    items_generate(study=syllogism, design="modal-syllogisms", interpretations=1, seed=0)
    assert set(Item.objects.filter(study=syllogism).values_list("consequence", flat=True)) == {"local"}
    # 003's syllogisms and Table A3 get the same key under both relations
    assert not Item.objects.filter(study=syllogism).exclude(gold_other=models.F("gold_answer")).exists()


def test_distribution_design_records_the_diamond_theorem_disagreement():
    study = StudyFactory()
    report = items_generate(study=study, design="modal-distribution", interpretations=2, seed=0)
    assert report.items == 14
    assert [v.template.form_id for v in report.disagreements] == ["dia.theorem"]
    spurious = Item.objects.filter(study=study, form_id="box.spurious").first()
    assert spurious.gold_answer == "no" and not spurious.checker_disagrees
    assert spurious.premises[0].startswith("It's certain that if ")


def test_nonsense_mirror_keeps_names_and_forms_and_links_originals():
    study = StudyFactory()
    report = items_generate(
        study=study, design="modal-syllogisms", interpretations=4, seed=5, nonsense=True
    )
    assert report.items == 2 * 24 * 4
    nonsense = Item.objects.filter(study=study, condition="nonsense").select_related("original", "interpretation")
    assert nonsense.count() == 96
    for item in nonsense:
        original = item.original
        assert original is not None and original.condition == "real"
        assert (original.form_id, original.gold_answer) == (item.form_id, item.gold_answer)
        assert item.interpretation.p_subject == original.interpretation.p_subject
        assert item.interpretation.p_predicate != original.interpretation.p_predicate
        assert item.interpretation.original_id == original.interpretation_id


def test_generating_a_design_twice_needs_replace():
    study = StudyFactory()
    items_generate(study=study, design="modal-syllogisms", interpretations=2, seed=0)
    with pytest.raises(ValidationError, match="already has 48 items"):
        items_generate(study=study, design="modal-syllogisms", interpretations=3, seed=0)
    assert Item.objects.filter(study=study).count() == 48
    report = items_generate(
        study=study, design="modal-syllogisms", interpretations=3, seed=0, replace=True
    )
    assert report.replaced == 48 and Item.objects.filter(study=study).count() == 72


def test_unknown_design_is_refused():
    with pytest.raises(ValidationError, match="Unknown design"):
        items_generate(study=StudyFactory(), design="syllogisms", interpretations=2)


def test_the_paper_lexicon_draws_from_003s_200_names_and_204_verb_phrases():
    from designs.modal.lexicon import load_lines, real_lexicon

    full, paper = real_lexicon(), real_lexicon("paper")
    assert (len(full.names), len(full.verb_phrases)) == (336, 283)
    assert (len(paper.names), len(paper.verb_phrases)) == (200, 204)
    assert paper.names == load_lines("paper_names")  # the SSA's top 100 of each sex (issue 35; was names.txt[:200])
    study = StudyFactory()
    items_generate(study=study, design="modal-syllogisms", interpretations=300, seed=3, lexicon="paper")
    names = set(study.interpretations.values_list("p_subject", flat=True)) | set(
        study.interpretations.values_list("q_subject", flat=True))
    phrases = set(study.interpretations.values_list("p_predicate", flat=True)) | set(
        study.interpretations.values_list("q_predicate", flat=True))
    assert names <= set(paper.names) and phrases <= set(paper.verb_phrases)
    study.refresh_from_db()
    assert study.settings["lexicon"] == "paper"
    with pytest.raises(ValidationError, match="Unknown lexicon size"):
        items_generate(study=StudyFactory(), design="modal-syllogisms", interpretations=1, lexicon="huge")
