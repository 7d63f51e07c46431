"""The demo's first report (issue 18): a small pilot study whose report shows every section of
paper 003's analysis — two model configurations of the embedded model (raw prompt and chat template)
over every item, real and nonsense mirror, and simulated participants taking the study through the
participant pages. Clearly a pilot: the bots are never data, and the report's title says so.

Model runs and the report are built by separate processes (`manage.py run_model`, `manage.py
analyze --report`), so the process that serves afterwards never imports torch or R. Each step is
skipped when it is done already.
"""
from __future__ import annotations

import subprocess
import sys

from django.core.management import CommandError, call_command

from experiments.logic.modal_forms import SYLLOGISMS  # 003's design, the demo's
from studyserver.env import BASE_DIR

PILOT_SLUG = "modal-syllogisms-pilot"
INTERPRETATIONS = 8  # × 24 forms × (real + nonsense mirror) = 384 items (manage.py demo --pilot-interpretations)
ITEMS_PER_PARTICIPANT = 8  # at most one per interpretation (lists.py), so 8 of the 24 forms each
BOTS = 30  # manage.py demo --pilot-participants
CONFIGURATIONS = ([], ["--prompt-format", "chat"])  # the embedded model's own configuration, and its chat template


def _manage(*args: str) -> bool:
    return subprocess.run([sys.executable, str(BASE_DIR / "manage.py"), *args], cwd=BASE_DIR).returncode == 0


def pilot_demo(*, stdout, style, interpretations: int = INTERPRETATIONS, participants: int = BOTS):
    """Set up the pilot study, its model runs, its simulated pilot and its report; the built Report
    (None when a step failed, said on stdout). `interpretations` is used when the pilot study is
    made (a later call keeps its items), `participants` when its pilot is run."""
    from analysis.models import Report, ReportStatus
    from analysis.services import report_request
    from experiments import designs, services
    from experiments.models import Study
    from experiments.participation.pilot import Pilot
    from experiments.participation.services import human_arm_ensure
    from inference.models import ModelRun, RunStatus
    from inference.services import language_model_embedded_default

    study = Study.objects.filter(slug=PILOT_SLUG).first()
    if study is None:
        study = services.study_create(
            slug=PILOT_SLUG, title="Modal syllogisms — PILOT (simulated participants, two model configurations)",
            design=SYLLOGISMS,
            description=f"A pilot of paper 003's design to show every section of the report: {interpretations} "
                        "interpretations with their nonsense mirror, two configurations of the embedded model, "
                        "simulated participants.")
        designs.items_generate(study=study, design=SYLLOGISMS, interpretations=interpretations, seed=0,
                               nonsense=True)
        arm = human_arm_ensure(study=study)
        arm.items_per_participant = min(ITEMS_PER_PARTICIPANT, interpretations)
        arm.save(update_fields=["items_per_participant"])
    model = language_model_embedded_default()
    if ModelRun.objects.filter(study=study, status=RunStatus.DONE).count() < len(CONFIGURATIONS):
        stdout.write(f"Pilot: scoring its {study.items.count()} items with two configurations of {model.name}…")
        for extra in CONFIGURATIONS:
            if not _manage("run_model", study.slug, "--model", model.name, "--device", "cpu", "--no-progress", *extra):
                stdout.write(style.WARNING("Pilot: a model run did not finish; see above. No pilot report."))
                return None
    if not Pilot.objects.filter(study=study, status="done").exists():
        try:
            call_command("simulate_participants", study.slug, "--n", str(participants), "--seed", "0", stdout=stdout)
        except CommandError as error:
            stdout.write(style.WARNING(f"Pilot: the simulated participants did not finish ({error}). No pilot report."))
            return None
    report = Report.objects.filter(study=study, pilot=True, status=ReportStatus.DONE).order_by("-pk").first()
    if report is None:
        stdout.write("Pilot: building its report (R, in its own process)…")
        report = report_request(study=study, pilot=True, send=False)
        if not _manage("analyze", "--report", str(report.pk)):
            stdout.write(style.WARNING("Pilot: the report was not built; see above."))
            return None
        report.refresh_from_db()
    if report.status != ReportStatus.DONE:
        stdout.write(style.WARNING(f"Pilot: report {report.pk} is {report.status}: {report.message}"))
        return None
    return report
