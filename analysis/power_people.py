"""Power for the people's own effects (issue 47 item 5), beside the model − human contrasts of analysis/power.py:
for each declared factor, the people's GLMM (analysis/people_effects.py: correct ~ factor + the report's random
effects, on the people's answers) is fitted on the pilot; then for each candidate number of participants n,
`nsim` studies are simulated from it by the same R code as the model − human analysis (analysis/r/power.R,
duet_power_simulate: n new participants taking the pilot's lists, new person and item effects, every answer a
Bernoulli draw), each refitted by the report's one rule (rbridge.fit_r) and tested as the people's model is
tested: each level minus the reference level in probability correct, Holm-adjusted across the levels. Power is
the share of the simulated studies whose adjusted p-value is below alpha (Wilson 95% Monte-Carlo interval), and
the number needed is read as for model − human (power.NEEDED_DEFINITION).

The effect simulated is the pilot's fit, or a stated one: `stated` {factor: {level: accuracy}} names the accuracy
of every level of a factor, taken as the typical person's on the typical item (the GLMM's conditional scale:
intercept logit(p_reference), each other level logit(p_level) − logit(p_reference)); the spread of people and
items stays the pilot's.

The curve's rows are power.py's, with `factor` "FACTOR (people)", `level` "all", `contrast` "LEVEL - REFERENCE"
and `effect` "people" (the model − human rows carry `effect` "model - human").
"""
from __future__ import annotations

import math
import re
from collections.abc import Callable

import pandas as pd

from . import people_effects
from . import power as pw
from . import rbridge as rb
from .power_plan import PowerPlan
from .sections import ModelSpec, StudyFrames

PEOPLE, MODEL_HUMAN = "people", "model - human"


def label(factor: str) -> str:
    """The curve's `factor` of a people's contrast: 'FACTOR (people)'."""
    return f"{factor} ({PEOPLE})"


def _contrast(text: str) -> str:
    """emmeans's 'a - (b-c)' (levels with a hyphen in parentheses) as 'a - b-c'."""
    return re.sub(r"^\((.*)\) - ", r"\1 - ", re.sub(r" - \((.*)\)$", r" - \1", str(text)))


def _level(given: str, levels: list[str], factor: str) -> str:
    """A stated level of `factor` as the people's frame writes it: by the ASCII code its design declares
    (design_registry.level_code, which also reads a level's value and its aliases)."""
    from experiments import design_registry as registry

    if given in levels:
        return given
    return registry.level_code(factor, given)


def _stated_truth(r, model, name: str, levels: list[str], accuracies: dict[str, float], factor: str) -> dict:
    """{"beta", "theta"} for power._newparams: the fixed effects from the stated accuracies of `factor` (every level
    named), the random effects' SDs the pilot fit's."""
    named = {_level(str(k), levels, factor): v for k, v in accuracies.items()}
    unknown = sorted(str(k) for k in accuracies if _level(str(k), levels, factor) not in levels)
    missing = [level for level in levels if level not in named]
    if unknown or missing:
        raise ValueError(f"A stated effect on {name} names every level of it among the pilot's answers "
                         f"({', '.join(levels)}); unknown {unknown or 'none'}, missing {missing or 'none'}.")

    def logit(p: float) -> float:
        p = min(max(p, 1e-4), 1 - 1e-4)  # 0 or 1 stated: a very large effect, not an infinite one
        return math.log(p / (1 - p))

    ro = r.ro
    reference = logit(named[levels[0]])
    beta = {"(Intercept)": reference, **{f"{name}{level}": logit(named[level]) - reference for level in levels[1:]}}
    theta_vector = ro.r["getME"](model, "theta")
    theta = dict(zip(ro.r["names"](theta_vector), [float(v) for v in theta_vector]))
    return {"beta": beta, "theta": theta}


def estimate(frames: StudyFrames, factors, plan: PowerPlan = PowerPlan(), *, stated: dict | None = None,
             progress: Callable[[int, int], None] | None = None, specs: list[ModelSpec] | None = None) -> pw.PowerResult:
    """The power curve of every people's contrast of the declared `factors` (see the module). `stated`: accuracies
    per level replacing the pilot's effect of those factors. `progress(done, total)` counts simulated studies."""
    specs = people_effects.specs(frames, factors) if specs is None else specs
    stated = dict(stated or {})
    by_name = {s.factors[0]: s for s in specs}
    unknown = [f for f in stated if people_effects.declared.r_name(f) not in by_name]
    if unknown:
        raise ValueError(f"A stated effect names {', '.join(unknown)}, not a factor of the people's models "
                         f"({', '.join(by_name) or 'none'}: the declared factors with two levels among the answers).")
    total, done = len(specs) * len(plan.sizes) * plan.nsim, 0
    rows, pilots = [], []
    for spec in specs:
        name = spec.factors[0]
        factor = next((f for f in factors if people_effects.declared.r_name(f) == name), name)
        frame = spec.frame(frames)
        people, items, families = pw.groups(spec)
        fit = rb.fit(spec.formula, frame[list(spec.columns)], family="binomial", fast=spec.fast)
        levels = [str(v) for v in frame[name].cat.categories]
        observed = rb.versus_reference(fit, name, None)
        with rb.r_session() as r:
            ro = r.ro
            if "duet_power_simulate" not in ro.globalenv:
                ro.r(f"source('{pw.POWER_R.as_posix()}')")
            data = rb.to_r(r, rb.factors_for_r(frame[[*spec.columns, "agent"]]))
            truth = _stated_truth(r, fit.model, name, levels, stated[factor], factor) if factor in stated else None
            beta, theta = (ro.NULL, ro.NULL) if truth is None else pw._newparams(ro, fit.model, truth)
            start = ro.r("function(m) list(theta = lme4::getME(m, 'theta'), fixef = lme4::fixef(m))")(fit.model) \
                if fit.method == "bglmer" else None
            blanks = pd.DataFrame({"factor": pw.OVERALL[0], "level": pw.OVERALL[1],
                                   "contrast": [f"{level} - {levels[0]}" for level in levels[1:]]})
            for n in plan.sizes:
                for k in range(plan.nsim):
                    seed = (plan.seed * 1_000_003 + n * 10_007 + k + 7_919 * len(pilots)) % 2_147_483_647
                    study = rb.call("duet_power_simulate", fit.model, data, n, seed, people, items, beta, theta,
                                    families or ro.NULL)
                    result = pw.study_result(r, spec, study, start=start, blanks=blanks)
                    result["n"] = n
                    result["factor"] = label(factor)
                    result["contrast"] = result["contrast"].map(_contrast)
                    rows.append(result)
                    done += 1
                    if progress is not None:
                        progress(done, total)
        for row in observed.itertuples():
            contrast = _contrast(row.contrast)
            level = contrast.split(" - ", 1)[0]
            pilots.append({
                "factor": label(factor), "contrast": contrast, "pilot_estimate": float(row.estimate),
                "pilot_low": float(getattr(row, "ci_low", float("nan"))),
                "pilot_high": float(getattr(row, "ci_high", float("nan"))),
                "pilot_p_value": float(row.p_value), "method": fit.method, "formula": spec.formula,
                "simulated": "stated" if truth is not None else "pilot",
                "stated": (f"{_stated_value(stated[factor], level, levels, factor)} vs "
                           f"{_stated_value(stated[factor], levels[0], levels, factor)}" if truth is not None else ""),
            })
    if not rows:
        empty = pd.DataFrame(columns=["n", "factor", "level", "contrast", "rejections", "nsim", "power", "low", "high",
                                      "failed", "not_converged", "safe_fits", "ml_errors", "lp_separations",
                                      "retried", "nan_p_values", "effect"])
        return pw.PowerResult(plan=plan, curve=empty, needed=pd.DataFrame(), pilot={"people": []})
    curve = pw.curve_of(pd.concat(rows, ignore_index=True), plan.alpha).assign(effect=PEOPLE)
    needed = pw.needed(curve, plan.target).assign(effect=PEOPLE)
    return pw.PowerResult(plan=plan, curve=curve, needed=needed, pilot={"people": pilots})


def _stated_value(accuracies: dict, level: str, levels: list[str], factor: str):
    """The accuracy stated for `level` of `factor` (given as the frame writes it or by its label)."""
    return next((v for k, v in accuracies.items() if _level(str(k), levels, factor) == level), None)
