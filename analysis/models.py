"""A Report: one run of the analysis for a study, with its status and where its files are."""
from __future__ import annotations

from django.db import models

from common.jobs import ORDINARY, Job, JobKind, JobStatus, counter, record


# A report's status: the one status machine of every background job (common/jobs.py).
ReportStatus = JobStatus


class Report(Job):
    """A background job (common/jobs.py) whose progress counts the report's steps; withdrawn
    when a participant's data is erased."""

    KIND = JobKind("analysis.build_report", log_name="report", noun="report", unit="steps",
                   statuses=(*ORDINARY, JobStatus.WITHDRAWN))

    study = models.ForeignKey(
        "experiments.Study", on_delete=models.CASCADE, related_name="reports", help_text="The study analysed.",
    )
    done = counter("steps done", "Steps of the build done so far.")
    total = counter("steps in all", "Steps of the build (data read, then built).")
    out_dir = models.CharField(
        max_length=500, blank=True, editable=False,
        verbose_name="folder of its files",
        help_text="Where report.html, its tables, plots and data are written on the server.",
    )
    message = models.TextField(blank=True, editable=False, help_text="What the report holds (the error, when it failed, is under error).")
    n_scores = counter("model scores read", "How many model scores went into the analyses.")
    n_trials = counter("human trials read",
                       "How many participants' answers went into the analyses (after the exclusions).")
    warnings = record(list, "What the analysis noticed and the reader should know (e.g. a model fit that needed a "
                            "fallback).")
    runs_requested = record(list, "The model runs asked for by id; empty: the default rule (each configuration's "
                                  "latest complete run).", label="model runs asked for")
    runs_used = record(list, "The model runs whose scores the analyses read, filled when the report is built; the "
                             "report's runs table says why each run of the study was used or not.",
                       label="model runs used")
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
    (common/jobs.py) whose progress counts simulated studies."""

    KIND = JobKind("analysis.estimate_power", log_name="power", noun="power analysis", unit="simulated studies",
                   one_per_study=True)

    study = models.ForeignKey(
        "experiments.Study", on_delete=models.CASCADE, related_name="power_analyses",
        help_text="The study whose pilot the simulations start from.",
    )
    plan = models.JSONField(default=dict, editable=False, help_text="The numbers of participants tried, simulated studies per size, α, target power and seed.")
    pilot = models.BooleanField(default=True, editable=False,
                                help_text="Read the simulated pilots' bots as the pilot (with any real participants).",
        verbose_name="simulated pilots read",
    )
    done = counter("simulated studies done", "Simulated studies fitted so far.")
    total = counter("simulated studies in all", "Sizes × simulated studies per size.")
    curve = record(list, "Power per size and contrast.", label="power curve (numbers)")
    needed = record(list, "Participants needed per contrast.", label="participants needed (numbers)")
    curve_png = models.BinaryField(null=True, blank=True, editable=False,
                                   help_text="The power curve, drawn by the worker (the web process has no matplotlib).",
        verbose_name="power curve (image)",
    )
    pilot_summary = record(dict, "The pilot the simulations started from: its participants, the models, the fitted "
                                 "effects, the model runs and the exclusions.", label="what the pilot gave")
    message = models.TextField(blank=True, editable=False,
                               help_text="What the estimate found (the error, when it failed, is under error).")

    class Meta:
        ordering = ["-created_at"]
        verbose_name_plural = "power analyses"

    def retry_fields(self) -> dict:
        return {"message": "", "done": 0}  # estimated again from the start

    def __str__(self) -> str:
        return f"power analysis {self.pk} of {self.study.slug} ({self.status})"
