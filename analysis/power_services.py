"""Power analyses as rows: request (queued, sent to a worker), execute (progress written as it goes)."""
from __future__ import annotations

import json
from dataclasses import asdict, replace

from django.db import transaction

from common import jobs

from .models import PowerAnalysis
from .power_plan import PowerPlan, check_budget

PROGRESS_EVERY = 5  # simulated studies between progress writes


def power_request(*, study, plan: PowerPlan, pilot: bool = True, run: bool = True) -> PowerAnalysis:
    """Record a power analysis and send it to the workers. A plan over the size limit (power_plan.check_budget,
    the people's studies of each declared factor counted) is refused with a ValueError and nothing is written; so is a request while
    the study has another power analysis or pilot queued or running (experiments.study_jobs.StudyBusy,
    a ValueError)."""
    from experiments import factors
    from experiments.participation import pilot_effects
    from experiments.study_jobs import study_job_claim

    declared = factors.declared_factors(study)  # a people's set of studies each (analysis/power_people.py)
    check_budget(plan, people_factors=len(declared))
    if plan.stated:  # a stated people's effect names the study's declared factors and its items' levels
        plan = replace(plan, stated=pilot_effects.for_study(study, plan.stated, pilot_effects.ACCURACY,
                                                            flag=pilot_effects.STATED, every_level=True))
    # the model − human studies, then as many for each declared factor's people's contrasts
    studies = plan.studies(len(declared))
    with transaction.atomic():
        study_job_claim(study=study)
        analysis = jobs.job_create(PowerAnalysis, send=run, study=study, plan=asdict(plan), pilot=pilot,
                                   total=studies)
    return analysis


def power_problem(*, study, pilot: bool = True) -> str:
    """Why a power analysis of `study` cannot run, in words ("" when it can): it simulates from a fit of the
    pilot's answers and the models' scores, so it needs a finished model run that a report would use
    (analysis.runs' rule, as the analysis reads them) and answers from participants (the simulated pilots'
    bots only when `pilot`), read as the analysis reads them. Two database queries, nothing fitted: the form
    asks it before anything is queued."""
    from experiments.participation.selectors import trials_for_export

    from .runs import select_runs, used_ids

    missing = []
    if not used_ids(select_runs(study)):
        missing.append("no model run of it has finished (run a model on it first: Language models and runs → "
                       "Model runs; a check run or one limited to a few items does not count)")
    if not trials_for_export(study=study, include_simulated=pilot).exists():
        bots = trials_for_export(study=study, include_simulated=True).exists()
        missing.append("only simulated pilot participants have answered it: tick “Use the simulated pilots' bots”"
                       if bots and not pilot else
                       "no participant has answered it (run a simulated pilot first: the action “Run a simulated "
                       "pilot”, or let real participants take it)")
    return "; ".join(missing)


def power_execute(*, analysis_id: int) -> PowerAnalysis:
    """Run a queued power analysis through the one job loop (common.jobs.job_execute);
    idempotent (anything not queued is returned as it is). A cancelled analysis stops at its next
    progress write, keeping nothing."""
    return jobs.job_execute(PowerAnalysis, analysis_id, PowerSteps())


class PowerSteps(jobs.Steps):
    """A power analysis's own steps: the pilot's frames as the report reads them, then the simulated
    studies (progress written, and a cancel noticed, every PROGRESS_EVERY of them)."""

    related = ("study",)

    def run(self) -> dict:
        from experiments.participation.selectors import items_people_can_be_shown

        import pandas as pd

        from . import factors, frames, plots, power_people
        from .power import estimate, human_model_spec, pilot_frame
        from .prep import apply_exclusions
        from .runs import select_runs, used_ids
        from .sections import StudyFrames
        from .services import exclusions_for

        analysis = self.job

        offset = {"done": 0}

        def progress(done: int, total: int) -> None:  # the model − human studies first, then the people's
            if done % PROGRESS_EVERY == 0 or done == total:
                self.progress(min(offset["done"] + done, analysis.total), analysis.total, check=True)

        study = analysis.study
        plan = PowerPlan(**{**analysis.plan, "sizes": tuple(analysis.plan["sizes"])})
        trials = frames.trials_frame(study, include_simulated=analysis.pilot)
        kept, removed = apply_exclusions(trials, exclusions_for(study=study)) if len(trials) else (trials, None)
        run_ids = used_ids(select_runs(study))
        scores = frames.scores_frame(study, run_ids)
        declared = factors.declared_factors(study)  # the report's factors, values joined as the report joins them
        values = factors.values_frame(study, declared)
        # models on the items people could be shown, as the report's contrast (issue 44 item 2)
        pilot = StudyFrames(scores=factors.join(scores, values), kept=factors.join(kept, values),
                            shown=items_people_can_be_shown(study, include_simulated=analysis.pilot))
        spec = human_model_spec(pilot, factors.study_designs(study), declared)
        result = estimate(pilot_frame(pilot, spec), plan, spec=spec, progress=progress)
        offset["done"] = len(plan.sizes) * plan.nsim
        # the people's own contrasts, per declared factor (issue 47 item 5), from the same pilot
        people = power_people.estimate(pilot, declared if plan.people else [], plan, stated=plan.stated,
                                       progress=progress)
        # the people's rows where there are any (an empty frame's object columns would turn the numbers to objects)
        curve = pd.concat([result.curve.assign(effect=power_people.MODEL_HUMAN),
                           *([people.curve] if len(people.curve) else [])], ignore_index=True)
        needed = pd.concat([result.needed.assign(effect=power_people.MODEL_HUMAN),
                            *([people.needed] if len(people.needed) else [])], ignore_index=True)
        return dict(
            done=analysis.total,
            curve=_records(curve), needed=_records(needed),
            # what went in, printed by the report's section (analysis/power.py: power_section)
            pilot_summary={**result.pilot, **people.pilot, "run_ids": run_ids,
                           "exclusions": _records(removed) if removed is not None else []},
            curve_png=plots.power_curve(curve, plan.target).png,
            message=f"{result.pilot['participants']} pilot participants, models {', '.join(result.pilot['models'])}; "
                    f"{offset['done']} simulated studies{_refits(result.curve)}{_people_words(people, plan)}.")


def power_cancel(*, analysis: PowerAnalysis) -> PowerAnalysis:
    return jobs.job_cancel(analysis)


def power_retry(*, analysis: PowerAnalysis) -> PowerAnalysis:
    """Estimate a failed or cancelled analysis again, from the start (its simulated studies are not kept)."""
    return jobs.job_retry(analysis)


def _records(frame) -> list[dict]:
    """JSON-safe rows (numpy numbers as plain numbers, missing values as null)."""
    return json.loads(frame.to_json(orient="records"))


def _refits(curve) -> str:
    """', 2 refits failed, 1 did not converge' (each simulated study once), or nothing when all went well."""
    first = curve.drop_duplicates("n")
    failed, stalled = int(first["failed"].sum()), int(first["not_converged"].sum())
    parts = [f"{failed} refit{'s' if failed != 1 else ''} failed" if failed else "",
             f"{stalled} did not converge" if stalled else ""]
    return "".join(f", {p}" for p in parts if p)


def _people_words(people, plan) -> str:
    """'; people's effects by FACTOR: 10 simulated studies each, 0 refits failed' (nothing without them)."""
    if not plan.people:
        return "; the people's own effects not simulated (the model − human contrasts alone, as asked)"
    found = [row["factor"].removesuffix(" (people)") for row in people.pilot.get("people", [])]
    if not found:
        return ""
    factors = ", ".join(dict.fromkeys(found))
    first = people.curve.drop_duplicates(["n", "factor"])  # each factor's simulated studies are its own
    failed, stalled = int(first["failed"].sum()), int(first["not_converged"].sum())
    refits = "".join(f", {p}" for p in (f"{failed} refit{'s' if failed != 1 else ''} failed" if failed else "",
                                          f"{stalled} did not converge" if stalled else "") if p)
    return f"; the people's effects by {factors}: {len(plan.sizes) * plan.nsim} simulated studies each{refits}"
