"""Sample size by simulation: how many participants a study needs to detect each model's difference
from the humans, with the report's own test, for any study with people and models.

The model is the report's humans-vs-models GLMM (`human_model_spec`, the choice the report makes): the one
the study's designs register (its contrasts within each level of the factors it names), otherwise the any-study
model by the study's declared factors (analysis.versus.spec: the overall contrast and one within each factor's
levels). Its frame is read through the spec's own frame function, so the pilot holds exactly the rows the report's
model holds.

From a pilot (simulated or real participants) and the model scores the model is fitted once as the
report fits it (rbridge.fit). Then, for each candidate number of participants n, `nsim` studies are
simulated from that fit (analysis/r/power.R, duet_power_simulate: n participants drawn from the
pilot's lists; every answer, the models' included, drawn from the fitted GLMM — new participants, the
models' own effects, item effects drawn anew and shared by people and models, and where the model has a
family term the families' effects drawn anew too, each item's nested in its family's, as the report's
model treats them). Each simulated study is fitted by the report's one rule (rbridge.fit_r: the cell and
linear-programming separation checks, glmer with the Nelder-Mead retry, and blme::bglmer on
separation, on a glmer error or on an SE past the limit) and tested as the report tests it: each model
minus the humans on the probability scale (emmeans regrid), Holm-adjusted across the models within
each level of the table's `by` factor, as emmeans adjusts (`rbridge.versus_reference`). Power is the
share of the nsim studies whose adjusted p-value is below `alpha`, with a Wilson 95% Monte-Carlo
interval; a failed study (the report's rule cannot fit it at all, bglmer stopping too, or its fit gives a
contrast no p-value) is counted as failed and rejects nothing, and every kind of refit is counted and shown. The
number needed is the smallest n tried whose interval's LOWER bound reaches `target` (NEEDED_DEFINITION).

The fitted model stands in for the truth (as in every pilot-based power analysis): a pilot's effect
estimates are noisy, so the curve is as good as the pilot. `truth` replaces the fit's parameters
(beta, theta) when they are known; the tests use it to check the estimate against an independent
simulation with a known effect. DEPARTURES lists what the simulation still does differently from the
study it stands for; the report's section prints it.
"""
from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from . import rbridge as rb
from .proportions import wilson
from . import versus
from .versus import human_model_spec  # noqa: F401 the report's one rule (power_services reads it here)
from .power_plan import PowerPlan
from .sections import ModelSpec, StudyFrames

POWER_R = Path(__file__).with_name("r") / "power.R"
OVERALL = ("overall", "all")  # the factor and level of a contrast over every item (Table 1's words)


NEEDED_DEFINITION = (
    "'needed' is the smallest number of participants tried whose power is at least the target with 95% Monte-Carlo "
    "confidence: the LOWER bound of the Wilson 95% interval of its power (rejections out of the simulated studies) "
    "reaches the target. A size whose point estimate reaches the target but whose lower bound does not is not enough; "
    "more simulated studies per size narrow the interval.")

DEPARTURES = (
    "The pilot's fit stands in for the truth: its effects are estimates, so the curve is as good as the pilot.",
    "Every answer is drawn from the fitted model, the models' included: the report's model treats a configuration's "
    "decisions as Bernoulli draws around its fitted rate; the real configurations' answers are already known and "
    "would not change in the study.",
    "The items' effects (and their families', where the model has a family term) are drawn anew in each simulated "
    "study (the report treats the items as a sample); the study will ask the pilot's items, whose effects are fixed.",
    "New participants take the lists (items and order) of pilot participants drawn at random; exclusions are not "
    "simulated (every simulated participant is kept).",
)


@dataclass
class PowerResult:
    plan: PowerPlan
    # n, factor, level, contrast, rejections, nsim, power, low, high, failed, not_converged, safe_fits,
    # ml_errors, lp_separations, retried, nan_p_values (failed because the fit gave a test no p-value)
    curve: pd.DataFrame
    needed: pd.DataFrame  # factor, level, contrast, needed (None: more than the largest n tried), power_at_max
    pilot: dict = field(default_factory=dict)  # participants, trials, models in the pilot; the pilot fit's method


def default_spec() -> ModelSpec:
    """The model a power analysis simulates when none is named: the first humans-vs-models model a design
    registers (the one power.R was first written for, and the one a pilot summary that predates the record of its
    model was simulated by)."""
    found = versus.registered()
    if found is None:
        raise ValueError("no design registers a humans-vs-models model: name the model to simulate")
    return found


def pilot_frame(frames: StudyFrames, spec: ModelSpec | None = None) -> pd.DataFrame:
    """The pilot's humans and models in the report's human-vs-model frame (`spec`'s; default_spec()'s by
    default)."""
    spec = spec or default_spec()
    reason = spec.precheck(frames) if spec.precheck else ""
    if reason:
        raise ValueError(f"A power analysis {reason} (a pilot, simulated or real, and at least one model run).")
    return spec.frame(frames)[list(spec.columns)]


FAMILY = "family"  # the grouping factor of the items' families (analysis/versus.py), nested above the items


def groups(spec: ModelSpec) -> tuple[str, str, str | None]:
    """(people, items, families): the grouping factors of the spec's random intercepts, items being spec.group,
    families the (1 | family) term where the model has one (None where not)."""
    found = re.findall(r"\(\s*1\s*\|\s*([A-Za-z_.][A-Za-z0-9_.]*)\s*\)", spec.formula)
    families = FAMILY if FAMILY in found and spec.group != FAMILY else None
    people = [g for g in found if g not in (spec.group, families)]
    if len(found) != 2 + (families is not None) or len(people) != 1:
        raise ValueError(f"A power analysis needs a model with random intercepts by participant and by item (and by "
                         f"family where items come in families); {spec.key} has {spec.formula}")
    return people[0], spec.group, families


def estimate(frame: pd.DataFrame, plan: PowerPlan = PowerPlan(), *, spec: ModelSpec | None = None,
             truth: dict | None = None, progress: Callable[[int, int], None] | None = None) -> PowerResult:
    """The power curve of every model-vs-human contrast over plan.sizes (see the module's docstring)."""
    spec = spec or default_spec()
    people, items, families = groups(spec)
    fit = rb.fit(spec.formula, frame, family="binomial", fast=spec.fast)
    total, done = len(plan.sizes) * plan.nsim, 0
    rows = []
    with rb.r_session() as r:
        ro = r.ro
        if "duet_power_simulate" not in ro.globalenv:
            ro.r(f"source('{POWER_R.as_posix()}')")
        data = rb.to_r(r, rb.factors_for_r(frame))
        beta, theta = (ro.NULL, ro.NULL) if truth is None else _newparams(ro, fit.model, truth)
        # a separation-safe refit starts from the pilot's safe fit (same parameters, same order): about half
        # the evaluations of blme's Laplace optimisation, the same optimum
        start = ro.r("function(m) list(theta = lme4::getME(m, 'theta'), fixef = lme4::fixef(m))")(fit.model) \
            if fit.method == "bglmer" else None
        blanks = _blank_rows(frame, spec)
        for n in plan.sizes:
            for k in range(plan.nsim):
                seed = (plan.seed * 1_000_003 + n * 10_007 + k) % 2_147_483_647
                study = rb.call("duet_power_simulate", fit.model, data, n, seed, people, items, beta, theta,
                                families or ro.NULL)
                result = study_result(r, spec, study, start=start, blanks=blanks)
                result["n"] = n
                rows.append(result)
                done += 1
                if progress is not None:
                    progress(done, total)
    curve = curve_of(pd.concat(rows, ignore_index=True), plan.alpha)
    humans = frame[frame["agent"] == "human"]
    pilot = {"participants": int(humans[people].nunique()), "trials": int(len(humans)),
             "models": sorted(set(frame["agent"].astype(str)) - {"human"}), "method": fit.method,
             "separated_cells": [cell.words("correct") for cell in fit.separation],
             "model": spec.key, "formula": spec.formula, "by": [by for _, _, by in spec.versus]}
    return PowerResult(plan=plan, curve=curve, needed=needed(curve, plan.target), pilot=pilot)


def curve_of(runs: pd.DataFrame, alpha: float) -> pd.DataFrame:
    """The curve from `study_result` rows (their `n` set): per size and contrast, rejections out of the simulated
    studies, the kinds of refit counted, power with its Wilson 95% Monte-Carlo interval."""
    runs = runs_counted(runs, alpha)
    keys = ["n", "factor", "level", "contrast"]
    curve = runs.groupby(keys, sort=False).agg(
        rejections=("reject", "sum"), nsim=("reject", "size"), failed=("failed", "sum"),
        not_converged=("not_converged", "sum"), safe_fits=("safe", "sum"), ml_errors=("ml_error", "sum"),
        lp_separations=("lp", "sum"), retried=("retried", "sum"), nan_p_values=("nan_p", "sum")).reset_index()
    bounds = [wilson(int(k), int(m)) for k, m in zip(curve["rejections"], curve["nsim"])]
    curve["power"] = [b.estimate for b in bounds]
    curve["low"], curve["high"] = [b.low for b in bounds], [b.high for b in bounds]
    return curve


def runs_counted(runs: pd.DataFrame, alpha: float) -> pd.DataFrame:
    """`study_result` rows with what the curve counts: reject (a p-value below alpha; a failed study rejects
    nothing, and a failed study is every study without a p-value, however its fit ended), failed, not_converged
    and the flags as booleans."""
    runs = runs.copy()
    runs["reject"] = ((runs["status"] != "failed") & (pd.to_numeric(runs["p_value"]) < alpha)).astype(bool)
    runs["failed"] = runs["status"] == "failed"
    runs["not_converged"] = runs["status"] == "not converged"
    for column in ("safe", "ml_error", "lp", "retried", "nan_p"):
        runs[column] = runs[column].fillna(False).astype(bool)
    return runs


def _blank_rows(frame: pd.DataFrame, spec: ModelSpec) -> pd.DataFrame:
    """Every contrast the test reports (factor, level, contrast), for a study the rule cannot fit at all."""
    agents = frame["agent"]
    models = ([str(a) for a in agents.cat.categories[1:]] if isinstance(agents.dtype, pd.CategoricalDtype)
              else sorted(set(agents.astype(str)) - {"human"}))
    rows = []
    for _, _, by in spec.versus:
        levels = [OVERALL[1]] if by is None else [str(v) for v in pd.Series(frame[by]).astype("category").cat
                                                  .remove_unused_categories().cat.categories]
        rows += [(by or OVERALL[0], level, f"{model} - human") for level in levels for model in models]
    return pd.DataFrame(rows, columns=["factor", "level", "contrast"])


def study_result(r, spec: ModelSpec, study, *, start=None, blanks: pd.DataFrame, adjust: str = "holm") -> pd.DataFrame:
    """One simulated study (an R data.frame) fitted by the report's rule (rbridge.fit_r) and tested as the
    report tests it (spec.versus through rbridge.versus_reference): one row per contrast with its estimate,
    adjusted p-value, status (ok, not converged, failed) and how it was fitted (safe: blme; ml_error: glmer
    stopped with an error and the report's rule refitted it; lp: separation only the linear program finds;
    retried: the Nelder-Mead retry ran; nan_p: the fit gave a test no p-value).

    A study is failed when the report's rule cannot fit it at all (bglmer stops too) or when its fit, converged
    or not, leaves any contrast without a p-value (NaN: the fit's covariance cannot be used for it): that is a
    fit the report could not test, not a test that did not reject, so every contrast of the study is failed and
    its p-values are blank."""
    n_obs = int(r.ro.baseenv["nrow"](study)[0])
    try:
        fit = rb.fit_r(r, spec.formula, study, n_obs=n_obs, family="binomial", fast=spec.fast, start=start)
        parts = []
        for _, factor, by in spec.versus:
            table = rb.versus_reference(fit, factor, by, adjust=adjust)
            parts.append(pd.DataFrame({
                "factor": by or OVERALL[0], "level": table[by].astype(str) if by else OVERALL[1],
                "contrast": table["contrast"].astype(str).str.replace(r"^\((.*)\) - ", r"\1 - ", regex=True),
                "estimate": table["estimate"], "p_value": table["p_value"]}))
        out = pd.concat(parts, ignore_index=True)
    except Exception as error:  # the report's rule could not fit it at all (bglmer stopped too)
        if type(error).__name__ != "RRuntimeError":
            raise
        out = blanks.assign(estimate=float("nan"), p_value=float("nan"), status="failed", safe=False,
                            ml_error=False, lp=False, retried=False, nan_p=False)
        return out
    out["nan_p"] = bool(pd.to_numeric(out["p_value"], errors="coerce").isna().any())
    if out["nan_p"].any():
        out["status"], out["p_value"] = "failed", float("nan")
    else:
        out["status"] = "ok" if fit.converged else "not converged"  # the kept attempt's own warnings
    out["safe"], out["ml_error"] = fit.separated, fit.ml_error is not None
    out["lp"], out["retried"] = fit.perfectly_predicted > 0, len(fit.attempts) > 1
    return out


def _newparams(ro, model, truth: dict):
    """Named beta and theta vectors from {"beta": {name: value}, "theta": {name: value}}, every parameter of
    the model named (fixef and getME(m, "theta") names), so nothing depends on lme4's internal order."""
    names = {"beta": list(ro.r["names"](ro.r["fixef"](model))),
             "theta": list(ro.r["names"](ro.r["getME"](model, "theta")))}
    values = {}
    for part, wanted in names.items():
        given = truth.get(part, {})
        missing, unknown = sorted(set(wanted) - set(given)), sorted(set(given) - set(wanted))
        if missing or unknown:
            raise ValueError(f"truth[{part!r}] must name exactly {wanted}; missing {missing}, unknown {unknown}")
        vector = ro.FloatVector([float(given[name]) for name in wanted])
        vector.names = ro.StrVector(wanted)
        values[part] = vector
    return values["beta"], values["theta"]


def needed(curve: pd.DataFrame, target: float) -> pd.DataFrame:
    """The smallest n tried whose power's Monte-Carlo lower bound reaches `target`, per contrast
    (None: none did); NEEDED_DEFINITION."""
    rows = []
    for (factor, level, contrast), part in curve.groupby(["factor", "level", "contrast"], sort=False):
        part = part.sort_values("n")
        reached = part[part["low"] >= target]
        rows.append({"factor": factor, "level": level, "contrast": contrast,
                     "needed": int(reached["n"].iloc[0]) if len(reached) else None,
                     "power_at_max": float(part["power"].iloc[-1]), "max_n": int(part["n"].iloc[-1])})
    return pd.DataFrame(rows)


def power_section(analysis, report_run_ids: list[int] | None = None):
    """A report section from a finished PowerAnalysis row: the numbers needed, the curve, the plot,
    and what went in (the model runs, the exclusions). `report_run_ids`: the runs the report itself
    uses; a power analysis that used other runs says so in a warning."""
    from . import plots
    from .sections import Section

    curve, needed_rows = pd.DataFrame(analysis.curve), pd.DataFrame(analysis.needed)
    plan, pilot = analysis.plan, analysis.pilot_summary
    section = Section("power", f"Sample size by simulation (power analysis {analysis.pk})", unit=(
        "a simulated study: power is a share of the simulated studies per size (Wilson Monte-Carlo interval over "
        "them); within each, the report's own test, with answers clustered by participant and by item (each as the "
        "model's formula below names them), and by the items' family where the model has a family term"))
    section.tables["needed"], section.tables["curve"] = needed_rows, curve
    section.figures["power_curve"] = plots.power_curve(curve, plan.get("target", 0.8))
    section.n_obs = int(pilot.get("trials", 0))
    used = pilot.get("run_ids")
    removed = [f"{row['rule']}: {row['trials_removed']} trials" for row in pilot.get("exclusions", [])
               if row.get("trials_removed")]
    section.notes.append(
        f"Model runs used: {', '.join(f'#{r}' for r in used) or 'none'}; pilot exclusions: "
        f"{'; '.join(removed) or 'none removed'}." if used is not None
        else "This power analysis predates the record of its runs and exclusions: re-run it to see them.")
    if used is not None and report_run_ids is not None and sorted(used) != sorted(report_run_ids):
        section.notes.append(
            f"WARNING: this power analysis used model runs {', '.join(f'#{r}' for r in used) or 'none'}, "
            f"this report uses {', '.join(f'#{r}' for r in report_run_ids) or 'none'}: its estimate is for "
            "other model scores. Run a new power analysis to match.")
    by, model = _recorded(pilot)
    within = " and ".join("overall" if b is None else f"within each level of {b}" for b in by)
    section.notes += [
        f"From a pilot of {pilot.get('participants')} participants ({'simulated pilots included' if analysis.pilot else 'real participants only'}) "
        f"and the models {', '.join(pilot.get('models', []))}; {plan.get('nsim')} simulated studies per size "
        f"({', '.join(map(str, plan.get('sizes', [])))} participants), alpha {plan.get('alpha')}, target power "
        f"{plan.get('target')}, seed {plan.get('seed')}; finished {analysis.finished_at:%Y-%m-%d %H:%M} UTC.",
        f"The model is the report's humans-vs-models GLMM, {model}, fitted on the pilot. "
        + ("Each simulated study draws new participants from the pilot's lists and every answer, the models' "
           "included, from that fit (new participants; each model configuration keeps its own effect; the items' "
           "effects drawn anew and shared by people and models, as the report's model treats them), fits it by "
           "the report's own rule (the cell and linear-programming separation checks; glmer, retried with "
           "Nelder-Mead on a convergence warning; blme::bglmer on separation, on a glmer error or on an SE past "
           "the limit) and runs the report's own test: each model minus the humans in probability correct "
           f"(emmeans on the probability scale), {within}." if "by" in pilot else
           "This power analysis predates the report's fitting rule for each simulated study (its refits had no "
           "Nelder-Mead retry and no linear-programming check, and a glmer error counted as a failed study): "
           "re-run it."),
        _adjustment_note(pilot.get("models", []), by),
        f"Power is the share of the {plan.get('nsim')} simulated studies per size whose adjusted p-value is below "
        "alpha, with a Wilson 95% Monte-Carlo interval. A failed study — one the report's rule cannot fit at all, or whose "
        "fit (converged or not) gives a contrast no p-value — is counted as failed (the refits line below), not as a "
        "test that ran and did not reject; power still divides by every simulated study, so a failed one lowers it "
        "(power is never overstated). " + NEEDED_DEFINITION,
        "Departures of the simulation from the study it stands for: " + " ".join(DEPARTURES),
    ]
    section.notes.append(_refits_note(curve[curve["effect"] != "people"] if "effect" in curve else curve))
    people = pilot.get("people", [])
    if people:  # the people's own contrasts (analysis/power_people.py, issue 47 item 5)
        section.tables["people"] = pd.DataFrame(people)
        section.notes.append(people_note(people))
    elif plan.get("people") is False:
        section.notes.append("The people's own effects by each declared factor were not simulated: this analysis was "
                             "asked for the model − human contrasts alone.")
    if pilot.get("method", "ml") != "ml":
        section.cautions.append(
            "Separation in the pilot: " + "; ".join(pilot.get("separated_cells", [])[:8]) + ". The pilot's model is "
            "fitted with blme::bglmer (weakly informative priors on the fixed effects) and so is every simulated study "
            "that separates the same way, as the report would; the contrasts stay on the probability scale, where a "
            "model at 0 % or 100 % has a finite difference from the humans (no Hauck–Donner effect of a logit Wald test).")
    return section


def _recorded(pilot: dict) -> tuple[list, str]:
    """The `by` factors and the formula of the model a power analysis simulated, as its pilot summary records them;
    for a summary from before they were recorded, the first registered humans-vs-models model's (default_spec: the
    only model simulated then)."""
    if "by" in pilot and "formula" in pilot:
        return pilot["by"], pilot["formula"]
    then = versus.registered()
    by = [b for _, _, b in then.versus] if then is not None else [None]
    return pilot.get("by", by), pilot.get("formula", then.formula if then is not None else "(not recorded)")


def people_note(people: list[dict]) -> str:
    """What the people's rows of the curve are, and each contrast in the pilot (estimate, 95% interval) and
    whether the simulation took the pilot's effect or a stated one."""
    said = "; ".join(
        f"{row['factor']}: {row['contrast']} {row['pilot_estimate']:+.3f} in the pilot (95% CI {row['pilot_low']:+.3f} "
        f"to {row['pilot_high']:+.3f}; {row['formula']}), simulated from "
        + (f"the stated accuracies {row['stated']}" if row.get("simulated") == "stated" else "the pilot's fit")
        for row in people)
    return ("The people's own effects (rows '… (people)'): for each declared factor, the people's GLMM of accuracy on "
            "the factor with the report's random effects (analysis/people_effects.py), fitted on the pilot's people; "
            "each simulated study draws n new people from it (new person and item effects, as above), refits it by the "
            "report's rule and tests each level minus the reference level in probability correct, Holm-adjusted across "
            "the levels. A stated accuracy is the typical person's on the typical item (the model's conditional "
            f"scale); the spread of people and items stays the pilot's. {said}.")


def _adjustment_note(models: list[str], by: list) -> str:
    """Holm's families as emmeans applies them in the tables the power analysis tests (`by`: each table's by
    factor, None for the overall table)."""
    if len(models) <= 1:
        return "With one model configuration there is one contrast per level: Holm leaves it unadjusted."
    k = len(models)
    families = [f"the overall table: one family of its {k} contrasts" if b is None else
                f"the table by {b}: a family of {k} per level of {b}" for b in by]
    return (f"With {k} model configurations ({', '.join(models)}) the p-values are Holm-adjusted as the report's "
            f"tables are (emmeans, within each level of the table's by factor) — {'; '.join(families)}; no "
            "adjustment across levels or tables — so the power is that of the adjusted test.")


def _refits_note(curve: pd.DataFrame) -> str:
    """How many simulated refits failed or did not converge, per size (each simulated study counts once)."""
    if not len(curve) or "failed" not in curve:
        return "This power analysis predates the count of failed refits: re-run it to see them."
    first = curve.drop_duplicates("n").sort_values("n")  # every contrast of one study shares its refit
    total = int(first["nsim"].sum())
    failed, stalled = int(first["failed"].sum()), int(first["not_converged"].sum())
    safe = int(first["safe_fits"].sum()) if "safe_fits" in first else 0
    per_size = "; ".join(f"n = {int(r.n)}: {int(r.failed)} failed, {int(r.not_converged)} not converged"
                         for r in first.itertuples() if r.failed or r.not_converged)
    how = ""
    nan_p = int(first["nan_p_values"].sum()) if "nan_p_values" in first else 0
    failed_how = f", {nan_p} of them a fit that gave a contrast no p-value" if nan_p else ""
    if "ml_errors" in first:
        how = (f" ({int(first['ml_errors'].sum())} after glmer stopped with an error, "
               f"{int(first['lp_separations'].sum())} on a separation only the linear-programming check finds); "
               f"{int(first['retried'].sum())} were refitted with Nelder-Mead after a convergence warning")
    return (f"Refits: {failed} of {total} simulated studies failed{failed_how} (in the denominator with no "
            f"rejection) and {stalled} did not "
            f"converge (their tests kept, as the report would show them with a warning){f' ({per_size})' if per_size else ''}; "
            f"{safe} were fitted with the separation-safe method{how}.")
