"""Humans vs each model for any study (analysis/versus.py): the model's frame from tidy frames, and the
binomial GLMM with crossed random effects checked against lme4 on the same data.

The data (tests/data/humans_vs_models/answers.csv) were drawn once with:

    rng = np.random.default_rng(25); 16 items i00…i15 (i00–i07 easy, i08–i15 hard), item effects
    N(0, 0.8); 10 people with intercepts N(0, 0.6), eta = 1.2 − 0.8·hard + u + item; two models
    (model-a: −0.6, model-b: +0.4) with eta = shift + 0.5·hard + item, one answer per item.

Golden values (R 4, lme4):

    d <- read.csv("tests/data/humans_vs_models/answers.csv")
    d$agent <- factor(d$agent, levels = c("human", "model-a", "model-b"))
    d$difficulty <- factor(d$difficulty, levels = c("easy", "hard"))
    m <- glmer(correct ~ agent * difficulty + (1 | participant) + (1 | item), data = d, family = binomial,
               control = glmerControl(optimizer = "bobyqa"))
    fixef(m); sqrt(diag(vcov(m))); as.data.frame(VarCorr(m))
"""
from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from analysis import versus
from analysis.sections import StudyFrames, fit_spec

DATA = Path(__file__).resolve().parents[1] / "data" / "humans_vs_models" / "answers.csv"
ESTIMATES = {
    "(Intercept)": 1.5071287113, "agentmodel-a": -3.8845367078, "agentmodel-b": -2.1650700839,
    "difficultyhard": 0.0551666148, "agentmodel-a:difficultyhard": 0.9742019753,
    "agentmodel-b:difficultyhard": 1.9463988598,
}
SES = {
    "(Intercept)": 0.5265879622, "agentmodel-a": 1.4181802185, "agentmodel-b": 1.1407080378,
    "difficultyhard": 0.6524267854, "agentmodel-a:difficultyhard": 1.5298280922,
    "agentmodel-b:difficultyhard": 1.2955032503,
}
VARIANCES = {"item": 0.9523667479, "participant": 0.4461291129}


def tidy_frames() -> StudyFrames:
    """The answers as the report's tidy frames: people's kept trials and the models' scores."""
    answers = pd.read_csv(DATA)
    answers["item_id"] = answers["item"].str[1:].astype(int)
    answers["design"], answers["condition"] = "csv-import", "real"
    people = answers[answers["agent"] == "human"].drop(columns=["agent", "item"])
    models = (answers[answers["agent"] != "human"].rename(columns={"agent": "model"})
              .drop(columns=["participant", "item"]))
    return StudyFrames(scores=models.reset_index(drop=True), kept=people.reset_index(drop=True))


def test_the_frame_has_one_row_per_answer_with_humans_first_and_models_as_participants():
    frames = tidy_frames()
    rows = versus.rows(frames, factors=("difficulty",))
    assert len(rows) == 10 * 16 + 2 * 16
    assert list(rows["agent"].cat.categories) == ["human", "model-a", "model-b"]
    assert rows["participant"].nunique() == 12 and rows["item"].nunique() == 16
    assert list(rows["difficulty"].cat.categories) == ["easy", "hard"]
    spec = versus.spec(frames, ("difficulty",))
    assert spec.formula == "correct ~ agent * difficulty + (1 | participant) + (1 | item)"
    assert spec.family == "binomial" and spec.unit == versus.UNIT


def test_a_factor_with_one_level_is_left_out_and_said_and_no_factor_compares_agents_overall():
    frames = tidy_frames()
    one = StudyFrames(scores=frames.scores.assign(topic="food"), kept=frames.kept.assign(topic="food"))
    spec = versus.spec(one, ("difficulty", "topic"))
    assert spec.formula == "correct ~ agent * difficulty + (1 | participant) + (1 | item)"
    assert any("Left out of the model: topic (one level" in note for note in spec.notes)
    assert versus.spec(frames, ()).formula == "correct ~ agent + (1 | participant) + (1 | item)"
    assert versus.formula(["a", "b"]) == "correct ~ agent * (a + b) + (1 | participant) + (1 | item)"


def test_a_study_with_only_models_says_what_the_fit_needs():
    frames = tidy_frames()
    models = StudyFrames(scores=frames.scores)
    section = fit_spec(versus.spec(models, ("difficulty",)), models)
    assert section.absent == "needs both human trials and model scores"


def test_the_fit_matches_lme4_on_the_same_answers(r_stack):
    section = fit_spec(versus.spec(tidy_frames(), ("difficulty",)), tidy_frames())
    assert not section.absent, section.absent
    coefs = section.tables["coefficients"].set_index("term")
    for term, value in ESTIMATES.items():
        assert coefs.loc[term, "Estimate"] == pytest.approx(value, abs=2e-4), term
        assert coefs.loc[term, "SE"] == pytest.approx(SES[term], abs=2e-4), term
    variances = section.tables["random_variances"]
    found = dict(zip(variances.iloc[:, 0], variances["Var"]))
    for group, value in VARIANCES.items():
        assert found[group] == pytest.approx(value, abs=5e-4), group
    assert section.stats["n_item"] == 16 and section.stats["n_participant"] == 12
    by = section.tables["model_vs_human_by_difficulty"]
    assert len(by) == 4 and "Sampling unit" not in section.unit  # the unit is said in words, once, by html.py
    assert section.unit.startswith("one answer")
