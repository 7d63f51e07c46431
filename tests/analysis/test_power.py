"""Sample size by simulation (analysis/power.py) against an independent simulation with a known
effect: data drawn in Python from known parameters, fitted and tested in R, give the true power;
the estimate from lme4's simulate (told the same parameters) must agree within Monte-Carlo error."""
from __future__ import annotations

import math
import random

import pandas as pd
import pytest

from analysis import power

MODALITIES, ARGFORMS = ["none", "box", "dia"], ["DS", "MP", "MT"]
BETA = {"(Intercept)": 0.8, "agentm1": 0.6, "modalitybox": -0.3, "modalitydia": 0.2, "argformMP": 0.4,
        "argformMT": -0.2, "agentm1:modalitybox": 0.0, "agentm1:modalitydia": 0.0, "agentm1:argformMP": 0.0,
        "agentm1:argformMT": 0.0}
SD = {"respondent.(Intercept)": 0.5, "interpretation.(Intercept)": 0.3}


def generate(people: int, seed: int, trials: int = 18) -> pd.DataFrame:
    """One study from the known model: a language model answers all 144 items once (the same answers
    in every study), each person a random 18; logit = fixed effects + respondent effect +
    interpretation effect."""
    items = [(f"I{i}", m, a) for i in range(16) for m in MODALITIES for a in ARGFORMS]

    def answer(agent, respondent_effect, item):
        interpretation, modality, argform = item
        x = BETA["(Intercept)"] + BETA.get(f"modality{modality}", 0.0) + BETA.get(f"argform{argform}", 0.0)
        if agent == "m1":
            x += BETA["agentm1"] + BETA.get(f"agentm1:modality{modality}", 0.0) + BETA.get(f"agentm1:argform{argform}", 0.0)
        return int(rng.random() < 1 / (1 + math.exp(-(x + respondent_effect + shift[interpretation]))))

    # the language model's answers are its own: the same in every study (drawn once, seed 0)
    rng = random.Random(0)
    shift = {f"I{i}": rng.gauss(0, SD["interpretation.(Intercept)"]) for i in range(16)}
    u = rng.gauss(0, SD["respondent.(Intercept)"])
    rows = [("m1", "m1", *item, answer("m1", u, item)) for item in items]
    rng = random.Random(seed)  # the people, and the interpretations' effects on them, anew in each study
    shift = {f"I{i}": rng.gauss(0, SD["interpretation.(Intercept)"]) for i in range(16)}
    for k in range(people):
        u = rng.gauss(0, SD["respondent.(Intercept)"])
        rows += [("human", f"P{k}", *item, answer("human", u, item)) for item in rng.sample(items, trials)]
    frame = pd.DataFrame(rows, columns=list(power.COLUMNS))
    frame["agent"] = pd.Categorical(frame["agent"], ["human", "m1"])
    frame["modality"] = pd.Categorical(frame["modality"], MODALITIES)
    frame["argform"] = pd.Categorical(frame["argform"], ARGFORMS)
    return frame


REFERENCE_R = """
duet_test_reference <- function(d) {
  fit <- suppressWarnings(suppressMessages(lme4::glmer(
    correct ~ agent * (modality + argform) + (1 | respondent) + (1 | interpretation), data = d,
    family = binomial, nAGQ = 0, control = glmerControl(optimizer = "bobyqa"))))
  s <- summary(emmeans::contrast(emmeans::emmeans(fit, ~ agent | modality), method = "trt.vs.ctrl", ref = 1),
               adjust = "none")
  data.frame(level = as.character(s$modality), p_value = s$p.value)
}
"""


def true_power(people: int, nsim: int, alpha: float, rbridge) -> dict[str, float]:
    """Rejections per modality over nsim studies drawn in Python from the known parameters."""
    hits = {m: 0 for m in MODALITIES}
    with rbridge.r_session() as r:
        if "duet_test_reference" not in r.ro.globalenv:
            r.ro.r(REFERENCE_R)
        for k in range(nsim):
            frame = rbridge._factors_for_r(generate(people, seed=10_000 + k))
            result = rbridge.to_pandas(r, rbridge.call("duet_test_reference", rbridge.to_r(r, frame)))
            for level, p in zip(result["level"], result["p_value"]):
                hits[level] += p < alpha
    return {m: hits[m] / nsim for m in MODALITIES}


def test_the_estimated_power_agrees_with_an_independent_simulation_of_a_known_effect(r_stack):
    people, nsim = 20, 60
    pilot = generate(people, seed=1)
    result = power.estimate(pilot, power.PowerPlan(sizes=(people,), nsim=nsim, seed=4),
                            truth={"beta": BETA, "theta": SD})
    estimated = result.curve[result.curve["factor"] == "modality"].set_index("level")
    truth = true_power(people, nsim, 0.05, r_stack)
    for modality in MODALITIES:
        p_est, p_true = estimated.loc[modality, "power"], truth[modality]
        pooled = (p_est + p_true) / 2
        margin = 3.29 * math.sqrt(max(pooled * (1 - pooled), 0.01) * 2 / nsim)  # 99.9% two-sample bound
        assert abs(p_est - p_true) <= margin, (modality, p_est, p_true, margin)
        assert estimated.loc[modality, "low"] <= p_est <= estimated.loc[modality, "high"]
    assert 0.15 < sum(truth.values()) / 3 < 0.95  # a known effect the design detects some of the time, not always


def test_power_grows_with_the_sample_and_the_number_needed_is_the_first_size_reaching_the_target(r_stack):
    pilot = generate(12, seed=2)
    result = power.estimate(pilot, power.PowerPlan(sizes=(6, 60), nsim=20, seed=1, target=0.5),
                            truth={"beta": BETA, "theta": SD})
    curve = result.curve[result.curve["factor"] == "modality"].pivot(index="level", columns="n", values="power")
    assert (curve[60] >= curve[6]).all() and curve[60].mean() > curve[6].mean()
    for row in result.needed.itertuples():
        part = result.curve[(result.curve["factor"] == row.factor) & (result.curve["level"] == row.level)]
        reached = sorted(part.loc[part["power"] >= 0.5, "n"])
        assert row.needed == (reached[0] if reached else None)
    assert result.pilot == {"participants": 12, "trials": 12 * 18, "models": ["m1"]}


def test_bad_plans_and_truths_are_refused_with_a_reason(r_stack):
    with pytest.raises(ValueError, match="nsim must be between 10 and 10000"):
        power.PowerPlan(nsim=3)
    with pytest.raises(ValueError, match="sizes must be whole numbers"):
        power.PowerPlan(sizes=(1, 10))
    with pytest.raises(ValueError, match=r"truth\['theta'\] must name exactly"):
        power.estimate(generate(6, seed=3), power.PowerPlan(sizes=(6,), nsim=10), truth={"beta": BETA, "theta": {}})


@pytest.mark.django_db
def test_the_command_and_the_admin_estimate_a_studys_sample_size(r_stack, make_study, admin_client, settings, tmp_path,
                                                                  django_capture_on_commit_callbacks, capsys):
    from django.core.management import CommandError, call_command

    from analysis.models import PowerAnalysis, ReportStatus

    study = make_study(models=2, participants=8)
    call_command("estimate_sample_size", study.slug, "--sizes", "4", "8", "--nsim", "10", "--real-only",
                 "--out", str(tmp_path))
    out = capsys.readouterr().out
    assert "8 pilot participants, models lm-1, lm-2; 20 simulated studies." in out
    assert "modality box, lm-1 - human:" in out
    curve = pd.read_csv(tmp_path / "power_curve.csv")
    assert set(curve["n"]) == {4, 8} and set(curve["nsim"]) == {10} and curve["power"].between(0, 1).all()
    assert (tmp_path / "power_curve.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(CommandError, match="nsim must be between 10 and 10000"):
        call_command("estimate_sample_size", study.slug, "--nsim", "2")

    settings.DUET_TASK_MODE = "eager"
    form = admin_client.post("/admin/experiments/study/", {"action": "estimate_sample_size", "_selected_action": [study.pk]})
    assert b"Start the estimate" in form.content
    bad = admin_client.post("/admin/experiments/study/", {
        "action": "estimate_sample_size", "_selected_action": [study.pk], "confirm": "yes", "sizes": "4 eight",
        "nsim": "10", "alpha": "0.05", "target": "0.8", "seed": "0"})
    assert b"sizes must be whole numbers" in bad.content and PowerAnalysis.objects.count() == 1
    with django_capture_on_commit_callbacks(execute=True):
        admin_client.post("/admin/experiments/study/", {
            "action": "estimate_sample_size", "_selected_action": [study.pk], "confirm": "yes", "sizes": "4, 8",
            "nsim": "10", "alpha": "0.05", "target": "0.8", "seed": "1"})
    analysis = PowerAnalysis.objects.latest("created_at")
    assert analysis.status == ReportStatus.DONE and (analysis.done, analysis.total) == (20, 20), analysis.message
    page = admin_client.get(f"/admin/analysis/poweranalysis/{analysis.pk}/change/").content.decode()
    assert '<progress value="20" max="20">' in page and "data:image/png;base64," in page
    assert "Participants needed" in page and "needed for power 0.8" in page and "lm-2 - human" in page
    call_command("analyze", study.slug, "--out", str(tmp_path / "report"))
    html = (tmp_path / "report" / "report.html").read_text(encoding="utf-8")
    assert f"Sample size by simulation (power analysis {analysis.pk})" in html and "10 simulated studies per size" in html
    needed = pd.read_csv(tmp_path / "report" / "tables" / "power_needed.csv")
    assert set(needed["contrast"]) == {"lm-1 - human", "lm-2 - human"}

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
