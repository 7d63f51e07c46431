"""Storing the paired designs (issue 6): generate_items rulebreakers, import_items dual-sided,
perturbations (generate_items --perturb, perturb_items), validation before anything is written."""
from __future__ import annotations

from collections import Counter

import pytest
from django.core.exceptions import ValidationError
from django.core.management import call_command
from django.core.management.base import CommandError

from experiments.items import pairs as paired_items
from designs.paired import rulebreakers
from experiments.models import Item, Study

pytestmark = pytest.mark.django_db

BANK = """rule_id,premise,conclusion,flipped_conclusion,length,domain
r1,Person X is allergic to Substance Z and Food Y contains Substance Z,Person X cannot eat Food Y,Person X can eat Food Y,2,food
r2,Animal A is a mammal,Animal A is warm-blooded,Animal A is not warm-blooded,1,biology
r3,Metal M is heated,Metal M expands,Metal M does not expand,1,physics
"""


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_generate_rulebreakers_stores_one_item_per_member_and_variant(capsys):
    call_command("generate_items", "rulebreakers", "rb", "--pairs", "12", "--seed", "3")
    study = Study.objects.get(slug="rb")
    assert study.design == "rulebreakers" and study.settings["human_variant"] == "follow/yes-no"
    assert study.settings["paired_designs"]["rulebreakers"]["pairs"] == 12
    items = list(study.items.all())
    assert len(items) == 12 * 2 * 10
    assert "Generated 12 pairs" in capsys.readouterr().out
    by_pair = Counter((i.pair_id, i.variant) for i in items)
    assert len({i.pair_id for i in items}) == 12 and set(by_pair.values()) == {2}
    for item in items:
        assert item.gold_answer == ("no" if item.pair_role == "rulebreaker" else "yes")
        assert item.code == f"{item.attributes['member']}#{item.variant}"
        if item.variant.endswith("true-false"):
            assert item.answer_words == {"yes": "True", "no": "False"}
            assert item.prompt.endswith("Answer True or False only.\nAnswer:")
        else:
            assert item.answer_words == {} and item.prompt.endswith("Answer Yes or No only.\nAnswer:")
        assert "Answer" not in item.question  # participants read the question, not the model's instruction
        # people read the premises, then the conclusion with the question
        assert item.question.startswith(f"Conclusion: {item.attributes['conclusion']} ")
    # the same pair in its two roles differs only in the country or type
    pair = [i for i in items if i.pair_id == items[0].pair_id and i.variant == "follow/yes-no"]
    rb, nrb = sorted(pair, key=lambda i: i.pair_role != "rulebreaker")
    assert rb.attributes["whole"] == rb.attributes["true_whole"] != nrb.attributes["whole"]
    assert rb.attributes["part"] == nrb.attributes["part"]
    # the stored items are exactly what the pure generator renders
    expected = rulebreakers.generate_rulebreakers(seed=3, pairs=12)
    assert {f"{p.code}#{v.variant_id}": v.text for p in expected for v in p.variants} == {i.code: i.prompt for i in items}


def test_variant_and_subset_options_and_refusals():
    call_command("generate_items", "rulebreakers", "--study", "rb2", "--pairs", "6", "--rules", "DS",
                 "--entity-kinds", "categorical", "--variants", "entail/true-false", "support/yes-no")
    study = Study.objects.get(slug="rb2")
    assert set(study.items.values_list("variant", flat=True)) == {"entail/true-false", "support/yes-no"}
    assert study.settings["human_variant"] == "support/yes-no"  # people answer with Yes/No keys
    assert {i.attributes["rule"] for i in study.items.all()} == {"DS"}
    assert {i.attributes["entity_kind"] for i in study.items.all()} == {"categorical"}
    with pytest.raises(CommandError, match="already has 24 items of design 'rulebreakers'"):
        call_command("generate_items", "rulebreakers", "rb2", "--pairs", "6")
    call_command("generate_items", "rulebreakers", "rb2", "--pairs", "5", "--replace", "--variants", "follow/yes-no")
    assert study.items.count() == 10
    with pytest.raises(CommandError, match="Unknown prompt variant"):
        call_command("generate_items", "rulebreakers", "rb3", "--pairs", "5", "--variants", "follow/maybe")
    with pytest.raises(CommandError, match="rules must be"):
        call_command("generate_items", "rulebreakers", "rb3", "--rules", "MP")
    assert not Study.objects.filter(slug="rb3").exists()  # a refused generation leaves no study behind


def test_badly_paired_items_are_refused_whole_with_every_problem_named():
    study = Study.objects.create(slug="bad", title="bad", design="rulebreakers")
    items = list(rulebreakers.generate_rulebreakers(seed=0, pairs=3))
    broken = [items[0], items[2], items[3], items[3], items[4]]  # pair 0 lacks a member, one item twice
    with pytest.raises(ValidationError) as error:
        paired_items.paired_items_store(study=study, items=broken)
    message = " ".join(error.value.messages)
    assert "has 0 'non-rulebreaker' members" in message and "has 2 'non-rulebreaker' members" in message
    assert f"item {items[3].code} appears twice" in message
    assert study.items.count() == 0
    paired_items.paired_items_store(study=study, items=items, variants=["follow/yes-no"])
    with pytest.raises(ValidationError, match="already has 6 of these items"):
        paired_items.paired_items_store(study=study, items=items, variants=["follow/yes-no"])
    assert study.items.count() == 6


def test_perturbations_link_every_item_to_its_original_of_the_same_variant(tmp_path, capsys):
    call_command("generate_items", "rulebreakers", "rbp", "--pairs", "8", "--variants", "follow/yes-no",
                 "follow/true-false", "--perturb", "names")
    study = Study.objects.get(slug="rbp")
    real = study.items.filter(condition="real")
    names = study.items.filter(condition="names").select_related("original")
    assert real.count() == names.count() == 32
    for item in names:
        original = item.original
        assert (original.condition, original.variant, original.pair_role) == ("real", item.variant, item.pair_role)
        assert item.attributes["name"] != original.attributes["name"]
        assert item.attributes["part"] == original.attributes["part"] and item.gold_answer == original.gold_answer
        assert item.pair_id == original.pair_id.replace(":real:", ":names:")
    call_command("perturb_items", "rbp", "entities", "--seed", "2")
    entities = study.items.filter(condition="entities").select_related("original")
    assert entities.count() == 32 and all(i.attributes["part"] != i.original.attributes["part"] for i in entities)
    with pytest.raises(CommandError, match="already has 'names' items"):
        call_command("perturb_items", "rbp", "names")
    mapping = write(tmp_path, "map.csv", "from,to\nAfrica,Asia\n")
    with pytest.raises(CommandError, match="changes no item"):
        call_command("perturb_items", "rbp", f"mapping:{mapping}", "--label", "custom")
    assert study.items.count() == 96


def test_import_dual_sided_rule_bank(tmp_path, capsys):
    call_command("import_items", "dual-sided", write(tmp_path, "bank.csv", BANK), "ds", "--templates", "1", "3", "5")
    study = Study.objects.get(slug="ds")
    assert study.design == "dual-sided" and study.settings["human_variant"] == "template-3"
    assert study.items.count() == 3 * 2 * 3
    original = study.items.get(code="dual-sided:real:r1:original#template-1")
    flipped = study.items.get(code="dual-sided:real:r1:flipped#template-1")
    assert (original.gold_answer, flipped.gold_answer) == ("yes", "no")
    assert original.pair_id == flipped.pair_id == "dual-sided:real:r1"
    assert original.answer_words == {"yes": "True", "no": "False"}
    assert study.items.get(code="dual-sided:real:r1:original#template-3").answer_words == {}
    assert original.attributes["domain"] == "food" and original.attributes["length"] == "2"
    assert flipped.premises == ["If Person X is allergic to Substance Z and Food Y contains Substance Z, then Person X can eat Food Y."]
    assert "Imported 3 rules" in capsys.readouterr().out
    # a second bank may not reuse a rule id
    with pytest.raises(CommandError, match="row 2, column 'rule_id': 'r1' already exists in this study"):
        call_command("import_items", "dual-sided", write(tmp_path, "again.csv", BANK), "--study", "ds")
    # a mapping perturbation of the stored rules
    mapping = write(tmp_path, "map.csv", "from,to\nPerson X,Person Q\nFood Y,Food W\n")
    call_command("perturb_items", "ds", f"mapping:{mapping}")
    mapped = study.items.filter(condition="mapping").select_related("original")
    assert mapped.count() == 6  # only r1 uses the words: 2 members × 3 templates
    for item in mapped:
        assert "Person Q" in item.prompt and item.original.prompt == item.prompt.replace("Person Q", "Person X").replace("Food W", "Food Y")
    with pytest.raises(CommandError, match="only a custom mapping"):
        call_command("perturb_items", "ds", "names", "--label", "names2")


def test_rule_bank_errors_name_row_and_column_and_write_nothing(tmp_path):
    bad = ("rule_id,premise,conclusion,flipped_conclusion,length\n"
           "r1,If it rains,the ground is wet,the ground is wet,30\n"
           "r2,,x,y,1\n")
    with pytest.raises(CommandError) as error:
        call_command("import_items", "dual-sided", write(tmp_path, "bad.csv", bad), "ds-bad")
    text = str(error.value)
    for expected in ("row 2, column 'premise': starts with 'If'", "row 2, column 'flipped_conclusion'",
                     "row 2, column 'length': '30'", "row 3, column 'premise': is empty", "nothing was imported"):
        assert expected in text
    assert not Study.objects.filter(slug="ds-bad").exists() and not Item.objects.exists()
    with pytest.raises(CommandError, match="templates must be distinct"):
        call_command("import_items", "dual-sided", write(tmp_path, "b.csv", BANK), "ds-bad", "--templates", "6")
    with pytest.raises(CommandError, match="Name one study"):
        call_command("import_items", "dual-sided", write(tmp_path, "c.csv", BANK))


def test_modal_designs_take_a_names_perturbation_too():
    call_command("generate_items", "modal-syllogisms", "--study", "m", "--interpretations", "3", "--seed", "0")
    call_command("perturb_items", "m", "names", "--seed", "1")
    study = Study.objects.get(slug="m")
    perturbed = study.items.filter(condition="names").select_related("original", "interpretation")
    assert perturbed.count() == 72
    for item in perturbed:
        assert item.original.form_id == item.form_id and item.original.gold_answer == item.gold_answer
        assert item.interpretation.p_predicate == item.original.interpretation.p_predicate
        assert item.interpretation.p_subject != item.original.interpretation.p_subject
