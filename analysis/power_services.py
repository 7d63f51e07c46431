"""Power analyses as rows: request (queued, sent to a worker), execute (progress written as it goes)."""
from __future__ import annotations

import json
from dataclasses import asdict

from django.db import transaction
from django.utils import timezone

from studyserver import dispatch

from .models import PowerAnalysis, ReportStatus
from .power_plan import PowerPlan, check_budget

PROGRESS_EVERY = 5  # simulated studies between progress writes


def power_request(*, study, plan: PowerPlan, pilot: bool = True, run: bool = True) -> PowerAnalysis:
    """Record a power analysis and send it to the workers. A plan over the size limit
    (power_plan.check_budget) is refused with a ValueError and nothing is written; so is a request while
    the study has another power analysis or pilot queued or running (experiments.study_jobs.StudyBusy,
    a ValueError)."""
    from experiments.study_jobs import study_job_claim

    check_budget(plan)
    with transaction.atomic():
        study_job_claim(study=study)
        analysis = PowerAnalysis.objects.create(study=study, plan=asdict(plan), pilot=pilot,
                                                total=len(plan.sizes) * plan.nsim)
        if run:
            dispatch.send("analysis.estimate_power", args=[analysis.pk], queue="cpu", log_name=f"power-{analysis.pk}")
    return analysis


def power_execute(*, analysis_id: int) -> PowerAnalysis:
    """Run a queued power analysis; idempotent (anything not queued is returned as it is)."""
    from . import frames, plots
    from .power import estimate, pilot_frame
    from .prep import apply_exclusions
    from .runs import select_runs, used_ids
    from .sections import StudyFrames
    from .services import exclusions_for

    with transaction.atomic():
        analysis = PowerAnalysis.objects.select_for_update().select_related("study").get(pk=analysis_id)
        if analysis.status != ReportStatus.QUEUED:
            return analysis
        analysis.status = ReportStatus.RUNNING
        analysis.save(update_fields=["status"])

    def progress(done: int, total: int) -> None:
        if done % PROGRESS_EVERY == 0 or done == total:
            PowerAnalysis.objects.filter(pk=analysis.pk).update(done=done, total=total)

    try:
        study = analysis.study
        plan = PowerPlan(**{**analysis.plan, "sizes": tuple(analysis.plan["sizes"])})
        trials = frames.trials_frame(study, include_simulated=analysis.pilot)
        kept, removed = apply_exclusions(trials, exclusions_for(study=study)) if len(trials) else (trials, None)
        run_ids = used_ids(select_runs(study))
        scores = frames.scores_frame(study, run_ids)
        result = estimate(pilot_frame(StudyFrames(scores=scores, kept=kept)), plan, progress=progress)
    except Exception as error:  # recorded where the researcher sees it
        PowerAnalysis.objects.filter(pk=analysis.pk).update(
            status=ReportStatus.FAILED, message=f"{type(error).__name__}: {error}", finished_at=timezone.now())
        raise
    PowerAnalysis.objects.filter(pk=analysis.pk).update(
        status=ReportStatus.DONE, finished_at=timezone.now(), done=analysis.total,
        curve=_records(result.curve), needed=_records(result.needed),
        # what went in, printed by the report's section (analysis/power.py: power_section)
        pilot_summary={**result.pilot, "run_ids": run_ids,
                       "exclusions": _records(removed) if removed is not None else []},
        curve_png=plots.power_curve(result.curve, plan.target).png,
        message=f"{result.pilot['participants']} pilot participants, models {', '.join(result.pilot['models'])}; "
                f"{analysis.total} simulated studies{_refits(result.curve)}.")
    analysis.refresh_from_db()
    return analysis


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
