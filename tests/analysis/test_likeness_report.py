"""The report's human-likeness section (analysis/likeness_report.py): built from the report's frames, and
recomputed by the reproduce.R / reproduce.py blocks it ships, as an analyst would run them."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from analysis import likeness, likeness_report, reproduce
from analysis.report import _write_data
from analysis.sections import StudyFrames, table_file
from tests.analysis.test_likeness import stored


def frames() -> StudyFrames:
    """The stored frame as the report's frames: kept trials and scores of a csv-import study."""
    people, scores, _ = stored()
    extra = {"design": "csv-import", "condition": "real"}
    return StudyFrames(scores=scores.assign(**extra), kept=people.assign(**extra))


def test_the_section_has_the_table_a_figure_per_model_and_says_its_randomness():
    section = likeness_report.section(frames(), splits=20, resamples=200)
    assert not section.absent
    table = section.tables[likeness_report.KEY]
    assert table_file(section.key, likeness_report.KEY) == "human_likeness.csv"
    assert list(table["model"]) == ["model-a", "model-b"] and list(table.columns) == list(likeness.TABLE_COLUMNS)
    halves = section.data_files["splits"]
    expected = likeness.table(section.data, halves, resamples=200)
    pd.testing.assert_frame_equal(table, expected)
    assert sorted(section.figures) == ["choice_model-a", "choice_model-b"]
    assert section.figures["choice_model-a"].png.startswith(b"\x89PNG")
    text = " ".join(section.notes)
    assert "20 random splits, and 200 bootstrap resamples for error_consistency's interval, seed 35" in text
    assert "delete-one jackknife over items on Fisher's z scale" in text and "each half holds distinct people" in text
    assert "is not Spearman–Brown corrected" in text and "reasons column" in text
    assert "cannot be expected to exceed" in text and "Geirhos et al. 2020" in text
    assert "Left out: 1 answer(s) without a choice" in text and "model-a: 5" in text
    assert "gold option" in text  # the stored frame has multiple-choice items
    assert {"R", "python"} == set(section.scripts)
    # both sides stated: the people's answers and each model's scores the statistics read, counted from the frame
    sides = section.tables["sides"].set_index("respondent")
    people = section.data[section.data["model"] == section.data["model"].iloc[0]]
    assert sides.loc["human", "n_participants"] == people["participant"].nunique()
    for model in ("model-a", "model-b"):
        assert sides.loc[model, "n_items"] == section.data.loc[section.data["model"] == model, "item_id"].nunique()
    assert section.notes[0].startswith("What each side holds: people: ")


def test_without_people_or_models_the_section_says_what_it_needs():
    both = frames()
    for part in (StudyFrames(scores=both.scores), StudyFrames(scores=both.scores.iloc[0:0], kept=both.kept)):
        assert likeness_report.section(part).absent == "needs both human trials and model scores"
    elsewhere = StudyFrames(scores=both.scores.assign(item_id=both.scores["item_id"] + 1000), kept=both.kept)
    assert likeness_report.section(elsewhere).absent.startswith("no model configuration has a score")


def degenerate() -> StudyFrames:
    """The stored frame with a third configuration, model-c: model-a's probabilities but right on every item (no
    errors), and a fourth, model-d: model-a on three yes/no items only (too few to leave one out: no intervals, so
    no ratio)."""
    both = frames()
    model_a = both.scores[both.scores["model"] == "model-a"]
    perfect = model_a.assign(model="model-c", decision=model_a["gold"])
    few = model_a[model_a["item_id"].isin([1, 2, 3])].assign(model="model-d")
    return StudyFrames(scores=pd.concat([both.scores, perfect, few], ignore_index=True), kept=both.kept)


def test_a_model_without_errors_has_a_blank_error_consistency_with_its_reason_in_the_table_page_and_csv(tmp_path):
    from analysis import html
    from analysis.report import _write_table

    section = likeness_report.section(degenerate(), splits=20, resamples=100)
    table = section.tables[likeness_report.KEY].set_index("model")
    assert np.isnan(table.loc["model-c", ["error_consistency", "error_consistency_low",
                                          "error_consistency_high"]].astype(float)).all()
    why = "error_consistency: the model made no errors on these items"
    assert table.loc["model-c", "reasons"] == why and table.loc["model-c", "kappa_participants"] == 0
    assert table.loc["model-a", "reasons"] == "" and table.loc["model-c", "choice_r"] == table.loc["model-a", "choice_r"]
    assert why in html._section(section)  # the page's table shows the column
    _write_table(section.tables[likeness_report.KEY], tmp_path / "human_likeness.csv")
    written = pd.read_csv(tmp_path / "human_likeness.csv", keep_default_na=False).set_index("model")
    assert written.loc["model-c", "reasons"] == why and written.loc["model-c", "error_consistency"] == ""
    assert "reasons" in likeness.TABLE_GLOSSARY and "kappa_left_out" in likeness.TABLE_GLOSSARY
    few = table.loc["model-d"]
    assert few["items"] == 3 and np.isnan(few["choice_r_over_ceiling"]) and np.isnan(few["ceiling_low"])
    assert "choice_r_over_ceiling: " in few["reasons"] and "ceiling interval: " in few["reasons"]


def test_reproduce_r_and_py_recompute_the_table(tmp_path):
    if shutil.which("Rscript") is None:
        if os.environ.get("CI") == "true":
            pytest.fail("Rscript must be installed under CI")
        pytest.skip("Rscript not installed")
    section = likeness_report.section(degenerate(), splits=20, resamples=100)
    folder = tmp_path / "report"
    _write_data(section.data, folder / "data" / "model_frames", section.key)
    for name, frame in section.data_files.items():
        _write_data(frame, folder / "data" / "model_frames", f"{section.key}_{name}")
    assert reproduce.write_scripts([section], folder)  # no model section: the scripts still hold this one
    ours = section.tables[likeness_report.KEY].set_index("model")
    for command, where in ((["Rscript", str(folder / "reproduce.R")], "R"),
                           ([sys.executable, str(folder / "reproduce.py")], "python")):
        ran = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=600)
        assert ran.returncode == 0, ran.stderr[-3000:]
        theirs = pd.read_csv(folder / "reproduced" / where / "human_likeness.csv").set_index("model")
        assert list(theirs.index) == list(ours.index), where
        for name in ("items", "answers", "participants", "choice_r", "choice_r_low", "choice_r_high", "ceiling",
                     "ceiling_low", "ceiling_high", "choice_r_over_ceiling", "error_consistency", "kappa_participants",
                     "kappa_left_out", "loglik_per_answer", "loglik_base", "negative_splits"):
            assert (theirs[name].isna() == ours[name].isna()).all(), (where, name)
            assert (theirs[name] - ours[name]).abs().max() < 1e-6, (where, name)


@pytest.mark.django_db
def test_a_multiple_choice_study_read_from_the_database_targets_the_gold_option():
    """The report's own frames (analysis/frames.py) of a multiple-choice study: letters, p_A…p_D, gold."""
    from analysis import frames as tidy
    from analysis import prep
    from designs.multiple_choice import items as mc_items
    from experiments.models import ParticipantStatus
    from inference.models import LanguageModel, ModelRun, ModelScore
    from tests.factories import ParticipantFactory, StudyFactory, TrialFactory

    study = StudyFactory(design="multiple-choice")
    mc_items.items_import_multiple_choice(
        study=study, data="id,context,question,options,answer,type\nq1,Some text.,Which?,w | x | y | z,B,3c1e\n")
    items = list(study.items.order_by("pair_role"))  # rot0…rot3: the gold letter moves with the options
    run = ModelRun.objects.create(study=study, language_model=LanguageModel.objects.create(name="m", source="x"),
                                  status="done")
    for k, item in enumerate(items):
        probs = dict(zip("ABCD", np.roll([0.6, 0.2, 0.1, 0.1], k)))
        ModelScore.objects.create(run=run, item=item, logprobs={}, token_ids={}, option_probs=probs,
                                  soft_accuracy=probs[item.gold_answer], decision=max(probs, key=probs.get),
                                  perplexity=3.0, prompt_tokens=9, answer_mass=0.5)
    for p in range(4):
        person = ParticipantFactory(study=study, status=ParticipantStatus.COMPLETED)
        for k, item in enumerate(items):
            answer = item.gold_answer if (p + k) % 3 else "ABCD"[(("ABCD".index(item.gold_answer)) + 1) % 4]
            TrialFactory(participant=person, item=item, index=k, answer=answer, correct=answer == item.gold_answer,
                         rt_ms=1500.0)
    kept, _ = prep.apply_exclusions(tidy.trials_frame(study), prep.Exclusions())
    section = likeness_report.section(StudyFrames(scores=tidy.scores_frame(study), kept=kept), splits=10,
                                      resamples=100)
    assert not section.absent, section.absent
    frame = section.data
    assert len(frame) == 16 and set(frame["kind"]) == {"multiple_choice"}
    assert (frame["target"] == frame.merge(pd.DataFrame({"item_id": [i.pk for i in items],
                                                         "gold": [i.gold_answer for i in items]}))["gold"]).all()
    p_gold = {i.pk: dict(zip("ABCD", np.roll([0.6, 0.2, 0.1, 0.1], k)))[i.gold_answer] for k, i in enumerate(items)}
    assert frame["p_target"].tolist() == pytest.approx(frame["item_id"].map(p_gold).tolist())
    row = section.tables[likeness_report.KEY].iloc[0]
    assert row["items"] == 4 and row["answers"] == 16 and row["participants"] == 4
    assert "share of people choosing the gold option" in " ".join(section.notes)
