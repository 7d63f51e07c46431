"""Reads of language models, runs and scores."""
from __future__ import annotations

from django.db.models import QuerySet
from django.db.models.functions import Length

from experiments.models import Item, Study

from .models import LanguageModel, ModelRun, ModelScore, RunStatus


def model_run_items(*, run: ModelRun) -> QuerySet[Item]:
    """The items a run scores: the study's items, the first `item_limit` of them (by id) if set."""
    items = Item.objects.filter(study_id=run.study_id)
    if run.item_limit:
        cutoff = list(items.order_by("id").values_list("id", flat=True)[run.item_limit - 1 : run.item_limit])
        if cutoff:
            items = items.filter(id__lte=cutoff[0])
    return items


def model_run_pending_item_ids(*, run: ModelRun) -> list[int]:
    """Items of the run without a score yet, shortest prompt first (so batches hold similar lengths)."""
    pending = model_run_items(run=run).exclude(id__in=ModelScore.objects.filter(run=run).values("item_id"))
    return list(pending.annotate(n=Length("prompt")).order_by("n", "id").values_list("id", flat=True))


def model_run_scores(*, run: ModelRun) -> QuerySet[ModelScore]:
    return run.scores.select_related("item").order_by("item_id")


def model_runs_for_study(*, study: Study) -> QuerySet[ModelRun]:
    return study.model_runs.select_related("language_model").order_by("-created_at")


def model_run_latest_done(*, study: Study, language_model: LanguageModel, item_limit: int | None = None) -> ModelRun | None:
    runs = ModelRun.objects.filter(study=study, language_model=language_model, status=RunStatus.DONE, kind="items")
    if item_limit is not None:
        runs = runs.filter(item_limit=item_limit)
    return runs.order_by("-finished_at").first()


def language_model_by_name(*, name: str) -> LanguageModel | None:
    return LanguageModel.objects.filter(name=name).first()
