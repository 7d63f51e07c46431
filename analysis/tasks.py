"""Celery task: thin, takes an id, idempotent (a finished report is left as it is)."""
from __future__ import annotations

from celery import shared_task


@shared_task(name="analysis.build_report", acks_late=True)
def build_report_task(report_id: int) -> str:
    from .services import report_execute

    return report_execute(report_id=report_id).status


@shared_task(name="analysis.estimate_power", acks_late=True)
def estimate_power_task(analysis_id: int) -> str:
    from .power_services import power_execute

    return power_execute(analysis_id=analysis_id).status
