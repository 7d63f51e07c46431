"""Published formats (issue 27 parts 1 and 5): the seed papers' datasets read as their authors published them,
from the excerpts in tests/data/published/ (tests/data/README.md gives each file's source, commit, licence and
rows), into their designs, through `import_items KIND FILE STUDY [--format NAME]`.

The counts the tests compare with were taken from the excerpt files by hand (grep/awk on the files, written out
in each test), not by the readers:
- RULEBREAKERS: 52 rows, 26 ending in _rb (label False) and 26 in _nonrb (label True), pairs 0000000–0000009,
  0006013–0006020 and 0012792–0012799 of the published file.
- ULogic: 104 rules (positions 1–30, 141–160, 481–510, 1081–1104 of probing_subset.json); 14 conclusions have
  no modal verb and no is/are (excerpt positions 37, 40, 41, 42, 46, 47, 51, 54, 55, 62, 63, 64, 69, 78:
  'Person X lives in Region Y.', …), the other 90 have exactly one: 44 'can', 28 'cannot', 13 'is', 5 'is not'.
- LogiQA: 91 questions (Eval.txt questions 1–40, 161–170, 321–340, 631–651), answers 13 a, 17 b, 21 c, 40 d;
  question 28 has options C and D without their letters ('Most of the spirits on the C.S City market …'),
  question 44 (Eval.txt's 164) two options with the same text.
"""
from __future__ import annotations

import json
from collections import Counter, defaultdict
from pathlib import Path

import pytest
from django.core.management import call_command
from hypothesis import given
from hypothesis import strategies as st
from django.core.exceptions import ValidationError
from django.core.management.base import CommandError

from experiments import design_registry as registry
from experiments.items import sources
from designs.paired import ulogic_source
from designs.paired import rulebreakers
from experiments.models import Item, Study

DATA = Path(__file__).resolve().parents[1] / "data" / "published"
RULEBREAKERS = DATA / "rulebreakers" / "RULEBREAKERS_finegrained_excerpt.csv"
ULOGIC = DATA / "ulogic" / "probing_subset_excerpt.json"
LOGIQA = DATA / "logiqa" / "Eval_excerpt.txt"
PAIRS = [f"RULEBREAKER_{n:07d}" for n in (*range(0, 10), *range(6013, 6021), *range(12792, 12800))]
UNFLIPPABLE = {37: "Person X lives in Region Y", 40: "Organization X operates in Region Y",
               41: "Organization X was founded in Region Y", 42: "Organization X provides services in Region Y",
               46: "Artwork X was created in Region Y", 47: "Plant X grows in Region Y",
               51: "Person X requires a special diet excluding Plant Y", 54: "Person X lacks Skill Y",
               55: "Person X avoids making Food Y", 62: "Person X has restrictions due to Condition Y",
               63: "Person X needs assistance with Condition Y", 64: "Person X needs assistance with Condition Y",
               69: "Person X lacks permission to operate Facility Y", 78: "Person X needs training in Technology Y"}
TEN = [f"{q}/{a}" for q, _ in rulebreakers.QUESTIONS for a, *_ in rulebreakers.ANSWER_OPTIONS]


# ---------------------------------------------------------------------------------------------- the registry


def test_each_design_declares_its_formats_and_each_reader_is_declared_by_its_design():
    assert [r.name for r in sources.all_readers()] == ["logiqa-text", "rulebreakers-finegrained", "ulogic-json"]
    for design in registry.all_designs():
        for reader in sources.for_design(design):
            assert reader.design == design.name
    for reader in sources.all_readers():
        assert reader.name in registry.get(reader.design).formats
    assert [r.name for r in sources.for_design("rulebreakers")] == ["rulebreakers-finegrained"]
    assert registry.get("rulebreakers").default_format == "rulebreakers-finegrained"
    assert registry.get("dual-sided").default_format == sources.BANK
    assert registry.get("dual-sided").import_formats == ("bank", "ulogic-json")
    assert {d.name for d in registry.importable()} == {"csv-import", "dual-sided", "multiple-choice", "rulebreakers"}
    assert registry.get("rulebreakers") in registry.generated()  # it still generates


def test_a_format_registered_twice_or_unknown_is_refused_by_name():
    reader = sources.get("ulogic-json")
    with pytest.raises(ValueError, match="format 'ulogic-json' is registered twice"):
        sources.register(reader)
    with pytest.raises(ValueError, match="Unknown format 'csv'; choose one of: logiqa-text, rulebreakers-finegrained, "
                                         "ulogic-json"):
        sources.get("csv")


# ------------------------------------------------------------------------------------------ RULEBREAKERS (000)


def test_the_rulebreakers_excerpt_reads_as_26_pairs_with_golds_from_the_label():
    rows, problems = sources.get("rulebreakers-finegrained").read(RULEBREAKERS.read_bytes())
    assert problems == ()
    assert len(rows) == 52
    by_pair = defaultdict(dict)
    for row in rows:
        by_pair[row.fields["pair"]][row.fields["role"]] = row
    assert sorted(by_pair) == PAIRS and all(len(p) == 2 for p in by_pair.values())
    assert Counter(r.fields["gold_answer"] for r in rows) == {"yes": 26, "no": 26}
    for pair in by_pair.values():  # 000 §3.4: no to a rulebreaker, yes to its counterpart
        assert (pair["rulebreaker"].fields["gold_answer"], pair["non-rulebreaker"].fields["gold_answer"]) == ("no", "yes")
        assert pair["rulebreaker"].id.endswith("_rb") and pair["non-rulebreaker"].id.endswith("_nonrb")
    first = by_pair["RULEBREAKER_0000000"]
    assert first["rulebreaker"].fields | {"pair": ""} == {
        "pair": "", "role": "rulebreaker", "rule": "MT", "entity_kind": "geographical", "category": "cities",
        "name": "Adriana", "pronoun": "she", "verb": "is in", "whole": "Zimbabwe", "part": "Harare", "entity_b": "Harare",
        "premise_1": "If Adriana is in Zimbabwe, then she is not in Harare.", "premise_2": "Adriana is in Harare.",
        "conclusion": "Adriana is not in Zimbabwe.", "gold_answer": "no", "true_whole": "Zimbabwe"}
    assert (first["non-rulebreaker"].fields["whole"], first["non-rulebreaker"].fields["true_whole"]) == \
        ("Saint Kitts and Nevis", "Zimbabwe")
    last = by_pair["RULEBREAKER_0012799"]["non-rulebreaker"].fields
    assert (last["rule"], last["entity_kind"], last["premise_1"]) == \
        ("DS", "categorical", "Helmi is competing in either badminton or some kind of martial art.")


def test_a_member_without_its_partner_or_with_a_wrong_label_is_a_problem_and_its_pair_is_left_out():
    lines = RULEBREAKERS.read_text(encoding="utf-8").split("\nRULEBREAKER_")
    header, records = lines[0], ["RULEBREAKER_" + r for r in lines[1:]]
    kept = [r for r in records if not r.startswith("RULEBREAKER_0000003_rb,")]
    kept = [r.replace(",True,", ",False,", 1) if r.startswith("RULEBREAKER_0006015_nonrb,") else r for r in kept]
    rows, problems = sources.get("rulebreakers-finegrained").read("\n".join([header, *kept]))
    assert [(p.row, p.column) for p in problems] == [  # as found, the file streamed (issue 37)
        ("RULEBREAKER_0006015_nonrb", "label"),
        ("RULEBREAKER_0006015_rb", "id"),
        ("RULEBREAKER_0000003_nonrb", "id"),  # known at the end of the file
    ]
    assert "000 §3.4 takes yes as its correct answer" in problems[0].reason
    assert "its partner RULEBREAKER_0000003_rb is not in the file" in problems[2].reason
    assert len(rows) == 48  # 24 whole pairs


def test_a_file_without_the_columns_is_refused_with_the_columns_it_has():
    with pytest.raises(sources.ReaderError, match=r"the column\(s\) id, rulebreaker_type.* are missing \(the header "
                                                  r"has item_id, premise_1\)"):
        sources.get("rulebreakers-finegrained").read("item_id,premise_1\nx,y\n")


@pytest.mark.django_db
def test_import_items_rulebreakers_gives_every_pair_with_both_members_golds_and_the_ten_phrasings(capsys):
    call_command("import_items", "rulebreakers", str(RULEBREAKERS), "rb-pub")
    out = capsys.readouterr().out
    assert "Imported 26 pairs from rulebreakers-finegrained of 'rulebreakers' into 'rb-pub': 520 items (10 prompt " \
           "variant(s) each" in out
    study = Study.objects.get(slug="rb-pub")
    assert study.design == "rulebreakers"
    items = list(study.items.all())
    assert len(items) == 26 * 2 * 10
    members = defaultdict(set)
    for item in items:
        members[item.pair_id].add((item.pair_role, item.gold_answer))
    assert sorted(members) == [f"rulebreakers:real:{p}" for p in PAIRS]
    assert all(m == {("rulebreaker", "no"), ("non-rulebreaker", "yes")} for m in members.values())
    assert sorted({i.variant for i in items}) == sorted(TEN)
    assert all(sum(1 for i in items if i.variant == v) == 52 for v in TEN)
    one = study.items.get(pair_id="rulebreakers:real:RULEBREAKER_0006016", pair_role="rulebreaker",
                          variant="entail/true-false")
    premises = ("If Cecília owns some kind of brass instrument, then she does not own a flugelhorn.",
                "Cecília owns a flugelhorn.")
    assert one.premises == list(premises)
    by_id = {v.variant_id: v for v in rulebreakers.phrasings(premises, "Cecília does not own any kind of brass "
                                                                       "instrument.")}
    assert one.prompt == by_id["entail/true-false"].text  # the design's own phrasing, as for generated pairs
    assert one.answer_words == {"yes": "True", "no": "False"}
    assert (one.form_id, one.attributes["logical_form"], one.attributes["true_whole"], one.attributes["source_id"]) \
        == ("MT.categorical", rulebreakers.LOGICAL_FORMS["MT"], "brass instrument", "RULEBREAKER_0006016_rb")
    # the knowledge probe (000 §4.1) reads the imported attributes as it reads generated ones
    probe = registry.get("rulebreakers").knowledge_probe(one.attributes)
    assert (probe.key, probe.target) == ("categorical:flugelhorn", "brass instrument")
    assert one.attributes["entity_b"] == "a flugelhorn"  # as the file writes it
    assert study.settings["human_variant"] in TEN


@pytest.mark.django_db
def test_the_import_bound_counts_the_phrasings_chosen_and_the_preview_lists_problems(monkeypatch):
    from experiments import services

    monkeypatch.setenv("DUET_IMPORT_MAX_ITEMS", "100")
    design = registry.get("rulebreakers")
    study = services.study_create(slug="rb-bound", title="rb-bound", design="rulebreakers")
    data = RULEBREAKERS.read_bytes()
    with pytest.raises(ValidationError, match=r"This import would write 520 items; at most 100 .*DUET_IMPORT_MAX_ITEMS"
                                              r".* Or store fewer phrasings: 52 pair members × 10 phrasing\(s\); "
                                              r"--variants follow/yes-no"):
        design.import_preview(study=study, data=data, format="rulebreakers-finegrained")
    preview = design.import_preview(study=study, data=data, format="rulebreakers-finegrained",
                                    variants=["follow/yes-no"], rows=3)
    assert (preview.count, len(preview.items), preview.problems) == (52, 3, ())
    cut = data.decode("utf-8").split("\nRULEBREAKER_0012799_rb,")[0] + "\n"  # the last pair's rulebreaker gone
    preview = design.import_preview(study=study, data=cut, variants=["follow/yes-no"])
    assert preview.count == 50 and [p.row for p in preview.problems] == ["RULEBREAKER_0012799_nonrb"]
    with pytest.raises(sources.RowProblems):
        design.importer(study=study, data=cut, variants=["follow/yes-no"])
    assert study.items.count() == 0
    report = design.importer(study=study, data=cut, variants=["follow/yes-no"], skip_problems=True)
    assert (report.pairs, report.items, [p.row for p in report.left_out]) == (25, 50, ["RULEBREAKER_0012799_nonrb"])


@pytest.mark.django_db
def test_generation_still_works_beside_imports():
    call_command("generate_items", "rulebreakers", "rb-gen", "--pairs", "3", "--variants", "follow/yes-no")
    call_command("import_items", "rulebreakers", str(RULEBREAKERS), "rb-gen", "--variants", "follow/yes-no")
    study = Study.objects.get(slug="rb-gen")
    assert study.items.count() == (3 + 26) * 2
    assert study.items.filter(pair_id__startswith="rulebreakers:real:RULEBREAKER_").count() == 52


@pytest.mark.django_db
def test_importing_the_same_excerpt_twice_is_refused_and_nothing_is_written():
    call_command("import_items", "rulebreakers", str(RULEBREAKERS), "rb-twice", "--variants", "follow/yes-no")
    with pytest.raises(CommandError, match="already has 52 of these items"):
        call_command("import_items", "rulebreakers", str(RULEBREAKERS), "rb-twice", "--variants", "follow/yes-no")
    assert Study.objects.get(slug="rb-twice").items.count() == 52


# ---------------------------------------------------------------------------------------------- ULogic (004)


def test_negating_the_conclusions_modal_or_copula():
    assert ulogic_source.negate("Person X can feed Animal Y") == ("Person X cannot feed Animal Y", "can → cannot")
    assert ulogic_source.negate("Person X cannot ride Animal Y")[0] == "Person X can ride Animal Y"
    assert ulogic_source.negate("Person X is not a sculptor of Material Y")[0] == "Person X is a sculptor of Material Y"
    assert ulogic_source.negate("it is illegal for Person X to have Drug Y")[0] == "it is not illegal for Person X to have Drug Y"
    assert ulogic_source.negate("Facility X will not display Artwork Y")[0] == "Facility X will display Artwork Y"
    assert ulogic_source.negate("Organization X must comply with Legislation Y")[0] == \
        "Organization X must not comply with Legislation Y"
    assert ulogic_source.negate("Person X can't swim")[0] == "Person X can swim"
    with pytest.raises(ValueError, match="has no modal verb"):
        ulogic_source.negate("Person X lives in Region Y")
    with pytest.raises(ValueError, match=r"has 2 words the negation could apply to \('can', 'is'\)"):
        ulogic_source.negate("Person X can say that it is raining")
    assert ulogic_source.negate("Cannes is sunny")[0] == "Cannes is not sunny"  # whole words only


CANONICAL = [w for w in ulogic_source.NEGATIONS if ulogic_source.NEGATIONS[ulogic_source.NEGATIONS[w]] == w]


@given(subject=st.sampled_from(["Person X", "Organization X", "Plant Y", "Food X"]),
       word=st.sampled_from(CANONICAL),
       rest=st.lists(st.sampled_from(["eat", "Food Y", "visit", "Region Z", "allowed in", "a member of", "grow"]),
                     min_size=1, max_size=4))
def test_the_flip_is_undone_by_flipping_again(subject, word, rest):
    conclusion = " ".join([subject, word, *rest])
    flipped, how = ulogic_source.negate(conclusion)
    assert flipped != conclusion and how.startswith(f"{word} → ")
    assert ulogic_source.negate(flipped)[0] == conclusion


def test_the_ulogic_excerpt_reads_with_flipped_conclusions_and_lists_the_rules_it_cannot_flip():
    rows, problems = sources.get("ulogic-json").read(ULOGIC.read_bytes(), filename=ULOGIC.name)
    assert len(json.loads(ULOGIC.read_text(encoding="utf-8"))) == 104
    assert len(rows) == 90
    assert [p.row for p in problems] == [f"ulogic-{n:04d}" for n in sorted(UNFLIPPABLE)]
    for problem in problems:
        assert problem.column == "v_rule"
        assert f"the conclusion '{UNFLIPPABLE[int(problem.row[-4:])]}' has no modal verb" in problem.reason
    assert Counter(r.fields["flip"] for r in rows) == {"can → cannot": 44, "cannot → can": 28, "is → is not": 13,
                                                       "is not → is": 5}
    first = rows[0].fields
    assert (first["rule_id"], first["premise"], first["conclusion"], first["flipped_conclusion"]) == \
        ("ulogic-0001", "Person X owns Animal Y", "Person X can feed Animal Y", "Person X cannot feed Animal Y")
    assert (first["domain"], first["length"], first["verified"], first["structure"]) == \
        ("affordance", "1", "true", "transitive")
    for row in rows:  # the published conclusions, flipped twice, read as published
        assert ulogic_source.negate(row.fields["flipped_conclusion"])[0] == row.fields["conclusion"]


def test_a_ulogic_file_that_is_not_a_list_of_rules_is_refused():
    with pytest.raises(sources.ReaderError, match="not JSON"):
        sources.get("ulogic-json").read(b"{")
    with pytest.raises(sources.ReaderError, match="expected a list of rules, found a dict"):
        sources.get("ulogic-json").read(b'{"v_rule": "If a, then b can c."}')
    rows, problems = sources.get("ulogic-json").read(json.dumps([
        {"v_rule": "Person X can feed Animal Y."}, {"v_rule": "If A, then B, then C can D."}, 7]))
    assert rows == () and [(p.row, p.column) for p in problems] == [
        ("ulogic-0001", "v_rule"), ("ulogic-0002", "v_rule"), ("ulogic-0003", "")]


@pytest.mark.django_db
def test_import_items_dual_sided_ulogic_refuses_listing_the_unflippable_rules_and_writes_nothing():
    with pytest.raises(CommandError) as refused:
        call_command("import_items", "dual-sided", str(ULOGIC), "ul", "--format", "ulogic-json")
    message = str(refused.value)
    assert "14 row(s) of the file cannot be imported; nothing was written" in message
    assert "import the other 90 row(s)" in message and "--skip-problems" in message
    for n, conclusion in UNFLIPPABLE.items():
        assert f"ulogic-{n:04d}, v_rule: the conclusion '{conclusion}' has no modal verb" in message
    assert not Study.objects.filter(slug="ul").exists()


@pytest.mark.django_db
def test_import_items_dual_sided_ulogic_with_skip_problems_writes_the_flippable_rules_and_lists_the_rest(capsys):
    call_command("import_items", "dual-sided", str(ULOGIC), "ul", "--format", "ulogic-json", "--skip-problems")
    out = capsys.readouterr().out
    assert "Imported 90 rules into 'ul': 900 items" in out
    assert "14 row(s) of the file were left out:" in out
    assert all(f"ulogic-{n:04d}, v_rule" in out for n in UNFLIPPABLE)
    study = Study.objects.get(slug="ul")
    assert study.design == "dual-sided" and study.items.count() == 90 * 2 * 5
    flipped = study.items.get(pair_id="dual-sided:real:ulogic-0001", pair_role="flipped", variant="template-3")
    assert (flipped.gold_answer, flipped.premises) == ("no", ["If Person X owns Animal Y, then Person X cannot feed "
                                                              "Animal Y."])
    original = study.items.get(pair_id="dual-sided:real:ulogic-0001", pair_role="original", variant="template-3")
    assert original.gold_answer == "yes" and original.attributes["flip"] == "can → cannot"
    assert not study.items.filter(pair_id__in=[f"dual-sided:real:ulogic-{n:04d}" for n in UNFLIPPABLE]).exists()
    assert study.settings["paired_designs"]["dual-sided"] == {"templates": [1, 2, 3, 4, 5], "format": "ulogic-json"}


@pytest.mark.django_db
def test_the_dual_sided_preview_shows_the_problems_and_writes_nothing():
    from experiments import services

    study = services.study_create(slug="ulp", title="ulp", design="dual-sided")
    preview = registry.get("dual-sided").import_preview(study=study, data=ULOGIC.read_bytes(), format="ulogic-json",
                                                        rows=4)
    assert preview.count == 900 and len(preview.items) == 4 and len(preview.problems) == 14
    assert Item.objects.filter(study=study).count() == 0


# ------------------------------------------------------------------------------------- LogiQA (multiple choice)


def test_the_logiqa_excerpt_reads_its_eight_line_blocks():
    rows, problems = sources.get("logiqa-text").read(LOGIQA.read_bytes())
    assert len(rows) == 90  # 91 questions, one (28) with unlettered options
    assert [(p.row, p.column) for p in problems] == [("logiqa-0028", "option_c"), ("logiqa-0028", "option_d")]
    assert Counter(r.fields["answer"] for r in rows) == {"A": 13, "B": 17, "C": 20, "D": 40}  # question 28: c
    first = rows[0].fields
    assert first["answer"] == "A" and first["option_a"].startswith("The blood pressure of the descendants")
    assert first["question"].startswith("The following conclusions about contemporary westernized African blacks")
    assert {r.id: r for r in rows}["logiqa-0040"].fields["option_d"].startswith("The fertility rate is not directly proportional")  # written 'd.'


@pytest.mark.django_db
def test_import_items_multiple_choice_logiqa(capsys):
    with pytest.raises(CommandError) as refused:
        call_command("import_items", "multiple-choice", str(LOGIQA), "lq", "--format", "logiqa-text")
    message = str(refused.value)
    assert "2 row(s) of the file cannot be imported" in message and "import the other 89 row(s)" in message
    assert "logiqa-0028, option_c: does not start with 'C.'" in message
    assert "logiqa-0044, option_a: two options have the same text" in message
    assert not Study.objects.filter(slug="lq").exists()
    call_command("import_items", "multiple-choice", str(LOGIQA), "lq", "--format", "logiqa-text", "--skip-problems")
    out = capsys.readouterr().out
    assert "Imported 89 multiple-choice questions into 'lq' from logiqa-text: 356 items" in out
    study = Study.objects.get(slug="lq")
    assert study.design == "multiple-choice"
    original = study.items.get(code="logiqa-0001.rot0")
    assert original.gold_answer == "A" and original.options[0].startswith("The blood pressure of the descendants")
    assert study.items.get(code="logiqa-0001.rot1").gold_answer == "D"  # the right option moved with the rotation


# --------------------------------------------------------------------------------------------- the command


@pytest.mark.django_db
def test_an_unknown_kind_or_format_is_named_with_the_known_ones():
    with pytest.raises(CommandError, match=r"Unknown kind 'rulebreaker'; known kinds: yes-no, dual-sided, "
                                           r"multiple-choice, rulebreakers\."):
        call_command("import_items", "rulebreaker", str(RULEBREAKERS), "x")
    with pytest.raises(CommandError, match=r"Unknown format 'ulogic'\. dual-sided reads: bank, ulogic-json\. Every "
                                           r"published format: logiqa-text, rulebreakers-finegrained, ulogic-json\."):
        call_command("import_items", "dual-sided", str(ULOGIC), "x", "--format", "ulogic")
    with pytest.raises(CommandError, match=r"The format 'logiqa-text' reads into multiple-choice, not dual-sided; "
                                           r"dual-sided reads: bank, ulogic-json\."):
        call_command("import_items", "dual-sided", str(LOGIQA), "x", "--format", "logiqa-text")
    with pytest.raises(CommandError, match="--skip-problems is for a published format"):
        call_command("import_items", "dual-sided", str(ULOGIC), "x", "--skip-problems")
    assert not Study.objects.filter(slug="x").exists()


# ---------------------------------------------------------------------- --factors for every design (issue 35)


@pytest.mark.django_db
def test_import_items_takes_factors_for_every_design_as_documented(tmp_path, capsys):
    """docs/designs.md: factors for every design. `import_items dual-sided … --factors` was refused
    ("--factors is for the yes-no bank")."""
    call_command("import_items", "dual-sided", str(ULOGIC), "ul-f", "--format", "ulogic-json", "--skip-problems",
                 "--factors", "Domain", "pair_role")  # a descriptive column, matched in any case; an item field
    assert Study.objects.get(slug="ul-f").settings["factors"] == ["domain", "pair_role"]
    bank = tmp_path / "rules.csv"
    bank.write_text("premise,conclusion,flipped_conclusion,topic\n"
                    "Person X is a parent of Person Y,Person Y is a child of Person X,"
                    "Person Y is not a child of Person X,family\n", encoding="utf-8")
    call_command("import_items", "dual-sided", str(bank), "rules-f", "--templates", "3", "--factors", "topic")
    assert Study.objects.get(slug="rules-f").settings["factors"] == ["topic"]
    call_command("import_items", "multiple-choice", str(LOGIQA), "lq-f", "--format", "logiqa-text", "--skip-problems",
                 "--factors", "variant")
    assert Study.objects.get(slug="lq-f").settings["factors"] == ["variant"]


@pytest.mark.django_db
def test_import_items_takes_each_designs_import_options_from_the_registry_and_refuses_another_designs():
    """A design's import options are flags made from its registry entry (Design.import_options), as generate_items'
    are (issue 46: a change to a design's import options touches its folder only); another design's is refused
    before anything is written."""
    declared = {d.name: {o.name for o in d.import_options} for d in registry.importable()}
    assert "variants" in declared["rulebreakers"] and "templates" in declared["dual-sided"]
    with pytest.raises(CommandError, match="dual-sided takes no --variants"):
        call_command("import_items", "dual-sided", str(ULOGIC), "ul-v", "--format", "ulogic-json", "--variants",
                     "follow/yes-no")
    with pytest.raises(CommandError, match="rulebreakers takes no --templates"):
        call_command("import_items", "rulebreakers", str(RULEBREAKERS), "rb-t", "--templates", "3")
    assert not Study.objects.filter(slug__in=["ul-v", "rb-t"]).exists()
    call_command("import_items", "dual-sided", str(ULOGIC), "ul-t", "--format", "ulogic-json", "--skip-problems",
                 "--templates", "3")
    assert set(Study.objects.get(slug="ul-t").items.values_list("variant", flat=True)) == {"template-3"}


@pytest.mark.django_db
def test_a_factor_the_imported_items_lack_imports_nothing():
    with pytest.raises(CommandError, match="no column named 'colour' among the items.*Nothing was imported"):
        call_command("import_items", "dual-sided", str(ULOGIC), "ul-bad", "--format", "ulogic-json",
                     "--skip-problems", "--factors", "colour")
    assert not Study.objects.filter(slug="ul-bad").exists() and not Item.objects.exists()
