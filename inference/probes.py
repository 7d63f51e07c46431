"""The knowledge probe of seed 000 §4.1: does the model know the facts a RULEBREAKERS pair rests on?

A knowledge-probe run (ModelRun.kind = knowledge_probe) asks, once per distinct city or instance
of the study's rulebreakers items, "Complete the sentence: [city] is in" ("[instance] is a type of")
and reads the next-token distribution after the prompt:

* ``p_target``: the probability of the first token of the expected country or type — summed over
  the distinct first tokens of its accepted spellings (with and without a leading "the", and the
  country's other names), each with a leading space for raw prompts and without one after a chat
  template, the way the model would continue;
* ``known``: the likeliest next token is one of those first tokens.

The report can then drop the pairs about places or instances the model does not know (000 §4.1).
torch is imported only inside the functions that run the model, never at import time.
"""
from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction

from experiments.logic import rulebreakers
from experiments.logic.rulebreakers_data import alternative_cities, capitals
from experiments.models import Item, Study
from studyserver.env import VAR_DIR

from .models import LanguageModel, ModelRun, ProbeScore, PromptFormat, RunKind, RunStatus

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Probe:
    key: str  # "<entity kind>:<city or instance>"
    prompt: str
    target: str  # the country or type as the items write it
    accepted: tuple[str, ...]


@dataclass(frozen=True)
class Prediction:
    p_target: float
    top_token: str
    known: bool
    target_token_ids: tuple[int, ...]


def study_probes(study: Study) -> list[Probe]:
    """One probe per distinct (entity kind, city or instance) among the study's rulebreakers items."""
    aliases = {p.city: p.aliases for p in (*capitals(), *alternative_cities())}
    seen: dict[str, Probe] = {}
    rows = (Item.objects.filter(study=study, design=rulebreakers.DESIGN).order_by("id")
            .values_list("attributes", flat=True))
    for attrs in rows:
        kind, part, whole = attrs.get("entity_kind"), attrs.get("part"), attrs.get("true_whole")
        if not (kind and part and whole):
            continue
        key = f"{kind}:{part}"
        if key not in seen:
            probe = rulebreakers.knowledge_probe(kind, whole, part, aliases.get(part, ()))
            seen[key] = Probe(key=key, prompt=probe.prompt, target=probe.expected, accepted=probe.accepted)
    return list(seen.values())


def probe_run_create(
    *, study: Study, language_model: LanguageModel, batch_size: int = 16, device: str = "",
    item_limit: int | None = None,
) -> ModelRun:
    run = ModelRun(study=study, language_model=language_model, kind=RunKind.KNOWLEDGE_PROBE,
                   batch_size=batch_size, device=device, item_limit=item_limit)
    run.full_clean()
    run.queue = "cpu" if run.effective_device == "cpu" else "gpu"
    probes = study_probes(study)
    if not probes:
        raise ValidationError(f"Study '{study.slug}' has no rulebreakers items: nothing to probe.")
    run.items_total = min(len(probes), item_limit) if item_limit else len(probes)
    run.save()
    return run


def probe_run_launch(**kwargs) -> ModelRun:
    """Create a probe run and queue it (the same task as item runs dispatches on the run's kind)."""
    from .services import model_run_enqueue

    with transaction.atomic():
        run = probe_run_create(**kwargs)
        model_run_enqueue(run=run)
    return run


# --------------------------------------------------------------------------- the model side


def target_first_tokens(encode: Callable[[str], list[int]], accepted: tuple[str, ...], *, space: bool) -> tuple[int, ...]:
    """Distinct first tokens of the accepted completions (with a leading space for raw prompts)."""
    found: list[int] = []
    for text in accepted:
        ids = encode((" " if space else "") + text)
        if ids and ids[0] not in found:
            found.append(ids[0])
    return tuple(found)


def hf_predictor(loaded, *, prompt_format: str = PromptFormat.RAW) -> Callable[[list[Probe]], list[Prediction]]:
    """Next-token predictions with a model loaded by inference.scorers.loading (one prompt at a time).

    The prompt is encoded as item prompts are: the start token (BOS, else EOS) first; after a chat
    template the probe is the user turn and the completion starts the assistant's turn."""
    import torch

    tokenizer = loaded.tokenizer
    prefix = tokenizer.bos_token_id if tokenizer.bos_token_id is not None else tokenizer.eos_token_id
    space = prompt_format == PromptFormat.RAW

    def encode(text: str) -> list[int]:
        return tokenizer.encode(text, add_special_tokens=False)

    def prompt_ids(text: str) -> list[int]:
        if not space:
            text = tokenizer.apply_chat_template([{"role": "user", "content": text}], tokenize=False,
                                                 add_generation_prompt=True)
        ids = encode(text)
        return ids if prefix is None or (ids and ids[0] == prefix) else [prefix, *ids]

    @torch.inference_mode()
    def predict(probes: list[Probe]) -> list[Prediction]:
        out = []
        for probe in probes:
            ids = prompt_ids(probe.prompt)
            logits = loaded.model(input_ids=torch.tensor([ids], device=loaded.device), use_cache=False).logits
            probs = torch.softmax(logits[0, -1].double(), dim=-1).cpu()
            targets = target_first_tokens(encode, probe.accepted, space=space)
            top = int(torch.argmax(probs))
            out.append(Prediction(
                p_target=float(sum(float(probs[t]) for t in targets)), top_token=tokenizer.decode([top]),
                known=top in targets, target_token_ids=targets,
            ))
        return out

    return predict


def _build_predictor(run: ModelRun):
    from . import scorers
    from .scorers.loading import load

    lm = run.language_model
    loaded = load(
        scorers.LoadConfig(source=lm.source, gguf_file=lm.gguf_file, revision=lm.revision, dtype=lm.dtype,
                           device=run.effective_device),
        cache_dir=VAR_DIR / "models", memory_limit_gb=getattr(settings, "DUET_WORKER_MAX_MEMORY_GB", None),
    )
    return hf_predictor(loaded, prompt_format=lm.prompt_format)


def probe_run_execute(*, run_id: int, on_progress=None, predictor=None) -> ModelRun:
    """Probe every pending city/instance, in chunks; idempotent like item runs (resumes, never duplicates)."""
    from .services import model_run_transition

    run = ModelRun.objects.select_related("language_model", "study").get(pk=run_id)
    if run.status not in (RunStatus.QUEUED, RunStatus.RUNNING):
        return run
    model_run_transition(run=run, to=RunStatus.RUNNING)
    try:
        predictor = predictor or _build_predictor(run)
        probes = study_probes(run.study)[: run.item_limit or None]
        done = set(ProbeScore.objects.filter(run=run).values_list("probe_key", flat=True))
        pending = [p for p in probes if p.key not in done]
        size = max(1, run.batch_size)
        if on_progress:
            on_progress(len(done), run.items_total)
        for start in range(0, len(pending), size):
            if ModelRun.objects.filter(pk=run.pk, status=RunStatus.CANCELLED).exists():
                run.refresh_from_db()
                return run
            chunk = pending[start : start + size]
            rows = [
                ProbeScore(run=run, probe_key=p.key, prompt=p.prompt, target=p.target,
                           target_token_ids=list(r.target_token_ids), p_target=r.p_target,
                           top_token=r.top_token[:100], known=r.known)
                for p, r in zip(chunk, predictor(chunk), strict=True)
            ]
            with transaction.atomic():
                ProbeScore.objects.bulk_create(rows, ignore_conflicts=True)
                run.items_done = ProbeScore.objects.filter(run=run).count()
                ModelRun.objects.filter(pk=run.pk).update(items_done=run.items_done)
            if on_progress:
                on_progress(run.items_done, run.items_total)
        model_run_transition(run=run, to=RunStatus.DONE)
    except Exception as exc:  # recorded on the run, like item runs
        log.exception("knowledge-probe run %s failed", run.pk)
        if ModelRun.objects.filter(pk=run.pk, status=RunStatus.RUNNING).exists():
            model_run_transition(run=run, to=RunStatus.FAILED, error=f"{type(exc).__name__}: {exc}")
    run.refresh_from_db()
    return run


def run_execute(*, run_id: int, on_progress=None) -> ModelRun:
    """Execute a run of either kind (what the task and run_model --run call)."""
    kind = ModelRun.objects.filter(pk=run_id).values_list("kind", flat=True).first()
    if kind == RunKind.KNOWLEDGE_PROBE:
        return probe_run_execute(run_id=run_id, on_progress=on_progress)
    from .services import model_run_execute

    return model_run_execute(run_id=run_id, on_progress=on_progress)
