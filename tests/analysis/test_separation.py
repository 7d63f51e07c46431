"""Separation (issue 25 item 3): a language model that answers "yes" to every item is right on every
valid form and wrong on every invalid one, so maximum likelihood sends its coefficients to infinity
(lme4 prints ±20–40 with SEs in the thousands). The report must name the cells, fit a model that
stays finite (blme::bglmer for a GLMM, brglm2 without random effects) and take its marginal means
and contrasts from that fit. Golden values: GOLDEN_R below, run by R on the section's own model
frame (section.data written as CSV), values pasted. The model's side is the items the simulated people answered
(frames handed over without a study: logic/shown_items.py), 52 of its 96 scores, so its cells hold 6–14 answers."""
from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from analysis import prep
from designs.modal import mixed, simulate
from analysis.sections import ModelSpec, StudyFrames, fit_spec, response_constant, unestimated_blanked

GOLDEN_R = r"""
suppressPackageStartupMessages({library(lme4); library(blme); library(brglm2); library(emmeans)})
prior_sd <- c(10, 2.5)
d <- read.csv("frame.csv")   # section.data of the test's AGENTS section
d$agent <- factor(d$agent, levels = c("human", "sim-model-1"))
d$modality <- factor(d$modality, levels = c("none", "box", "dia"))
d$argform <- factor(d$argform, levels = c("DS", "MP", "MT", "AD", "AC", "DA"))
m <- blme::bglmer(correct ~ agent * (modality + argform) + (1 | respondent) + (1 | interpretation), data = d,
                  family = binomial, nAGQ = 1L, control = glmerControl(optimizer = "bobyqa"),
                  fixef.prior = normal(sd = prior_sd), cov.prior = NULL)
co <- summary(m)$coefficients
cat(sprintf('"%s": (%.10f, %.10f),\n', rownames(co), co[, 1], co[, 2]), sep = "")
e <- summary(emmeans::emmeans(m, ~ agent, type = "response"))
cat(sprintf('"%s": %.10f,\n', e$agent, e$prob), sep = "")
v <- summary(emmeans::contrast(emmeans::regrid(emmeans::emmeans(m, ~ agent | argform)), method = "trt.vs.ctrl",
                               ref = 1), adjust = "holm")
cat(sprintf('"%s": (%.10f, %.10f),\n', v$argform, v$estimate, v$SE), sep = "")
b <- glm(correct ~ agent * argform, data = d, family = binomial, method = brglm2::brglmFit, type = "AS_mean")
cb <- summary(b)$coefficients
cat(sprintf('"%s": (%.10f, %.10f),\n', rownames(cb), cb[, 1], cb[, 2]), sep = "")
"""
BGLMER = {  # term: (estimate, SE)
    "(Intercept)": (1.4239402753, 0.4986405825),
    "agentsim-model-1": (0.8061655033, 1.0795791421),
    "modalitybox": (-1.7058665156, 0.4717585732),
    "modalitydia": (-0.5151865854, 0.4799393006),
    "argformMP": (1.1266243195, 0.7274549714),
    "argformMT": (-0.1643710919, 0.6135814185),
    "argformAD": (-0.1675981441, 0.5006036636),
    "argformAC": (-1.6602022443, 0.6421541452),
    "argformDA": (-0.4861550259, 0.6001433912),
    "agentsim-model-1:modalitybox": (1.3377306116, 1.1877787757),
    "agentsim-model-1:modalitydia": (0.3336951716, 1.1613595323),
    "agentsim-model-1:argformMP": (0.7420902940, 1.9475266496),
    "agentsim-model-1:argformMT": (1.5520690399, 1.6692544514),
    "agentsim-model-1:argformAD": (-4.6592745717, 1.2801673247),
    "agentsim-model-1:argformAC": (-3.0878964916, 1.4445214511),
    "agentsim-model-1:argformDA": (-3.8482893576, 1.3738597181),
}
EMMEANS_AGENT = {"human": 0.6126121272, "sim-model-1": 0.5674356200}
MODEL_VS_HUMAN_BY_ARGFORM = {  # argform: (probability difference, SE), Holm across models (one here)
    "DS": (0.2210943614, 0.1200624404), "MP": (0.1210733339, 0.0881964254), "MT": (0.3418034579, 0.1407640438),
    "AD": (-0.5677940008, 0.1248498002), "AC": (-0.2106618924, 0.1416264299), "DA": (-0.4570393239, 0.1737494281),
}
BRGLM = {
    "(Intercept)": (0.5108256238, 0.3149996924),
    "agentsim-model-1": (2.8564702063, 1.5218323084),
    "argformMP": (0.8391010932, 0.6939019660),
    "argformMT": (-0.0833816089, 0.5759800227),
    "argformAD": (-0.0161293819, 0.4816945965),
    "argformAC": (-1.3318061758, 0.6135503708),
    "argformDA": (-0.3995999887, 0.5790055169),
    "agentsim-model-1:argformMP": (-1.6414478094, 2.2827765320),
    "agentsim-model-1:argformMT": (-0.4507008519, 2.2205528027),
    "agentsim-model-1:argformAD": (-6.4866606661, 2.1738119282),
    "agentsim-model-1:argformAC": (-4.7435398766, 2.2430533007),
    "agentsim-model-1:argformDA": (-5.5326449553, 2.2505146401),
}
# The same bglmer fit in two R sessions (this test's and Rscript GOLDEN_R) can land on two points of
# its flat optimum: ~3e-6 apart in the estimates, up to ~1.1e-4 in the SEs (its numerical Hessian);
# a tighter bobyqa (rhoend 1e-9) does not close the gap, the Laplace objective itself differs in its
# last bits between sessions. Estimates to 1e-4, SEs to 1e-3 relative.
TOLERANCE = 1e-4
SE_RELATIVE = 1e-3


def yes_to_everything() -> tuple[pd.DataFrame, pd.DataFrame]:
    """Six simulated people (24 trials each) and one model whose decision is "yes" on every item."""
    scores = simulate.always_yes(simulate.scores(n_models=1, n_interpretations=4, seed=3))
    trials, _ = prep.apply_exclusions(simulate.trials(n_participants=6, n_trials=24, seed=3))
    return trials, scores


@pytest.fixture(scope="module")
def frames():
    return yes_to_everything()


def _matches(table: pd.DataFrame, golden: dict, key: str, estimate: str, se: str) -> None:
    table = table.set_index(key)
    assert sorted(table.index) == sorted(golden), table.index
    for name, (value, error) in golden.items():
        assert table.loc[name, estimate] == pytest.approx(value, abs=TOLERANCE), name
        assert table.loc[name, se] == pytest.approx(error, rel=SE_RELATIVE), name


def test_a_model_answering_yes_to_everything_is_named_and_fitted_finitely_by_blme(r_stack, frames):
    trials, scores = frames
    section = mixed.agents(trials, scores)
    assert not section.absent
    said = " ".join(section.cautions)
    for form in ("DS", "MP", "MT"):  # valid: the model is always right
        assert f"agent sim-model-1, argform {form}: all" in said
    for form in ("AD", "AC", "DA"):  # invalid: always wrong
        assert f"agent sim-model-1, argform {form}: none of" in said
    assert "agent sim-model-1, argform DS: all 14 answers correct" in said  # the DS items people answered
    assert "Separation: 6 cells" in said and "blme::bglmer" in said
    assert any(note.startswith("Departure from paper 003") for note in section.notes)
    assert section.fitted.method == "bglmer" and section.fitted.nagq == 1
    coefs = section.tables["coefficients"]
    assert (coefs["SE"] < 10).all() and coefs["Estimate"].abs().max() < 10
    _matches(coefs, BGLMER, "term", "Estimate", "SE")
    means = section.tables["emmeans_agent"].set_index("agent")["estimate"]
    for agent, value in EMMEANS_AGENT.items():
        assert means[agent] == pytest.approx(value, abs=TOLERANCE)
    _matches(section.tables["model_vs_human_by_argform"], MODEL_VS_HUMAN_BY_ARGFORM, "argform", "estimate", "se")


def test_without_random_effects_the_safe_fit_is_brglm2(r_stack, frames):
    trials, scores = frames
    spec = ModelSpec(key="fixed", title="Humans and a model, fixed effects only", formula="correct ~ agent * argform",
                     frame=mixed.agent_rows, columns=("agent", "argform", "correct", "respondent"),
                     group="respondent", needs="answers", factors=("agent", "argform"), family="binomial")
    section = fit_spec(spec, StudyFrames(scores=scores, kept=trials))
    assert section.fitted.method == "brglm" and "brglm2::brglmFit" in " ".join(section.cautions)
    assert not any(note.startswith("Departure from paper") for note in section.notes)  # no paper's model
    _matches(section.tables["coefficients"], BRGLM, "term", "Estimate", "SE")


def test_maximum_likelihood_estimates_with_huge_errors_are_never_shown_as_numbers(r_stack, frames):
    trials, scores = frames
    data = r_stack.factors_for_r(mixed.agent_rows(StudyFrames(scores=scores, kept=trials))[list(mixed.AGENTS.columns)])
    with r_stack.r_session() as r:  # what plain glmer (nAGQ = 0) makes of it
        ml = r_stack._fit_tries(r, mixed.AGENTS.formula, r_stack.to_r(r, data), len(data), "binomial", True, safe=False)
    assert ml.coefs["SE"].max() > 1000
    shown = unestimated_blanked(ml.coefs).set_index("term")
    huge = ml.coefs.set_index("term")["SE"] > 100
    assert shown.loc[huge, "Estimate"].isna().all() and shown.loc[huge, "P-val"].isna().all()
    assert shown.loc[huge, "note"].str.startswith("not estimated: SE").all()
    assert shown.loc[~huge, "Estimate"].notna().all() and (shown.loc[~huge, "note"] == "").all()


def test_no_separation_no_change(r_stack):
    trials, _ = prep.apply_exclusions(simulate.trials(n_participants=12, n_trials=24, seed=0))
    section = mixed.eq6(trials)
    assert section.fitted.method == "ml" and not any("Separation" in c for c in section.cautions)


def test_the_reproduce_scripts_refit_the_separated_model_with_blme(r_stack, frames, tmp_path):
    """reproduce.R and reproduce.py refit a separated model the way the report did (bglmer, same
    prior), so the report stays reproducible."""
    import subprocess
    import sys

    from analysis import reproduce
    from analysis.report import _write_data

    trials, scores = frames
    section = mixed.agents(trials, scores)
    _write_data(section.data, tmp_path / "data" / "model_frames", section.key)
    reproduce.write_scripts([section], tmp_path)
    assert "blme::bglmer" in (tmp_path / "reproduce.R").read_text(encoding="utf-8")
    ours = section.tables["coefficients"].set_index("term")["Estimate"]
    for command, folder in (("Rscript", "R"), (sys.executable, "python")):
        ran = subprocess.run([command, str(tmp_path / f"reproduce.{'R' if folder == 'R' else 'py'}")], cwd=tmp_path,
                             capture_output=True, text=True, timeout=600)
        assert ran.returncode == 0, ran.stderr[-3000:]
        theirs = pd.read_csv(tmp_path / "reproduced" / folder / "agents_coefficients.csv").set_index("term")["Estimate"]
        assert list(theirs.index) == list(ours.index)
        assert (theirs - ours).abs().max() < TOLERANCE, folder
    assert "fitted this model by bglmer (separation)" in ran.stdout


def test_separation_no_single_cell_shows_is_found_by_linear_programming(r_stack):
    """An additive model's "staircase": (a0, b0) always wrong, (a1, b1) always right, the other two cells
    half and half. No cell of a term (a, b) is all 0 or all 1, yet β = (−1, 1, 1) predicts half the answers
    perfectly: glmer gives ±19.6 with SEs of 86 (under the SE limit of 100). The LP check finds it and the
    model is fitted by bglmer."""
    rows = []
    for i in range(240):
        a, b = i % 2, (i // 2) % 2
        correct = 0 if (a, b) == (0, 0) else 1 if (a, b) == (1, 1) else (i // 4) % 2
        rows.append({"correct": correct, "a": f"a{a}", "b": f"b{b}", "person": f"P{i % 12}"})
    data = pd.DataFrame(rows)
    fit = r_stack.fit("correct ~ a + b + (1 | person)", data, family="binomial")
    assert fit.method == "bglmer" and fit.separation == [] and fit.perfectly_predicted == 120
    assert fit.coefs["SE"].max() < 5 and fit.coefs["Estimate"].abs().max() < 10
    spec = ModelSpec(key="staircase", title="A staircase", formula="correct ~ a + b + (1 | person)",
                     frame=lambda frames: data, columns=("correct", "a", "b", "person"), group="person",
                     needs="answers", factors=("a", "b"), family="binomial")
    section = fit_spec(spec, StudyFrames(scores=pd.DataFrame()))
    assert "a combination of the fixed effects predicts 120 answers perfectly" in " ".join(section.cautions)
    # the same data without the staircase (one answer in each extreme cell flipped): maximum likelihood
    data.loc[0, "correct"], data.loc[3, "correct"] = 1, 0
    assert r_stack.fit("correct ~ a + b + (1 | person)", data, family="binomial").method == "ml"


DEMO_PILOT = Path(__file__).resolve().parents[1] / "data" / "separation_demo_pilot" / "agents.csv"


def test_blme_stopping_from_its_default_start_is_refitted_from_brglm2s_estimates(r_stack, tmp_path):
    """The demo pilot's frame (tests/data/separation_demo_pilot): bglmer from lme4's default start stops
    ("Downdated VtV is not positive definite"), which left the section out of the demo's report. The fit
    now starts the fixed effects from brglm2's estimates, says so, and the reproduce scripts do the same."""
    import subprocess
    import sys

    from analysis import reproduce
    from analysis.report import _write_data

    data = pd.read_csv(DEMO_PILOT)
    for column, levels in (("agent", ["human", *sorted(set(data["agent"]) - {"human"})]),
                           ("modality", ["none", "box", "dia"]), ("argform", ["DS", "MP", "MT", "AD", "AC", "DA"])):
        data[column] = pd.Categorical(data[column], categories=[v for v in levels if v in set(data[column])])
    for column in ("respondent", "interpretation"):
        data[column] = data[column].astype(str)
    spec = ModelSpec(**{**mixed.AGENTS.__dict__, "frame": lambda frames: data, "precheck": None})
    section = fit_spec(spec, StudyFrames(scores=pd.DataFrame()))
    assert not section.absent, section.absent
    assert section.fitted.method == "bglmer"
    assert any("brglm2's bias-reduced estimates" in w for w in section.warnings), section.warnings
    coefs = section.tables["coefficients"]
    assert pd.to_numeric(coefs["Estimate"]).abs().max() < 20 and pd.to_numeric(coefs["SE"]).max() < 100
    _write_data(section.data, tmp_path / "data" / "model_frames", section.key)
    reproduce.write_scripts([section], tmp_path)
    ours = coefs.set_index("term")["Estimate"]
    for command, folder in (("Rscript", "R"), (sys.executable, "python")):
        ran = subprocess.run([command, str(tmp_path / f"reproduce.{'R' if folder == 'R' else 'py'}")], cwd=tmp_path,
                             capture_output=True, text=True, timeout=600)
        assert ran.returncode == 0, ran.stderr[-3000:]
        theirs = pd.read_csv(tmp_path / "reproduced" / folder / "agents_coefficients.csv").set_index("term")["Estimate"]
        assert (theirs - ours).abs().max() < TOLERANCE, folder


GOLDEN_SINGLE_R = r"""
d <- data.frame(correct = c(1,0,1,1,0,1, 1,1,1,1,1,1), aid = factor(rep(c("No","Yes"), each = 6)),
                person = factor(rep(c("P1","P2"), each = 6)), item = factor(rep(paste0("i", 1:6), 2)))
full <- bglmer(correct ~ aid + (1 | person) + (1 | item), data = d, family = binomial, nAGQ = 1L,
               control = glmerControl(optimizer = "bobyqa"), fixef.prior = normal(sd = c(10, 2.5)), cov.prior = NULL)
reduced <- bglmer(correct ~ 1 + (1 | person) + (1 | item), data = d, family = binomial, nAGQ = 1L,
                  control = glmerControl(optimizer = "bobyqa"), fixef.prior = normal(cov = 100), cov.prior = NULL)
2 * (logLik(full) - logLik(reduced))
"""
SINGLE_LRT_CHISQ = 2.4089110471  # GOLDEN_SINGLE_R, blme 1.0-x


def test_a_separated_single_factor_gets_its_likelihood_ratio_test(r_stack, tmp_path):
    """A participant factor with one level always right (two people, one per level, as in a first real study):
    the model is fitted by bglmer, and its likelihood-ratio test refits the model without the factor — the
    intercept alone, where blme's normal(sd = c(10, 2.5)) stopped with "'nrow' or 'ncol' cannot be specified
    when 'x' is a matrix" and took the section out of the report. The reduced model now gets the intercept's
    prior as a variance (normal(cov = 100)); reproduce.R refits it the same way (GOLDEN_SINGLE_R)."""
    import subprocess

    from analysis import reproduce
    from analysis.report import _write_data

    data = pd.DataFrame({"correct": [1, 0, 1, 1, 0, 1] + [1] * 6,
                         "aid": pd.Categorical(["No"] * 6 + ["Yes"] * 6),
                         "person": pd.Categorical(["P1"] * 6 + ["P2"] * 6),
                         "item": pd.Categorical([f"i{n}" for n in range(1, 7)] * 2)})
    spec = ModelSpec(key="single", title="One factor", formula="correct ~ aid + (1 | person) + (1 | item)",
                     frame=lambda frames: data, columns=("correct", "aid", "person", "item"), group="person",
                     needs="answers", factors=("aid",), family="binomial", lrt=("aid",))
    section = fit_spec(spec, StudyFrames(scores=pd.DataFrame()))
    assert not section.absent, section.absent
    assert section.fitted.method == "bglmer"
    lrt = section.tables["lrt"].set_index("term")
    assert lrt.loc["aid", "chisq"] == pytest.approx(SINGLE_LRT_CHISQ, abs=1e-4)
    _write_data(section.data, tmp_path / "data" / "model_frames", section.key)
    reproduce.write_scripts([section], tmp_path)
    ran = subprocess.run(["Rscript", str(tmp_path / "reproduce.R")], cwd=tmp_path, capture_output=True, text=True,
                         timeout=600)
    assert ran.returncode == 0, ran.stderr[-3000:]
    assert f"{SINGLE_LRT_CHISQ:.4f}"[:5] in ran.stdout, ran.stdout[-2000:]


@pytest.mark.parametrize("value, said", [(1, "every answer in its data is correct (8 rows)"),
                                         (0, "every answer in its data is wrong (8 rows)")])
def test_a_model_whose_answers_are_all_right_or_all_wrong_says_so_without_asking_r(value, said, monkeypatch):
    """Two people who each answered four items all correctly (or all wrongly): lme4 stops with "Response is
    constant"; the section says why in words before any fit is tried (issue 47's own-study walk met it)."""
    from analysis import rbridge

    def refuse(*args, **kwargs):
        raise AssertionError("R was asked to fit a constant response")

    monkeypatch.setattr(rbridge, "fit", refuse)
    data = pd.DataFrame({"correct": [value] * 8, "aid_use": pd.Categorical(["No"] * 4 + ["Yes"] * 4),
                         "participant": pd.Categorical(["p1"] * 4 + ["p2"] * 4),
                         "item": pd.Categorical([f"i{n}" for n in range(8)])})
    spec = ModelSpec(key="people_aid_use", title="aid use",
                     formula="correct ~ aid_use + (1 | participant) + (1 | item)", frame=lambda frames: data, columns=("correct", "aid_use", "participant", "item"), group="item",
                     needs="people's answers", factors=("aid_use",), family="binomial")
    section = fit_spec(spec, StudyFrames(scores=pd.DataFrame()))
    assert section.absent.startswith(said) and "nothing for a model to explain" in section.absent
    assert not section.tables and section.fitted is None
    assert response_constant(data.assign(correct=[1, 0] * 4), spec.formula) == ""  # answers that differ: fitted
    assert response_constant(data, "correct ~ aid_use") == ""  # no random effects: brglm2's finite fit
