"""Reads of model configurations, runs and scores."""
from __future__ import annotations

from django.db.models import QuerySet

from experiments.models import Study

from .models import LanguageModel, ModelRun, ModelScore, RunKind, RunStatus

SCORING_KINDS = (RunKind.ITEMS, RunKind.MULTIPLE_CHOICE)  # runs whose rows are ModelScores


def model_run_scores(*, run: ModelRun) -> QuerySet[ModelScore]:
    return run.scores.select_related("item").order_by("item_id")


def model_runs_for_study(*, study: Study) -> QuerySet[ModelRun]:
    return study.model_runs.select_related("language_model").order_by("-created_at")


def model_run_latest_done(*, study: Study, language_model: LanguageModel, item_limit: int | None = None) -> ModelRun | None:
    runs = ModelRun.objects.filter(study=study, language_model=language_model, status=RunStatus.DONE,
                                   kind__in=SCORING_KINDS)
    if item_limit is not None:
        runs = runs.filter(item_limit=item_limit)
    return runs.order_by("-finished_at").first()


def language_model_by_name(*, name: str) -> LanguageModel | None:
    return LanguageModel.objects.filter(name=name).first()
