"""The demo's first report (issue 18): a small pilot study whose report shows every section of
paper 003's analysis — two model configurations of the embedded model (raw prompt and chat template)
over every item, real and nonsense mirror, and simulated participants taking the study through the
participant pages. Clearly a pilot: the bots are never data, and the report's title says so.

Model runs and the report are built by separate processes (`manage.py run_model`, `manage.py
analyze --report`), so the process that serves never imports torch or R. Each step is skipped when
it is done already. `pilot_setup` (the study, its items, the report's row) is quick and comes before
serving; `pilot_demo` (scoring, bots, R) may follow in the background while the demo serves
(`manage.py demo_steps`), its progress printed as it goes and shown in the admin.
"""
from __future__ import annotations

import subprocess
import sys

from django.core.management import CommandError, call_command

from common.env import BASE_DIR

PILOT_SLUG = "modal-syllogisms-pilot"
INTERPRETATIONS = 8  # × 24 forms × (real + nonsense mirror) = 384 items (manage.py demo --pilot-interpretations)
ITEMS_PER_PARTICIPANT = 8  # at most one per interpretation (lists.py), so 8 of the 24 forms each
BOTS = 30  # manage.py demo --pilot-participants
CONFIGURATIONS = ([], ["--prompt-format", "chat"])  # the embedded model's own configuration, and its chat template


def _manage(*args: str) -> bool:
    return subprocess.run([sys.executable, str(BASE_DIR / "manage.py"), *args], cwd=BASE_DIR).returncode == 0


def _configuration(model, extra: list[str]):
    """The configuration `run_model --model MODEL *extra` scores with (made if missing, as run_model would)."""
    from inference.services import language_model_resolve

    options = {flag.lstrip("-").replace("-", "_"): value for flag, value in zip(extra[::2], extra[1::2])}
    return language_model_resolve(name_or_path=model.name, **options)[0]


def pilot_setup(*, interpretations: int = INTERPRETATIONS):
    """The pilot study with its items (made once), and its pilot report's row: the latest one not
    withdrawn, else a new one, queued (built by `pilot_demo`). Returns (study, report)."""
    from analysis.models import Report, ReportStatus
    from analysis.services import report_request
    from experiments import design_registry as registry
    from experiments import services
    from experiments.models import Study
    from experiments.participation.services import human_arm_ensure

    study = Study.objects.filter(slug=PILOT_SLUG).first()
    if study is None:
        design = registry.demo_design()  # 003's modal syllogisms (their Design.demo)
        study = services.study_create(
            slug=PILOT_SLUG, title="Modal syllogisms — PILOT (simulated participants, two model configurations)",
            design=design.name,
            description=f"A pilot of paper 003's design to show every section of the report: {interpretations} "
                        "interpretations with their nonsense mirror, two configurations of the embedded model, "
                        "simulated participants.")
        design.make(study=study, interpretations=interpretations, seed=0, nonsense=True)
        arm = human_arm_ensure(study=study)
        arm.items_per_participant = min(ITEMS_PER_PARTICIPANT, interpretations)
        arm.save(update_fields=["items_per_participant"])
    report = (Report.objects.filter(study=study, pilot=True).exclude(status=ReportStatus.WITHDRAWN)
              .order_by("-pk").first())
    if report is None:
        report = report_request(study=study, pilot=True, send=False)  # built by pilot_demo (analyze --report)
    return study, report


def pilot_demo(*, stdout, style, interpretations: int = INTERPRETATIONS, participants: int = BOTS):
    """Score the pilot study with two configurations of the embedded model (progress printed), run its
    simulated pilot and build its report; the built Report (None when a step failed, said on stdout).
    `interpretations` is used when the pilot study is made (a later call keeps its items),
    `participants` when its pilot is run."""
    from analysis.models import ReportStatus
    from experiments.participation.pilot import Pilot
    from inference.models import ModelRun, RunStatus
    from inference.services import language_model_embedded_default
    from common import jobs

    study, report = pilot_setup(interpretations=interpretations)
    model = language_model_embedded_default()
    for run_id in ModelRun.objects.filter(study=study, status=RunStatus.RUNNING).values_list("pk", flat=True):
        stdout.write(f"Pilot: resuming model run {run_id}, stopped by an earlier demo…")  # where it stopped
        _manage("run_model", "--run", str(run_id), "--progress-every", "15")
    missing = [extra for extra in CONFIGURATIONS  # the configurations without a finished run on the pilot
               if not ModelRun.objects.filter(study=study, language_model=_configuration(model, extra),
                                              status=RunStatus.DONE).exists()]
    if missing:
        stdout.write(f"Pilot: scoring its {study.items.count()} items with two configurations of {model.name}…")
        for extra in missing:
            # every item: the pilot shows every section, the models' nonsense half included (people see the real one)
            if not _manage("run_model", study.slug, "--model", model.name, "--device", "cpu", "--scope", "all",
                           "--progress-every", "15", *extra):
                stdout.write(style.WARNING("Pilot: a model run did not finish; see above. No pilot report."))
                return None
    if not Pilot.objects.filter(study=study, status="done").exists():
        try:
            call_command("simulate_participants", study.slug, "--n", str(participants), "--seed", "0", stdout=stdout)
        except CommandError as error:
            stdout.write(style.WARNING(f"Pilot: the simulated participants did not finish ({error}). No pilot report."))
            return None
    if report.status == ReportStatus.RUNNING:  # an earlier demo stopped while it built the report
        jobs.job_fail(report, "The demo stopped while it built this report; it is built again.")
        report.refresh_from_db()
    if report.status in (ReportStatus.FAILED, ReportStatus.CANCELLED):
        jobs.job_move(report, ReportStatus.QUEUED, **report.retry_fields())  # built again below
    if report.status == ReportStatus.QUEUED:
        stdout.write("Pilot: building its report (R, in its own process)…")
        if not _manage("analyze", "--report", str(report.pk)):
            stdout.write(style.WARNING("Pilot: the report was not built; see above."))
            return None
        report.refresh_from_db()
    if report.status != ReportStatus.DONE:
        stdout.write(style.WARNING(f"Pilot: report {report.pk} is {report.status}: {report.error or report.message}"))
        return None
    return report
