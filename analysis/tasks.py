"""Celery task: thin, takes an id, idempotent (a finished report is left as it is)."""
from __future__ import annotations

from celery import shared_task


@shared_task(name="analysis.build_report", acks_late=True)
def build_report_task(report_id: int) -> str:
    from .services import report_execute

    return report_execute(report_id=report_id).status
