"""Bounded imports (issue 26 items 4, 5, 8 and 10; issue 25's descriptive column names).

Every bound is asserted on a counter (search nodes, rows read, bytes kept, queries issued), never on
seconds. Each test failed on the main branch before these bounds: the probe was checked for 21.7 s
and accepted, deep forms raised RecursionError (a 500), a stream could not be read at all, an upload
was read whole before its size was checked, and the preview wrote the import and rolled it back.
"""
from __future__ import annotations

import io
import string
import time

import pytest
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.db import connection
from django.test.utils import CaptureQueriesContext, override_settings
from django.urls import reverse

from experiments import item_csv
from experiments import design_registry as registry
from designs.csv_bank import items as csv_bank
from experiments.items import uploads
from experiments.item_csv import CsvImportError, parse_item_csv
from logic import csv_table
from logic.checker import MAX_NODES, MAX_SIZE, TooComplex, entails
from designs.paired.dual_sided import parse_rule_bank
from logic.parser import MAX_DEPTH, ParseError, parse_sequent
from experiments.models import HumanArm, Item
from experiments.models.human_arm import validate_practice
from experiments.participation.services import human_arm_ensure
from tests.admin_form import change_form
from tests.factories import StudyFactory

HEADER = "item_id,premise_1,question,gold_answer,logical_form\n"


def _probe(disjunctions: int) -> str:
    """The issue's probe: independent disjunctions a0 | b0, c0 | d0, …, then z1 | z2, ~z1, ~z2 ⊢ q.
    Its premises are inconsistent, but only the last disjunction shows it, and the checker branches on
    it last: each disjunction before it doubles the search."""
    names = [f"{string.ascii_lowercase[i % 26]}{i // 26}" for i in range(2 * disjunctions)]
    premises = [f"{names[2 * i]} | {names[2 * i + 1]}" for i in range(disjunctions)]
    return ", ".join([*premises, "z1 | z2", "~z1", "~z2"]) + " |- q"


def _row(item_id: str, form: str) -> str:
    return f'{item_id},Ann is reading.,Can we infer that Bo is cooking?,,"{form}"\n'


# --------------------------------------------------------------------------- item 4: the checker's budget


def test_the_issue_probe_is_refused_within_the_checker_budget_and_its_row_is_named():
    probe = _probe(17)
    assert 170 <= len(probe) <= 178  # the issue's 178-character form
    with pytest.raises(TooComplex, match=rf"this form is too complex to check \(limit {MAX_NODES:,} search nodes\)"):
        entails(*_sequent(probe))
    with pytest.raises(CsvImportError) as info:
        parse_item_csv(HEADER + _row("ok", "p ∨ q, ¬p ⊢ q") + _row("probe", probe))
    assert [str(e) for e in info.value.errors] == [
        f"row 3, column 'logical_form': this form is too complex to check (limit {MAX_NODES:,} search nodes)"]


def _sequent(text):
    sequent = parse_sequent(text)
    return sequent.premises, sequent.conclusion


def test_the_search_counts_its_nodes_and_a_smaller_probe_is_decided_within_the_budget():
    small, larger = (entails(*_sequent(_probe(n)), "K") for n in (6, 8))
    assert small.valid and larger.valid  # inconsistent premises entail anything
    assert 0 < small.nodes < larger.nodes <= MAX_NODES  # the search doubles with each disjunction
    assert larger.nodes >= 4 * small.nodes // 2
    assert entails(*_sequent(_probe(8)), "K", max_nodes=larger.nodes).valid
    with pytest.raises(TooComplex, match=f"limit {larger.nodes - 1:,} search nodes"):
        entails(*_sequent(_probe(8)), "K", max_nodes=larger.nodes - 1)


def test_an_argument_past_the_size_limit_is_refused_before_any_search():
    premises = [f"p{i} ∨ q{i}" for i in range(MAX_SIZE // 3 + 1)]
    with pytest.raises(TooComplex, match=rf"limit {MAX_SIZE} symbols; this one has \d+"):
        entails(premises, "r")


def test_a_file_of_hard_forms_shares_one_budget(monkeypatch):
    monkeypatch.setattr(item_csv, "FILE_NODES", MAX_NODES + 1000)
    rows = "".join(_row(f"hard{n}", _probe(14).replace("q", f"r{n}")) for n in range(3))
    with pytest.raises(CsvImportError) as info:
        parse_item_csv(HEADER + rows)
    messages = [e.message for e in info.value.errors]
    assert messages[0] == f"this form is too complex to check (limit {MAX_NODES:,} search nodes)"
    assert all("for the whole file's forms together" in m for m in messages[1:]) and len(messages) == 3


def test_lengths_are_checked_before_any_parsing_or_checking(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("a cell too long for its column reached the parser or the checker")

    monkeypatch.setattr(item_csv, "parse_sequent", refuse)
    monkeypatch.setattr(item_csv, "entails", refuse)
    long_form = _probe(40)  # 400-odd characters: far too hard to check, and too long to store
    assert len(long_form) > item_csv.MAX_LENGTH["logical_form"]
    with pytest.raises(CsvImportError) as info:
        parse_item_csv(HEADER + _row("long", long_form))
    assert [str(e) for e in info.value.errors] == ["row 2, column 'logical_form': is longer than 300 characters"]


# --------------------------------------------------------------------------- item 10: depth limits


@pytest.mark.parametrize("deep", [
    "(" * 1500 + "p" + ")" * 1500 + " ⊢ p",
    "¬" * 2000 + "p ⊢ p",
    " ∨ ".join(["p"] * 2000) + " ⊢ p",
    " → ".join(["p"] * 1500) + " ⊢ p",
    "□◇" * 800 + "p ⊢ p",
])
def test_deeply_nested_forms_are_a_parse_error_not_a_recursion_error(deep):
    with pytest.raises(ParseError, match=f"the formula nests more than {MAX_DEPTH} levels deep"):
        parse_sequent(deep)
    with pytest.raises(ValidationError, match=r"Practice question #2: its 'logical_form' cannot be parsed"):
        validate_practice([{"premises": ["A."], "question": "B?", "answer": "yes", "logical_form": "p ⊢ p"},
                           {"premises": ["A."], "question": "B?", "answer": "yes", "logical_form": deep}])


def test_a_form_just_within_the_depth_limit_is_checked():
    sequent = parse_sequent("¬" * MAX_DEPTH + "p ⊢ p")
    assert entails(sequent.premises, sequent.conclusion, "K").valid  # an even number of negations
    assert sequent.to_unicode().startswith("¬" * MAX_DEPTH)


def test_a_deep_form_in_a_csv_row_is_that_rows_error():
    deep = "~" * 150 + "p |- p"  # short enough to store, too deep to parse
    with pytest.raises(CsvImportError) as info:
        parse_item_csv(HEADER + _row("a1", "p |- p") + _row("deep", deep))
    [error] = info.value.errors
    assert (error.row, error.column) == (3, "logical_form")
    assert f"the formula nests more than {MAX_DEPTH} levels deep" in error.message


# --------------------------------------------------------------------------- item 5: bounded tables


class _Rows(io.RawIOBase):
    """A CSV file of `rows` rows made as it is read; counts the bytes handed out."""

    def __init__(self, rows: int):
        self.lines = (f"i{n},Ann is reading.,Is Ann reading?,yes\n".encode() for n in range(rows))
        self.pending = b"item_id,premise_1,question,gold_answer\n"
        self.handed = 0

    def readable(self):
        return True

    def readinto(self, buffer):
        while len(self.pending) < len(buffer):
            line = next(self.lines, None)
            if line is None:
                break
            self.pending += line
        size = min(len(buffer), len(self.pending))
        buffer[:size], self.pending = self.pending[:size], self.pending[size:]
        self.handed += size
        return size


def test_a_million_row_file_is_read_only_up_to_the_row_limit():
    stream = _Rows(1_000_000)
    with pytest.raises(CsvImportError) as info:
        parse_item_csv(io.BufferedReader(stream))
    [error] = info.value.errors
    assert error.row == csv_table.MAX_ROWS + 2
    assert error.message.startswith(f"the file has more than {csv_table.MAX_ROWS:,} rows")
    row_bytes = len("i999999,Ann is reading.,Is Ann reading?,yes\n")
    assert stream.handed <= (csv_table.MAX_ROWS + 2) * row_bytes + 64 * 1024  # not the other 980,000 rows


def test_twenty_thousand_extra_columns_are_refused_at_the_header():
    header = "item_id,premise_1,question,gold_answer," + ",".join(f"x{n % 10_000}" for n in range(20_000))
    with pytest.raises(CsvImportError) as info:
        parse_item_csv(header + "\n" + "a,b,c,yes" + ",v" * 20_000 + "\n")
    assert [str(e) for e in info.value.errors] == [
        f"row 1: the header has 20,004 columns; at most {csv_table.MAX_COLUMNS} are read"]


def test_repeated_columns_are_each_named_once_whatever_their_case():
    header = ["item_id", "premise_1", "question", "gold_answer", "Domain", "domain", "extra", "EXTRA", "extra"]
    with pytest.raises(CsvImportError) as info:
        parse_item_csv(",".join(header) + "\n" + ",".join(["v"] * len(header)) + "\n")
    assert [str(e) for e in info.value.errors] == [
        "row 1, column 'domain': column appears more than once",
        "row 1, column 'extra': column appears more than once"]


# --------------------------------------------------------------------------- issue 25: column names


def test_descriptive_columns_keep_their_names_and_known_ones_match_in_any_case():
    [row] = parse_item_csv("Item_ID,Premise_1,QUESTION,Gold_Answer,entityA,Domain\n"
                           "a1,Ann is reading.,Is Ann reading?,yes,Ann,books\n")
    assert (row.item_id, row.gold_answer) == ("a1", "yes")
    assert row.attributes == {"entityA": "Ann", "Domain": "books"}
    [rule] = parse_rule_bank("premise,conclusion,flipped_conclusion,s_Rule,Length\n"
                             "it rains,the street is wet,the street is not wet,R1,2\n")
    assert rule.attributes["s_Rule"] == "R1" and "s_rule" not in rule.attributes


# --------------------------------------------------------------------------- the admin: uploads


@pytest.fixture
def researcher(client):
    user = get_user_model().objects.create_user("bounded-researcher", password="x-" * 8, is_staff=True,
                                                is_superuser=True)
    client.force_login(user)
    return client


@pytest.fixture
def upload_dir(tmp_path, settings):
    settings.DUET_UPLOAD_DIR = tmp_path / "uploads"
    return settings.DUET_UPLOAD_DIR


def _post(client, study, data: bytes | None, **extra):
    fields = {"design": "csv-import", **extra}
    if data is not None:
        fields["o-csv_file"] = io.BytesIO(data)
        fields["o-csv_file"].name = "bank.csv"
    return client.post(reverse("admin:experiments_study_upload", args=[study.pk]), fields)


def _kept(upload_dir) -> list:
    return sorted(p for p in upload_dir.rglob("*") if p.is_file()) if upload_dir.exists() else []


def _bank(rows: int, notes: int = 0) -> bytes:
    lines = ["item_id,premise_1,question,gold_answer,notes"]
    lines += [f"i{n},Ann is reading.,Can we infer that Ann is reading?,yes,{'n' * notes}" for n in range(rows)]
    return ("\n".join(lines) + "\n").encode()


@pytest.mark.django_db
@override_settings(DUET_MAX_UPLOAD_BYTES=4096)
def test_an_upload_past_the_limit_is_dropped_while_it_is_read(researcher, upload_dir):
    study = StudyFactory(design="csv-import")
    response = _post(researcher, study, _bank(3000))  # about 150 KB
    assert response.status_code == 400
    assert ("The file is larger than 4 KB (the deployment&#x27;s setting DUET_MAX_UPLOAD_MB); nothing of it was "
            "kept.") in response.content.decode()
    [handler] = response.wsgi_request.upload_handlers
    assert handler.kept <= 4096  # never more than the limit on disk, and nothing in memory
    assert not study.items.exists() and _kept(upload_dir) == []


@pytest.mark.django_db
def test_a_file_over_the_form_field_limit_is_previewed_then_written_from_the_server(researcher, upload_dir,
                                                                                    settings):
    study = StudyFactory(design="csv-import")
    data = _bank(1500, notes=2000)
    assert len(data) > settings.DATA_UPLOAD_MAX_MEMORY_SIZE  # it could not go back as a form field
    preview = _post(researcher, study, data)
    page = preview.content.decode()
    assert preview.status_code == 200 and "Preview: 1500 items would be written" in page
    assert 'name="payload"' not in page and not study.items.exists()
    token = page.split('name="upload" value="')[1].split('"')[0]
    assert uploads.TOKEN.fullmatch(token) and len(_kept(upload_dir)) == 1
    # another researcher cannot use the token
    other = get_user_model().objects.create_user("other", password="x-" * 8, is_staff=True, is_superuser=True)
    researcher.force_login(other)
    refused = _post(researcher, study, None, upload=token, write="yes")
    assert refused.status_code == 400 and "no longer kept on the server" in refused.content.decode()
    assert not study.items.exists()
    researcher.force_login(get_user_model().objects.get(username="bounded-researcher"))
    for bad in ("../" * 10 + "etc/passwd", token[:-1], ""):
        assert _post(researcher, study, None, upload=bad, write="yes").status_code == 400
    written = _post(researcher, study, None, upload=token, write="yes")
    assert written.status_code == 302 and study.items.count() == 1500
    assert Item.objects.get(study=study, code="i7").attributes == {"notes": "n" * 2000}
    assert _kept(upload_dir) == []  # removed once written


@pytest.mark.django_db
def test_kept_uploads_expire(researcher, upload_dir, settings):
    study = StudyFactory(design="csv-import")
    page = _post(researcher, study, _bank(2)).content.decode()
    token = page.split('name="upload" value="')[1].split('"')[0]
    assert uploads.uploads_expire(now=time.time() + 60 * settings.DUET_UPLOAD_TTL_MINUTES - 60) == 0
    assert uploads.uploads_expire(now=time.time() + 60 * settings.DUET_UPLOAD_TTL_MINUTES + 60) == 1
    refused = _post(researcher, study, None, upload=token, write="yes")
    assert refused.status_code == 400 and not study.items.exists()


@pytest.mark.django_db
def test_a_preview_writes_nothing_and_its_items_are_what_the_write_stores(researcher, upload_dir):
    study = StudyFactory(design="csv-import")
    with CaptureQueriesContext(connection) as queries:
        page = _post(researcher, study, _bank(30)).content.decode()
    writes = [q["sql"] for q in queries.captured_queries
              if q["sql"].lstrip().upper().startswith(("INSERT", "UPDATE", "DELETE", "SAVEPOINT", "BEGIN"))
              and "django_session" not in q["sql"]]
    assert writes == [] and "Preview: 30 items would be written" in page
    assert page.count("<tr><td>i") == 10  # the first ten rows, held and shown; no more
    token = page.split('name="upload" value="')[1].split('"')[0]
    assert _post(researcher, study, None, upload=token, write="yes").status_code == 302
    assert list(study.items.order_by("id").values_list("code", flat=True)[:10]) == [f"i{n}" for n in range(10)]


@pytest.mark.django_db
def test_an_import_parses_before_its_write_transaction_begins(monkeypatch):
    study = StudyFactory(design="csv-import")
    outside = len(connection.atomic_blocks)
    seen = []
    real = csv_bank.parse_item_csv

    def parse(*args, **kwargs):
        seen.append(len(connection.atomic_blocks))
        return real(*args, **kwargs)

    monkeypatch.setattr(csv_bank, "parse_item_csv", parse)
    csv_bank.items_import_csv(study=study, data=_bank(3))
    assert seen == [outside] and study.items.count() == 3


@pytest.mark.django_db
def test_a_preview_past_the_row_limit_is_a_400_naming_the_row(researcher, upload_dir):
    study = StudyFactory(design="csv-import")
    data = b"item_id,premise_1,question,gold_answer\n" + b"".join(
        f"i{n},p,q?,yes\n".encode() for n in range(csv_table.MAX_ROWS + 5000))
    response = _post(researcher, study, data)
    assert response.status_code == 400
    assert f"row {csv_table.MAX_ROWS + 2}: the file has more than {csv_table.MAX_ROWS:,} rows" in response.content.decode()
    assert not study.items.exists() and _kept(upload_dir) == []


@pytest.mark.django_db
def test_a_deep_or_hard_form_in_an_upload_is_a_400_with_its_row(researcher, upload_dir):
    study = StudyFactory(design="csv-import")
    data = (HEADER + _row("a1", "p |- p") + _row("deep", "(" * 1500 + "p" + ")" * 1500 + " |- p")
            + _row("nested", "~" * 150 + "p |- p") + _row("probe", _probe(17))).encode()
    response = _post(researcher, study, data)
    page = response.content.decode()
    assert response.status_code == 400
    assert "row 3, column &#x27;logical_form&#x27;: is longer than 300 characters" in page
    assert "row 4, column &#x27;logical_form&#x27;: cannot be parsed: the formula nests more than 100" in page
    assert "row 5, column &#x27;logical_form&#x27;: this form is too complex to check (limit 5,000" in page


@pytest.mark.django_db
def test_a_deep_practice_form_in_the_editor_is_refused_with_its_number(researcher):
    study = StudyFactory(design="modal-syllogisms")
    before = human_arm_ensure(study=study).practice
    url, _, data = change_form(researcher, reverse("admin:experiments_study_change", args=[study.pk]))
    data["human_arm-0-practice-0-logical_form"] = " ∨ ".join(["p"] * 2000) + " ⊢ p"
    response = researcher.post(url, data)
    assert response.status_code != 500
    assert "Practice question #1: its &#x27;logical_form&#x27; cannot be parsed" in response.content.decode()
    assert HumanArm.objects.get(study=study).practice == before


def test_every_imported_design_previews_without_writing():
    assert registry.imported() and all(design.preview is not None for design in registry.imported())


@pytest.mark.django_db
def test_an_import_writing_too_many_items_is_refused_before_its_checks(researcher, upload_dir, monkeypatch):
    monkeypatch.setenv("DUET_IMPORT_MAX_ITEMS", "15")  # the deployment's setting (issue 37)
    study = StudyFactory(design="dual-sided")
    bank = ("premise,conclusion,flipped_conclusion\n"
            "it rains,the street is wet,the street is not wet\n"
            "the sun shines,it is bright,it is not bright\n").encode()  # 2 rules × 5 templates × 2 = 20 items
    response = _post(researcher, study, bank, design="dual-sided")
    assert response.status_code == 400
    assert ("This import would write 20 items; at most 15 are written at once (the deployment&#x27;s setting "
            "DUET_IMPORT_MAX_ITEMS)." in response.content.decode())
    monkeypatch.setenv("DUET_IMPORT_MAX_ITEMS", "20")
    preview = _post(researcher, study, bank, design="dual-sided")
    assert "Preview: 20 items would be written" in preview.content.decode() and not study.items.exists()


def test_check_argument_says_a_form_is_too_complex():
    from django.core.management import call_command
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match=r"this form is too complex to check \(limit 5,000 search nodes\)"):
        call_command("check_argument", _probe(17))


def test_a_form_repeated_in_a_file_is_checked_once_against_its_budget(monkeypatch):
    monkeypatch.setattr(item_csv, "FILE_NODES", 200)
    form = "□p ∨ □q, ¬□p ⊢ □q"
    nodes = sum(entails(*_sequent(form), "S5", relation).nodes for relation in ("local", "global"))
    assert 0 < nodes < 200 < 300 * nodes
    rows = parse_item_csv(HEADER + "".join(_row(f"same{n}", form) for n in range(300)))
    assert len(rows) == 300 and {row.gold_answer for row in rows} == {"yes"}
    distinct = "".join(_row(f"d{n}", form.replace("q", f"q{n}")) for n in range(300))
    with pytest.raises(CsvImportError, match="for the whole file's forms together"):
        parse_item_csv(HEADER + distinct)


def test_a_bad_byte_deep_in_a_stream_is_an_error_on_its_own_row():
    """Issue 34 item 7: the line is the bad byte's own (it was the decoded block's, up to 8 KB earlier),
    and the message says how to save the file as CSV UTF-8."""
    good = "".join(f"i{n},Ann is reading.,Is Ann reading?,yes\n" for n in range(2000)).encode()
    data = b"item_id,premise_1,question,gold_answer\n" + good + b"bad,\xff,Is it?,yes\n"
    with pytest.raises(CsvImportError) as info:
        parse_item_csv(io.BufferedReader(io.BytesIO(data)))
    [error] = info.value.errors
    assert error.row == 2002 and error.message.startswith(
        "the file is not UTF-8 text (on this line, character 5: the byte 0xff, invalid start byte); save it as "
        "UTF-8 text: in Excel, File › Save As › “CSV UTF-8 (Comma delimited) (*.csv)”")
