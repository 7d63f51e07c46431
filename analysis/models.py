"""A Report: one run of the analysis for a study, with its status and where its files are."""
from __future__ import annotations

from django.db import models

from studyserver.jobs import ORDINARY, Job, JobStatus


# A report's status: the one status machine of every background job (studyserver/jobs.py).
ReportStatus = JobStatus


class Report(Job):
    """A background job (studyserver/jobs.py) whose progress counts the report's steps; withdrawn
    when a participant's data is erased."""

    TASK = "analysis.build_report"
    LOG_NAME = "report"
    NOUN = "report"
    UNIT = "steps"
    STATUSES = (*ORDINARY, JobStatus.WITHDRAWN)

    study = models.ForeignKey("experiments.Study", on_delete=models.CASCADE, related_name="reports")
    done = models.PositiveIntegerField(default=0, editable=False, help_text="Steps of the build done so far.")
    total = models.PositiveIntegerField(default=0, editable=False)
    out_dir = models.CharField(max_length=500, blank=True, editable=False)
    message = models.TextField(blank=True, editable=False, help_text="What the report holds (its error: error).")
    n_scores = models.PositiveIntegerField(default=0, editable=False)
    n_trials = models.PositiveIntegerField(default=0, editable=False)
    warnings = models.JSONField(default=list, blank=True, editable=False)
    runs_requested = models.JSONField(
        default=list, blank=True, editable=False,
        help_text="The model runs asked for (ids; analyze --runs or the admin's choice); empty: the default rule "
        "(each configuration's latest complete run; analysis/runs.py).",
    )
    runs_used = models.JSONField(
        default=list, blank=True, editable=False,
        help_text="The model runs whose scores the analyses read (ids), filled when the report is built; the "
        "report's tables/runs.csv lists every run of the study with why it was used or not.",
    )
    pilot = models.BooleanField(
        default=False, editable=False,
        help_text="A pilot report: the simulated pilots' bots are read as participants (they are never data).",
    )

    class Meta:
        ordering = ["-created_at"]
        permissions = [("run_analysis", "Can run analyses: reports, pilot reports, power analyses, retries")]

    def retry_fields(self) -> dict:
        return {"message": "", "done": 0}  # built again from the start

    def __str__(self) -> str:
        return f"report {self.pk} of {self.study.slug} ({self.status})"


class PowerAnalysis(Job):
    """One sample-size estimate by simulation (analysis/power.py) for a study: a background job
    (studyserver/jobs.py) whose progress counts simulated studies."""

    TASK = "analysis.estimate_power"
    LOG_NAME = "power"
    NOUN = "power analysis"
    UNIT = "simulated studies"

    study = models.ForeignKey("experiments.Study", on_delete=models.CASCADE, related_name="power_analyses")
    plan = models.JSONField(default=dict, editable=False, help_text="sizes, nsim, alpha, target, seed (PowerPlan).")
    pilot = models.BooleanField(default=True, editable=False,
                                help_text="Read the simulated pilots' bots as the pilot (with any real participants).")
    done = models.PositiveIntegerField(default=0, editable=False, help_text="Simulated studies fitted so far.")
    total = models.PositiveIntegerField(default=0, editable=False)
    curve = models.JSONField(default=list, blank=True, editable=False, help_text="Power per size and contrast.")
    needed = models.JSONField(default=list, blank=True, editable=False, help_text="Participants needed per contrast.")
    curve_png = models.BinaryField(null=True, blank=True, editable=False,
                                   help_text="The power curve, drawn by the worker (the web process has no matplotlib).")
    pilot_summary = models.JSONField(default=dict, blank=True, editable=False)
    message = models.TextField(blank=True, editable=False, help_text="What the estimate found (its error: error).")

    class Meta:
        ordering = ["-created_at"]
        verbose_name_plural = "power analyses"

    def retry_fields(self) -> dict:
        return {"message": "", "done": 0}  # estimated again from the start

    def __str__(self) -> str:
        return f"power analysis {self.pk} of {self.study.slug} ({self.status})"
