"""Celery tasks: thin, take ids, idempotent. Queued with transaction.on_commit by services."""
from __future__ import annotations

from celery import shared_task


@shared_task(name="inference.run_model", acks_late=True)
def run_model_task(run_id: int) -> str:
    """Score a run's pending items (safe to retry or redeliver: finished chunks are kept)."""
    from .probes import run_execute  # item runs → services.model_run_execute; knowledge probes → probes

    return run_execute(run_id=run_id).status
