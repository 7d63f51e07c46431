"""One heavy background job per study at a time (issue 26 item 6: three clicks queued 12 pilots of
500 bots). The kinds that count say so where they are declared (`JobKind(..., one_per_study=True)`,
common/jobs.py: simulated pilots and power analyses). `study_job_claim` is called inside the
transaction that records a new job: it locks the study's row (two requests for one study queue on the
lock) and refuses, with a message saying which job is still going, while another job of any such kind
is queued or running. A job silent for longer than STALE_AFTER — nothing written since (Job.last_heard):
its worker died and nobody marked it failed — no longer holds the study; a long job that still writes
its progress does.
"""
from __future__ import annotations

from datetime import timedelta

from django.apps import apps
from django.db.models import Q
from django.utils import timezone

from common.jobs import ACTIVE, Job

from .models import Study

STALE_AFTER = timedelta(hours=6)


class StudyBusy(ValueError):
    """A study already runs a job; the message says which and what to do."""


def one_per_study_kinds() -> list[type[Job]]:
    """The job models a study runs one at a time (all of them together), in the apps' order."""
    return [model for model in apps.get_models() if issubclass(model, Job) and model.KIND.one_per_study]


def study_job_running(*, study, now=None) -> str | None:
    """What job of `study` is queued or running (in words), or None."""
    since = (now or timezone.now()) - STALE_AFTER
    heard = Q(progress_at__gte=since) | Q(progress_at__isnull=True, created_at__gte=since)  # Job.last_heard
    for model in one_per_study_kinds():
        job = model.objects.filter(heard, study=study, status__in=ACTIVE).order_by("created_at").first()
        if job is not None:
            return f"{model.KIND.noun} {job.pk} ({job.status} since {job.created_at:%Y-%m-%d %H:%M} UTC)"
    return None


def study_job_claim(*, study) -> None:
    """Inside the transaction that records a new job: lock the study and refuse while another job runs."""
    Study.objects.select_for_update().filter(pk=study.pk).first()
    running = study_job_running(study=study)
    if running is not None:
        raise StudyBusy(f"{study.slug} already has a job under way: {running}. One pilot or power analysis runs "
                        f"per study at a time: start this one when it has finished (a job silent for "
                        f"{int(STALE_AFTER.total_seconds() // 3600)} hours no longer counts).")
