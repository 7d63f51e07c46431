"""CSV import of external yes/no item banks: every error names its row and column, saves nothing."""
from __future__ import annotations

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from designs.modal.items import items_generate

from designs.csv_bank.items import items_import_csv
from experiments.item_csv import CsvImportError
from experiments.models import Item, Study
from tests.factories import ItemFactory, StudyFactory, TrialFactory

pytestmark = pytest.mark.django_db

HEADER = "item_id,premise_1,premise_2,question,gold_answer,logical_form,modality,domain\n"
GOOD = (
    "a1,Ann is baking a cake or Bo is painting a fence.,Ann isn't baking a cake.,"
    "Can we infer that Bo is painting a fence?,yes,\"p ∨ q, ¬p ⊢ q\",none,food\n"
    "a2,Ann is baking a cake or Bo is painting a fence.,Bo is painting a fence.,"
    "Can we infer that Ann isn't baking a cake?,no,,∅,food\n"
)


def _import(data, study=None):
    study = study or StudyFactory(design="csv-import")
    return study, items_import_csv(study=study, data=data)


def _errors(data, study=None):
    study = study or StudyFactory(design="csv-import")
    before = list(Item.objects.filter(study=study).values_list("pk", "code"))
    with pytest.raises(CsvImportError) as info:
        items_import_csv(study=study, data=data)
    assert list(Item.objects.filter(study=study).values_list("pk", "code")) == before
    return [str(e) for e in info.value.errors]


def test_good_file_imports_every_row_with_attributes_and_prompt():
    study, report = _import(HEADER + GOOD)
    assert report.items == 2 and report.disagreements == 0
    a1 = Item.objects.get(study=study, code="a1")
    assert a1.gold_answer == "yes" and a1.logical_form == "p ∨ q, ¬p ⊢ q" and a1.logic_system == "S5"
    assert a1.attributes == {"domain": "food"}
    assert a1.prompt.endswith(
        "Question: Based on these statements, can we infer that Bo is painting a fence?\nAnswer:"
    )
    assert Item.objects.get(study=study, code="a2").modality == "none"


def test_checker_overrides_a_wrong_stated_answer_and_records_it():
    row = "x,P or Q.,Q.,Can we infer that not P?,yes,\"p ∨ q, q ⊢ ¬p\",,\n"
    study, report = _import(HEADER + row)
    item = Item.objects.get(study=study, code="x")
    assert (item.gold_answer, item.template_valid, item.checker_disagrees) == ("no", True, True)
    assert report.disagreements == 1


@pytest.mark.parametrize(
    "data,expected",
    [
        (b"", ["row 1: the file is empty"]),
        (b"\xff\xfe\x00bad", ["row 1: the file is not UTF-8 text"]),
        ("premise_1,question,gold_answer\nA.,Q?,yes\n", ["row 1, column 'item_id': required column is missing"]),
        ("item_id,premise_1,question\na,A.,Q?\n", ["row 1, column 'gold_answer': need a gold_answer or a logical_form column"]),
        ("item_id,item_id,premise_1,question,gold_answer\n", ["row 1, column 'item_id': column appears more than once"]),
        (HEADER, ["row 2: the file has a header but no items"]),
        (HEADER + "a,A.,B.,Q?,maybe,,,\n", ["row 2, column 'gold_answer': 'maybe' is not yes or no"]),
        (HEADER + ",A.,B.,Q?,yes,,,\n", ["row 2, column 'item_id': is empty"]),
        (HEADER + "a,,B.,Q?,yes,,,\n", ["row 2, column 'premise_1': is empty"]),
        (HEADER + "a,A.,B.,,yes,,,\n", ["row 2, column 'question': is empty"]),
        (HEADER + "a,A.,B.,Q?,,,,\n", ["row 2, column 'gold_answer': is empty and there is no logical_form to decide it"]),
        (HEADER + "a,A.,B.,Q?,yes,p ∨ ⊢ q,,\n", ["row 2, column 'logical_form': cannot be parsed"]),
        (HEADER + "a,A.,B.,Q?,yes,,square,\n", ["row 2, column 'modality': 'square' is not one of none, box, dia"]),
        (HEADER + "a,A.,B.,Q?,yes,,\n", ["row 2: has 7 fields; the header has 8"]),
        (HEADER + "a,A.,B.,Q?,yes,,,\nb,A.,B.,Q?,no,,,\na,A.,B.,Q?,no,,,\n", ["row 4, column 'item_id': 'a' repeats row 2"]),
        (HEADER + "a,\"A\nstill A.\",B.,Q?,yes,,,\nb,A.,B.,Q?,perhaps,,,\n", ["row 4, column 'gold_answer'"]),
        (HEADER + "a,A.,B.,Q?,yes,,,\nb,\"A.,B.,Q?,no,,,\n", ["row 3: unreadable CSV (unexpected end of data)"]),
    ],
    ids=[
        "empty", "not-utf8", "missing-item-id", "no-gold-column", "duplicate-column", "no-rows",
        "bad-gold", "empty-id", "empty-premise", "empty-question", "empty-gold", "bad-logical-form",
        "bad-modality", "short-row", "duplicate-id", "multiline-field-row-numbers", "unterminated-quote",
    ],
)
def test_error_paths_name_row_and_column_and_save_nothing(data, expected):
    messages = _errors(data)
    for fragment in expected:
        assert any(fragment in m for m in messages), (fragment, messages)


def test_all_errors_reported_not_only_the_first():
    data = HEADER + "a,A.,B.,Q?,maybe,,,\nb,,B.,Q?,yes,,,\nc,A.,B.,Q?,yes,,,\n"
    messages = _errors(data)
    assert len(messages) == 2
    assert messages[0].startswith("row 2") and messages[1].startswith("row 3")


def test_id_already_in_study_is_refused():
    study = StudyFactory(design="csv-import")
    ItemFactory(study=study, code="a1")
    messages = _errors(HEADER + GOOD, study=study)
    assert messages == ["row 2, column 'item_id': 'a1' already exists in this study"]
    assert Item.objects.filter(study=study).count() == 1


def test_import_into_study_with_responses_is_refused():
    trial = TrialFactory()
    with pytest.raises(Exception, match="already has responses"):
        items_import_csv(study=trial.participant.study, data=HEADER + GOOD)
    assert not Item.objects.filter(code="a1").exists()


def test_command_imports_and_a_bad_file_creates_no_study(tmp_path, capsys):
    good, bad = tmp_path / "good.csv", tmp_path / "bad.csv"
    good.write_text(HEADER + GOOD, encoding="utf-8")
    bad.write_text(HEADER + "a,A.,B.,Q?,maybe,,,\n", encoding="utf-8")
    call_command("import_items", str(good), "--study", "bank")
    assert "Imported 2 items into 'bank'" in capsys.readouterr().out
    with pytest.raises(CommandError, match=r"row 2, column 'gold_answer'"):
        call_command("import_items", str(bad), "--study", "other-bank")
    assert not Study.objects.filter(slug="other-bank").exists()
    with pytest.raises(CommandError, match="no such file"):
        call_command("import_items", str(tmp_path / "missing.csv"), "--study", "bank")


def test_export_then_import_round_trip(tmp_path):
    study = StudyFactory()
    items_generate(study=study, design="modal-syllogisms", interpretations=2, seed=4)
    path = tmp_path / "items.csv"
    call_command("generate_items", "necessitation", "--study", study.slug, "--interpretations", "2", "--seed", "4", "--export", str(path))
    copy = StudyFactory(design="csv-import")
    report = items_import_csv(study=copy, data=path.read_bytes())
    assert report.items == 6
    originals = {i.code: i for i in Item.objects.filter(study=study, design="necessitation")}
    for item in Item.objects.filter(study=copy):
        source = originals[item.code]
        assert (item.premises, item.question, item.prompt, item.gold_answer) == (
            source.premises, source.question, source.prompt, source.gold_answer)
        assert item.checker_disagrees == source.checker_disagrees
