"""A simulated pilot's row (experiments/participation/pilot.py walks it): what was asked for — how many
bots, their profile, the seed — and what came of it. A background job of common/jobs.py."""
from __future__ import annotations

from django.db import models

from common.jobs import Job, JobKind, JobStatus, counter

# A pilot's status: the one status machine of every background job (common/jobs.py).
PilotStatus = JobStatus


class Pilot(Job):
    """One simulated pilot of a study: what was asked for and what came of it. A background job
    (common/jobs.py) whose progress counts the bots walked through the flow."""

    KIND = JobKind("experiments.run_pilot", log_name="pilot", noun="simulated pilot", unit="simulated participants",
                   one_per_study=True)

    study = models.ForeignKey(
        "experiments.Study", on_delete=models.CASCADE, related_name="pilots",
        help_text="The study the simulated participants take.",
    )
    participants = models.PositiveSmallIntegerField(
        help_text="How many simulated participants take the study.", verbose_name="simulated participants",
    )
    profile = models.JSONField(
        default=dict, help_text="How the simulated participants answer: their accuracy on the items and the catch items, and their response times.",
        verbose_name="bot profile",
    )
    seed = models.BigIntegerField(
        default=0, help_text="The random seed the bots drew their answers with (the same seed gives the same pilot).",
    )
    done = counter("bots walked", "Simulated participants walked so far.")
    total = counter("bots in all", "Simulated participants the pilot walks.")
    completed = counter("bots that completed", "Simulated participants that reached the end of the study.")
    trials = counter("answers saved", "Answers the bots saved, through the participant pages.")
    seconds = models.FloatField(
        null=True, blank=True, editable=False,
        verbose_name="time taken",
        help_text="How long the pilot took, in seconds.",
    )
    message = models.TextField(blank=True, editable=False, help_text="What came of it (the error, when it failed, is under error).")

    class Meta:
        app_label = "experiments"
        ordering = ["-created_at"]
        constraints = [models.CheckConstraint(condition=models.Q(participants__gte=1) & models.Q(participants__lte=500),
                                              name="pilot_participants_1_to_500")]

    def __str__(self) -> str:
        return f"pilot {self.pk} of {self.study.slug}: {self.participants} simulated participants ({self.status})"
