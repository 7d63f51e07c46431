"""Reads of model configurations, runs and scores."""
from __future__ import annotations

from dataclasses import dataclass

from django.db.models import QuerySet

from experiments.models import Study
from common.progress import duration

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


RATE_RUNS = 5  # the latest finished runs a configuration's measured rate is read from


@dataclass(frozen=True)
class MeasuredRate:
    """How fast a configuration scored in its finished runs: items over the seconds each run's last attempt
    spent scoring (from after its model was loaded to its finish: Job.progress_since → finished_at)."""

    per_second: float
    items: int
    seconds: float
    runs: tuple[int, ...]
    load_seconds: float  # the latest of those runs' set-up (loading the model), before it scored

    def seconds_for(self, items: int) -> float:
        return self.load_seconds + items / self.per_second

    def words(self) -> str:
        """'0.78 items/s, measured on this configuration's runs 7, 9 (1442 items in 30 min 51 s)'."""
        rate = (f"{self.per_second:.2f} items/s" if self.per_second >= 0.1
                else f"{60 * self.per_second:.1f} items/min")
        runs = ", ".join(str(pk) for pk in self.runs)
        return (f"{rate}, measured on this configuration's run{'s' if len(self.runs) > 1 else ''} {runs} "
                f"({self.items} items in {duration(self.seconds)}"
                + (f"; {duration(self.load_seconds)} to load the model)" if self.load_seconds >= 1 else ")"))


def language_model_rate(*, language_model: LanguageModel, kind: str) -> MeasuredRate | None:
    """The configuration's measured rate on runs of `kind`: its latest RATE_RUNS finished runs that scored
    something after their set-up (complete runs first; a check run only where there is no other); None when
    it has none."""
    runs = (ModelRun.objects.filter(language_model=language_model, kind=kind, status=RunStatus.DONE,
                                    progress_since__isnull=False, finished_at__isnull=False)
            .order_by("partial", "-finished_at", "-pk")
            .values_list("pk", "partial", "items_done", "progress_from", "progress_since", "finished_at", "started_at"))
    used, items, seconds, load, partial = [], 0, 0.0, None, None
    for pk, is_partial, done, since_done, since, finished, started in runs[: RATE_RUNS * 4]:
        scored, spent = done - since_done, (finished - since).total_seconds()
        if scored < 1 or spent <= 0 or (partial is not None and is_partial != partial):
            continue
        partial = is_partial
        used.append(pk)
        items, seconds = items + scored, seconds + spent
        if load is None and started is not None:
            load = max(0.0, (since - started).total_seconds())
        if len(used) == RATE_RUNS:
            break
    if not used:
        return None
    return MeasuredRate(per_second=items / seconds, items=items, seconds=seconds, runs=tuple(used),
                        load_seconds=load or 0.0)


def run_time_words(rate: MeasuredRate | None, items: int) -> str:
    """'about 31 min 05 s' at the configuration's measured rate, or that there is none yet."""
    if rate is None:
        return "no measured rate yet"
    return f"about {duration(rate.seconds_for(items))}"
