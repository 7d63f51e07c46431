"""One analysis for any study (issue 25 item 2), end to end through the commands: a CSV bank that names
one factor column at import, 12 simulated participants through the participant pages, two model
configurations scored by the fake scorer (no model loaded), and the pilot report built by real R.

The report has Table 1 by the bank's factor, a humans-vs-models binomial GLMM with crossed random
effects for participants and items, and lists nothing as "not shown".
"""
from __future__ import annotations

import re
import subprocess

import pandas as pd
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from experiments.models import Study

pytestmark = pytest.mark.django_db

HEADER = "item_id,premise_1,premise_2,question,gold_answer,difficulty,topic\n"
PEOPLE = ["Ann", "Bo", "Cy", "Di", "Ed", "Flo", "Gus", "Hal", "Ida", "Jo", "Kit", "Lu"]


def bank_csv() -> str:
    """24 items: 12 easy (modus ponens), 12 hard (affirming the consequent), half of each keyed yes."""
    rows = []
    for i, name in enumerate(PEOPLE):
        rows.append(f"e{i},If {name} is cooking then {name} is hungry.,{name} is cooking.,"
                    f"Can we infer that {name} is hungry?,yes,easy,food\n")
        rows.append(f"h{i},If {name} is cooking then {name} is hungry.,{name} is hungry.,"
                    f"Can we infer that {name} is cooking?,no,hard,food\n")
    return HEADER + "".join(rows)


def make_bank_study(tmp_path, slug: str = "bank") -> Study:
    from inference.models import LanguageModel

    path = tmp_path / "bank.csv"
    path.write_text(bank_csv(), encoding="utf-8")
    call_command("import_items", str(path), slug, "--factors", "Difficulty")  # matched regardless of case
    LanguageModel.objects.create(name="fake-raw", source="test/fake", backend="fake")
    LanguageModel.objects.create(name="fake-chat", source="test/fake", backend="fake", prompt_format="chat")
    return Study.objects.get(slug=slug)


def test_a_factor_the_bank_lacks_is_refused_with_the_columns_it_has_and_nothing_is_written(tmp_path):
    path = tmp_path / "bank.csv"
    path.write_text(bank_csv(), encoding="utf-8")
    with pytest.raises(CommandError, match=r"no column named 'level' among the items.*descriptive columns "
                                           r"\(difficulty, topic\)"):
        call_command("import_items", str(path), "nofactor", "--factors", "level")
    assert not Study.objects.filter(slug="nofactor").exists()


def test_a_csv_bank_gets_table_1_by_its_factor_and_humans_vs_models_with_crossed_random_effects(
        r_stack, tmp_path, capsys):
    from analysis.factors import declared_factors

    study = make_bank_study(tmp_path)
    assert study.settings["factors"] == ["difficulty"] and declared_factors(study) == ["difficulty"]
    call_command("simulate_participants", "bank", "--n", "12", "--seed", "4", "--accuracy", "0.75")
    for name in ("fake-raw", "fake-chat"):
        call_command("run_model", "bank", "--model", name, "--device", "cpu", "--no-progress")
    out = tmp_path / "report"
    call_command("analyze", "bank", "--pilot", "--out", str(out))
    printed = capsys.readouterr().out
    html = (out / "report.html").read_text(encoding="utf-8")

    table1 = pd.read_csv(out / "tables" / "table1_accuracy.csv")
    assert set(table1["respondent"]) == {"human", "fake-raw", "fake-chat"}
    by = table1[table1["factor"] == "difficulty"]
    for who in ("human", "fake-raw", "fake-chat"):
        assert sorted(by.loc[by["respondent"] == who, "level"].unique()) == ["easy", "hard"], who
    assert set(by.loc[by["respondent"] == "human", "cluster"]) == {"participant"}
    assert set(by.loc[by["respondent"] == "human", "n_clusters"]) == {12}
    models = table1[table1["respondent"] != "human"]
    assert set(models["measure"]) == {"soft accuracy", "decision accuracy"} and set(models["cluster"]) == {"item"}
    assert set(models.loc[models["factor"] == "overall", "n"]) == {24}
    assert (table1["ci_low"] <= table1["accuracy"]).all() and (table1["accuracy"] <= table1["ci_high"]).all()
    assert "Accuracy by difficulty." in html and "No data" not in html
    # the declared factor is in every data file and the codebook (issue 35 item 3: it was only in model_frames)
    difficulty = {f"e{i}": "easy" for i in range(12)} | {f"h{i}": "hard" for i in range(12)}
    items = pd.read_csv(out / "data" / "items.csv")
    bank_items = items[items["item_code"].isin(difficulty)]
    assert dict(zip(bank_items["item_code"], bank_items["difficulty"])) == difficulty and len(bank_items) == 24
    assert items.loc[~items["item_code"].isin(difficulty), "difficulty"].isna().all()  # the catch items
    for name in ("trials", "scores"):
        rows = pd.read_csv(out / "data" / f"{name}.csv")
        bank = rows["item_code"].isin(difficulty)  # the arm's catch items have no difficulty: blank
        assert bank.sum() > 24 and (rows.loc[bank, "difficulty"] == rows.loc[bank, "item_code"].map(difficulty)).all()
        assert rows.loc[~bank, "difficulty"].isna().all(), name
    book = pd.read_csv(out / "codebook.csv")
    described = book[book["column"] == "difficulty"].set_index("file")["description"]
    data = ["data/items.csv", "data/trials.csv", "data/scores.csv", "data/model_frames/humans_vs_models.csv"]
    assert described[data].str.contains("a factor the study declares").all(), described
    tables = described[[f for f in described.index if f.startswith("tables/")]]
    assert len(tables) and tables.str.startswith("the level of the study's declared factor difficulty").all()

    # humans vs each model: a binomial GLMM with crossed random effects, fitted by R
    assert "correct ~ agent * difficulty + (1 | participant) + (1 | item)" in html
    variances = pd.read_csv(out / "tables" / "humans_vs_models_random_variances.csv")
    assert {"participant", "item"} <= set(variances.iloc[:, 0])
    frame = pd.read_csv(out / "data" / "model_frames" / "humans_vs_models.csv")
    assert frame["participant"].nunique() == 14 and frame["item"].nunique() == 24  # 12 people + 2 models
    versus = pd.read_csv(out / "tables" / "humans_vs_models_model_vs_human_by_difficulty.csv")
    assert len(versus) == 4  # two models × two levels
    assert "humans_vs_models: fitted on" not in printed  # titles, not keys, are printed
    assert re.search(r"Humans vs each model \(binomial GLMM, crossed random effects\): fitted on \d+ rows", printed)
    section = html.split("<h2 id='humans_vs_models'>", 1)[1].split("<h2 ", 1)[0]
    assert "Sampling unit:" in section and "Clark 1973" in section

    # only the sections of this study's designs; one line names the others; nothing "not shown"
    assert "not shown" not in html.lower()
    assert html.count("Analyses of other designs, in the reports of studies that have them:") == 1
    for key in ("eq4", "eq5", "eq6", "sequents", "necessitation", "distribution", "agents"):
        assert f"<h2 id='{key}'>" not in html, key

    # the report's reproduce.R refits it from its model frame to the same estimates
    ran = subprocess.run(["Rscript", str(out / "reproduce.R")], cwd=tmp_path, capture_output=True, text=True,
                         timeout=600)
    assert ran.returncode == 0, ran.stderr[-3000:]
    ours = pd.read_csv(out / "tables" / "humans_vs_models_coefficients.csv").set_index("term")["Estimate"]
    theirs = pd.read_csv(out / "reproduced" / "R" / "humans_vs_models_coefficients.csv").set_index("term")["Estimate"]
    # a boundary (singular) fit: Rscript and the report's embedded R agree to the optimizer's tolerance, not to 1e-6
    assert list(theirs.index) == list(ours.index) and (theirs - ours).abs().max() < 2e-5


def test_a_rulebreakers_only_study_gets_table_1_by_pair_role_clustered_by_pair(r_stack, tmp_path):
    from inference.models import LanguageModel

    call_command("generate_items", "rulebreakers", "rbonly", "--pairs", "4", "--seed", "1")
    LanguageModel.objects.create(name="fake-raw", source="test/fake", backend="fake")
    call_command("run_model", "rbonly", "--model", "fake-raw", "--device", "cpu", "--scope", "all", "--no-progress")
    study = Study.objects.get(slug="rbonly")
    n_items = study.items.count()
    out = tmp_path / "report"
    call_command("analyze", "rbonly", "--out", str(out))
    html = (out / "report.html").read_text(encoding="utf-8")
    assert "No data" not in html and "not shown" not in html.lower()
    table1 = pd.read_csv(out / "tables" / "table1_accuracy.csv")
    overall = table1[(table1["factor"] == "overall") & (table1["measure"] == "soft accuracy")].iloc[0]
    assert overall["n"] == n_items and overall["cluster"] == "pair" and overall["n_clusters"] == 4
    assert set(table1.loc[table1["factor"] == "pair_role", "level"]) == {"rulebreaker", "non-rulebreaker"}
    assert "Accuracy by pair_role." in html
    for key in ("eq4", "eq5", "eq6", "sequents", "necessitation", "distribution", "agents"):
        assert f"<h2 id='{key}'>" not in html, key


def test_a_model_only_bank_gets_accuracy_by_its_factor_with_item_clustered_intervals(r_stack, tmp_path):
    make_bank_study(tmp_path, slug="models-only")
    for name in ("fake-raw", "fake-chat"):
        call_command("run_model", "models-only", "--model", name, "--device", "cpu", "--no-progress")
    out = tmp_path / "report"
    call_command("analyze", "models-only", "--out", str(out))
    html = (out / "report.html").read_text(encoding="utf-8")
    table1 = pd.read_csv(out / "tables" / "table1_accuracy.csv")
    assert set(table1["respondent"]) == {"fake-raw", "fake-chat"} and set(table1["cluster"]) == {"item"}
    by = table1[table1["factor"] == "difficulty"]
    assert set(by["level"]) == {"easy", "hard"} and set(by["n_clusters"]) == {12}
    assert ((by["ci_low"] < by["accuracy"]) & (by["accuracy"] < by["ci_high"])).all()
    absent = html.split("Not fitted in this report: ", 1)[1].split("</p>", 1)[0]  # each section it lists, with why
    assert "Humans vs each model (binomial GLMM, crossed random effects) (needs both human trials and model " \
           "scores)" in absent
    assert "How human-like is each model" in absent and absent.count("needs both human trials and model scores") == 2
    assert "<h2 id='humans_vs_models'>" not in html and "not shown" not in html.lower()


def test_an_imported_bank_with_a_declared_factor_gets_a_power_analysis_by_that_factor(r_stack, tmp_path, capsys):
    """Issue 35 item 4: the power analysis was refused for every study but 003's. An imported CSV bank with
    one declared factor (difficulty) gets one through the command, on the report's any-study model (versus.spec)
    with its contrasts overall and within each difficulty. Tiny: 4 people, one size, 10 simulated studies."""
    study = make_bank_study(tmp_path, slug="bankpower")
    call_command("simulate_participants", "bankpower", "--n", "4", "--seed", "2", "--accuracy", "0.75")
    call_command("run_model", "bankpower", "--model", "fake-raw", "--device", "cpu", "--no-progress")
    capsys.readouterr()
    call_command("estimate_sample_size", "bankpower", "--sizes", "4", "--nsim", "10", "--out", str(tmp_path / "p"))
    printed = capsys.readouterr().out
    assert "4 pilot participants, models fake-raw; 10 simulated studies" in printed, printed
    curve = pd.read_csv(tmp_path / "p" / "power_curve.csv")
    versus = curve[curve["effect"] == "model - human"]
    assert set(zip(versus["factor"], versus["level"])) == {("overall", "all"), ("difficulty", "easy"),
                                                           ("difficulty", "hard")}
    assert set(versus["contrast"]) == {"fake-raw - human"} and (curve["nsim"] == 10).all()
    # beside them, the people's own contrast by the declared factor (issue 47 item 5: analysis/power_people.py)
    people = curve[curve["effect"] == "people"]
    assert set(zip(people["factor"], people["level"], people["contrast"])) == {
        ("difficulty (people)", "all", "hard - easy")}
    summary = study.power_analyses.latest("created_at").pilot_summary
    assert summary["formula"] == "correct ~ agent * difficulty + (1 | participant) + (1 | item)"
    assert summary["by"] == [None, "difficulty"]
