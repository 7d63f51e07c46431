"""Writes for reports: request one (queued as a task), execute it, or build files for a study."""
from __future__ import annotations

import shutil
from pathlib import Path

from django.db import transaction

from common import jobs
from common.env import VAR_DIR

from .models import Report, ReportStatus
from .rules import Exclusions, exclusion_settings

REPORT_STEPS = 2  # the data read; the models fitted and the files written (a report job's progress)


def exclusions_for(*, study) -> Exclusions:
    """The study's exclusion rules: defaults, overridden by study.settings["analysis_exclusions"]."""
    given = exclusion_settings(study.settings)  # bad settings raise ValueError naming them
    from experiments.participation.services import human_arm_ensure

    return Exclusions(**given, attention_rule=human_arm_ensure(study=study).attention_rule().describe())


def report_build(*, study, out_dir: Path, rules: Exclusions | None = None, run_ids: list[int] | None = None,
                 pilot: bool = False, on_step=None):
    """Read the study's trials and the scores of the runs analysis.runs selects (`run_ids`: exactly
    those; None or empty: the default rule) and write the report files into out_dir. A bad selection
    raises ValueError before anything is read or written. A pilot report (`pilot`) also reads the
    simulated pilots' bots (experiments/participation/pilot.py) and says so in its title. `on_step(n)`
    is told each of the REPORT_STEPS steps done (the report job's progress)."""
    from experiments.models import Trial
    from experiments.participation.selectors import items_people_can_be_shown
    from inference.models import ModelScore

    from experiments import design_registry as registry

    from . import factors, frames, generated, runs
    from .rprocess import RProcess
    from .report import ReportInputs, build_report

    rules = rules or exclusions_for(study=study)
    declared = factors.declared_factors(study)  # stored names no longer among the items raise ValueError here
    people_by = factors.participant_factors(study)  # questionnaire questions (experiments/factors.py)
    chosen = runs.select_runs(study, run_ids or None)
    used = runs.used_ids(chosen)
    designs = tuple(factors.study_designs(study))
    # the human-vs-model fit's process loads its R while the frames are read
    with RProcess.for_rows(Trial.objects.filter(participant__study=study).count(),
                                 ModelScore.objects.filter(run_id__in=used).count()) as helper:
        scores = frames.scores_frame(study, used)
        trials = frames.trials_frame(study, include_simulated=pilot)
        # the item rows read besides: those answered or scored by the runs used (not every item of the study)
        analysed = frames.analysed_item_ids(study, [*used, *runs.variation_ids(chosen)], include_simulated=pilot,
                                            include_preview=not rules.drop_preview)
        # what the study's designs' own report parts read besides the frames (their packages' SectionBuilder.read)
        design_inputs = {part.key: part.read(study=study, chosen=chosen, analysed=analysed)
                         for part in registry.report_parts(designs) if getattr(part, "read", None) is not None}
        if on_step:
            on_step(1)  # the data are read; the fits and files follow
        return build_report(ReportInputs(
            scores=scores, trials=trials,
            title=(f"PILOT report (simulated participants included, not data): {study.title} ({study.slug})" if pilot
                   else f"Duet report: {study.title} ({study.slug})"), rules=rules, runs=runs.table(chosen),
            configurations=runs.configurations(chosen, scores, frames.variants_frame(used)),
            runs_requested=sorted(set(run_ids or [])),
            design_inputs=design_inputs,
            extra_sections=tuple(s for s in [power_section_for(study, used), generated.section(used)] if s is not None),
            provenance=report_provenance(study=study, run_ids=used),
            factors=tuple(declared), factor_values=factors.values_frame(study, declared, analysed),
            designs=designs, shown=items_people_can_be_shown(study, include_simulated=pilot),
            **_demographics(study, trials), **_questionnaire(study, trials, pilot), participant_factors=tuple(people_by),
        ), out_dir=Path(out_dir), helper=helper)


def _demographics(study, trials) -> dict:
    """ReportInputs' demographics: Prolific's, of the participants in the trials, the consented columns."""
    from experiments.models import Participant
    from experiments.schema import pseudonym
    from prolific.demographics import demographics_frame

    labels = set(trials["participant"]) if len(trials) and "participant" in trials else set()
    ids = [pk for pk in Participant.objects.filter(study=study).values_list("pk", flat=True) if pseudonym(pk) in labels]
    found = demographics_frame(study=study, participant_ids=ids) if ids else None
    return {} if found is None else {"demographics": found[0], "demographics_codebook": found[1]}


def _questionnaire(study, trials, pilot: bool) -> dict:
    """ReportInputs' questionnaire answers: of the participants in the trials (experiments/participation/
    questionnaire_export.py), one row each, with their codebook entries."""
    from experiments.models import Participant
    from experiments.participation.questionnaire_export import frame
    from experiments.schema import pseudonym

    labels = set(trials["participant"]) if len(trials) and "participant" in trials else set()
    ids = [pk for pk in Participant.objects.filter(study=study).values_list("pk", flat=True) if pseudonym(pk) in labels]
    found = frame(study, participant_ids=ids, include_simulated=pilot) if ids else None
    return {} if found is None else {"questionnaire": found[0], "questionnaire_codebook": found[1]}


def report_provenance(*, study, run_ids: list[int]) -> dict:
    """What dataset_description.json records from the database: the study's design and settings, and
    each used run's stored configuration (source, revision, file hashes, dtype, prompt format, …)."""
    from django.db.models import Count

    from experiments.models import HumanArm
    from experiments.participation import texts
    from inference.models import ModelRun

    items = study.items.values("design").annotate(n=Count("id")).order_by("design")
    stored = {str(pk): {"language_model": name, "kind": kind, "configuration": configuration or {}}
              for pk, name, kind, configuration in ModelRun.objects.filter(pk__in=list(run_ids)).order_by("pk")
              .values_list("pk", "language_model__name", "kind", "configuration")}
    return {"run_configurations": stored, "study": {
        "slug": study.slug, "title": study.title, "description": study.description, "design": study.design,
        "logic_system": study.logic_system, "consequence": study.consequence, "settings": study.settings or {},
        "items_by_design": {row["design"]: row["n"] for row in items},
        "participant_texts": texts.as_written(study.human_arm) if HumanArm.objects.filter(study=study).exists() else {},
    }}


def power_section_for(study, report_run_ids: list[int] | None = None):
    """The report's section on the study's latest finished power analysis, if it has one (`report_run_ids`:
    the runs the report uses, compared with the analysis's own)."""
    from .models import PowerAnalysis
    from .power import power_section

    latest = PowerAnalysis.objects.filter(study=study, status=ReportStatus.DONE).order_by("-finished_at").first()
    return power_section(latest, report_run_ids) if latest is not None else None


def report_request(*, study, run_ids: list[int] | None = None, pilot: bool = False, send: bool = True) -> Report:
    """Create a queued report and hand it to a worker once the transaction commits. `run_ids`: exactly
    these runs (analysis.runs checks them: ValueError naming the runs refused); None or empty: the
    default rule, applied when the report is built. `send=False`: the caller builds it itself
    (`manage.py analyze --report ID`, as the demo does)."""
    from . import runs

    exclusions_for(study=study)  # bad settings fail here, before anything is queued
    from .factors import declared_factors

    declared_factors(study)  # and factors the items do not have (ValueError naming the columns there are)
    from .factors import participant_factors

    participant_factors(study)  # and participant factors no longer among the questions
    requested = sorted(set(run_ids or []))
    runs.select_runs(study, requested or None)  # and a bad selection
    with transaction.atomic():
        report = jobs.job_create(Report, send=False, study=study, runs_requested=requested, pilot=pilot,
                                 total=REPORT_STEPS)
        report.out_dir = str(VAR_DIR / "reports" / study.slug / str(report.pk))
        report.save(update_fields=["out_dir"])
        if send:
            jobs.job_dispatch(report)  # sent once the transaction commits; an unreachable broker fails it
    return report


def report_execute(*, report_id: int) -> Report:
    """Build a queued report through the one job loop (common.jobs.job_execute). Idempotent: a
    report already done (or taken by a worker) is returned. A report withdrawn or cancelled while it
    was being built keeps no files."""
    return jobs.job_execute(Report, report_id, ReportSteps())


class ReportSteps(jobs.Steps):
    """A report's own steps: build it (report_build), each step written as progress."""

    def run(self) -> dict:
        report = self.job
        self.progress(0, REPORT_STEPS)
        result = report_build(study=report.study, out_dir=Path(report.out_dir), run_ids=report.runs_requested or None,
                              pilot=report.pilot, on_step=lambda done: self.progress(done))
        self.checkpoint()  # withdrawn or cancelled while it was built: its files go
        absent = [s.title for s in result.sections if s.absent]
        shown = len(result.sections) - len(absent)
        return dict(warnings=result.warnings, n_scores=result.n_scores, n_trials=result.n_trials,
                    runs_used=result.runs_used, done=REPORT_STEPS,
                    message=f"{shown} section{'s' if shown != 1 else ''}"
                            + (f"; waiting for data: {', '.join(absent)}" if absent else ""))

    def discard(self) -> None:
        """Withdrawn or cancelled while it was built: delete what the build wrote."""
        _delete_files(self.job.out_dir)


def _delete_files(out_dir: str) -> None:
    if out_dir and Path(out_dir).is_dir():
        shutil.rmtree(out_dir, ignore_errors=True)


def reports_withdraw(*, study, reason: str) -> int:
    """Withdraw every report of `study` not withdrawn yet — queued, being built, done or failed — and
    delete its files once the transaction commits: after a participant's data is erased, no report
    built from it may keep the participant's rows. A build in progress deletes its own files when it
    finishes (report_execute). Returns how many were withdrawn."""
    reports = list(Report.objects.select_for_update().filter(study=study).exclude(status=ReportStatus.WITHDRAWN))
    for report in reports:
        jobs.job_move(report, ReportStatus.WITHDRAWN, message=reason)
    folders = [report.out_dir for report in reports]
    transaction.on_commit(lambda: [_delete_files(folder) for folder in folders])
    return len(reports)


def report_cancel(*, report: Report) -> Report:
    """Cancel a queued report, or one being built (its files are deleted when the build ends)."""
    return jobs.job_cancel(report)


def report_retry(*, report: Report) -> Report:
    """Build a failed or cancelled report again (sent once the transaction commits)."""
    return jobs.job_retry(report)
