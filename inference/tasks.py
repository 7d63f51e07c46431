"""Celery tasks: thin, take ids, idempotent. Queued through common.dispatch by services."""
from __future__ import annotations

from celery import shared_task


@shared_task(name="inference.run_model", acks_late=True)
def run_model_task(run_id: int) -> str:
    """Execute a run of any kind (safe to retry or redeliver: finished chunks are kept)."""
    from .services import model_run_execute

    return model_run_execute(run_id=run_id).status


@shared_task(name="inference.run_model_shard", acks_late=True)
def run_model_shard_task(run_id: int, shard: int, shards: int | None = None) -> str:
    """One server's share of a run spread over several servers (ModelRun.parts): the units shard,
    shard + shards, …; shards None (a task sent before it was passed): the configuration's count now."""
    from .services import model_run_execute

    return model_run_execute(run_id=run_id, shard=shard, shards=shards).status
