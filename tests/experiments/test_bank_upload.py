"""Any bank, mapped (issue 27 part 2): files in CSV, JSON, JSON lines and Parquet read alike; their
columns mapped onto a design's bank columns (suggested by name, refused with a reason for an unknown
column or a required field left unmapped); named presets; a template per design that imports its two
example rows unchanged; the admin's preview, which writes nothing; pair columns into the paired design;
docs/designs.md's table of columns generated from the registry."""
from __future__ import annotations

import io
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.urls import reverse

from experiments import design_registry as registry

from designs.csv_bank.items import items_import_csv
from experiments.items import bank_columns, bank_files
from experiments.design_registry import uploadable
from experiments.items.presets import preset_save
from experiments.models import MappingPreset
from experiments.models import HumanArm, Item, Study
from tests.factories import StudyFactory

ROOT = Path(__file__).resolve().parents[2]
YES_NO = registry.get("csv-import")

# A bank in its own names: what a researcher brings (and what a JSON export of it looks like).
RECORDS = [
    {"ID": "b1", "p1": "Ann is baking a cake or Bo is painting a fence.", "p2": "Ann isn't baking a cake.",
     "Ask": "Can we infer that Bo is painting a fence?", "Answer": True, "form": "p ∨ q, ¬p ⊢ q", "level": 1},
    {"ID": "b2", "p1": "Ann is baking a cake or Bo is painting a fence.", "p2": "Bo is painting a fence.",
     "Ask": "Can we infer that Ann isn't baking a cake?", "Answer": False, "form": None, "level": 2},
]
MAPPING = {"item_id": "ID", "premise": ["p1", "p2"], "question": "Ask", "gold_answer": "Answer",
           "logical_form": "form"}


def _csv(records) -> bytes:
    import csv

    handle = io.StringIO()
    writer = csv.DictWriter(handle, fieldnames=list(records[0]), lineterminator="\n")
    writer.writeheader()
    for r in records:
        writer.writerow({k: ("true" if v is True else "false" if v is False else "" if v is None else v)
                         for k, v in r.items()})
    return handle.getvalue().encode("utf-8")


def _parquet(records) -> bytes:
    sink = io.BytesIO()
    pq.write_table(pa.Table.from_pylist(records), sink)
    return sink.getvalue()


FILES = {
    "bank.csv": _csv(RECORDS),
    "bank.json": json.dumps(RECORDS, ensure_ascii=False).encode("utf-8"),
    "bank.jsonl": "\n".join(json.dumps(r, ensure_ascii=False) for r in RECORDS).encode("utf-8"),
    "bank.parquet": _parquet(RECORDS),
}


# --- reading ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(FILES))
def test_every_format_reads_to_the_same_columns_and_cells(name):
    table = bank_files.read_table(FILES[name], name=name)
    assert table.format == {"csv": "csv", "json": "json", "jsonl": "jsonl", "parquet": "parquet"}[name.split(".")[1]]
    assert table.columns == ("ID", "p1", "p2", "Ask", "Answer", "form", "level")
    assert [r["ID"] for r in table.rows] == ["b1", "b2"]
    assert [r["Answer"] for r in table.rows] == ["true", "false"]  # booleans as true / false
    assert [r["form"] for r in table.rows] == ["p ∨ q, ¬p ⊢ q", ""]  # null as empty
    assert [r["level"] for r in table.rows] == ["1", "2"]
    assert table.labels == (("row 2", "row 3") if name.endswith(".csv") else
                            ("record 1 (line 1)", "record 2 (line 2)") if name.endswith(".jsonl") else
                            ("record 1", "record 2"))


def test_the_format_is_found_from_the_content_without_a_name():
    assert [bank_files.detect_format("", FILES[n][:64]) for n in sorted(FILES)] == ["csv", "json", "jsonl", "parquet"]


def test_a_json_list_cell_fills_the_premises_and_an_object_is_refused():
    data = json.dumps([{"id": "c1", "premises": ["A or B.", "Not A."], "question": "Can we infer that B?",
                        "gold_answer": "yes"}]).encode()
    table = bank_files.read_table(data, name="x.json")
    mapping = bank_files.suggest_mapping(YES_NO.columns, table.columns)
    assert mapping == {"item_id": "id", "premise": ["premises"], "question": "question", "gold_answer": "gold_answer"}
    mapped = bank_files.apply_mapping(table, YES_NO.columns, mapping)
    assert mapped.csv.decode().splitlines()[0] == "item_id,premise_1,premise_2,question,gold_answer"
    with pytest.raises(bank_files.BankError) as info:
        bank_files.read_table(b'[{"id": "c1", "question": {"text": "x"}}]', name="x.json")
    assert info.value.problems == ["record 1, column 'question': holds an object; a column's cells must be text, "
                                   "numbers or (for premises) lists of text"]


@pytest.mark.parametrize(("name", "data", "message"), [
    ("x.json", b'[{"id": 1},', "the file cannot be read as JSON (after record 1): parse error: premature EOF"),
    ("x.json", b'{"id": 1}', "the JSON file must hold a list of objects"),
    ("x.json", b"[1, 2]", "record 1: is not an object"),
    ("x.jsonl", b'{"id": 1}\n{"id": \n', "line 2: not JSON"),
    ("x.parquet", b"PAR1 this is not parquet PAR1", "the file cannot be read as Parquet"),
    ("x.csv", b"id,question\n\xff\xfe,x\n", "the file is not UTF-8 text"),
    ("x.csv", b"id,question\n", "has no rows"),
    ("x.txt", b"id,question\n", "unknown format"),
])
def test_a_file_that_does_not_parse_is_refused_with_its_reason(name, data, message):
    with pytest.raises(bank_files.BankError) as info:
        bank_files.read_table(data, name=name, format="tsv" if name.endswith(".txt") else None)
    assert message in str(info.value)


# --- mapping ------------------------------------------------------------------------------------------

def test_the_suggested_mapping_reads_names_in_any_case_numbered_premises_and_aliases():
    columns = ["id", "premise1", "premise2", "Question", "label", "rulebreaker_type", "premise10"]
    mapping = bank_files.suggest_mapping(YES_NO.columns, columns)
    assert mapping == {"item_id": "id", "premise": ["premise1", "premise2", "premise10"], "question": "Question",
                       "gold_answer": "label"}


def test_an_unknown_column_and_an_unmapped_required_field_are_refused_by_name():
    table = bank_files.read_table(FILES["bank.csv"], name="bank.csv")
    with pytest.raises(bank_files.BankError) as info:
        bank_files.apply_mapping(table, YES_NO.columns, {"item_id": "Id", "premise": "p1, p3"})
    assert info.value.problems == [
        "field 'item_id': the file has no column 'Id' (its columns: ID, p1, p2, Ask, Answer, form, level)",
        "field 'premise': the file has no column 'p3' (its columns: ID, p1, p2, Ask, Answer, form, level)",
        "the required field 'question' is not mapped to any of the file's columns",
    ]
    with pytest.raises(bank_files.BankError, match="the design has no field 'colour'"):
        bank_files.apply_mapping(table, YES_NO.columns, {**MAPPING, "colour": "level"})


def test_a_mapped_bank_is_the_designs_csv_and_its_errors_name_the_files_rows_and_columns():
    table = bank_files.read_table(FILES["bank.json"], name="bank.json")
    mapped = bank_files.apply_mapping(table, YES_NO.columns, MAPPING)
    lines = mapped.csv.decode().splitlines()
    assert lines[0] == "item_id,premise_1,premise_2,question,gold_answer,logical_form,level"
    assert lines[1].startswith("b1,Ann is baking a cake or Bo is painting a fence.,Ann isn't baking a cake.,")
    assert mapped.kept == ("level",)
    bad = [{**RECORDS[0]}, {**RECORDS[1], "Answer": "maybe"}]
    table = bank_files.read_table(json.dumps(bad).encode(), name="bad.json")
    mapped = bank_files.apply_mapping(table, YES_NO.columns, MAPPING)
    from experiments.item_csv import CsvImportError, parse_item_csv

    with pytest.raises(CsvImportError) as info:
        parse_item_csv(mapped.csv)
    assert [mapped.explain(e) for e in info.value.errors] == [
        "record 2, column 'Answer' (the field gold_answer): 'maybe' is not yes or no"]


# --- presets ------------------------------------------------------------------------------------------

@pytest.mark.django_db
def test_a_preset_is_saved_replaced_by_name_and_checked_against_the_designs_fields():
    preset = preset_save(name="my bank", design="csv-import", mapping={**MAPPING, "premise": "p1, p2"})
    assert preset.mapping["premise"] == ["p1", "p2"]
    again = preset_save(name="my bank", design="csv-import", mapping={"item_id": "ID", "question": "Ask"})
    assert again.pk == preset.pk and MappingPreset.objects.get().mapping == {"item_id": "ID", "question": "Ask"}
    for name, design, mapping, message in [
        ("x", "csv-import", {"colour": "c"}, "the design has no field 'colour'"),
        ("x", "modal-syllogisms", {}, "takes no uploaded bank"),
        ("x", "no-such-design", {}, "no-such-design"),
        ("  ", "csv-import", {}, "Give the preset a name."),
    ]:
        with pytest.raises(ValidationError, match=message):
            preset_save(name=name, design=design, mapping=mapping)
    assert MappingPreset.objects.count() == 1


@pytest.fixture
def researcher(client):
    user = get_user_model().objects.create_user("bank-researcher", password="x-" * 8, is_staff=True,
                                                is_superuser=True)
    client.force_login(user)
    return client


@pytest.mark.django_db
def test_a_preset_is_edited_in_the_admin_and_a_wrong_field_is_refused_there(researcher):
    add = reverse("admin:experiments_mappingpreset_add")
    refused = researcher.post(add, {"name": "p", "design": "dual-sided", "mapping": '{"colour": "x"}', "note": ""})
    assert refused.status_code == 200 and "the design has no field" in refused.content.decode()
    assert not MappingPreset.objects.exists()
    done = researcher.post(add, {"name": "p", "design": "dual-sided", "mapping": '{"premise": "if", "conclusion": '
                                 '"then", "flipped_conclusion": "not_then"}', "note": "ULogic-like"})
    assert done.status_code == 302 and MappingPreset.objects.get().mapping["premise"] == "if"


# --- the admin: upload, mapping, preview (nothing written), write ---------------------------------------

def _post(client, study, *, name=None, data=None, follow=False, **fields):
    url = reverse("admin:experiments_study_upload", args=[study.pk])
    body = {"design": fields.pop("design", "csv-import"), **fields}
    if data is not None:
        body["o-csv_file"] = io.BytesIO(data)
        body["o-csv_file"].name = name
    return client.post(url, body, follow=follow)


def _state(study):
    """Everything an upload could write, to compare before and after a preview."""
    study = Study.objects.get(pk=study.pk)
    return (list(Item.objects.order_by("pk").values_list("pk", "code")), study.design, study.settings,
            study.updated_at, MappingPreset.objects.count(), HumanArm.objects.filter(study=study).count())


def _token(page: str) -> str:
    return page.split('name="upload" value="')[1].split('"')[0]


def _previewed(page: str) -> str:
    import html

    return html.unescape(page.split('name="previewed" value="')[1].split('"')[0])


@pytest.mark.django_db
@pytest.mark.parametrize("name", sorted(FILES))
def test_any_format_is_mapped_previewed_without_writing_then_written(researcher, name):
    study = StudyFactory(design="csv-import")
    before = _state(study)
    first = _post(researcher, study, name=name, data=FILES[name]).content.decode()
    # the names do not say the mapping: the page shows the first rows and what it could fill in
    assert "Nothing was written." in first and "the required field &#x27;question&#x27; is not mapped" in first
    assert 'class="file-row"' in first and "Ann isn&#x27;t baking a cake." in first
    assert _state(study) == before
    token = _token(first)
    fields = {"upload": token, "mapped": "1", **{f"m-{k}": ", ".join(v) if isinstance(v, list) else v
                                                 for k, v in MAPPING.items()}}
    preview = _post(researcher, study, **fields, **{"o-factors": "level"}).content.decode()
    assert "Preview: 2 items would be written" in preview, preview[preview.find("errornote"):][:2000]
    for shown in ("Ann isn&#x27;t baking a cake.", "Can we infer that Bo is painting a fence?", "p ∨ q, ¬p ⊢ q",
                  "<td>yes</td>", "<td>no</td>"):
        assert shown in preview
    assert _state(study) == before  # the preview wrote nothing
    written = _post(researcher, study, **fields, **{"o-factors": "level"}, previewed=_previewed(preview),
                    write="Write these 2 items", follow=True).content.decode()
    assert "Imported 2 items into" in written
    items = {i.code: i for i in Item.objects.filter(study=study)}
    assert sorted(items) == ["b1", "b2"] and items["b1"].gold_answer == "yes" and items["b2"].gold_answer == "no"
    assert items["b1"].premises == ["Ann is baking a cake or Bo is painting a fence.", "Ann isn't baking a cake."]
    assert items["b1"].attributes == {"level": "1"} and Study.objects.get(pk=study.pk).settings["factors"] == ["level"]


@pytest.mark.django_db
def test_a_write_with_another_mapping_than_the_previewed_one_writes_nothing(researcher):
    study = StudyFactory(design="csv-import")
    fields = {"mapped": "1", **{f"m-{k}": ", ".join(v) if isinstance(v, list) else v for k, v in MAPPING.items()}}
    preview = _post(researcher, study, name="bank.csv", data=FILES["bank.csv"], **fields).content.decode()
    assert "Preview: 2 items would be written" in preview
    before = _state(study)
    changed = {**fields, "m-premise": "p1"}
    again = _post(researcher, study, upload=_token(preview), **changed, previewed=_previewed(preview),
                  write="Write these 2 items").content.decode()
    assert "The mapping changed since the preview" in again and "Preview: 2 items would be written" in again
    assert _state(study) == before


@pytest.mark.django_db
def test_a_mapping_saved_as_a_preset_fills_in_the_next_upload(researcher):
    study = StudyFactory(design="csv-import")
    fields = {"mapped": "1", **{f"m-{k}": ", ".join(v) if isinstance(v, list) else v for k, v in MAPPING.items()}}
    saved = _post(researcher, study, name="bank.json", data=FILES["bank.json"], **fields,
                  preset_name="lab bank").content.decode()
    assert "Saved this mapping as the preset &#x27;lab bank&#x27;." in saved and "Preview: 2 items" in saved
    preset = MappingPreset.objects.get(name="lab bank")
    assert preset.mapping == {**MAPPING, "logical_form": "form"}
    fresh = _post(researcher, study, name="bank.parquet", data=FILES["bank.parquet"]).content.decode()
    token = _token(fresh)
    used = _post(researcher, study, upload=token, preset=str(preset.pk), use_preset="Use this preset").content.decode()
    assert "Mapping filled in from the preset &#x27;lab bank&#x27;." in used and "Preview: 2 items" in used
    assert not Item.objects.filter(study=study).exists()


@pytest.mark.django_db
def test_an_unreadable_file_is_refused_and_nothing_is_written(researcher):
    study = StudyFactory(design="csv-import")
    before = _state(study)
    page = _post(researcher, study, name="bank.json", data=b'[{"id": "x",')
    assert page.status_code == 400 and "the file cannot be read as JSON" in page.content.decode()
    assert _state(study) == before


# --- templates ----------------------------------------------------------------------------------------

@pytest.mark.django_db
@pytest.mark.parametrize(("design", "items", "codes"), [
    ("csv-import", 2, ["a1", "a2"]),
    ("dual-sided", 20, ["dual-sided:real:r1:original#template-1", "dual-sided:real:r2:flipped#template-5"]),
    ("multiple-choice", 8, ["q1.rot0", "q2.rot3"]),
])
def test_every_design_has_a_template_that_imports_its_two_example_rows_unchanged(researcher, design, items, codes):
    assert [d.name for d in uploadable()] == ["csv-import", "dual-sided", "multiple-choice", "rulebreakers"]
    assert [d.name for d in uploadable() if d.columns] == ["csv-import", "dual-sided", "multiple-choice"]
    response = researcher.get(reverse("admin:experiments_study_template", args=[design]))
    assert response.status_code == 200 and response["Content-Disposition"] == \
        f'attachment; filename="{design}-template.csv"'
    template = response.content
    assert template.decode().splitlines()[0] == ",".join(bank_columns.header(registry.get(design)))
    assert len(template.decode().splitlines()) == 3
    study = StudyFactory(design=design)
    preview = _post(researcher, study, name=f"{design}-template.csv", data=template, design=design).content.decode()
    assert f"Preview: {items} items would be written" in preview and "Mapping filled in from the columns" in preview
    done = _post(researcher, study, upload=_token(preview), design=design, mapped="1",
                 previewed=_previewed(preview), write="w",
                 **{f"m-{c.name}": (", ".join(v) if isinstance(v := bank_files.suggest_mapping(
                     registry.get(design).columns, bank_columns.header(registry.get(design))).get(c.name, ""), list) else v)
                    for c in registry.get(design).columns}, follow=True)
    assert done.redirect_chain, done.content.decode()[:3000]
    stored = set(Item.objects.filter(study=study).values_list("code", flat=True))
    assert len(stored) == items and set(codes) <= stored, sorted(stored)[:5]


@pytest.mark.django_db
def test_a_template_of_a_design_without_a_bank_is_not_found(researcher):
    assert researcher.get(reverse("admin:experiments_study_template", args=["modal-syllogisms"])).status_code == 404


def test_docs_list_every_designs_columns_as_the_registry_declares_them():
    docs = (ROOT / "docs" / "designs.md").read_text(encoding="utf-8")
    assert bank_columns.docs_section() in docs, "docs/designs.md is out of date: run write_docs() (see there)"
    for design in registry.imported():
        assert f"(`{design.name}`" in docs


# --- pair columns -------------------------------------------------------------------------------------

PAIRED = (
    "item_id,premise_1,premise_2,question,gold_answer,pair_id,pair_role,argument_form,entity_kind\n"
    "p1-rb,If Ann is in Paris then she is in France.,Ann is not in France.,"
    "Can we infer that Ann is not in Paris?,no,p1,rulebreaker,MT,geographical\n"
    "p1-nrb,If Ann is in Paris then she is in France.,Ann is not in Spain.,"
    "Can we infer that Ann is not in Paris?,yes,p1,non-rulebreaker,MT,geographical\n"
)


@pytest.mark.django_db
def test_pair_columns_put_a_bank_into_its_paired_design():
    study = StudyFactory(design="csv-import")
    preview = registry.get("csv-import").preview(study=study, data=PAIRED.encode(), rows=10)
    assert preview.count == 2 and {i.pair_role for i in preview.items} == {"rulebreaker", "non-rulebreaker"}
    assert not study.items.exists()
    report = items_import_csv(study=study, data=PAIRED.encode(), factors=["pair_role"])
    assert (report.design, report.pairs, report.items) == ("rulebreakers", 1, 2)
    study.refresh_from_db()
    assert study.design == "rulebreakers" and study.settings["human_variant"] == "bank"
    rb = study.items.get(pair_role="rulebreaker")
    assert (rb.code, rb.pair_id, rb.gold_answer, rb.variant) == ("p1-rb#bank", "p1", "no", "bank")
    assert rb.attributes["rule"] == "MT" and rb.attributes["entity_kind"] == "geographical"


@pytest.mark.django_db
def test_a_pair_with_a_wrong_gold_answer_or_a_missing_member_writes_nothing():
    study = StudyFactory(design="csv-import")
    wrong = PAIRED.replace(",no,p1,rulebreaker", ",yes,p1,rulebreaker")
    with pytest.raises(ValidationError, match="a 'rulebreaker' has gold answer 'no', not 'yes'"):
        items_import_csv(study=study, data=wrong.encode())
    half = PAIRED.rsplit("p1-nrb", 1)[0]
    with pytest.raises(ValidationError, match="pair p1: has 0 'non-rulebreaker' members"):
        items_import_csv(study=study, data=half.encode())
    from experiments.item_csv import CsvImportError

    mixed = PAIRED + "x1,A or B.,Not A.,Can we infer that B?,yes,,,,\n"
    with pytest.raises(CsvImportError, match="row 4, column 'pair_id': is empty, but other rows have pairs"):
        items_import_csv(study=study, data=mixed.encode())
    assert not study.items.exists() and Study.objects.get(pk=study.pk).design == "csv-import"


# --- factor columns, for any design -------------------------------------------------------------------

RULES = [{"If": "Person X is a parent of Person Y", "Then": "Person Y is a child of Person X",
          "Not then": "Person Y is not a child of Person X", "domain": "family"},
         {"If": "Food Y contains Substance Z and Person X is allergic to Substance Z",
          "Then": "Person X cannot eat Food Y", "Not then": "Person X can eat Food Y", "domain": "health"}]


@pytest.mark.django_db
def test_a_rule_bank_in_json_declares_its_factor_column_and_a_wrong_one_writes_nothing(researcher):
    study = StudyFactory(design="dual-sided")
    data = json.dumps(RULES).encode()
    fields = {"design": "dual-sided", "mapped": "1", "m-premise": "If", "m-conclusion": "Then",
              "m-flipped_conclusion": "Not then"}
    before = _state(study)
    wrong = _post(researcher, study, name="rules.json", data=data, **fields, **{"o-bank_factors": "topic"},
                  write="w")
    assert wrong.status_code == 400 and "no column named &#x27;topic&#x27;" in wrong.content.decode()
    assert _state(study) == before
    done = _post(researcher, study, upload=_token(wrong.content.decode()), **fields,
                 **{"o-bank_factors": "domain"}, write="w", follow=True)
    assert done.redirect_chain and study.items.count() == 2 * 2 * 5
    assert Study.objects.get(pk=study.pk).settings["factors"] == ["domain"]


# --- a known published source -------------------------------------------------------------------------

# Two pairs in RULEBREAKERS' finegrained format (jasonchanly/rulebreakers: its columns as published),
# written here by hand; the second pair's non-rulebreaker has a label 000 §3.4 refuses.
RB_HEADER = ("id,rulebreaker_type,category,firstName,pronoun,verb,entityA,entityB,premise1,premise2,conclusion,label,"
             "kc_gen_formatted_prompt,target_correct_conclusion,target_incorrect_conclusion\n")
RB_ROWS = (
    "RULEBREAKER_0000001_rb,mt,cities,Anna,she,lives in,France,Paris,"
    "\"If Anna lives in Paris, then she lives in France.\",Anna does not live in France.,"
    "Anna does not live in Paris.,False,,,\n"
    "RULEBREAKER_0000001_nonrb,mt,cities,Anna,she,lives in,Spain,Paris,"
    "\"If Anna lives in Paris, then she lives in Spain.\",Anna does not live in Spain.,"
    "Anna does not live in Paris.,True,,,\n"
    "RULEBREAKER_0000002_rb,mt,cities,Ben,he,works in,Japan,Tokyo,"
    "\"If Ben works in Tokyo, then he works in Japan.\",Ben does not work in Japan.,"
    "Ben does not work in Tokyo.,False,,,\n"
    "RULEBREAKER_0000002_nonrb,mt,cities,Ben,he,works in,Italy,Tokyo,"
    "\"If Ben works in Tokyo, then he works in Italy.\",Ben does not work in Italy.,"
    "Ben does not work in Tokyo.,False,,,\n"
)


@pytest.mark.django_db
def test_a_known_source_fills_the_mapping_in_and_its_preview_lists_the_rows_left_out(researcher):
    study = StudyFactory(design="rulebreakers")
    before = _state(study)
    data = (RB_HEADER + RB_ROWS).encode()
    page = _post(researcher, study, name="RULEBREAKERS_finegrained_format.csv", data=data,
                 design="rulebreakers").content.decode()
    assert ("Mapping filled in from the known source RULEBREAKERS, finegrained format (000) "
            "(rulebreakers-finegrained)") in page
    assert "<th>premise1</th><td>premise_1</td>" in page  # the reader's columns and what each fills
    assert "Preview: 20 items would be written" in page  # one good pair × the design's ten phrasings
    assert "If Anna lives in Paris, then she lives in France." in page and "<td>no</td>" in page
    assert "<td>P → ¬Q, Q ⊢ ¬P</td>" in page  # its logical form (000 Table 1: modus tollens)
    assert "RULEBREAKER_0000002_nonrb, label" in page and "left out if you write" in page
    assert _state(study) == before
    done = _post(researcher, study, upload=_token(page), design="rulebreakers", filename=_filename(page),
                 previewed="rulebreakers-finegrained", write="Write these 20 items", follow=True).content.decode()
    assert "row(s) of the file were left out" in done
    items = Item.objects.filter(study=study)
    assert items.count() == 20 and items.values("pair_id").distinct().count() == 1
    assert all("RULEBREAKER_0000001" in pair for pair in items.values_list("pair_id", flat=True))
    assert set(items.values_list("pair_role", flat=True)) == {"rulebreaker", "non-rulebreaker"}
    assert set(items.filter(pair_role="rulebreaker").values_list("gold_answer", flat=True)) == {"no"}


def _filename(page: str) -> str:
    return page.split('name="filename" value="')[1].split('"')[0]


@pytest.mark.django_db
def test_a_file_the_rulebreakers_design_cannot_read_is_refused_with_what_it_reads(researcher):
    study = StudyFactory(design="rulebreakers")
    page = _post(researcher, study, name="bank.csv", data=FILES["bank.csv"], design="rulebreakers")
    assert page.status_code == 400
    assert "is not in a format it reads (rulebreakers-finegrained)" in page.content.decode()
    assert not Item.objects.filter(study=study).exists()


# --- the published excerpts through the admin (tests/data/published; hand counts as tests/experiments/test_sources.py) ---

PUBLISHED = ROOT / "tests" / "data" / "published"


@pytest.mark.django_db
def test_the_ulogic_excerpt_in_the_admin_derives_flipped_conclusions_and_lists_the_unflippable_rows(researcher):
    from tests.experiments.test_sources import UNFLIPPABLE

    study = StudyFactory(design="dual-sided")
    data = (PUBLISHED / "ulogic" / "probing_subset_excerpt.json").read_bytes()
    before = _state(study)
    page = _post(researcher, study, name="probing_subset_excerpt.json", data=data, design="dual-sided").content.decode()
    assert "known source ULogic rules, JSON (004) (ulogic-json)" in page
    assert "Preview: 900 items would be written" in page  # 90 rules × original and flipped × 5 templates
    assert "14 rows of the file cannot be imported" in page
    assert all(f"ulogic-{n:04d}, v_rule" in page for n in UNFLIPPABLE)
    assert _state(study) == before
    done = _post(researcher, study, upload=_token(page), design="dual-sided", filename=_filename(page),
                 previewed="ulogic-json", write="w", follow=True).content.decode()
    assert "14 row(s) of the file were left out" in done
    assert study.items.count() == 900


@pytest.mark.django_db
def test_the_logiqa_excerpt_in_the_admin_imports_into_multiple_choice(researcher):
    study = StudyFactory(design="multiple-choice")
    data = (PUBLISHED / "logiqa" / "Eval_excerpt.txt").read_bytes()
    page = _post(researcher, study, name="Eval_excerpt.txt", data=data, design="multiple-choice").content.decode()
    assert "known source" in page and "(logiqa-text)" in page
    assert "Preview: 356 items would be written" in page and "logiqa-0028, option_c" in page
    assert not study.items.exists()
    done = _post(researcher, study, upload=_token(page), design="multiple-choice", filename=_filename(page),
                 previewed="logiqa-text", write="w", follow=True).content.decode()
    assert "Imported 89 multiple-choice questions" in done and study.items.count() == 356


@pytest.mark.django_db
def test_a_mapping_naming_a_column_the_file_lacks_is_refused_in_the_admin_and_nothing_is_written(researcher):
    study = StudyFactory(design="csv-import")
    before = _state(study)
    fields = {"mapped": "1", **{f"m-{k}": ", ".join(v) if isinstance(v, list) else v for k, v in MAPPING.items()},
              "m-question": "Question"}
    page = _post(researcher, study, name="bank.csv", data=FILES["bank.csv"], **fields, write="w")
    assert page.status_code == 400
    assert "field &#x27;question&#x27;: the file has no column &#x27;Question&#x27;" in page.content.decode()
    assert _state(study) == before


@pytest.mark.django_db
def test_a_known_sources_factor_columns_are_checked_and_a_wrong_one_writes_nothing(researcher):
    study = StudyFactory(design="dual-sided")
    data = (PUBLISHED / "ulogic" / "probing_subset_excerpt.json").read_bytes()
    page = _post(researcher, study, name="probing_subset_excerpt.json", data=data, design="dual-sided").content.decode()
    token, filename = _token(page), _filename(page)
    before = _state(study)
    for wrong in ("topic", "premise"):  # not a column; a field of the design, not a descriptive column
        refused = _post(researcher, study, upload=token, design="dual-sided", filename=filename,
                        previewed="ulogic-json", write="w", **{"o-bank_factors": wrong})
        assert refused.status_code == 400 and "no column named" in refused.content.decode(), wrong
        assert _state(study) == before
    done = _post(researcher, study, upload=token, design="dual-sided", filename=filename, previewed="ulogic-json",
                 write="w", follow=True, **{"o-bank_factors": "domain"})
    assert done.redirect_chain and study.items.count() == 900
    assert Study.objects.get(pk=study.pk).settings["factors"] == ["domain"]


# --- a Latin-1 CSV and a workbook, as a new user brings them (issue 34 item 7) --------------------------

LATIN1 = ("item_id,premise_1,question,gold_answer\n"
          + "".join(f"i{n},Ann is reading or Bo is cooking.,Can we infer that Bo is cooking?,no\n" for n in range(600))
          + "cafe,Le café est ouvert.,Can we infer that it is open?,yes\n").encode("latin-1")


def _workbook() -> bytes:
    import zipfile

    sink = io.BytesIO()
    with zipfile.ZipFile(sink, "w") as book:  # the parts every .xlsx has
        book.writestr("[Content_Types].xml", '<?xml version="1.0"?><Types/>')
        book.writestr("xl/workbook.xml", '<?xml version="1.0"?><workbook/>')
        book.writestr("xl/worksheets/sheet1.xml", '<?xml version="1.0"?><worksheet/>')
    return sink.getvalue()


def _errors(page: str) -> list[str]:
    import html
    import re

    block = page.split('id="import-errors"')[1].split("</div>")[0]
    return [html.unescape(e) for e in re.findall(r"<li>(.*?)</li>", block, re.S)]


@pytest.mark.django_db
@pytest.mark.parametrize("design", ["csv-import", "dual-sided", "multiple-choice", "rulebreakers"])
def test_a_latin1_csv_names_its_line_and_says_save_as_csv_utf8_once(researcher, design):
    study = StudyFactory(design=design)
    page = _post(researcher, study, name="bank.csv", data=LATIN1, design=design)
    assert page.status_code == 400
    errors = _errors(page.content.decode())
    assert len(errors) == len(set(errors)), errors  # each error once
    utf8 = [e for e in errors if "not UTF-8 text" in e]
    assert len(utf8) == 1, errors
    assert ("row 602" in utf8[0] or "line 602" in utf8[0]) and "CSV UTF-8" in utf8[0], utf8  # 600 rows after the header
    assert not Item.objects.filter(study=study).exists()


@pytest.mark.django_db
@pytest.mark.parametrize("design", ["csv-import", "dual-sided", "multiple-choice", "rulebreakers"])
@pytest.mark.parametrize("name", ["bank.xlsx", "bank.bin"])
def test_an_excel_workbook_is_refused_once_with_how_to_export_it(researcher, design, name):
    study = StudyFactory(design=design)
    page = _post(researcher, study, name=name, data=_workbook(), design=design)
    assert page.status_code == 400
    errors = _errors(page.content.decode())
    assert errors == [bank_files.WORKBOOK_MESSAGE], errors
    assert "Duet does not read workbooks" in errors[0] and "CSV UTF-8" in errors[0]
    assert not Item.objects.filter(study=study).exists()


def test_a_workbook_at_the_command_line_gets_the_same_advice():
    from experiments.item_csv import CsvImportError, parse_item_csv

    with pytest.raises(CsvImportError, match="Duet does not read workbooks"):
        parse_item_csv(_workbook())
    with pytest.raises(bank_files.BankError, match="Duet does not read workbooks"):
        bank_files.read_table(_workbook(), name="bank.xlsx")
