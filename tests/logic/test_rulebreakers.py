"""The RULEBREAKERS generator (seed 000 §3, §4, Table 1, Appendix B and G)."""
from __future__ import annotations

import re
from collections import Counter, defaultdict
from functools import lru_cache

import pytest

from designs.paired import rulebreakers as rb
from logic.pairs import PairingError, link_pairs
from designs.paired.rulebreakers import RulebreakerSpec, render
from designs.paired.rulebreakers_data import alternative_cities, capitals, categories, given_names


def spec(rule, kind, verb, whole, part, swapped, article="", name="Anne", pronoun="she"):
    return RulebreakerSpec(0, rule, kind, verb, name, pronoun, whole, part, article, swapped)


def texts(item):
    return (*item.premises, item.conclusion)


@lru_cache(maxsize=None)
def full_design(seed=0):
    specs = rb.rulebreaker_specs(seed=seed)
    return specs, tuple(rb.render_all(specs))


# --------------------------------------------------------------------------- wording


def test_table_1_geographical_templates_word_for_word():
    mt, _ = render(spec("MT", "geographical", "is in", "Sweden", "Stockholm", "Norway"))
    assert texts(mt) == ("If Anne is in Sweden, then she is not in Stockholm.", "Anne is in Stockholm.",
                         "Anne is not in Sweden.")
    ds, _ = render(spec("DS", "geographical", "is in", "Sweden", "Stockholm", "Norway"))
    assert texts(ds) == ("Anne is in either Stockholm or somewhere in Sweden.", "Anne is not in Sweden.",
                         "Anne is in Stockholm.")
    assert (mt.role, mt.gold_answer, ds.role, ds.gold_answer) == ("rulebreaker", "no", "rulebreaker", "no")
    assert (mt.attributes["logical_form"], ds.attributes["logical_form"]) == ("P → ¬Q, Q ⊢ ¬P", "P ∨ Q, ¬Q ⊢ P")


def test_table_1_categorical_templates_word_for_word():
    mt, _ = render(spec("MT", "categorical", "plays", "brass instrument", "trumpet", "woodwind instrument", "a"))
    assert texts(mt) == (
        "If Anne plays some kind of brass instrument, then she does not play the trumpet.",
        "Anne plays the trumpet.",
        "Anne does not play any kind of brass instrument.",
    )
    ds, _ = render(spec("DS", "categorical", "plays", "brass instrument", "trumpet", "woodwind instrument", "a"))
    assert texts(ds) == (
        "Anne plays either the trumpet or some kind of brass instrument.",
        "Anne does not play any kind of brass instrument.",
        "Anne plays the trumpet.",
    )


def test_section_3_2_non_rulebreaker_swaps_the_country():
    rulebreaker, counterpart = render(spec("MT", "geographical", "is in", "France", "Paris", "Germany"))
    assert texts(counterpart) == ("If Anne is in Germany, then she is not in Paris.", "Anne is in Paris.",
                                  "Anne is not in Germany.")
    assert (counterpart.role, counterpart.gold_answer) == ("non-rulebreaker", "yes")
    assert counterpart.pair_id == rulebreaker.pair_id
    assert [t.replace("France", "Germany") for t in texts(rulebreaker)] == list(texts(counterpart))


def test_appendix_g_prompt():
    item, _ = render(spec("MT", "categorical", "caught", "bird", "goose", "fish", "a", name="Liv"))
    entail = {v.variant_id: v for v in item.variants}["entail/yes-no"]
    assert entail.text == (
        "Premises: If Liv caught some kind of bird, then she did not catch a goose. Liv caught a goose.\n"
        "Conclusion: Liv did not catch any kind of bird.\n"
        "Do the Premises entail the Conclusion? Answer Yes or No only.\nAnswer:"
    )
    assert entail.question == "Conclusion: Liv did not catch any kind of bird. Do the Premises entail the Conclusion?"


GEO_EXPECTED = {  # verb: (MT premise 1, DS premise 1, negated conclusion of MT)
    "is in": ("If Omar is in Kenya, then he is not in Nairobi.",
              "Omar is in either Nairobi or somewhere in Kenya.", "Omar is not in Kenya."),
    "was born in": ("If Omar was born in Kenya, then he was not born in Nairobi.",
                    "Omar was born in either Nairobi or somewhere in Kenya.", "Omar was not born in Kenya."),
    "died in": ("If Omar died in Kenya, then he did not die in Nairobi.",
                "Omar died in either Nairobi or somewhere in Kenya.", "Omar did not die in Kenya."),
    "will be visiting": ("If Omar will be visiting Kenya, then he will not be visiting Nairobi.",
                         "Omar will be visiting either Nairobi or somewhere in Kenya.",
                         "Omar will not be visiting Kenya."),
    "had studied in": ("If Omar had studied in Kenya, then he had not studied in Nairobi.",
                       "Omar had studied in either Nairobi or somewhere in Kenya.", "Omar had not studied in Kenya."),
    "has been to": ("If Omar has been to Kenya, then he has not been to Nairobi.",
                    "Omar has been to either Nairobi or somewhere in Kenya.", "Omar has not been to Kenya."),
}


@pytest.mark.parametrize("verb", [v.key for v in rb.GEOGRAPHICAL_VERBS])
def test_each_geographical_verb_is_grammatical(verb):
    assert len(rb.GEOGRAPHICAL_VERBS) == 6
    mt_premise, ds_premise, mt_conclusion = GEO_EXPECTED[verb]
    affirmed = ds_premise.split(" either ")[0]
    mt, _ = render(spec("MT", "geographical", verb, "Kenya", "Nairobi", "Peru", name="Omar", pronoun="he"))
    ds, _ = render(spec("DS", "geographical", verb, "Kenya", "Nairobi", "Peru", name="Omar", pronoun="he"))
    assert texts(mt) == (mt_premise, f"{affirmed} Nairobi.", mt_conclusion)
    assert texts(ds) == (ds_premise, mt_conclusion, f"{affirmed} Nairobi.")


CATEGORICAL_EXPECTED = [
    ("saw", "bird", "ostrich", "an", "If Mei saw some kind of bird, then she did not see an ostrich.",
     "Mei saw either an ostrich or some kind of bird.", "Mei did not see any kind of bird."),
    ("caught", "fish", "eel", "an", "If Mei caught some kind of fish, then she did not catch an eel.",
     "Mei caught either an eel or some kind of fish.", "Mei did not catch any kind of fish."),
    ("plays", "woodwind instrument", "oboe", "an",
     "If Mei plays some kind of woodwind instrument, then she does not play the oboe.",
     "Mei plays either the oboe or some kind of woodwind instrument.",
     "Mei does not play any kind of woodwind instrument."),
    ("owns", "brass instrument", "euphonium", "a",
     "If Mei owns some kind of brass instrument, then she does not own a euphonium.",
     "Mei owns either a euphonium or some kind of brass instrument.",
     "Mei does not own any kind of brass instrument."),
    ("is good at", "martial art", "karate", "",
     "If Mei is good at some kind of martial art, then she is not good at karate.",
     "Mei is good at either karate or some kind of martial art.", "Mei is not good at any kind of martial art."),
    ("is competing in", "racket sport", "table tennis", "",
     "If Mei is competing in some kind of racket sport, then she is not competing in table tennis.",
     "Mei is competing in either table tennis or some kind of racket sport.",
     "Mei is not competing in any kind of racket sport."),
]


@pytest.mark.parametrize("verb,type_,instance,article,mt_premise,ds_premise,negated", CATEGORICAL_EXPECTED)
def test_each_categorical_verb_is_grammatical(verb, type_, instance, article, mt_premise, ds_premise, negated):
    other = rb.swappable_types(type_)[0]
    mt, _ = render(spec("MT", "categorical", verb, type_, instance, other, article, name="Mei"))
    ds, _ = render(spec("DS", "categorical", verb, type_, instance, other, article, name="Mei"))
    assert mt.premises[0] == ds.premises[0].replace(ds_premise, mt_premise) == mt_premise
    assert (mt.conclusion, ds.premises[1]) == (negated, negated)
    assert ds.premises[0] == ds_premise
    assert mt.premises[1] == ds.conclusion and mt.premises[1].startswith(f"Mei {verb} ")


def test_a_capital_with_a_full_stop_in_its_name_ends_one_sentence():
    item, _ = render(spec("DS", "geographical", "is in", "the United States", "Washington, D.C.", "Canada"))
    assert texts(item) == ("Anne is in either Washington, D.C. or somewhere in the United States.",
                           "Anne is not in the United States.", "Anne is in Washington, D.C.")


def test_ten_phrasings_of_section_4_2():
    item, _ = render(spec("MT", "geographical", "is in", "Sweden", "Stockholm", "Norway"))
    assert len(item.variants) == 10 and len({v.text for v in item.variants}) == 10
    questions = Counter(v.question.split(f"{item.conclusion} ", 1)[1] for v in item.variants)
    assert questions == {q: 2 for _, q in rb.QUESTIONS}
    assert "Can the Conclusion be deduced from the Premises?" in questions
    options = Counter((v.text.rsplit("? ", 1)[1], v.positive, v.negative) for v in item.variants)
    assert options == {("Answer Yes or No only.\nAnswer:", "Yes", "No"): 5,
                       ("Answer True or False only.\nAnswer:", "True", "False"): 5}
    assert (item.prompt, item.question) == (item.variants[0].text, item.variants[0].question)
    assert item.variants[1].text.endswith("\nDoes the Conclusion follow from the Premises? Answer True or False only.\n"
                                          "Answer:")


# --------------------------------------------------------------------------- the generated design


def test_full_design_counts():
    specs, items = full_design()
    n_geo = len(capitals()) * 6 * 5
    n_cat = 91 * 2 * 5
    assert Counter((s.rule, s.entity_kind) for s in specs) == {
        ("MT", "geographical"): n_geo, ("DS", "geographical"): n_geo,
        ("MT", "categorical"): n_cat, ("DS", "categorical"): n_cat,
    }
    assert len(items) == 2 * len(specs) == 2 * (2 * n_geo + 2 * n_cat)
    assert Counter(i.role for i in items) == {"rulebreaker": len(specs), "non-rulebreaker": len(specs)}
    assert len({i.code for i in items}) == len(items)


def test_every_pair_differs_only_by_country_or_type_and_never_uses_the_true_one():
    specs, items = full_design()
    country_of = {p.city: p.country for p in capitals()}
    type_of = {c.instance: c.type for c in categories()}
    pairs = link_pairs(items)
    assert len(pairs) == len(specs)
    by_code = {i.code: i for i in items}
    for s, pair in zip(specs, pairs):
        breaker, counterpart = by_code[pair.first], by_code[pair.second]
        assert (breaker.gold_answer, counterpart.gold_answer) == ("no", "yes")
        assert s.swapped != s.whole
        if s.entity_kind == "geographical":
            assert country_of[s.part] == s.whole and s.swapped in set(country_of.values())
        else:
            assert type_of[s.part] == s.whole and s.swapped in rb.swappable_types(s.whole)
        whole = re.compile(rf"(?<!\w){re.escape(s.whole)}(?!\w)")  # "fish" but not "catfish"
        assert [whole.sub(s.swapped, t) for t in texts(breaker)] == list(texts(counterpart)), s
        assert [whole.sub(s.swapped, v.text) for v in breaker.variants] == [v.text for v in counterpart.variants]
        assert sum(len(whole.findall(t)) for t in texts(breaker)) == 2


def test_names_are_drawn_without_replacement_and_shared_by_the_two_rules():
    specs, _ = full_design()
    names = defaultdict(list)
    for s in specs:
        names[(s.entity_kind, s.whole, s.part, s.verb, s.rule)].append(s.name)
    pronoun = {n.name: n.pronoun for n in given_names()}
    assert all(s.pronoun == pronoun[s.name] for s in specs)
    for (kind, whole, part, verb, rule), drawn in names.items():
        assert len(drawn) == len(set(drawn)) == 5
        if rule == "MT":
            assert drawn == names[(kind, whole, part, verb, "DS")]


def test_same_seed_same_items_other_seed_other_items():
    first = rb.generate_rulebreakers(seed=7, pairs=200)
    assert first == rb.generate_rulebreakers(seed=7, pairs=200)
    assert first != rb.generate_rulebreakers(seed=8, pairs=200)
    full_specs, _ = full_design()
    subset = rb.rulebreaker_specs(seed=0, pairs=300)
    assert set(subset) <= set(full_specs) and len(subset) == 300
    assert [s.index for s in subset] == sorted(s.index for s in subset)


def test_size_and_selection_parameters():
    assert len(rb.rulebreaker_specs(pairs=40)) == 40
    only = rb.rulebreaker_specs(names_per_combination=1, rules=["DS"], entity_kinds=["categorical"])
    assert len(only) == 91 * 2 and {(s.rule, s.entity_kind) for s in only} == {("DS", "categorical")}
    assert len(rb.rulebreaker_specs(names_per_combination=2, entity_kinds=["geographical"])) == len(capitals()) * 6 * 2 * 2


@pytest.mark.parametrize("options,message", [
    ({"pairs": 0}, "number of pairs must be between 1 and"),
    ({"pairs": 10**6}, "number of pairs must be between 1 and"),
    ({"names_per_combination": 0}, "names per combination must be between 1 and"),
    ({"rules": ["MP"]}, "rules must be a non-empty selection of MT, DS"),
    ({"entity_kinds": []}, "entity kinds must be a non-empty selection"),
])
def test_bad_parameters_are_refused(options, message):
    with pytest.raises(ValueError, match=message):
        rb.rulebreaker_specs(**options)


def test_knowledge_probes():
    probes = {p.subject: p for p in rb.knowledge_probes(rb.rulebreaker_specs(names_per_combination=1))}
    assert len(probes) == len(capitals()) + 91
    assert probes["Stockholm"].prompt == "Complete the sentence: Stockholm is in"
    assert probes["Stockholm"].expected == "Sweden"
    assert probes["Amsterdam"].expected == "the Netherlands" and "Netherlands" in probes["Amsterdam"].accepted
    assert probes["trumpet"].prompt == "Complete the sentence: trumpet is a type of"
    assert probes["trumpet"].expected == "brass instrument"


def test_pairs_about_an_unknown_city_can_be_dropped_whole():
    items = rb.generate_rulebreakers(pairs=300, seed=2)
    city = next(i.attributes["part"] for i in items if i.attributes["entity_kind"] == "geographical")
    kept = rb.without_subjects(items, {city})
    assert 0 < len(items) - len(kept) == sum(1 for i in items if i.attributes["part"] == city)
    assert all(i.attributes["part"] != city for i in kept)
    assert len(link_pairs(kept)) == len(kept) // 2


# --------------------------------------------------------------------------- our entity lists


def test_capitals_differ_from_their_country_and_lie_in_one_country():
    places = capitals()
    assert len(places) >= 150
    countries = {p.country for p in places}
    for excluded in ("Singapore", "Kuwait City", "Luxembourg", "Monaco", "Djibouti", "Mexico City", "Bissau", "Jerusalem"):
        assert excluded not in {p.city for p in places}
    for p in places:
        assert p.city.lower() != p.country_bare.lower()
        assert p.country_bare.lower() not in p.city.lower() and p.city.lower() not in p.country_bare.lower().split()
    assert len({p.city for p in places}) == len(places) == len(countries)
    known = {p.city: p.country for p in places}
    assert (known["Stockholm"], known["Canberra"], known["Ottawa"], known["Abuja"]) == ("Sweden", "Australia", "Canada", "Nigeria")
    assert not {p.city for p in alternative_cities()} & set(known)


def test_appendix_b_has_91_type_instance_pairs():
    pairs = categories()
    assert len(pairs) == 91
    assert Counter(c.type for c in pairs) == {
        "bird": 20, "fish": 13, "insect": 12, "brass instrument": 9, "stringed instrument": 16,
        "woodwind instrument": 8, "martial art": 8, "racket sport": 5}
    articles = {c.instance: c.article for c in pairs}
    assert (articles["ostrich"], articles["euphonium"], articles["English horn"], articles["judo"]) == ("an", "a", "an", "")
    alternates = categories("alternate")
    assert not {c.instance for c in alternates} & set(articles)
    assert {c.type for c in alternates} == set(rb.CATEGORICAL_VERBS)


def test_given_names_have_pronouns_and_clash_with_no_entity():
    primary, alternate = given_names(), given_names(alternate=True)
    assert len(primary) >= 100 and len(alternate) >= 50
    assert not {n.name for n in primary} & {n.name for n in alternate}
    assert {n.pronoun for n in primary} == {n.pronoun for n in alternate} == {"she", "he"}
    assert len({n.region for n in primary}) >= 5
    entity_words = {w for p in (*capitals(), *alternative_cities()) for w in re.findall(r"\w+", f"{p.country} {p.city}")}
    entity_words |= {w for c in (*categories(), *categories("alternate")) for w in c.instance.split()}
    assert not {n.name for n in (*primary, *alternate)} & entity_words


def test_link_pairs_refuses_a_broken_pair():
    rulebreaker, counterpart = render(spec("MT", "geographical", "is in", "Sweden", "Stockholm", "Norway"))
    with pytest.raises(PairingError, match="has 0 'non-rulebreaker' members"):
        link_pairs([rulebreaker])
    with pytest.raises(PairingError, match="has 2 'rulebreaker' members"):
        link_pairs([rulebreaker, rulebreaker, counterpart])
