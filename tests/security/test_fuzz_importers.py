"""Property-based tests: malformed files thrown at every importer.

The shared CSV reader (logic/csv_table.py), the yes/no item bank (experiments/item_csv.py,
through the import_items command and the items_import_csv service), the dual-sided rule bank
(designs/paired/dual_sided.py) and, where present, the services that save paired and
multiple-choice banks. Every file either imports completely or is refused with an error message
that names its row; no other exception escapes, and a refused file leaves every row count as it was.
"""
from __future__ import annotations


import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from designs.csv_bank.items import items_import_csv
from designs.multiple_choice import items as mc_items
from designs.paired import items as paired_designs
from experiments.item_csv import parse_item_csv
from logic.csv_table import CsvImportError, open_csv
from designs.paired.dual_sided import parse_rule_bank
from experiments.models import Interpretation, Item, Study
from tests.factories import StudyFactory

PURE = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
DB = settings(max_examples=60, deadline=None,
              suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])

ITEM_COLUMNS = ["item_id", "premise_1", "premise_2", "question", "gold_answer", "logical_form", "template_valid",
                "prompt", "modality", "argument_form", "form_id", "condition", "notes"]
RULE_COLUMNS = ["premise", "conclusion", "flipped_conclusion", "rule_id", "length", "domain"]
MC_COLUMNS = ["id", "context", "question", "answer", "option_a", "option_b", "option_c", "option_d", "type", "domain"]

# Cells: ordinary words, the values the columns expect, and the awkward (quotes, separators, line
# breaks, NUL, other scripts, very long text, formulas that parse and that do not).
SPECIAL = ["", "yes", "no", "true", "0", "box", "□", "dia", "real", "nonsense", "p ∨ q, ¬p ⊢ q",
           "[](p|q), <>~p |- <>q", "p |- ", "If it rains", "then it is wet", "\x00", "a\x00b", '"', '""', ",",
           "\n", "\r\n", "x" * 70, "y" * 400, "é" * 130, "=cmd|' /C calc'!A0", "\ufeff", "\u2028"]
cells = st.sampled_from(SPECIAL) | st.text(max_size=30) | st.from_regex(r"[a-z]{1,8}( [a-z]{1,8}){0,4}", fullmatch=True)


def _quote(cell: str, how: str) -> str:
    if how == "raw":
        return cell
    return '"' + cell.replace('"', '""') + '"'


@st.composite
def csv_files(draw, columns):
    header = draw(st.lists(st.sampled_from(columns) | st.text(max_size=8), min_size=1, max_size=len(columns) + 2))
    if draw(st.booleans()):  # mostly keep the columns a real file has, in a random order
        header = draw(st.permutations(columns[: draw(st.integers(1, len(columns)))])) + header[:1]
    width = len(header)
    lines = [",".join(_quote(h, draw(st.sampled_from(["raw", "quoted"]))) for h in header)]
    for _ in range(draw(st.integers(0, 5))):
        n = draw(st.sampled_from([width, width, width, width - 1, width + 1]))
        row = [draw(cells) for _ in range(max(n, 0))]
        lines.append(",".join(_quote(c, draw(st.sampled_from(["raw", "quoted", "quoted"]))) for c in row))
    text = draw(st.sampled_from(["\n", "\r\n"])).join(lines) + draw(st.sampled_from(["", "\n"]))
    encoding = draw(st.sampled_from(["utf-8", "utf-8", "utf-8-sig", "latin-1", "utf-16"]))
    try:
        return text.encode(encoding)
    except UnicodeEncodeError:
        return text.encode("utf-8")


VALID_ITEM = {"item_id": "q{n}", "premise_1": "Mia is painting a fence or Leo is washing a car.",
              "question": "Can we infer that Leo is washing a car?", "gold_answer": "no", "modality": "none",
              "logical_form": "p ∨ q ⊢ q", "form_id": "or-elim", "argument_form": "∨⊬", "condition": "real",
              "template_valid": "false", "notes": "kept"}
VALID_RULE = {"premise": "Person X is allergic to Substance Z and Food Y contains Substance Z",
              "conclusion": "Person X cannot eat Food Y", "flipped_conclusion": "Person X can eat Food Y",
              "rule_id": "r{n}", "length": "2", "domain": "health"}
VALID_MC = {"id": "m{n}", "context": "Every whale is a mammal. No trout is a mammal.",
            "question": "Which of these is a mammal?", "answer": "B", "option_a": "a trout", "option_b": "a whale",
            "option_c": "a heron", "option_d": "a newt", "type": "3e1c", "domain": "biology"}


@st.composite
def nearly_valid(draw, template: dict):
    """A valid bank of 1–4 rows in which up to two cells are replaced by awkward values: most files
    import, so the saving path (column widths, NUL bytes, JSON attributes) is exercised too."""
    columns = list(template)
    rows = [[template[c].format(n=n) for c in columns] for n in range(draw(st.integers(1, 4)))]
    for _ in range(draw(st.integers(0, 2))):
        row, col = draw(st.integers(0, len(rows) - 1)), draw(st.integers(0, len(columns) - 1))
        rows[row][col] = draw(cells)
    lines = [",".join(columns)] + [",".join(_quote(c, "quoted") for c in row) for row in rows]
    return ("\n".join(lines) + "\n").encode("utf-8")


def files_or_bytes(columns):
    valid = next((t for t in (VALID_ITEM, VALID_RULE, VALID_MC) if set(columns) <= set(t) | {"premise_2", "prompt"}), None)
    strategies = csv_files(columns) | st.binary(max_size=200)
    return strategies | nearly_valid(valid) if valid else strategies


def _refusal_names_a_row(error: CsvImportError) -> None:
    assert error.errors and "nothing was imported" in str(error)
    assert all(e.row >= 1 and e.message for e in error.errors)


@PURE
@given(data=files_or_bytes(ITEM_COLUMNS))
def test_the_csv_reader_reads_or_names_the_row(data):
    try:
        table = open_csv(data, required=("item_id",))
        rows = list(table.records())
        table.finish(rows, "rows")
    except CsvImportError as error:
        _refusal_names_a_row(error)


@PURE
@given(data=files_or_bytes(ITEM_COLUMNS))
def test_the_item_bank_parser_returns_rows_or_names_the_row(data):
    try:
        rows = parse_item_csv(data)
    except CsvImportError as error:
        _refusal_names_a_row(error)
    else:
        assert rows and all(r.item_id and r.question and r.gold_answer in ("yes", "no") for r in rows)


@PURE
@given(data=files_or_bytes(RULE_COLUMNS))
def test_the_rule_bank_parser_returns_rules_or_names_the_row(data):
    try:
        rules = parse_rule_bank(data)
    except CsvImportError as error:
        _refusal_names_a_row(error)
    else:
        assert rules and all(r.premise and r.conclusion and r.flipped_conclusion for r in rules)


def _counts():
    return Study.objects.count(), Item.objects.count(), Interpretation.objects.count()


@pytest.mark.django_db
@DB
@given(data=files_or_bytes(ITEM_COLUMNS))
def test_the_item_bank_service_saves_all_rows_or_none(data):
    study = StudyFactory(design="csv-import")
    before = _counts()
    try:
        report = items_import_csv(study=study, data=data)
    except CsvImportError as error:
        _refusal_names_a_row(error)
        assert _counts() == before
    else:
        assert _counts() == (before[0], before[1] + report.items, before[2])
        for item in Item.objects.filter(study=study):
            item.full_clean()  # every saved value fits its column (PostgreSQL would refuse it otherwise)


@pytest.mark.django_db
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=files_or_bytes(ITEM_COLUMNS))
def test_the_import_items_command_imports_all_or_says_why(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("bank") / "bank.csv"
    path.write_bytes(data)
    before = _counts()
    try:
        call_command("import_items", str(path), study="fuzzed-bank", stdout=open("/dev/null", "w"))
    except CommandError as error:
        assert str(error).strip()
        assert _counts() == before  # not even the new study is left behind
    else:
        assert Item.objects.filter(study__slug="fuzzed-bank").count() > 0
        Study.objects.filter(slug="fuzzed-bank").get().items.all().delete()
        Study.objects.filter(slug="fuzzed-bank").delete()


def _saves_all_or_none(service, study, data) -> None:
    """A bank service either refuses the file (naming a row, writing nothing) or saves valid items."""
    before = _counts()
    try:
        service(study=study, data=data)
    except CsvImportError as error:
        _refusal_names_a_row(error)
        assert _counts() == before
    else:
        assert _counts()[1] > before[1]
        for item in Item.objects.filter(study=study):
            item.full_clean()


@pytest.mark.django_db
@DB
@given(data=files_or_bytes(RULE_COLUMNS))
def test_the_rule_bank_service_saves_all_rules_or_none(data):
    _saves_all_or_none(paired_designs.dual_sided_import, StudyFactory(design="dual-sided"), data)


@pytest.mark.django_db
@DB
@given(data=files_or_bytes(MC_COLUMNS))
def test_the_multiple_choice_service_saves_all_rows_or_none(data):
    _saves_all_or_none(mc_items.items_import_multiple_choice, StudyFactory(design="multiple-choice"), data)


def _bank(**changes) -> bytes:
    row = {**VALID_ITEM, "item_id": "q0", **changes}
    return (",".join(row) + "\n" + ",".join(_quote(v, "quoted") for v in row.values()) + "\n").encode("utf-8")


@pytest.mark.django_db
@pytest.mark.parametrize("changes", [
    {"condition": "c" * 13}, {"form_id": "f" * 61}, {"argument_form": "a" * 31}, {"item_id": "i" * 121},
    {"question": "Can we infer\x00 that?"}, {"premise_1": "\x00"}, {"notes": "a\x00b"}, {"prompt": "p\x00"},
    {"logical_form": "(" * 200 + "p" + ")" * 200 + " ⊢ p"}, {"logical_form": " ∧ ".join(["p", "q"] * 60) + " ⊢ p"},
], ids=lambda c: next(iter(c)) + ":" + repr(next(iter(c.values())))[:12])
def test_values_that_do_not_fit_a_column_are_refused_by_name(changes):
    """Found by the properties above: such values once reached the database (PostgreSQL refused
    them with a DataError, a 500 in the admin and a traceback from import_items)."""
    study = StudyFactory(design="csv-import")
    before = _counts()
    try:
        items_import_csv(study=study, data=_bank(**changes))
    except CsvImportError as error:
        _refusal_names_a_row(error)
        assert _counts() == before
    else:
        for item in Item.objects.filter(study=study):
            item.full_clean()


# JSON and JSON lines banks (issue 34 item 4): any value, however nested, and any bytes are read or
# refused with a BankError; never another exception (a RecursionError was a 500).
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=30)


@PURE
@given(value=json_values, depth=st.integers(0, 40), lines=st.booleans())
def test_a_json_bank_is_read_or_refused_with_its_reason(value, depth, lines):
    import json

    from experiments.items import bank_files

    for _ in range(depth):
        value = [value] if depth % 2 else {"k": value}
    text = json.dumps(value)
    data = (text + "\n" + text).encode() if lines else text.encode()
    try:
        table = bank_files.read_table(data, name="bank.jsonl" if lines else "bank.json")
    except bank_files.BankError as error:
        assert error.problems and all(p.strip() for p in error.problems)
    else:
        assert table.rows and all(isinstance(row, dict) for row in table.rows)


@PURE
@given(data=st.binary(max_size=300), name=st.sampled_from(["bank.json", "bank.jsonl", "bank.parquet", "bank.csv"]))
def test_any_bytes_are_read_or_refused_in_every_format(data, name):
    from experiments.items import bank_files

    try:
        bank_files.read_table(data, name=name)
    except bank_files.BankError as error:
        assert error.problems
