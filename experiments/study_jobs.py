"""One heavy background job per study at a time (issue 26 item 6: three clicks queued 12 pilots of
500 bots). The kinds of job that count are registered here by the app that owns them (simulated
pilots: participation/pilot.py; power analyses: analysis/apps.py), each as a model with a `study`,
a `status` and a `created_at`. `study_job_claim` is called inside the transaction that records a new
job: it locks the study's row (two requests for one study queue on the lock) and refuses, with a
message saying which job is still going, while another job of any registered kind is queued or
running. A job silent for longer than STALE_AFTER (its worker died and nobody marked it failed) no
longer holds the study.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Callable

from django.utils import timezone

STALE_AFTER = timedelta(hours=6)
ACTIVE = ("queued", "running")


class StudyBusy(ValueError):
    """A study already runs a job; the message says which and what to do."""


@dataclass(frozen=True)
class JobKind:
    name: str  # as the researcher reads it: "simulated pilot", "power analysis"
    model: Callable[[], type]  # the job's model, looked up when needed (apps load in any order)


_KINDS: dict[str, JobKind] = {}


def register(name: str, model: Callable[[], type]) -> None:
    _KINDS[name] = JobKind(name, model)


def study_job_running(*, study, now=None) -> str | None:
    """What job of `study` is queued or running (in words), or None."""
    since = (now or timezone.now()) - STALE_AFTER
    for kind in _KINDS.values():
        job = (kind.model().objects.filter(study=study, status__in=ACTIVE, created_at__gte=since)
               .order_by("created_at").first())
        if job is not None:
            return f"{kind.name} {job.pk} ({job.status} since {job.created_at:%Y-%m-%d %H:%M} UTC)"
    return None


def study_job_claim(*, study) -> None:
    """Inside the transaction that records a new job: lock the study and refuse while another job runs."""
    from .models import Study

    Study.objects.select_for_update().filter(pk=study.pk).first()
    running = study_job_running(study=study)
    if running is not None:
        raise StudyBusy(f"{study.slug} already has a job under way: {running}. One pilot or power analysis runs "
                        f"per study at a time: start this one when it has finished (a job silent for "
                        f"{int(STALE_AFTER.total_seconds() // 3600)} hours no longer counts).")
