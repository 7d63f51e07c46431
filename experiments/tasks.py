"""Celery tasks of the experiments app: thin, take an id, idempotent."""
from __future__ import annotations

from celery import shared_task

from .participation.pilot import pilot_execute


@shared_task(name="experiments.run_pilot", acks_late=True)
def run_pilot_task(pilot_id: int) -> str:
    return pilot_execute(pilot_id=pilot_id).status
