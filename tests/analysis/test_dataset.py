"""A report folder is a dataset (issue 19 items 1 and 2): codebook.csv describes every column of every
CSV, dataset_description.json follows Psych-DS and carries the provenance and a SHA-256 of every
file, and every CSV reads in R (read.csv) and pandas with its logical columns as logical."""
from __future__ import annotations

import csv
import hashlib
import json
import os
import shutil
import subprocess

import pandas as pd
import pytest
from django.core.management import call_command

from analysis import codebook
from experiments import design_registry as registry
from experiments import schema
from experiments.participation.selectors import EXPORT_COLUMNS

pytestmark = pytest.mark.django_db  # the report is read from the database (set up for the module's fixture)


@pytest.fixture(scope="module")
def report_folder(r_stack, django_db_setup, django_db_blocker, tmp_path_factory):
    """One report folder for the module's tests, which only read it (each test's own files go to its
    tmp_path). The study is made and analysed in a transaction rolled back at once: the database is
    left as it was, and only the folder stays."""
    from django.db import transaction

    from tests.analysis.conftest import study_make

    folder = tmp_path_factory.mktemp("dataset") / "report"
    with django_db_blocker.unblock(), transaction.atomic():
        # make_study's first study; fake models varying within every cell (no separation: glmer fits, not blme)
        study = study_make(number=1, models=2, participants=6, appendix=True, model_noise=0.5)
        _import_demographics(study)
        call_command("analyze", study.slug, "--out", str(folder))
        transaction.set_rollback(True)
    return folder


def _import_demographics(study) -> None:
    """Prolific's demographic export for the study's participants (issue 38 item 6), its consent text
    listing age, sex and first language as received from Prolific: nationality is in the file, not kept."""
    import io

    from experiments.participation.services import human_arm_ensure
    from prolific.demographics import demographics_import

    arm = human_arm_ensure(study=study)
    arm.consent_text = "Taking part is voluntary. We receive from Prolific your age, sex and first language."
    arm.save()
    pids = sorted(study.participants.filter(is_preview=False).values_list("prolific_pid", flat=True))
    lines = ["Participant id,Age,Sex,First language,Nationality"]
    lines += [f"{pid},{30 + n},{'Female' if n % 2 else 'Male'},English,Utopian" for n, pid in enumerate(pids)]
    lines[1] = lines[1].replace(",30,", ",DATA_EXPIRED,")  # Prolific's word where it has no value
    assert demographics_import(study=study, stream=io.BytesIO("\n".join(lines).encode())).joined == len(pids)


def _header(path):
    with path.open(newline="", encoding="utf-8") as handle:
        return next(csv.reader(handle))


def test_the_report_folder_has_a_codebook_for_every_column_and_a_psych_ds_description(report_folder):
    folder = report_folder
    for name in ("report.html", "codebook.csv", "dataset_description.json", "reproduce.R", "reproduce.py",
                 "data/trials.csv", "data/scores.csv", "data/items.csv", "data/trials.parquet",
                 "tables/exclusions.csv", "tables/runs.csv", "tables/answering.csv"):
        assert (folder / name).is_file(), name
    book = pd.read_csv(folder / "codebook.csv", keep_default_na=False)
    assert list(book.columns) == list(codebook.CODEBOOK_COLUMNS) == ["file", "column", "type", "unit",
                                                                      "allowed_values", "description"]
    files = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*.csv"))
    described = {(row.file, row.column) for row in book.itertuples()}
    for relative in files:  # every column of every CSV, the codebook's own included, and nothing else
        for column in _header(folder / relative):
            assert (relative, column) in described, (relative, column)
    assert described == {(f, c) for f in files for c in _header(folder / f)}
    assert book["type"].isin(schema.TYPES).all() and (book["description"].str.len() > 0).all()
    assert not book["description"].str.contains("see report.html").any()  # a standard report: all declared
    assert _header(folder / "data" / "trials.csv") == list(EXPORT_COLUMNS)  # the admin export's columns
    assert _header(folder / "data" / "scores.csv") == list(schema.names(schema.SCORE))
    assert _header(folder / "data" / "items.csv") == list(schema.names(schema.ITEM))
    # Prolific's demographics: the participants of data/trials.csv, only the columns the consent text lists
    assert _header(folder / "data" / "demographics.csv") == ["participant", "Age", "Sex", "Language"]
    people = pd.read_csv(folder / "data" / "demographics.csv", keep_default_na=False)
    trials = pd.read_csv(folder / "data" / "trials.csv", usecols=["participant", "is_preview"])
    # (a researcher's preview session has no Prolific data)
    assert set(people["participant"]) == set(trials.loc[~trials["is_preview"], "participant"]) and len(people) == 6
    assert sorted(people["Age"]) == ["", *map(str, range(31, 36))] and set(people["Language"]) == {"English"}
    ages = book[(book["file"] == "data/demographics.csv") & (book["column"] == "Age")].iloc[0]
    assert (ages["type"], ages["unit"]) == ("integer", "years") and "Prolific" in ages["description"]
    assert not book["column"].isin(["Nationality", "Participant id", "First language"]).any()
    # people's answers split by device and answer channel (issue 47 item 3), and the texts they read
    split = pd.read_csv(folder / "tables" / "answering.csv", keep_default_na=False)
    assert list(split.columns) == ["device", "answer_channel", "participants", "trials", "proportion_correct",
                                   "median_rt_ms"] and split["trials"].sum() > 0
    assert "What participants read, and how they answered" in (folder / "report.html").read_text(encoding="utf-8")
    rt = book[(book["file"] == "data/trials.csv") & (book["column"] == "rt_ms")].iloc[0]
    assert rt["unit"] == "ms" and rt["type"] == "number"
    codes = book[(book["file"] == "data/scores.csv") & (book["column"] == "argform_code")].iloc[0]
    assert set(codes["allowed_values"].split(" | ")) >= {"DS", "MP", "MT", "AD", "AC", "DA", "NEC"}

    description = json.loads((folder / "dataset_description.json").read_text(encoding="utf-8"))
    assert description["@type"] == "Dataset" and description["name"].startswith("Duet report")
    assert description["description"] and description["license"] == ""
    variables = {v["name"]: v for v in description["variableMeasured"]}
    assert set(variables) == set(book["column"]) and all(v["description"] for v in variables.values())
    assert variables["rt_ms"]["unitText"] == "ms"
    duet = description["duet"]
    assert duet["study"]["design"] == "modal-syllogisms" and duet["study"]["logic_system"] == "S5"
    assert duet["study"]["consequence"] == "paper" and "settings" in duet["study"]
    assert duet["study"]["items_by_design"]["necessitation"] > 0
    read = duet["study"]["participant_texts"]  # what participants read (issue 47 item 1)
    assert read["answer_input"] == "keys" and read["end"] == "You have completed this study. Thank you!"
    assert read["consent"].startswith("Taking part is voluntary.") and "{answer_how}" in read["instructions"]
    exclusions = pd.read_csv(folder / "tables" / "exclusions.csv")
    assert [c["trials_removed"] for c in duet["exclusions"]["counts"]] == list(exclusions["trials_removed"])
    assert duet["exclusions"]["counts"][0] == {"rule": "preview session", "trials_removed": 1,
                                               "participants_affected": 1, "trials_left": 144}
    assert duet["exclusions"]["settings"]["rt_min_ms"] == 200.0 and duet["exclusions"]["rules"]
    used = sorted(r["run_id"] for r in duet["runs"]["used"])
    assert len(used) == 2 and sorted(int(k) for k in duet["runs"]["stored_configurations"]) == used
    assert {"Python", "pandas", "R"} <= set(duet["software"]) and any(k.startswith("lme4") for k in duet["software"])
    hashed = {f["path"]: f["sha256"] for f in duet["files"]}
    on_disk = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())
    assert sorted(hashed) == [p for p in on_disk if p != "dataset_description.json"]
    for relative, digest in hashed.items():
        assert hashlib.sha256((folder / relative).read_bytes()).hexdigest() == digest, relative


R_CLASSES = """
args <- commandArgs(trailingOnly = TRUE)
out <- NULL
for (path in args[-1]) {
  frame <- read.csv(file.path(args[1], path), check.names = FALSE, stringsAsFactors = FALSE, encoding = "UTF-8")
  out <- rbind(out, data.frame(file = path, column = names(frame), class = vapply(frame, function(x) class(x)[1], ""),
                               all_na = vapply(frame, function(x) all(is.na(x)), TRUE)))
}
write.csv(out, stdout(), row.names = FALSE)
"""


def test_every_csv_reads_in_r_and_pandas_with_logical_columns_as_logical(report_folder, tmp_path):
    if shutil.which("Rscript") is None:
        if os.environ.get("CI") == "true":
            pytest.fail("Rscript must be installed under CI")
        pytest.skip("Rscript not installed")
    folder = report_folder
    book = pd.read_csv(folder / "codebook.csv", keep_default_na=False)
    files = sorted(book["file"].unique())
    script = tmp_path / "classes.R"
    script.write_text(R_CLASSES, encoding="utf-8")
    ran = subprocess.run(["Rscript", str(script), str(folder), *files], capture_output=True, text=True, timeout=900)
    assert ran.returncode == 0, ran.stderr[-3000:]
    from io import StringIO

    classes = pd.read_csv(StringIO(ran.stdout), keep_default_na=False)
    r_class = {(row.file, row.column): (row["class"], row.all_na == "TRUE" or row.all_na is True)
               for _, row in classes.iterrows()}
    assert set(r_class) == {(row.file, row.column) for row in book.itertuples()}
    kinds = {"boolean": {"logical"}, "integer": {"integer"}, "number": {"numeric", "integer"},
             "string": {"character"}, "datetime": {"character"}}
    checked = 0
    for row in book.itertuples():
        found, all_na = r_class[(row.file, row.column)]
        if all_na:  # an empty column reads as logical NA in R whatever it would hold
            continue
        if row.type == "integer" and found == "numeric":  # R's integers stop at 2^31 - 1 (e.g. a list seed)
            values = pd.read_csv(folder / row.file, usecols=[row.column])[row.column].dropna()
            assert (values == values.round()).all() and values.abs().max() > 2**31 - 1, (row.file, row.column)
            continue
        assert found in kinds[row.type], (row.file, row.column, row.type, found)
        checked += row.type == "boolean"
    assert checked >= 10  # is_preview, valid, timed_out, … and the runs table's flags

    for relative in files:  # pandas: booleans as bool (or bools with blanks where a value may be missing)
        frame = pd.read_csv(folder / relative, float_precision="round_trip")
        for row in book[(book["file"] == relative) & (book["type"] == "boolean")].itertuples():
            values = frame[row.column].dropna()
            assert frame[row.column].dtype == bool or values.map(lambda v: isinstance(v, bool)).all(), (
                relative, row.column, frame[row.column].dtype)
    trials = pd.read_csv(folder / "data" / "trials.csv")
    assert trials["is_preview"].dtype == bool and trials["valid"].dtype == bool and trials["rt_ms"].dtype == float
    scores = pd.read_csv(folder / "data" / "scores.csv")
    assert set(scores["argform_code"]) <= {level.code for level in registry.levels("argform")}
    assert (scores["argform"].map(schema.code_of("argform")) == scores["argform_code"]).all()


def test_a_study_with_people_and_models_has_the_human_likeness_table_and_its_figures(report_folder):
    from analysis import likeness

    table = pd.read_csv(report_folder / "tables" / "human_likeness.csv")
    assert list(table.columns) == list(likeness.TABLE_COLUMNS)
    assert sorted(table["model"]) == ["lm-1", "lm-2"] and (table["participants"] == 6).all()
    assert table[["choice_r", "ceiling", "error_consistency", "loglik_per_answer", "loglik_base"]].notna().all().all()
    assert (table["splits"] == likeness.SPLITS).all() and (table["resamples"] == likeness.RESAMPLES).all()
    frame = pd.read_csv(report_folder / "data" / "model_frames" / "human_likeness.csv")
    assert set(frame["item_id"]) <= set(pd.read_csv(report_folder / "data" / "trials.csv")["item_id"])
    assert (report_folder / "data" / "model_frames" / "human_likeness_splits.csv").is_file()
    page = (report_folder / "report.html").read_text(encoding="utf-8")
    assert "id='human_likeness'" in page and "tables/human_likeness.csv" in page
    assert page.count("How human-like lm-") == 2  # one figure per model
    assert "# ---- human_likeness:" in (report_folder / "reproduce.R").read_text(encoding="utf-8")


def test_the_report_opens_with_its_summary_and_its_figures_are_files_in_the_folder(report_folder):
    """Issue 47 item 6 on the generated files: the page's first section is the summary (its sentences also in
    tables/summary.csv); every figure on the page is figures/<name>.png and .svg (a PNG's signature, SVG that parses
    as XML with its text kept as text and no tick label in scientific notation), listed once in figures/figures.csv
    with its own caption, and hashed in dataset_description.json."""
    import re
    from xml.etree import ElementTree

    folder = report_folder
    html = (folder / "report.html").read_text(encoding="utf-8")
    body = html.split("<body>", 1)[1]
    assert re.match(r"<h1>[^<]+</h1><section id='summary'><h2>Summary</h2><h3>People</h3>", body)
    assert body.index("id='summary'") < body.index("<h2 id='inputs'>") < body.index("<h2 id='table1'>")
    said = pd.read_csv(folder / "tables" / "summary.csv")
    assert set(said["about"]) == {"human", "lm-1", "lm-2"}
    summary_html = body.split("</section>", 1)[0]
    from html import escape
    for sentence in said["sentence"]:
        assert escape(sentence) in summary_html
    figures = pd.read_csv(folder / "figures" / "figures.csv")
    assert len(figures) == html.count("<img") >= 10 and figures["figure"].is_unique
    assert figures["caption"].is_unique  # each figure its own caption (two plots shared one before)
    for caption in figures["caption"]:
        assert escape(caption, quote=False) in html or escape(caption) in html
    hashed = {f["path"] for f in json.loads((folder / codebook.DESCRIPTION).read_text())["duet"]["files"]}
    for row in figures.itertuples():
        png, svg = folder / row.png, folder / row.svg
        assert png.read_bytes().startswith(b"\x89PNG\r\n\x1a\n") and {row.png, row.svg} <= hashed
        root = ElementTree.parse(svg).getroot()
        assert root.tag == "{http://www.w3.org/2000/svg}svg", row.svg
        text = " ".join(t.text or "" for t in root.iter() if t.tag.rsplit("}", 1)[-1] in ("text", "tspan"))
        assert text.strip() and "×10" not in text and not re.search(r"\de[+-]\d", text), (row.svg, text[:200])
        assert f"figures/{row.figure}.png" in html  # the page names the files under the figure
