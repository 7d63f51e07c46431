"""Dual-sided rule probing (seed 004 §3.1, Table 9, Table 10): rule-bank import and paired items."""
from __future__ import annotations

import pytest

from experiments.item_csv import CsvImportError
from designs.paired.dual_sided import dual_sided_items, parse_rule_bank
from logic.pairs import link_pairs

BANK = (
    "rule_id,premise,conclusion,flipped_conclusion,length,structure,polarity,domain\n"
    "allergy,Person X is allergic to Substance Z and Food Y contains Substance Z,"
    "Person X cannot eat Food Y.,Person X can eat Food Y.,2,transitive,negative,need\n"
    "born,Person X died before Object Y was invented,Person X cannot access Object Y,"
    "Person X can access Object Y,1,,negative,accessibility\n"
)


def errors_of(data, **kw):
    with pytest.raises(CsvImportError) as info:
        parse_rule_bank(data, **kw)
    return [str(e) for e in info.value.errors]


def test_rules_are_read_with_their_descriptive_columns():
    allergy, born = parse_rule_bank(BANK.encode("utf-8"))
    assert (allergy.row, allergy.rule_id, born.row) == (2, "allergy", 3)
    assert allergy.conclusion == "Person X cannot eat Food Y"  # the trailing full stop is dropped
    assert allergy.rule_text() == ("If Person X is allergic to Substance Z and Food Y contains Substance Z, "
                                   "then Person X cannot eat Food Y.")
    assert allergy.rule_text(flipped=True).endswith("then Person X can eat Food Y.")
    assert allergy.attributes == {"length": "2", "structure": "transitive", "polarity": "negative", "domain": "need"}
    assert born.attributes["structure"] == ""


def test_table_10_example_gives_an_original_and_a_flipped_item():
    items = dual_sided_items(parse_rule_bank(BANK))
    assert [(i.code, i.role, i.gold_answer) for i in items] == [
        ("dual-sided:real:allergy:original", "original", "yes"),
        ("dual-sided:real:allergy:flipped", "flipped", "no"),
        ("dual-sided:real:born:original", "original", "yes"),
        ("dual-sided:real:born:flipped", "flipped", "no"),
    ]
    original, flipped = items[0], items[1]
    assert original.premises == ("If Person X is allergic to Substance Z and Food Y contains Substance Z, "
                                 "then Person X cannot eat Food Y.",)
    assert flipped.conclusion == "Person X can eat Food Y."
    assert original.attributes == {"rule_id": "allergy", "length": "2", "structure": "transitive",
                                   "polarity": "negative", "domain": "need"}
    pairs = link_pairs(items)
    assert [(p.kind, p.first, p.second) for p in pairs] == [
        ("dual-sided", "dual-sided:real:allergy:original", "dual-sided:real:allergy:flipped"),
        ("dual-sided", "dual-sided:real:born:original", "dual-sided:real:born:flipped"),
    ]


def test_the_five_templates_of_table_9():
    original, flipped = dual_sided_items(parse_rule_bank(BANK))[:2]
    assert [v.variant_id for v in original.variants] == [f"template-{n}" for n in range(1, 6)]
    assert [(v.positive, v.negative) for v in original.variants] == [
        ("True", "False"), ("Right", "Wrong"), ("Yes", "No"), ("Yes", "No"), ("Yes", "No")]
    t1, t2, t3, t4, t5 = (v.text for v in flipped.variants)
    # the rule line as 004 Table 12 prints it ("Rule: If …"; it read "Input rule:" before issue 35)
    assert t1 == ("True or False? Please predict whether the input rule is very likely to be true.\n"
                  "Rule: If Person X is allergic to Substance Z and Food Y contains Substance Z, "
                  "then Person X can eat Food Y.\nAnswer:")
    assert t2.startswith("Right or Wrong? Please predict whether the input rule is valid and correct.\n")
    assert t3.startswith("Yes or No? Please predict whether the premise entails the conclusion.\n")
    assert t4 == ("Premise: Person X is allergic to Substance Z and Food Y contains Substance Z.\n"
                  "Conclusion: Person X can eat Food Y.\n"
                  "Does premise entail conclusion? Please answer Yes or No.\nAnswer:")
    assert t5 == ("Given the observations Person X is allergic to Substance Z and Food Y contains Substance Z, "
                  "can we draw the conclusion Person X can eat Food Y? Please answer Yes or No.\nAnswer:")
    assert (original.prompt, original.question) == (original.variants[0].text, original.variants[0].question)


def test_fewer_templates_and_bad_template_choices():
    rules = parse_rule_bank(BANK)
    item = dual_sided_items(rules, templates=[4, 2])[0]
    assert [v.variant_id for v in item.variants] == ["template-4", "template-2"]
    assert item.prompt.startswith("Premise: ")
    for bad in ([], [6], [1, 1], [0]):
        with pytest.raises(ValueError, match="templates must be distinct numbers from 1 to 5"):
            dual_sided_items(rules, templates=bad)


def test_rule_ids_default_to_row_order():
    rules = parse_rule_bank("premise,conclusion,flipped_conclusion\nA holds,B holds,B fails\n\nC holds,D holds,D fails\n")
    assert [(r.rule_id, r.row) for r in rules] == [("rule-00001", 2), ("rule-00002", 4)]


def test_every_bad_row_is_named_and_nothing_is_returned():
    data = (
        "rule_id,premise,conclusion,flipped_conclusion,length\n"
        "ok,A holds,B holds,B fails,1\n"
        "r2,,B holds,B fails,1\n"
        "r3,If A holds,then B holds,B fails,1\n"
        "r4,A holds,B holds,b  HOLDS.,1\n"
        "r5,A holds,B holds,B fails,many\n"
        "ok,A holds,B holds,B fails,1\n"
        "bad id!,A holds,B holds,B fails,1\n"
        "r8,A holds,B holds\n"
        "old,A holds,B holds,B fails,3\n"
    )
    assert errors_of(data, existing_ids=frozenset({"old"})) == [
        "row 3, column 'premise': is empty",
        "row 4, column 'premise': starts with 'If'; write the condition alone (the templates add 'If … then')",
        "row 4, column 'conclusion': starts with 'then'; write the consequence alone",
        "row 5, column 'flipped_conclusion': is the same as the conclusion; it must negate it",
        "row 6, column 'length': 'many' is not a whole number from 1 to 20",
        "row 7, column 'rule_id': 'ok' repeats row 2",
        "row 8, column 'rule_id': 'bad id!' must be 1–100 letters, digits, '.', '_' or '-', "
        "starting with a letter or digit",
        "row 9: has 3 fields; the header has 5",
        "row 10, column 'rule_id': 'old' already exists in this study",
    ]


@pytest.mark.parametrize("data,expected", [
    (b"", ["row 1: the file is empty"]),
    (b"\xff\xfe premise", ["row 1: the file is not UTF-8 text (on this line, character 1: the byte 0xff, invalid "
                           "start byte); save it as UTF-8 text: in Excel, File › Save As › “CSV UTF-8 (Comma "
                           "delimited) (*.csv)”; in LibreOffice, Text CSV with the character set “Unicode (UTF-8)”"]),
    ("premise,conclusion\nA,B\n", ["row 1, column 'flipped_conclusion': required column is missing"]),
    ("premise,conclusion,flipped_conclusion,Premise\n", ["row 1, column 'premise': column appears more than once"]),
    ("premise,conclusion,flipped_conclusion\n", ["row 2: the file has a header but no rules"]),
    ('premise,conclusion,flipped_conclusion\n"A\nholds",B,C\n', ["row 2, column 'premise': must be on one line"]),
])
def test_file_level_problems(data, expected):
    assert errors_of(data) == expected
