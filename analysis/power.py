"""Sample size by simulation: how many participants a study needs to detect each model's difference
from the humans, per modality and per argument form, at a chosen power, with the report's own test.

From a pilot (simulated or real participants) and the model scores, the human-vs-model GLMM of the
report (analysis.mixed.AGENTS) is fitted once, as the report fits it (rbridge.fit: the
separation-safe blme fit where a model is always right or always wrong in some cell). Then, for
each candidate number of participants n, `nsim` studies are simulated from that fit
(analysis/r/power.R: n participants drawn from the pilot's lists, every answer drawn from the fitted
model with new participants and re-drawn random effects — lme4's simulate with allow.new.levels,
since r-cran-simr is not in Debian), each is refitted by the report's rule (glmer, or blme::bglmer
on separation) and tested as the report tests it: each model minus the humans on the probability
scale (emmeans regrid), Holm-adjusted across the models within each modality and argument form
(`rbridge.versus_reference`). Power is the share of the nsim studies whose adjusted p-value is below
`alpha`, a refit that fails counting as no rejection, with a Wilson 95% Monte-Carlo interval; failed
and non-converged refits are counted and shown. The number needed is the smallest n tried whose
interval's LOWER bound reaches `target` (NEEDED_DEFINITION).

The fitted model stands in for the truth (as in every pilot-based power analysis): a pilot's effect
estimates are noisy, so the curve is as good as the pilot. `truth` replaces the fit's parameters
(lme4's newparams: beta, theta) when they are known; the tests use it to check the estimate against
an independent simulation with a known effect.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from . import rbridge as rb
from .paired import wilson
from .power_plan import PowerPlan
from .sections import StudyFrames

POWER_R = Path(__file__).with_name("r") / "power.R"
COLUMNS = ("agent", "respondent", "interpretation", "modality", "argform", "correct")


NEEDED_DEFINITION = (
    "'needed' is the smallest number of participants tried whose power is at least the target with 95% Monte-Carlo "
    "confidence: the LOWER bound of the Wilson 95% interval of its power (rejections out of the simulated studies) "
    "reaches the target. A size whose point estimate reaches the target but whose lower bound does not is not enough; "
    "more simulated studies per size narrow the interval.")


@dataclass
class PowerResult:
    plan: PowerPlan
    # n, factor, level, contrast, rejections, nsim, power, low, high, failed, not_converged, safe_fits
    curve: pd.DataFrame
    needed: pd.DataFrame  # factor, level, contrast, needed (None: more than the largest n tried), power_at_max
    pilot: dict = field(default_factory=dict)  # participants, trials, models in the pilot; the pilot fit's method


def pilot_frame(frames: StudyFrames) -> pd.DataFrame:
    """The pilot's humans and models in the report's human-vs-model frame."""
    from .mixed import AGENTS, humans_and_models

    reason = humans_and_models(frames)
    if reason:
        raise ValueError(f"A power analysis {reason} (a pilot, simulated or real, and at least one model run).")
    return AGENTS.frame(frames)[list(COLUMNS)]


def estimate(frame: pd.DataFrame, plan: PowerPlan = PowerPlan(), *, truth: dict | None = None,
             progress: Callable[[int, int], None] | None = None) -> PowerResult:
    """The power curve of every model-vs-human contrast over plan.sizes (see the module's docstring)."""
    from .mixed import AGENTS

    fit = rb.fit(AGENTS.formula, frame, family="binomial", fast=AGENTS.fast)
    total, done = len(plan.sizes) * plan.nsim, 0
    rows = []
    with rb.r_session() as r:
        ro = r.ro
        if "duet_power_once" not in ro.globalenv:
            ro.r(f"source('{POWER_R.as_posix()}')")
        data = rb.to_r(r, rb._factors_for_r(frame))
        newparams = ro.NULL if truth is None else _newparams(ro, fit.model, truth)
        for n in plan.sizes:
            for k in range(plan.nsim):
                seed = (plan.seed * 1_000_003 + n * 10_007 + k) % 2_147_483_647
                result = rb.to_pandas(r, rb.call(
                    "duet_power_once", fit.model, data, n, seed, newparams, 0 if AGENTS.fast else 1,
                    "|".join(rb._CONVERGENCE_WORDS), rb.SE_LIMIT, "holm"))
                result["n"] = n
                rows.append(result)
                done += 1
                if progress is not None:
                    progress(done, total)
    runs = pd.concat(rows, ignore_index=True)
    runs["reject"] = (runs["p_value"] < plan.alpha).fillna(False).astype(bool)  # a failed refit rejects nothing
    runs["failed"] = runs["status"] == "failed"
    runs["not_converged"] = runs["status"] == "not converged"
    runs["safe"] = runs["safe"].astype(bool)
    keys = ["n", "factor", "level", "contrast"]
    curve = runs.groupby(keys, sort=False).agg(
        rejections=("reject", "sum"), nsim=("reject", "size"), failed=("failed", "sum"),
        not_converged=("not_converged", "sum"), safe_fits=("safe", "sum")).reset_index()
    bounds = [wilson(int(k), int(m)) for k, m in zip(curve["rejections"], curve["nsim"])]
    curve["power"] = [b.estimate for b in bounds]
    curve["low"], curve["high"] = [b.low for b in bounds], [b.high for b in bounds]
    humans = frame[frame["agent"] == "human"]
    pilot = {"participants": int(humans["respondent"].nunique()), "trials": int(len(humans)),
             "models": sorted(set(frame["agent"].astype(str)) - {"human"}), "method": fit.method,
             "separated_cells": [cell.words("correct") for cell in fit.separation]}
    return PowerResult(plan=plan, curve=curve, needed=needed(curve, plan.target), pilot=pilot)


def _newparams(ro, model, truth: dict):
    """lme4's newparams from {"beta": {name: value}, "theta": {name: value}}, every parameter of the
    model named (fixef and getME(m, "theta") names), so nothing depends on lme4's internal order."""
    names = {"beta": list(ro.r["names"](ro.r["fixef"](model))),
             "theta": list(ro.r["names"](ro.r["getME"](model, "theta")))}
    values = {}
    for part, wanted in names.items():
        given = truth.get(part, {})
        missing, unknown = sorted(set(wanted) - set(given)), sorted(set(given) - set(wanted))
        if missing or unknown:
            raise ValueError(f"truth[{part!r}] must name exactly {wanted}; missing {missing}, unknown {unknown}")
        values[part] = ro.FloatVector([float(given[name]) for name in wanted])
    return ro.r["list"](beta=values["beta"], theta=values["theta"])


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
        "them); within each, the report's own test, with answers clustered by participant and by interpretation"))
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
    section.notes += [
        f"From a pilot of {pilot.get('participants')} participants ({'simulated pilots included' if analysis.pilot else 'real participants only'}) "
        f"and the models {', '.join(pilot.get('models', []))}; {plan.get('nsim')} simulated studies per size "
        f"({', '.join(map(str, plan.get('sizes', [])))} participants), alpha {plan.get('alpha')}, target power "
        f"{plan.get('target')}, seed {plan.get('seed')}; finished {analysis.finished_at:%Y-%m-%d %H:%M} UTC.",
        "Each simulated study draws new participants from the pilot's lists, answers from the human-vs-model GLMM "
        "fitted on the pilot (lme4 simulate; the models' own answers stay as they are), refits it as the report does "
        "(glmer, or blme::bglmer where a cell separates), and runs the report's own test: each model minus the humans "
        "in probability correct (emmeans on the probability scale), within each modality and argument form.",
        _adjustment_note(pilot.get("models", [])),
        f"Power is the share of the {plan.get('nsim')} simulated studies per size whose adjusted p-value is below alpha "
        "(a refit that fails counts as no rejection), with a Wilson 95% Monte-Carlo interval. " + NEEDED_DEFINITION,
        "The fitted pilot stands in for the truth, so the estimate is as good as the pilot.",
    ]
    section.notes.append(_refits_note(curve))
    if pilot.get("method", "ml") != "ml":
        section.cautions.append(
            "Separation in the pilot: " + "; ".join(pilot.get("separated_cells", [])[:8]) + ". The pilot's model is "
            "fitted with blme::bglmer (weakly informative priors on the fixed effects) and so is every simulated study "
            "that separates the same way, as the report would; the contrasts stay on the probability scale, where a "
            "model at 0 % or 100 % has a finite difference from the humans (no Hauck–Donner effect of a logit Wald test).")
    return section


def _adjustment_note(models: list[str]) -> str:
    if len(models) > 1:
        return (f"With {len(models)} model configurations ({', '.join(models)}) the p-values are Holm-adjusted across the "
                f"{len(models)} model-vs-human contrasts within each modality and within each argument form, as in the "
                "report's tables, so the power is that of the adjusted test.")
    return "With one model configuration there is one contrast per modality and argument form: Holm leaves it unadjusted."


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
    return (f"Refits: {failed} of {total} simulated studies failed (counted as no rejection) and {stalled} did not "
            f"converge (their tests kept, as the report would show them with a warning){f' ({per_size})' if per_size else ''}; "
            f"{safe} were fitted with the separation-safe method.")
