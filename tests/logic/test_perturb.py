"""Matched-pair perturbations (seed 002): the logic stays, the tokens change, each item is linked."""
from __future__ import annotations

import re
from dataclasses import replace

import pytest

from experiments.item_csv import CsvImportError
from designs.modal import generate
from designs.paired import rulebreakers as rb
from designs.paired.dual_sided import dual_sided_items, parse_rule_bank
from logic.pairs import PairingError, link_pairs, perturbation_links
from designs.paired.perturb_specs import perturb_rulebreakers, perturb_rules
from designs.modal.perturb_specs import perturb_interpretations
from logic.perturb import TokenMapping, parse_mapping_csv
from designs.paired.rulebreakers_data import alternative_cities, capitals, categories, given_names

DESIGN = "modal-syllogisms"


def word_sub(text, old, new):
    return re.sub(rf"(?<!\w){re.escape(old)}(?!\w)", new, text)


# --------------------------------------------------------------------------- 003 interpretations


def test_names_perturbation_of_the_modal_design_keeps_every_logical_field():
    specs = generate.sample_interpretations(20, seed=1)
    perturbed = perturb_interpretations(specs, kind="names", seed=4)
    alternates = {n.name for n in given_names(alternate=True)}
    originals = list(generate.generate(DESIGN, specs))
    changed = list(generate.generate(DESIGN, perturbed))
    assert len(changed) == len(originals) == 20 * 24
    links = perturbation_links(originals, changed)
    by_code = {i.code: i for i in originals}
    assert len(links) == len(changed)
    for spec, new in zip(specs, perturbed):
        assert {new.p.subject, new.q.subject} <= alternates and new.p.subject != new.q.subject
        assert (new.p.predicate, new.q.predicate, new.index) == (spec.p.predicate, spec.q.predicate, spec.index)
    for link, item in zip(links, changed):
        original = by_code[link.first]
        assert item.condition == "names" and item.code.startswith(f"{DESIGN}:names:")
        for field in ("form_id", "modality", "argument_form", "logical_form", "gold_answer", "template_valid"):
            assert getattr(item, field) == getattr(original, field)
        spec, new = specs[original.interpretation_index], perturbed[original.interpretation_index]
        expected = [word_sub(word_sub(p, spec.p.subject, "\0P"), spec.q.subject, "\0Q") for p in original.premises]
        expected = [p.replace("\0P", new.p.subject).replace("\0Q", new.q.subject) for p in expected]
        assert list(item.premises) == expected


def test_names_perturbation_is_deterministic_and_needs_enough_names():
    specs = generate.sample_interpretations(10, seed=0)
    assert perturb_interpretations(specs, kind="names", seed=2) == perturb_interpretations(specs, kind="names", seed=2)
    assert perturb_interpretations(specs, kind="names", seed=2) != perturb_interpretations(specs, kind="names", seed=3)
    with pytest.raises(ValueError, match="needs at least 2 names"):
        perturb_interpretations(specs, kind="names", names=["Ola", specs[0].p.subject])


def test_nonsense_kind_is_the_003_mirror():
    specs = generate.sample_interpretations(5, seed=0)
    assert perturb_interpretations(specs, kind="nonsense") == generate.nonsense_mirror(specs)
    with pytest.raises(ValueError, match="always has the label 'nonsense'"):
        perturb_interpretations(specs, kind="nonsense", label="mirror")


def test_custom_mapping_on_interpretations_and_the_merge_guard():
    specs = generate.sample_interpretations(30, seed=0)
    name = specs[0].p.subject
    perturbed = perturb_interpretations(specs, kind="mapping", mapping={name: "Zoltan"}, label="zoltan")
    touched = [s for s in specs if name in (s.p.subject, s.q.subject)]
    assert [s.index for s in perturbed] == [s.index for s in touched]
    assert all("Zoltan" in (s.p.subject, s.q.subject) and s.condition == "zoltan" for s in perturbed)
    other = specs[0].q.subject
    with pytest.raises(ValueError, match=f"interpretation 0: mapping '{name}' → '{other}' would merge it"):
        perturb_interpretations(specs, kind="mapping", mapping={name: other})
    with pytest.raises(ValueError, match="changes no item"):
        perturb_interpretations(specs, kind="mapping", mapping={"Nobody-here": "Zoltan"})


def test_only_real_designs_and_good_labels():
    specs = generate.sample_interpretations(3, seed=0)
    once = perturb_interpretations(specs, kind="names")
    with pytest.raises(ValueError, match="only the real design can be perturbed"):
        perturb_interpretations(once, kind="names")
    for label in ("real", "Names", "a-very-long-label", "1st"):
        with pytest.raises(ValueError, match="perturbation label"):
            perturb_interpretations(specs, kind="names", label=label)
    with pytest.raises(ValueError, match="unknown perturbation 'colours'"):
        perturb_interpretations(specs, kind="colours")
    with pytest.raises(ValueError, match="003 interpretations take the perturbations names, nonsense and mapping"):
        perturb_interpretations(specs, kind="entities")


# --------------------------------------------------------------------------- rulebreakers


@pytest.fixture(scope="module")
def specs():
    return rb.rulebreaker_specs(seed=0, pairs=400)


def test_rulebreaker_names_change_name_and_pronoun_only(specs):
    perturbed = perturb_rulebreakers(specs, kind="names", seed=1)
    pronoun = {n.name: n.pronoun for n in given_names(alternate=True)}
    originals, changed = list(rb.render_all(specs)), list(rb.render_all(perturbed))
    assert len(link_pairs(changed)) == len(specs)  # perturbed pairs are pairs too
    links = perturbation_links(originals, changed)
    assert len(links) == len(changed)
    by_code = {i.code: i for i in originals}
    for spec, new in zip(specs, perturbed):
        assert new.pronoun == pronoun[new.name] and new.name != spec.name
        assert replace(new, name=spec.name, pronoun=spec.pronoun, condition="real", original_index=None) == spec
    for link, item in zip(links, changed):
        original = by_code[link.first]
        assert (item.role, item.gold_answer, item.form_id) == (original.role, original.gold_answer, original.form_id)
        old, new = original.attributes, item.attributes
        text = word_sub(" ".join(original.premises), old["name"], new["name"])
        assert word_sub(text, old["pronoun"], new["pronoun"]) == " ".join(item.premises)


def test_rulebreaker_entities_come_from_the_alternative_lists(specs):
    perturbed = perturb_rulebreakers(specs, kind="entities", seed=1)
    country_of = {p.city: p.country for p in alternative_cities()}
    type_of = {c.instance: c.type for c in categories("alternate")}
    assert {s.entity_kind for s in specs} == {"geographical", "categorical"}
    for spec, new in zip(specs, perturbed):
        assert (new.rule, new.verb, new.name, new.original_index) == (spec.rule, spec.verb, spec.name, spec.index)
        if spec.entity_kind == "geographical":
            assert country_of[new.part] == new.whole and new.swapped != new.whole
        else:
            assert type_of[new.part] == new.whole == spec.whole and new.swapped == spec.swapped
    breaker, counterpart = rb.render(perturbed[0])
    assert (breaker.gold_answer, counterpart.gold_answer) == ("no", "yes")
    assert perturbed == perturb_rulebreakers(specs, kind="entities", seed=1)


def test_rulebreaker_mapping_may_not_break_the_facts(specs):
    geo = next(s for s in specs if s.entity_kind == "geographical")
    other = next(p for p in capitals() if p.country != geo.whole)
    with pytest.raises(ValueError, match=f"'{other.city}' belongs to '{other.country}', not '{geo.whole}'"):
        perturb_rulebreakers([geo], kind="mapping", mapping={geo.part: other.city})
    with pytest.raises(ValueError, match=f"pair {geo.index}: mapping '{geo.swapped}' → '{geo.whole}' would merge"):
        perturb_rulebreakers([geo], kind="mapping", mapping={geo.swapped: geo.whole})
    with pytest.raises(ValueError, match="'Atlantis' is the target of several words"):
        perturb_rulebreakers([geo], kind="mapping", mapping={geo.swapped: "Atlantis", geo.whole: "Atlantis"})
    fictional = perturb_rulebreakers([geo], kind="mapping", mapping={geo.part: "Zorbograd", geo.whole: "Zorbia"})
    assert fictional[0].part == "Zorbograd" and fictional[0].whole == "Zorbia"
    with pytest.raises(ValueError, match="rulebreakers take the perturbations names, entities and mapping"):
        perturb_rulebreakers([geo], kind="nonsense")


# --------------------------------------------------------------------------- dual-sided rules and mappings


BANK = "rule_id,premise,conclusion,flipped_conclusion\nr1,Person X owns Object Y,Person X can use Object Y,Person X cannot use Object Y\nr2,A holds,B holds,B fails\n"


def test_dual_sided_mapping_links_each_rule_it_changes():
    rules = parse_rule_bank(BANK)
    perturbed = perturb_rules(rules, mapping={"Person X": "Person Q", "Object Y": "Object W"})
    assert [(r.rule_id, r.original_id, r.condition) for r in perturbed] == [("r1", "r1", "mapping")]
    assert perturbed[0].rule_text() == "If Person Q owns Object W, then Person Q can use Object W."
    items, originals = dual_sided_items(perturbed), dual_sided_items(rules)
    links = perturbation_links(originals, items)
    assert [(p.first, p.second) for p in links] == [
        ("dual-sided:real:r1:original", "dual-sided:mapping:r1:original"),
        ("dual-sided:real:r1:flipped", "dual-sided:mapping:r1:flipped"),
    ]
    assert [i.gold_answer for i in items] == ["yes", "no"]
    with pytest.raises(ValueError, match="rule r1: mapping 'Person X' → 'Object Y' would merge it"):
        perturb_rules(rules, mapping={"Person X": "Object Y"})


def test_token_mapping_rules():
    table = TokenMapping.of({"Anne": "Bob", "Bob": "Anne", "New York": "Oslo"})
    assert table.apply("Anne met Bob in New York; Annette stayed.") == "Bob met Anne in Oslo; Annette stayed."
    for bad, message in [
        ({}, "the mapping is empty"),
        ({"Anne": "Anne"}, "'Anne' is mapped to itself"),
        ({"Anne": "Bob", "Carl": "Bob"}, "'Bob' is the target of several words"),
        ({" Anne": "Bob"}, "remove the surrounding spaces"),
        ({"Anne": ""}, "both sides must be non-empty"),
    ]:
        with pytest.raises(ValueError, match=message):
            TokenMapping.of(bad)


def test_mapping_files_name_bad_rows():
    assert parse_mapping_csv("from,to\nAnne,Bob\n\nParis,Lyon\n").pairs == (("Anne", "Bob"), ("Paris", "Lyon"))
    with pytest.raises(CsvImportError) as info:
        parse_mapping_csv("from,to\nAnne,Bob\nAnne,Carl\nDora,Bob\nEve,\nFay,Fay\nGil\n")
    assert [str(e) for e in info.value.errors] == [
        "row 3, column 'from': 'Anne' repeats row 2",
        "row 4, column 'to': 'Bob' is already the target of another word",
        "row 5, column 'to': is empty",
        "row 6, column 'to': 'Fay' maps the word to itself",
        "row 7: has 1 fields; the header has 2",
    ]
    with pytest.raises(CsvImportError, match="the header must be exactly: from,to"):
        parse_mapping_csv("old,new\nA,B\n")


def test_perturbation_links_refuse_orphans_and_doubles(specs):
    originals = list(rb.render_all(specs[:2]))
    changed = list(rb.render_all(perturb_rulebreakers(specs[:2], kind="names")))
    with pytest.raises(PairingError, match="is not among the originals"):
        perturbation_links(originals[:2], changed)
    with pytest.raises(PairingError, match="is perturbed twice"):
        perturbation_links(originals, changed + changed[:1])
    with pytest.raises(PairingError, match="names no original"):
        perturbation_links(originals, originals[:1])


def test_a_supplied_place_list_cannot_contradict_known_facts(specs):
    from designs.paired.rulebreakers_data import Place

    geo = next(s for s in specs if s.entity_kind == "geographical" and s.whole != "Norway")
    with pytest.raises(ValueError, match="'Stockholm' belongs to 'Sweden', not 'Norway'"):
        perturb_rulebreakers([geo], kind="entities", places=[Place("Norway", "Stockholm")])
    ok = perturb_rulebreakers([geo], kind="entities", places=[Place("Norway", "Bergen")])
    assert (ok[0].whole, ok[0].part) == ("Norway", "Bergen") and ok[0].swapped != "Norway"
