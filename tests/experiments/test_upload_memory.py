"""Uploads bounded while read (issue 34 item 4): the red team's files are refused with a peak under
300 MB, and a file nested past Python's recursion limit is a 400 with a message, never a 500.

Each file is built by one child process (a few lines of Python; small on disk) and read by another,
through bank_files.read_table as the admin reads it (or the published reader the admin tries); that
child reports its peak resident memory (VmHWM) and the refusal. A bound on memory, not on time. On main the Parquet file peaked at
2,985 MB and the JSON lines at 1,676 MB; the nested JSON raised RecursionError.
"""
from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from experiments.items import bank_files, sources
from experiments.models import Item
from tests.factories import StudyFactory

ROOT = Path(__file__).resolve().parents[2]
PEAK_MB = 300

BUILD = {
    # 1,000 cells of 1 MB each: one value, kept once in the dictionary page (snappy), 48 KB on disk
    "parquet_dictionary": (
        "import io, pyarrow as pa, pyarrow.parquet as pq\n"
        "sink = io.BytesIO(); pq.write_table(pa.table({'question': ['x' * 2**20] * 1000, 'item_id': "
        "[str(i) for i in range(1000)]}), sink); data = sink.getvalue()", "bank.parquet"),
    # the same cells without a dictionary, zstd-compressed: the metadata declares 1 GB
    "parquet_plain": (
        "import io, pyarrow as pa, pyarrow.parquet as pq\n"
        "sink = io.BytesIO(); pq.write_table(pa.table({'question': ['x' * 2**20] * 1000}), sink, "
        "use_dictionary=False, compression='zstd'); data = sink.getvalue()", "bank.parquet"),
    # 1,000 cells of 100 KB (under the cell bound): 100 MB of text once the dictionary is expanded
    "parquet_expanding": (
        "import io, pyarrow as pa, pyarrow.parquet as pq\n"
        "sink = io.BytesIO(); pq.write_table(pa.table({'question': ['x' * 100_000] * 1000}), sink); "
        "data = sink.getvalue()", "bank.parquet"),
    "jsonl_empty_objects": ("data = b'{}\\n' * 6_500_000", "bank.jsonl"),
    "json_empty_objects": ("data = b'[' + b'{},' * 6_500_000 + b'{}]'", "bank.json"),
    "json_nested": ("data = b'[' * 100_000 + b']' * 100_000", "bank.json"),
    "json_nested_in_a_record": ("data = b'[{\"id\": ' + b'[' * 100_000 + b']' * 100_000 + b'}]'", "bank.json"),
    "jsonl_nested": ("data = b'{\"a\": ' + b'[' * 100_000 + b']' * 100_000 + b'}\\n'", "bank.jsonl"),
    "json_wide_record": ("data = b'[{' + b','.join(b'\"c%d\": 1' % i for i in range(1_000_000)) + b'}]'", "bank.json"),
    # the published readers the admin tries on every upload of their design (20 MB, under the upload limit)
    "logiqa_one_block": ("data = b'ab\\n' * 6_600_000", "Eval.txt"),
    "rulebreakers_rows": (
        "data = b'id,rulebreaker_type,category,firstName,pronoun,verb,entityA,entityB,premise1,premise2,conclusion,"
        "label\\n' + b''.join(b'x%d,a,b,c,d,e,f,g,h,i,j,k\\n' % i for i in range(600_000))", "rb.csv"),
    # 20,000 rows × 50 columns of text: a CSV bank at its bounds, read whole
    "csv_at_the_bounds": ("data = (','.join(f'c{i}' for i in range(50)) + '\\n' + ('x,' * 49 + 'x\\n') * 20_000).encode()",
                          "bank.csv"),
}
READERS = {"Eval.txt": "logiqa-text", "rb.csv": "rulebreakers-finegrained"}

CHILD = """
import json, os, sys
sys.path.insert(0, {root!r})
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "studyserver.settings")
import django
django.setup()  # the web process's own imports, counted in the peak as they are there
data = open({path!r}, "rb").read()
from experiments.items import bank_files, sources
try:
    if {reader!r}:
        reading = sources.get({reader!r}).read(data, filename={name!r})
        outcome = str(reading.problems[0]) if reading.problems else "read"
    else:
        bank_files.read_table(data, name={name!r})
        outcome = "read"
except bank_files.BankError as exc:
    outcome = exc.problems[0]
except sources.ReaderError as exc:
    outcome = str(exc)
except BaseException as exc:
    outcome = "RAISED " + type(exc).__name__
# the peak of this program's own memory: VmHWM starts afresh at exec (ru_maxrss would carry the forking
# parent's peak over, which is pytest's)
peak = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM:"))
print(json.dumps({{"peak_mb": peak / 1024, "outcome": outcome, "size": len(data)}}))
"""


def _measure(case: str, folder: Path) -> dict:
    build, name = BUILD[case]
    path = folder / name
    made = subprocess.run([sys.executable, "-c", f"{build}\nopen({str(path)!r}, 'wb').write(data)"],
                          capture_output=True, text=True, timeout=300)
    assert made.returncode == 0, made.stderr[-3000:]
    child = CHILD.format(root=str(ROOT), path=str(path), name=name, reader=READERS.get(name, ""))
    done = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize(("case", "refusal"), [
    ("parquet_dictionary", "record 1, column 'question': a text of 1,048,576 bytes; a cell holds at most 131,072"),
    ("parquet_plain", "the file's columns hold 1,000 MB once decompressed; at most 64 MB are read"),
    ("parquet_expanding", "the file's text is more than 64 MB once decoded"),
    ("jsonl_empty_objects", "the file has more than 20,000 records"),
    ("json_empty_objects", "the file has more than 20,000 records"),
    ("json_nested", "record 1: the JSON nests more than 16 levels deep"),
    ("json_nested_in_a_record", "record 1, column 'id': the JSON nests more than 16 levels deep"),
    ("jsonl_nested", "record 1 (line 1), column 'a': the JSON nests more than 16 levels deep"),
    ("json_wide_record", "record 1: an object of more than 500 keys"),
    ("logiqa_one_block", "logiqa-0001: has 6600000 lines between blank lines"),
    ("rulebreakers_rows", "RULEBREAKERS (finegrained format): more than 100,000 data rows, the deployment's bound"),
    ("csv_at_the_bounds", "read"),
])
def test_the_red_teams_files_are_refused_within_300_mb(case, refusal, tmp_path):
    measured = _measure(case, tmp_path)
    assert measured["outcome"].startswith(refusal), measured
    assert measured["peak_mb"] < PEAK_MB, measured
    if case.startswith("parquet"):
        assert measured["size"] < 100_000  # small on disk (the red team's: 48 KB), 1 GB or 100 MB once decoded
    if case == "jsonl_empty_objects":
        assert measured["size"] == 19_500_000  # under the 20 MB upload limit


def test_a_deep_ulogic_file_is_a_readers_refusal_not_a_recursion_error():
    with pytest.raises(sources.ReaderError, match="nests more than 16 levels deep"):
        sources.get("ulogic-json").read(b"[" * 100_000 + b"]" * 100_000)


def test_a_parquet_file_within_the_bounds_reads_by_row_group():
    import pyarrow as pa
    import pyarrow.parquet as pq

    sink = io.BytesIO()
    table = pa.table({"item_id": [f"i{n}" for n in range(2500)], "question": ["Can we infer that B?"] * 2500,
                      "premise": [["A or B.", "Not A."]] * 2500, "level": list(range(2500))})
    pq.write_table(table, sink, row_group_size=1000)
    read = bank_files.read_table(sink.getvalue(), name="bank.parquet")
    assert read.columns == ("item_id", "question", "premise", "level") and len(read.rows) == 2500
    assert read.rows[2499] == {"item_id": "i2499", "question": "Can we infer that B?",
                               "premise": ["A or B.", "Not A."], "level": "2499"}


def test_a_parquet_struct_column_is_refused_from_the_schema():
    import pyarrow as pa
    import pyarrow.parquet as pq

    sink = io.BytesIO()
    pq.write_table(pa.table({"id": ["a"], "meta": [{"x": 1}]}), sink)
    with pytest.raises(bank_files.BankError, match="column 'meta': holds struct<x: int64>"):
        bank_files.read_table(sink.getvalue(), name="bank.parquet")


@pytest.fixture
def researcher(client):
    user = get_user_model().objects.create_user("bounded-researcher", password="x-" * 8, is_staff=True,
                                                is_superuser=True)
    client.force_login(user)
    return client


def _upload(client, study, name, data, design):
    body = io.BytesIO(data)
    body.name = name
    return client.post(reverse("admin:experiments_study_upload", args=[study.pk]),
                       {"design": design, "o-csv_file": body})


@pytest.mark.django_db
@pytest.mark.parametrize("design", ["csv-import", "dual-sided", "multiple-choice", "rulebreakers"])
def test_a_file_nested_100000_deep_is_a_400_with_a_message_in_every_design(researcher, design):
    study = StudyFactory(design=design)
    for name, data in (("deep.json", b"[" * 100_000 + b"]" * 100_000),
                       ("deep.jsonl", b'{"a": ' + b"[" * 100_000 + b"]" * 100_000 + b"}\n")):
        response = _upload(researcher, study, name, data, design)
        assert response.status_code == 400, (name, response.status_code)
        assert "nests more than 16 levels deep" in response.content.decode() or design == "rulebreakers"
        assert "Nothing was written." in response.content.decode()
    assert not Item.objects.filter(study=study).exists()


@pytest.mark.django_db
def test_a_recursion_error_anywhere_in_an_upload_is_a_400_and_nothing_is_written(researcher, monkeypatch):
    """Whatever reader runs out of stack (or memory) next, the page says so; the study is unchanged."""
    def exhausted(*args, **kwargs):
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(bank_files, "read_table", exhausted)
    study = StudyFactory(design="csv-import")
    response = _upload(researcher, study, "bank.csv", b"item_id,premise_1,question,gold_answer\na,b,c?,yes\n",
                       "csv-import")
    page = response.content.decode()
    assert response.status_code == 400 and "could not be read within the server&#x27;s limits (it nests too deep)" \
        in page
    assert not Item.objects.filter(study=study).exists()
