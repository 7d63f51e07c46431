"""Sample size by simulation (analysis/power.py) against an independent simulation with a known
effect: data drawn in Python from known parameters, fitted and tested in R with the report's test
(two models each minus the humans on the probability scale, Holm-adjusted across the two within each
modality), give the true power; the estimate from lme4's simulate (told the same parameters) must
agree within Monte-Carlo error."""
from __future__ import annotations

import math
import random
import re

import pandas as pd
import pytest

from analysis import power
from designs.modal.mixed import AGENTS

MODALITIES, ARGFORMS = ["none", "box", "dia"], ["DS", "MP", "MT"]
MODELS = ("m1", "m2")
BETA = {"(Intercept)": 0.8, "agentm1": 1.0, "agentm2": -0.9, "modalitybox": -0.3, "modalitydia": 0.2,
        "argformMP": 0.4, "argformMT": -0.2,
        **{f"agent{m}:{term}": 0.0 for m in MODELS for term in ("modalitybox", "modalitydia", "argformMP", "argformMT")}}
SD = {"respondent.(Intercept)": 0.5, "interpretation.(Intercept)": 0.3}


def generate(people: int, seed: int, trials: int = 18) -> pd.DataFrame:
    """One study from the known model, as the report's model treats it: two language models answer all 144
    items once each, each person a random 18; logit = fixed effects + respondent effect + interpretation
    effect, the interpretations' effects drawn anew in each study and shared by people and models, a model's
    own effect 0 (its agent term holds its level), every answer a Bernoulli draw."""
    items = [(f"I{i}", m, a) for i in range(16) for m in MODALITIES for a in ARGFORMS]

    def answer(agent, respondent_effect, item):
        interpretation, modality, argform = item
        x = BETA["(Intercept)"] + BETA.get(f"modality{modality}", 0.0) + BETA.get(f"argform{argform}", 0.0)
        if agent != "human":
            x += (BETA[f"agent{agent}"] + BETA.get(f"agent{agent}:modality{modality}", 0.0)
                  + BETA.get(f"agent{agent}:argform{argform}", 0.0))
        return int(rng.random() < 1 / (1 + math.exp(-(x + respondent_effect + shift[interpretation]))))

    rng = random.Random(seed)  # the interpretations' effects, the people and every answer anew in each study
    shift = {f"I{i}": rng.gauss(0, SD["interpretation.(Intercept)"]) for i in range(16)}
    rows = []
    for model in MODELS:
        rows += [(model, model, *item, answer(model, 0.0, item)) for item in items]
    for k in range(people):
        u = rng.gauss(0, SD["respondent.(Intercept)"])
        rows += [("human", f"P{k}", *item, answer("human", u, item)) for item in rng.sample(items, trials)]
    frame = pd.DataFrame(rows, columns=list(AGENTS.columns))
    frame["agent"] = pd.Categorical(frame["agent"], ["human", *MODELS])
    frame["modality"] = pd.Categorical(frame["modality"], MODALITIES)
    frame["argform"] = pd.Categorical(frame["argform"], ARGFORMS)
    return frame


# The report's test written out independently: glmer, each model minus the humans in probability
# (emmeans regridded to the response scale), Holm across the models within each modality by p.adjust.
REFERENCE_R = """
duet_test_reference <- function(d) {
  fit <- suppressWarnings(suppressMessages(lme4::glmer(
    correct ~ agent * (modality + argform) + (1 | respondent) + (1 | interpretation), data = d,
    family = binomial, nAGQ = 0, control = glmerControl(optimizer = "bobyqa"))))
  s <- as.data.frame(emmeans::contrast(emmeans::regrid(emmeans::emmeans(fit, ~ agent | modality)),
                                       method = "trt.vs.ctrl", ref = 1, adjust = "none"))
  s$p_holm <- ave(s$p.value, s$modality, FUN = function(p) p.adjust(p, method = "holm"))
  data.frame(level = as.character(s$modality), contrast = as.character(s$contrast), p_value = s$p_holm)
}
"""


def true_power(people: int, nsim: int, alpha: float, rbridge) -> dict[tuple[str, str], float]:
    """Rejections per modality and model over nsim studies drawn in Python from the known parameters."""
    hits = {(m, f"{model} - human"): 0 for m in MODALITIES for model in MODELS}
    with rbridge.r_session() as r:
        if "duet_test_reference" not in r.ro.globalenv:
            r.ro.r(REFERENCE_R)
        for k in range(nsim):
            frame = rbridge.factors_for_r(generate(people, seed=10_000 + k))
            result = rbridge.to_pandas(r, rbridge.call("duet_test_reference", rbridge.to_r(r, frame)))
            for level, contrast, p in zip(result["level"], result["contrast"], result["p_value"]):
                hits[(level, contrast)] += p < alpha
    return {key: count / nsim for key, count in hits.items()}


def test_the_estimated_power_agrees_with_an_independent_simulation_of_a_known_effect(r_stack):
    people, nsim = 20, 50
    pilot = generate(people, seed=1)
    result = power.estimate(pilot, power.PowerPlan(sizes=(people,), nsim=nsim, seed=4),
                            truth={"beta": BETA, "theta": SD})
    assert result.pilot["method"] == "ml"  # no cell separates: the report's own glmer throughout
    estimated = result.curve[result.curve["factor"] == "modality"].set_index(["level", "contrast"])
    assert (estimated["failed"] == 0).all() and (estimated["nsim"] == nsim).all()
    truth = true_power(people, nsim, 0.05, r_stack)
    assert set(estimated.index) == set(truth)
    for key, p_true in truth.items():
        p_est = estimated.loc[key, "power"]
        pooled = (p_est + p_true) / 2
        margin = 3.29 * math.sqrt(max(pooled * (1 - pooled), 0.01) * 2 / nsim)  # 99.9% two-sample bound
        assert abs(p_est - p_true) <= margin, (key, p_est, p_true, margin)
        assert estimated.loc[key, "low"] <= p_est <= estimated.loc[key, "high"]
    assert 0.15 < sum(truth.values()) / len(truth) < 0.95  # known effects detected some of the time, not always


def test_the_simulated_test_is_the_reports_holm_adjusted_probability_contrast(r_stack):
    """One simulated study (power.R) fitted and tested by power.study_result, unadjusted and Holm-adjusted:
    Holm across the two models within each modality and argument form (p.adjust), estimates on the
    probability scale (between -1 and 1)."""
    from analysis import rbridge as rb
    from designs.modal.mixed import AGENTS

    pilot = generate(12, seed=5)
    fit = rb.fit(AGENTS.formula, pilot, family="binomial", fast=True)
    with rb.r_session() as r:
        if "duet_power_simulate" not in r.ro.globalenv:
            r.ro.r(f"source('{power.POWER_R.as_posix()}')")
        data = rb.to_r(r, rb.factors_for_r(pilot))
        study = rb.call("duet_power_simulate", fit.model, data, 12, 7, "respondent", "interpretation")
        blanks = power._blank_rows(pilot, AGENTS)
        runs = {adjust: power.study_result(r, AGENTS, study, blanks=blanks, adjust=adjust) for adjust in ("none", "holm")}
    raw, holm = runs["none"], runs["holm"]
    assert list(raw["contrast"]) == list(holm["contrast"]) and set(raw["contrast"]) == {"m1 - human", "m2 - human"}
    assert list(zip(raw["factor"], raw["level"], raw["contrast"])) == list(blanks.itertuples(index=False, name=None))
    assert (raw["status"] == "ok").all() and raw["estimate"].between(-1, 1).all()
    for _, part in raw.groupby(["factor", "level"]):
        p = sorted(part["p_value"])
        expected = sorted([min(1.0, 2 * p[0]), min(1.0, max(2 * p[0], p[1]))])  # Holm with two tests
        got = sorted(holm.loc[part.index, "p_value"])
        assert got == pytest.approx(expected, rel=1e-9)


def test_a_converged_fit_that_gives_a_contrast_no_p_value_is_a_failed_study_not_a_non_rejection(r_stack):
    """A simulated study in which m2 answered no item of one modality: glmer drops the coefficient it cannot
    estimate and converges, and emmeans gives m2 − human at that modality no estimate and no p-value. Counted as
    an ok study, that contrast would read as a test that did not reject; it is a fit the report could not test,
    so the study is failed (every contrast: its p-values blank), counted as failed and as a NaN p-value, and
    rejects nothing."""
    from analysis import rbridge as rb
    from designs.modal.mixed import AGENTS

    pilot = generate(12, seed=5)
    study = pilot[~((pilot["agent"] == "m2") & (pilot["modality"] == "box"))].reset_index(drop=True)
    fit = rb.fit(AGENTS.formula, study[list(AGENTS.columns)], family="binomial", fast=True)
    assert fit.converged and not fit.separated
    raw = rb.versus_reference(fit, "agent", "modality")
    missing = raw["p_value"].isna()
    assert list(raw.loc[missing, "modality"]) == ["box"] and (~missing).sum() == 5  # one contrast has none
    blanks = power._blank_rows(pilot, AGENTS)
    with rb.r_session() as r:
        result = power.study_result(r, AGENTS, rb.to_r(r, rb.factors_for_r(study)), blanks=blanks)
    assert (result["status"] == "failed").all() and result["nan_p"].all() and result["p_value"].isna().all()
    counted = power.runs_counted(result.assign(n=12), alpha=0.99)  # even at alpha 0.99, nothing is rejected
    assert counted["failed"].all() and not counted["reject"].any() and not counted["not_converged"].any()
    curve = pd.DataFrame({"n": [12, 24], "nsim": [10, 10], "failed": [1, 0], "not_converged": [0, 0],
                          "safe_fits": [0, 0], "nan_p_values": [1, 0]})
    note = power._refits_note(curve)
    assert note.startswith("Refits: 1 of 20 simulated studies failed, 1 of them a fit that gave a contrast no "
                           "p-value (in the denominator with no rejection)"), note


def test_power_grows_with_the_sample_and_the_number_needed_is_the_first_size_reaching_the_target(r_stack):
    pilot = generate(12, seed=2)
    result = power.estimate(pilot, power.PowerPlan(sizes=(3, 60), nsim=20, seed=1, target=0.5),
                            truth={"beta": BETA, "theta": SD})
    curve = result.curve[result.curve["factor"] == "modality"].pivot(index=["level", "contrast"], columns="n", values="power")
    # over the contrasts (each one's power is a share of 20 studies: single ones may cross by chance); the
    # models' own answers are drawn in every study, so their side bounds the power whatever n is
    assert curve[60].mean() > curve[3].mean() + 0.1
    for row in result.needed.itertuples():
        part = result.curve[(result.curve["factor"] == row.factor) & (result.curve["level"] == row.level)
                            & (result.curve["contrast"] == row.contrast)]
        reached = sorted(part.loc[part["low"] >= 0.5, "n"])  # the Monte-Carlo interval's lower bound, not the estimate
        assert (row.needed == reached[0]) if reached else pd.isna(row.needed)  # None where no size reached it
    assert {k: result.pilot[k] for k in ("participants", "trials", "models")} == {
        "participants": 12, "trials": 12 * 18, "models": ["m1", "m2"]}


def test_bad_plans_and_truths_are_refused_with_a_reason(r_stack):
    with pytest.raises(ValueError, match="nsim must be between 10 and 10000"):
        power.PowerPlan(nsim=3)
    with pytest.raises(ValueError, match="sizes must be whole numbers"):
        power.PowerPlan(sizes=(1, 10))
    with pytest.raises(ValueError, match=r"truth\['theta'\] must name exactly"):
        power.estimate(generate(6, seed=3), power.PowerPlan(sizes=(6,), nsim=10), truth={"beta": BETA, "theta": {}})


# R-bound (every simulated study is fitted by the report's full rule; ~1 min on this machine): the database is only
# where the command and the admin keep the analysis, so it runs once, in the PostgreSQL pass (scripts/test.sh).
@pytest.mark.postgres_only
@pytest.mark.django_db
def test_the_command_and_the_admin_estimate_a_studys_sample_size(r_stack, make_study, admin_client, settings, tmp_path,
                                                                  django_capture_on_commit_callbacks, capsys):
    from django.core.management import CommandError, call_command

    from analysis.models import PowerAnalysis, ReportStatus

    # fake models whose answers vary within every cell: the pilot is glmer's, and so is nearly every refit (at the
    # default noise they answer whole cells one way and every refit is blme's Laplace fit, ~5 s each; the
    # separation-safe refits are tested by test_a_model_always_right_or_always_wrong… and test_a_simulated_study…)
    study = make_study(models=2, participants=8, model_noise=0.5)
    # one size here and in the admin below; the curve over several sizes is test_power_grows_with_the_sample…'s
    # the command asks for the model − human contrasts alone (--models-only); the admin below, the people's too
    call_command("estimate_sample_size", study.slug, "--sizes", "4", "--nsim", "10", "--real-only", "--models-only",
                 "--out", str(tmp_path))
    out = capsys.readouterr().out
    assert ("8 pilot participants, models lm-1, lm-2; 10 simulated studies; the people's own effects not simulated "
            "(the model − human contrasts alone, as asked)") in out
    assert "modality box, lm-1 - human:" in out and "(people)" not in out
    assert PowerAnalysis.objects.get().total == 10 and PowerAnalysis.objects.get().plan["people"] is False
    curve = pd.read_csv(tmp_path / "power_curve.csv")
    assert set(curve["n"]) == {4} and set(curve["nsim"]) == {10} and curve["power"].between(0, 1).all()
    assert set(curve["effect"]) == {"model - human"}
    assert (tmp_path / "power_curve.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(CommandError, match="nsim must be between 10 and 10000"):
        call_command("estimate_sample_size", study.slug, "--nsim", "2")
    with pytest.raises(CommandError, match="a stated people's effect needs the people's effects simulated"):
        call_command("estimate_sample_size", study.slug, "--models-only", "--effect-by", "modality=box:0.9")

    settings.DUET_TASK_MODE = "eager"
    form = admin_client.post("/admin/experiments/study/", {"action": "estimate_sample_size", "_selected_action": [study.pk]})
    assert b"Start the estimate" in form.content
    bad = admin_client.post("/admin/experiments/study/", {
        "action": "estimate_sample_size", "_selected_action": [study.pk], "confirm": "yes", "sizes": "4 eight",
        "nsim": "10", "alpha": "0.05", "target": "0.8", "seed": "0"})
    assert b"sizes must be whole numbers" in bad.content and PowerAnalysis.objects.count() == 1
    with django_capture_on_commit_callbacks(execute=True):
        admin_client.post("/admin/experiments/study/", {
            "action": "estimate_sample_size", "_selected_action": [study.pk], "confirm": "yes", "sizes": "4",
            "nsim": "10", "alpha": "0.05", "target": "0.8", "seed": "1"})
    analysis = PowerAnalysis.objects.latest("created_at")
    # 10 studies for model − human, 10 for each declared factor's people's contrasts (modality, argform: issue 47)
    assert analysis.status == ReportStatus.DONE and (analysis.done, analysis.total) == (30, 30), analysis.message
    page = admin_client.get(f"/admin/analysis/poweranalysis/{analysis.pk}/change/").content.decode()
    assert '<progress class="job-progress" value="30" max="30"' in page and "data:image/png;base64," in page
    assert "Participants needed" in page and "needed for power 0.8" in page and "lm-2 - human" in page
    call_command("analyze", study.slug, "--out", str(tmp_path / "report"))
    html = (tmp_path / "report" / "report.html").read_text(encoding="utf-8")
    assert f"Sample size by simulation (power analysis {analysis.pk})" in html and "10 simulated studies per size" in html
    assert "With 2 model configurations (lm-1, lm-2) the p-values are Holm-adjusted" in html
    assert "LOWER bound of the Wilson 95% interval" in html and "Refits: " in html and "simulated studies failed" in html
    needed = pd.read_csv(tmp_path / "report" / "tables" / "power_needed.csv")
    assert set(needed.loc[needed["effect"] == "model - human", "contrast"]) == {"lm-1 - human", "lm-2 - human"}
    assert set(needed.loc[needed["effect"] == "people", "factor"]) == {"modality (people)", "argform (people)"}
    raw = pd.read_csv(tmp_path / "report" / "tables" / "power_needed.csv", dtype=str, keep_default_na=False)
    assert all(re.fullmatch(r"\d*", v) for v in [*raw["needed"], *raw["max_n"]])  # integers (10, not 10.0)
    assert (tmp_path / "report" / "figures" / "power_power_curve.svg").is_file()  # the curve as a file too

    # What went in is recorded and printed; a report on other runs is warned that the estimate is not for them.
    from inference.models import ModelRun

    run_ids = sorted(ModelRun.objects.filter(study=study).values_list("pk", flat=True))
    assert analysis.pilot_summary["run_ids"] == run_ids and len(run_ids) == 2
    assert "attention-check trial" in {row["rule"] for row in analysis.pilot_summary["exclusions"]}
    used = ", ".join(f"#{r}" for r in run_ids)
    assert f"Model runs used: {used}; pilot exclusions: " in html and "WARNING: this power analysis" not in html
    call_command("analyze", study.slug, "--runs", str(run_ids[0]), "--out", str(tmp_path / "one-run"))
    one = (tmp_path / "one-run" / "report.html").read_text(encoding="utf-8")
    assert f"WARNING: this power analysis used model runs {used}, this report uses #{run_ids[0]}" in one


@pytest.mark.django_db
def test_a_power_request_past_the_size_limit_is_refused_with_a_message_and_nothing_queued(make_study, admin_client,
                                                                                            monkeypatch):
    """Issue 26 item 6: sizes 1000000 2000000 × nsim 10000 (or 5,000 sizes) was queued. nsim × the sizes'
    sum is bounded by DUET_POWER_MAX_SIMULATED (default 200,000) in the service, the form and the command."""
    from django.core.management import CommandError, call_command

    from analysis.models import PowerAnalysis
    from analysis.power_plan import PowerPlan, check_budget
    from analysis.power_services import power_request
    from common.env import SettingsError, power_max_simulated

    study = make_study(models=1, participants=2)
    assert power_max_simulated() == 200_000
    check_budget(PowerPlan())  # the default plan: 31,000
    check_budget(PowerPlan(), people_factors=2)  # and 93,000 with 003's two factors' people's studies
    with pytest.raises(ValueError, match=r"asks for 90,000,000,000 simulated participants .* at most 200,000 "
                                         r"\(DUET_POWER_MAX_SIMULATED\)"):
        power_request(study=study, plan=PowerPlan(sizes=(1_000_000, 2_000_000), nsim=10_000), run=False)
    with pytest.raises(ValueError, match="at most 200,000"):
        power_request(study=study, plan=PowerPlan(sizes=tuple(range(2, 5002)), nsim=10), run=False)
    with pytest.raises(CommandError, match="at most 200,000"):
        call_command("estimate_sample_size", study.slug, "--sizes", "100000", "--nsim", "10")
    page = admin_client.post("/admin/experiments/study/", {
        "action": "estimate_sample_size", "_selected_action": [study.pk], "confirm": "yes",
        "sizes": "1000000 2000000", "nsim": "10000", "alpha": "0.05", "target": "0.8", "seed": "0"})
    assert b"at most 200,000" in page.content and b"DUET_POWER_MAX_SIMULATED" in page.content
    assert PowerAnalysis.objects.count() == 0
    monkeypatch.setenv("DUET_POWER_MAX_SIMULATED", "3000")
    with pytest.raises(ValueError, match="asks for 4,500 simulated participants"):
        power_request(study=study, plan=PowerPlan(sizes=(50, 100), nsim=10), run=False)
    # 20 model − human studies and 20 for each of 003's declared factors' people's contrasts (issue 47 item 5)
    assert power_request(study=study, plan=PowerPlan(sizes=(40, 60), nsim=10), run=False).total == 60
    PowerAnalysis.objects.all().delete()
    # the model − human contrasts alone: 20 studies, and a plan the people's sets put over the limit fits
    assert power_request(study=study, plan=PowerPlan(sizes=(40, 60), nsim=10, people=False), run=False).total == 20
    PowerAnalysis.objects.all().delete()
    check_budget(PowerPlan(sizes=(50, 100), nsim=10, people=False), people_factors=2)  # 1,500 of 3,000
    monkeypatch.setenv("DUET_POWER_MAX_SIMULATED", "lots")
    with pytest.raises(SettingsError, match="DUET_POWER_MAX_SIMULATED must be a whole number"):
        power_max_simulated()


@pytest.mark.django_db
def test_the_peoples_studies_count_in_the_simulation_budget(make_study, admin_client, monkeypatch,
                                                             django_capture_on_commit_callbacks):
    """Issue 47: a power analysis also simulates nsim studies per size for the people's effects of each declared
    factor (analysis/power_people.py); they count in DUET_POWER_MAX_SIMULATED like the model − human ones. 003's
    study declares two factors (modality, argument form): sizes 40 60 × nsim 10 is 1,000 participants a set, 3,000
    in all, over a limit of 2,500 — refused with the sets named, by the service, the form and the command, and
    nothing stored; a study declaring one factor asks for 2,000 and is queued."""
    from django.core.management import CommandError, call_command

    from analysis.models import PowerAnalysis
    from analysis.power_plan import PowerPlan
    from analysis.power_services import power_request

    study = make_study(models=1, participants=2)
    monkeypatch.setenv("DUET_POWER_MAX_SIMULATED", "2500")
    plan = PowerPlan(sizes=(40, 60), nsim=10)
    assert plan.simulated == 1_000 and plan.participants(2) == 3_000 and plan.studies(2) == 60
    said = (r"asks for 3,000 simulated participants \(nsim 10 × the sizes' sum 100 × 3 sets of studies: model − human, "
            r"and the people's effects by each of the study's 2 declared factors\); one request may ask for at most "
            r"2,500 \(DUET_POWER_MAX_SIMULATED\)")
    with pytest.raises(ValueError, match=said):
        power_request(study=study, plan=plan, run=False)
    with pytest.raises(CommandError, match=said):
        call_command("estimate_sample_size", study.slug, "--sizes", "40", "60", "--nsim", "10")
    page = admin_client.post("/admin/experiments/study/", {
        "action": "estimate_sample_size", "_selected_action": [study.pk], "confirm": "yes",
        "sizes": "40 60", "nsim": "10", "alpha": "0.05", "target": "0.8", "seed": "0", "pilot": "on"})
    text = page.content.decode()
    assert f"{study.slug}: This power analysis asks for 3,000 simulated participants" in text, text[-3000:]
    assert "2 declared factors" in text
    assert PowerAnalysis.objects.count() == 0  # nothing stored
    # the form's "model − human contrasts alone": 1,000 participants, within the limit: stored and sent (the
    # sending recorded here, not run: the simulation itself is test_the_command_and_the_admin_…'s)
    sent = []
    monkeypatch.setattr("common.dispatch.send", lambda task, **kwargs: sent.append((task, kwargs["args"])))
    form = admin_client.post("/admin/experiments/study/", {"action": "estimate_sample_size",
                                                          "_selected_action": [study.pk]})
    assert "The model − human contrasts alone" in form.content.decode()
    with django_capture_on_commit_callbacks(execute=True):
        admin_client.post("/admin/experiments/study/", {
            "action": "estimate_sample_size", "_selected_action": [study.pk], "confirm": "yes", "models_only": "on",
            "sizes": "40 60", "nsim": "10", "alpha": "0.05", "target": "0.8", "seed": "0", "pilot": "on"})
    analysis = PowerAnalysis.objects.get()
    assert (analysis.total, analysis.plan["people"]) == (20, False) and [a for _, a in sent] == [[analysis.pk]]
    analysis.delete()
    study.settings = {**(study.settings or {}), "factors": ["modality"]}
    study.save(update_fields=["settings"])
    assert power_request(study=study, plan=plan, run=False).total == 40  # 2,000 participants: within the limit



def test_a_model_always_right_or_always_wrong_is_simulated_with_the_separation_safe_fit(r_stack):
    """A model answering "yes" to everything (100 % on valid forms, 0 % on invalid ones) separates the
    pilot and every simulated study: each refit is blme::bglmer, as the report's, and the contrasts stay
    finite on the probability scale (a logit Wald test would be lost to Hauck-Donner)."""
    from analysis import prep
    from designs.modal import simulate
    from analysis.sections import StudyFrames

    scores = simulate.always_yes(simulate.scores(n_models=1, n_interpretations=4, seed=3))
    trials, _ = prep.apply_exclusions(simulate.trials(n_participants=6, n_trials=24, seed=3))
    pilot = power.pilot_frame(StudyFrames(scores=scores, kept=trials))
    result = power.estimate(pilot, power.PowerPlan(sizes=(4,), nsim=10, seed=2))
    assert result.pilot["method"] == "bglmer" and len(result.pilot["separated_cells"]) == 6
    curve = result.curve
    assert (curve["safe_fits"] == 10).all() and (curve["failed"] == 0).all()
    by_argform = curve[curve["factor"] == "argform"].set_index("level")
    assert by_argform.loc["AD", "power"] > 0.5  # never right on AD vs people right about half the time
    assert curve["power"].between(0, 1).all()


def test_a_simulated_study_glmer_cannot_fit_is_refitted_as_the_report_would_and_counted_by_its_result(r_stack):
    """Every simulated study of this truth is an additive "staircase" (items with a0 and b0 always wrong, a1 and b1
    always right, the other two kinds half and half): no cell of a term is all 0 or all 1, and glmer returns
    estimates near ±20 with huge errors (no maximum-likelihood estimate exists). The report's rule
    (rbridge.fit_r) finds the separation by linear programming and fits blme::bglmer; each simulated study is
    fitted so, its contrasts equal the report's own fit of the same answers (rbridge.fit on the frame), and it
    counts by its test, not as a failure. A tiny design: 16 items, 6 pilot people, 10 studies of 4."""
    from analysis import rbridge as rb
    from analysis import versus
    from analysis.sections import ModelSpec

    items = [(f"i{k}", f"a{k % 2}", f"b{(k // 2) % 2}") for k in range(16)]
    rng = random.Random(3)

    def answer(a, b):
        return 0 if (a, b) == ("a0", "b0") else 1 if (a, b) == ("a1", "b1") else int(rng.random() < 0.5)

    rows = [("human", f"P{p}", item, a, b, answer(a, b)) for p in range(6) for item, a, b in items]
    rows += [("m1", "m1", item, a, b, answer(a, b)) for item, a, b in items]
    pilot = pd.DataFrame(rows, columns=["agent", "participant", "item", "a", "b", "correct"])
    pilot["agent"] = pd.Categorical(pilot["agent"], ["human", "m1"])
    for column in ("participant", "item", "a", "b"):
        pilot[column] = pd.Categorical(pilot[column])
    spec = ModelSpec(key="staircase", title="staircase", formula=versus.formula(["a", "b"]), frame=lambda f: pilot,
                     columns=tuple(pilot.columns), group="item", needs="answers", factors=("agent", "a", "b"),
                     family="binomial", versus=(("all", "agent", None), ("by_a", "agent", "a")))
    truth = {"beta": {"(Intercept)": -20.0, "agentm1": 0.0, "aa1": 20.0, "bb1": 20.0, "agentm1:aa1": 0.0,
                      "agentm1:bb1": 0.0},
             "theta": {"participant.(Intercept)": 0.3, "item.(Intercept)": 0.05}}
    result = power.estimate(pilot, power.PowerPlan(sizes=(4,), nsim=10, seed=5), spec=spec, truth=truth)
    curve = result.curve
    assert set(zip(curve["factor"], curve["level"])) == {("overall", "all"), ("a", "a0"), ("a", "a1")}
    # every study separates: mostly as only the linear program sees it (now and then a cell of the model's four
    # half-and-half answers comes out all alike, and the cell check sees it first)
    assert (curve["safe_fits"] == 10).all() and (curve["lp_separations"] >= 5).all(), curve
    assert (curve["failed"] == 0).all() and curve["rejections"].between(0, 10).all()

    # one of those studies, fitted through the report's own entry point on the same answers
    with rb.r_session() as r:
        data = rb.to_r(r, rb.factors_for_r(pilot))
        fit = rb.fit(spec.formula, pilot, family="binomial")
        beta, theta = power._newparams(r.ro, fit.model, truth)
        study = rb.call("duet_power_simulate", fit.model, data, 4, 11, "participant", "item", beta, theta)
        ours = power.study_result(r, spec, study, blanks=power._blank_rows(pilot, spec))
        frame = rb.to_pandas(r, study)
    glmer = r_stack.fit(spec.formula, frame.assign(correct=frame["correct"].astype(int)), family="binomial")
    assert glmer.method == "bglmer" and (glmer.perfectly_predicted > 0 or glmer.separation)
    theirs = rb.versus_reference(glmer, "agent", None)
    assert (ours["status"] == "ok").all() and ours["safe"].all() and (ours["lp"] == (glmer.perfectly_predicted > 0)).all()
    assert ours.loc[ours["factor"] == "overall", "p_value"].iloc[0] == pytest.approx(theirs["p_value"].iloc[0], rel=1e-6)


def test_power_r_simulates_only_and_fits_nothing():
    """The separation rule and the fitting rule are written once (rbridge.fit_r, which power.py calls for every
    simulated study); power.R draws answers and calls no fitter and no separation check of its own."""
    import re

    code = "\n".join(line.split("#")[0] for line in power.POWER_R.read_text(encoding="utf-8").splitlines())
    defined = set(re.findall(r"^(\w+)\s*<-\s*function", code, flags=re.M))
    assert defined == {"duet_power_design", "duet_power_simulate"}
    fitters = (r"\b(glmer|bglmer|lmer|glm|brglmFit|duet_fit|duet_model|duet_bglmer|duet_separation"
               r"|duet_model_matrix)\s*\(")
    assert re.findall(fitters, code) == []


@pytest.mark.django_db
def test_a_power_analysis_that_cannot_run_is_refused_by_the_form_with_the_reason(make_study, admin_client, settings):
    """It was accepted and failed later: a study with no finished model run, or no pilot answers (the preview
    session does not count; the simulated pilots' bots only when ticked), is refused before anything is
    queued, with the reason; a study with both is accepted."""
    from analysis.models import PowerAnalysis
    from inference.models import ModelRun

    settings.DUET_TASK_MODE = "embedded"  # a queued job is never started by the test

    def ask(study, **extra):
        fields = {"action": "estimate_sample_size", "_selected_action": [study.pk], "confirm": "yes", "sizes": "4",
                  "nsim": "10", "alpha": "0.05", "target": "0.8", "seed": "0", "pilot": "on", **extra}
        return admin_client.post("/admin/experiments/study/", fields, follow=True).content.decode()

    people_only = make_study(models=0, participants=3)
    page = ask(people_only)
    assert f"{people_only.slug} cannot be estimated yet: no model run of it has finished" in page
    running = make_study(models=1, participants=3)
    ModelRun.objects.filter(study=running).update(status="running")
    assert f"{running.slug} cannot be estimated yet: no model run of it has finished" in ask(running)
    models_only = make_study(models=1, participants=0)  # its one session is a staff preview
    page = ask(models_only)
    assert f"{models_only.slug} cannot be estimated yet: no participant has answered it" in page
    assert "no model run" not in page
    from experiments.models import Participant

    Participant.objects.filter(study=models_only).update(is_preview=False, is_simulated=True)  # now a bot's
    assert "only simulated pilot participants have answered it" in ask(models_only, pilot="")
    assert PowerAnalysis.objects.count() == 0
    assert "cannot be estimated" not in ask(models_only)  # the bots ticked: accepted
    assert PowerAnalysis.objects.filter(study=models_only).count() == 1


@pytest.mark.django_db
def test_the_forms_first_offer_of_simulated_studies_fits_the_budget(make_study, admin_client, monkeypatch):
    """Each declared factor adds a set of people's studies (issue 47): where the default plan (10 20 40 80 160 ×
    100 a set) would be refused, the form offers fewer simulated studies per size, a multiple of 10, which fits."""
    from analysis.power_plan import PowerPlan, check_budget
    from experiments.factors import declared_factors

    study = make_study(models=1, participants=3)
    sets = 1 + len(declared_factors(study))
    assert sets == 3  # 003's modality and argument form

    def offered() -> int:
        page = admin_client.post("/admin/experiments/study/", {"action": "estimate_sample_size",
                                                               "_selected_action": [study.pk]}).content.decode()
        return int(re.search(r'name="nsim" value="(\d+)"', page).group(1))

    assert offered() == 100  # 93,000 of the default 200,000
    monkeypatch.setenv("DUET_POWER_MAX_SIMULATED", "50000")  # 100 a size would ask 93,000
    assert offered() == 50 and 50 * 310 * sets <= 50_000 < 60 * 310 * sets
    check_budget(PowerPlan(nsim=offered()), people_factors=sets - 1)  # what it offers is accepted
    monkeypatch.setenv("DUET_POWER_MAX_SIMULATED", "1000")  # not even 10: the floor, refused when sent
    assert offered() == 10
