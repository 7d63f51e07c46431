"""The server and chat scorers against a real inference server: llama-cpp-python's OpenAI-compatible
server running SmolLM2's GGUF weights (dequantised to float32, inference/llama_serve.py) on the CPU,
compared with the hf scorer on the same weights (docs/models.md: the tolerance and why)."""
import asyncio
import json
import logging
import math
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.core import serializers

from designs.modal.items import items_generate
from experiments import services as study_services
from inference import llama_serve, services
from inference.models import Backend, ModelRun, ModelScore, RunStatus
from inference.scorers import AnswerSet, LoadConfig, Request, build, summarise
from inference.scorers.client import ServerClient, ServerError
from inference.tasks import run_model_task
from common.env import VAR_DIR

pytestmark = pytest.mark.usefixtures("patient_checks")  # tests/inference/conftest.py

TOLERANCE = 1e-3  # log p per variant, server vs hf (docs/models.md)


def demo_study(slug="server-demo"):
    """The demo's study (paper 003's design, one interpretation, seed 0, with its nonsense mirror)."""
    study = study_services.study_create(slug=slug, title="demo", design="modal-syllogisms")
    items_generate(study=study, design="modal-syllogisms", interpretations=1, seed=0, nonsense=True)
    return study


def demo_subset(study, n):
    items = list(study.items.order_by("id"))
    step = max(1, len(items) // n)
    return items[::step][:n]  # spread over the forms and both halves (real, nonsense)


def demo_items(n):
    """demo_subset(demo_study(), n) without a database: the items items_generate stores, in the order it
    stores them (the real half, then its nonsense mirror), made by the same generator with the same
    arguments (a new study's S5 and paper consequence, the full lexicon). The scorers' comparison below
    needs only their prompts, so it runs once, not again on PostgreSQL."""
    from designs.modal import generate as gen

    specs = gen.sample_interpretations(1, 0, "full")
    items = [item for half in (specs, gen.nonsense_mirror(specs))
             for item in gen.generate("modal-syllogisms", half, system="S5", consequence="paper")]
    step = max(1, len(items) // n)
    return items[::step][:n]


def test_the_server_scorer_equals_the_hf_scorer_on_the_demo_items(llama_server):
    items = demo_items(6)
    requests = [Request(key=k, text=i.prompt, answers=AnswerSet.yes_no(forms="answers")) for k, i in enumerate(items)]
    # one item in three cases: " YES" and " NO" take several tokens (the echo path)
    requests[0] = Request(key=0, text=items[0].prompt, answers=AnswerSet.yes_no(forms="cases"))
    hf = build("hf", LoadConfig(source=services.EMBEDDED_SOURCE, gguf_file=services.EMBEDDED_GGUF, device="cpu"),
               answers=AnswerSet.yes_no(), prompt_format="raw", batch_size=4, cache_dir=VAR_DIR / "models")
    server = build("server", LoadConfig(source=services.EMBEDDED_SOURCE), answers=AnswerSet.yes_no(),
                   prompt_format="raw", batch_size=4,
                   server={"urls": [llama_server], "start_token": llama_serve.START_TOKEN, "concurrency": 2})
    expected, got = hf.score(requests), server.score(requests)
    agree = 0
    for item, a, b in zip(items, expected, got):
        assert b.variants.token_ids() == a.variants.token_ids()  # the server's tokens, the same rule
        assert set(b.logprobs) == set(a.logprobs)
        for text, value in a.logprobs.items():
            assert abs(b.logprobs[text] - value) <= TOLERANCE, (item.code, text, b.logprobs[text], value)
        assert b.prompt_tokens == a.prompt_tokens
        assert b.nll_sum / b.prompt_tokens == pytest.approx(a.nll_sum / a.prompt_tokens, abs=TOLERANCE)
        assert abs(b.top_logprob - a.top_logprob) <= TOLERANCE
        if b.top_token_id == -1:  # an end-of-text token: llama-cpp-python writes control tokens as ""
            assert b.top_token == "" and a.top_token_id == hf.tokenizer.eos_token_id
        else:
            assert (b.top_token_id, b.top_token) == (a.top_token_id, a.top_token)
        sa, sb = summarise(a, item.gold_answer), summarise(b, item.gold_answer)
        agree += (sa.decision_relative, sa.top_answer) == (sb.decision_relative, sb.top_answer)
    assert agree / len(items) >= 0.99
    assert len(got[0].variants.yes) == 3 and any(len(t) > 1 for t in got[0].variants.token_ids().values())
    info = server.describe()
    assert info["servers"][0]["model"].endswith(llama_serve.F32_NAME)
    assert "0.3.16" in info["servers"][0]["version"] and info["servers"][0]["tokenize"] == "/extras/tokenize"
    assert info["one_token_variants"].startswith("logit_bias")


class SimulatedCrash(BaseException):
    """A worker killed mid-run: not an Exception, so nothing marks the run failed."""


@pytest.mark.django_db
def test_a_server_run_killed_half_way_resumes_without_doubling_a_score(llama_server, scored_keys):
    study = demo_study("server-resume")
    lm = services.language_model_create(
        name="SmolLM2 (llama.cpp server)", source=services.EMBEDDED_SOURCE, backend=Backend.SERVER,
        server_urls=llama_server, start_token=llama_serve.START_TOKEN, concurrency=2)
    run = services.model_run_create(study=study, language_model=lm, batch_size=1, item_limit=6)

    def crash(done, total):
        if done >= 2:
            raise SimulatedCrash

    with pytest.raises(SimulatedCrash):
        services.model_run_execute(run_id=run.pk, on_progress=crash)
    run.refresh_from_db()
    assert run.status == RunStatus.RUNNING and run.items_done == 2
    first = dict(ModelScore.objects.filter(run=run).values_list("item_id", "id"))
    scored = scored_keys("server")
    assert run_model_task.apply(args=[run.pk]).get() == RunStatus.DONE
    run.refresh_from_db()
    assert run.items_done == 6 == ModelScore.objects.filter(run=run).count()
    assert len(scored) == 4 and not set(scored) & set(first)  # only what was not stored
    assert dict(ModelScore.objects.filter(run=run, item_id__in=first).values_list("item_id", "id")) == first
    assert run.versions["scorer"] == "server" and run.versions["servers"][0]["model"].endswith(".gguf")
    assert run.versions["usage"]["requests"] > 0 and run.versions["usage_earlier"]
    assert run.configuration["server_urls"] == [llama_server]


@pytest.mark.django_db
def test_the_chat_scorer_reads_p_yes_p_no_from_top_logprobs_and_never_stores_the_key(
        llama_server, monkeypatch, caplog):
    secret = "sk-duet-test-9f8e7d6c5b4a"
    monkeypatch.setenv("DUET_TEST_CHAT_KEY", secret)
    monkeypatch.setenv("DUET_MODEL_API_KEYS", f"DUET_TEST_CHAT_KEY={llama_server}")  # the key, bound to its server
    caplog.set_level(logging.DEBUG)
    study = demo_study("server-chat")
    lm = services.language_model_create(
        name="SmolLM2 (chat endpoint)", source=services.EMBEDDED_SOURCE, backend=Backend.CHAT, prompt_format="chat",
        server_urls=llama_server, server_model=llama_serve.f32_gguf().as_posix(), api_key_env="DUET_TEST_CHAT_KEY",
        concurrency=2)
    run = services.model_run_create(study=study, language_model=lm, batch_size=4, item_limit=4)
    assert run_model_task.apply(args=[run.pk]).get() == RunStatus.DONE
    run.refresh_from_db()
    scores = list(ModelScore.objects.filter(run=run))
    assert len(scores) == 4
    for score in scores:
        assert score.perplexity is None and score.prompt_tokens == 0
        assert 0 < score.outside_top_k < 1
        found = {t: math.exp(lp) for t, lp in score.logprobs.items()}
        assert score.p_yes == pytest.approx(sum(found[t] for t in score.variants["yes"]))
        assert score.p_no == pytest.approx(sum(found[t] for t in score.variants["no"]))
        assert score.p_yes + score.p_no + score.outside_top_k <= 1 + 1e-9
    assert any(s.p_yes > 0 or s.p_no > 0 for s in scores)
    assert run.versions["usage"]["prompt_tokens"] > 0 and run.versions["usage"]["completion_tokens"] == 4
    stored = serializers.serialize("json", [run, lm, *scores])
    assert secret not in stored and "DUET_TEST_CHAT_KEY" in stored  # the variable's name only
    assert secret not in caplog.text
    assert secret not in json.dumps(run.versions) + json.dumps(run.configuration) + run.error


class _Limited(BaseHTTPRequestHandler):
    """A real HTTP server that is rate-limited once (429, Retry-After: 3), then answers."""

    calls = 0

    def do_POST(self):
        type(self).calls += 1
        self.rfile.read(int(self.headers.get("content-length", 0)))
        if type(self).calls == 1:
            self.send_response(429)
            self.send_header("Retry-After", "3")
            self.end_headers()
            return
        body = json.dumps({"ok": True, "usage": {"prompt_tokens": 5, "completion_tokens": 1, "cost": 0.0002}}).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.mark.db_independent
def test_the_client_waits_as_retry_after_says_and_records_tokens_and_cost():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Limited)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    waits: list[float] = []

    async def record(seconds):
        waits.append(seconds)

    async def call():
        async with ServerClient(f"http://127.0.0.1:{server.server_port}", sleep=record) as client:
            return await client.post("/v1/chat/completions", {}), client.usage

    try:
        answer, usage = asyncio.run(call())
    finally:
        server.shutdown()
    assert answer["ok"] and waits == [3.0]
    assert usage.as_json() == {"requests": 1, "retries": 1, "rate_limited": 1, "prompt_tokens": 5,
                               "completion_tokens": 1, "cost": 0.0002}


def _ask(url: str, method: str, path: str, body: dict | None = None, **client) -> tuple[str, list[float], dict]:
    """One request through ServerClient, its waits recorded instead of slept: (error or '', waits, usage)."""
    waits: list[float] = []

    async def record(seconds):
        waits.append(seconds)

    async def call():
        async with ServerClient(url, sleep=record, **client) as c:
            try:
                await c.request(method, path, body)
            except ServerError as exc:
                return str(exc), c.usage
            return "", c.usage

    error, usage = asyncio.run(call())
    return error, waits, usage.as_json()


@pytest.mark.db_independent
def test_the_client_retries_what_may_pass_with_doubling_waits_and_gives_up_saying_why(llama_without_logprobs):
    """Against a real server: llama-cpp-python without logits_all answers a request for log-probabilities
    with HTTP 500 (retried, as a 5xx may pass), a path it lacks with 404 (not retried); a closed port
    refuses connections (retried)."""
    served, asked = llama_without_logprobs, {"prompt": "Yes", "max_tokens": 1, "echo": True, "logprobs": 1}
    before = len(served.answered())
    error, waits, usage = _ask(served.url, "POST", "/v1/completions", asked, retries=2)
    # the class of failure, never the server's own words (issue 34: a peer's body is not echoed)
    assert "answered HTTP 500" in error and "logits_all" not in error and error.endswith("(after 3 attempt(s))")
    assert 0.5 <= waits[0] <= 0.75 and 1.0 <= waits[1] <= 1.5 and len(waits) == 2  # 0.5 s doubled, + ≤ half
    assert usage["retries"] == 2 and usage["requests"] == 0
    assert served.answered()[before:] == [("POST", "/v1/completions", 500)] * 3  # the server's side of it
    error, waits, usage = _ask(served.url, "POST", "/v1/completions", asked, retries=3, backoff=2.0, max_wait=3.0)
    assert waits[0] >= 2.0 and waits[1:] == [3.0, 3.0]  # a wait never exceeds max_wait
    error, waits, usage = _ask(served.url, "GET", "/no/such/path", retries=2)
    assert error.endswith("/no/such/path answered HTTP 404")  # an answer that will not change: not retried
    assert waits == [] and usage["retries"] == 0
    error, waits, usage = _ask(f"http://127.0.0.1:{llama_serve.free_port()}", "GET", "/v1/models", retries=1)
    assert error.endswith("/v1/models cannot be reached (after 2 attempt(s))") and len(waits) == 1
