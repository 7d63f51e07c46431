"""Generation mode and save-time checks for the server backend, against a real OpenAI-compatible
server: llama-cpp-python's (the `server` dependency group) serving the embedded SmolLM2 GGUF on the
CPU, started here on a free loopback port. Without llama-cpp-python the tests fail under CI and skip
elsewhere."""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from django.core.exceptions import ValidationError

from inference import services
from inference.models import LanguageModel, ModelScore, RunStatus
from inference.tasks import run_model_task
from tests.factories import ItemFactory, StudyFactory
from tests.inference.tiny_models import PROMPTS
from tests.integration.servers import free_port

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("patient_checks")]  # tests/inference/conftest.py


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory):
    try:
        import llama_cpp  # noqa: F401
    except ImportError:
        if os.environ.get("CI") == "true":
            pytest.fail("CI needs llama-cpp-python (the server dependency group)")
        pytest.skip("llama-cpp-python is not installed")
    from inference.scorers.loading import resolve_source

    gguf = Path(resolve_source(services.EMBEDDED_SOURCE, services.EMBEDDED_GGUF)) / services.EMBEDDED_GGUF
    port = free_port()
    log = tmp_path_factory.mktemp("llama") / "server.log"
    with open(log, "wb") as out:
        process = subprocess.Popen([sys.executable, "-m", "llama_cpp.server", "--model", str(gguf), "--host",
                                    "127.0.0.1", "--port", str(port), "--n_ctx", "2048"], stdout=out,
                                   stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 300
        while True:
            try:
                if httpx.get(url + "/v1/models", timeout=2).status_code == 200:
                    # the first echoed completion pages llama-cpp-python's scores in (tens of seconds when busy),
                    # more than a save-time check waits: paid here, as llama_serve.start does
                    httpx.post(url + "/v1/completions", json={"prompt": "Is this a warm-up?", "max_tokens": 1,
                                                              "echo": True, "logprobs": 1}, timeout=300)
                    break
            except httpx.HTTPError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"llama-cpp-python's server did not start: {log.read_text()[-2000:]}")
            time.sleep(0.5)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()


def _server_config(url: str, **options) -> LanguageModel:
    return services.language_model_create(name=options.pop("name", "smollm2-server"), source="server", backend="server",
                                          server_urls=url, start_token="<|im_start|>", device="cpu", **options)


def test_a_generated_run_through_the_server_stores_the_text_and_a_parse_for_every_item(llama_server):
    study = StudyFactory()
    for i in range(3):
        ItemFactory(study=study, prompt=PROMPTS[i], gold_answer="no")
    lm = _server_config(llama_server, decision_rule="generated", max_new_tokens=8)
    run = services.model_run_create(study=study, language_model=lm, batch_size=3)
    assert run_model_task.apply(args=[run.pk]).get() == RunStatus.DONE, run.error
    scores = list(ModelScore.objects.filter(run=run))
    assert len(scores) == 3
    for score in scores:
        (answer,) = score.generated_answers.all()
        assert answer.text.strip() and 0 < answer.tokens <= 8 and answer.parsed in ("yes", "no", "other")
        assert score.generation["prompt"] == "<|im_start|>" + score.item.prompt.rstrip()
        assert score.decision == answer.parsed and score.perplexity > 0  # the item's own prompt, by log-probabilities
    run.refresh_from_db()
    assert run.versions["usage"]["completion_tokens"] >= sum(s.generated_answers.get().tokens for s in scores)


def test_sampled_answers_through_the_server_are_seeded(llama_served):
    """The same seed gives the same samples, on the float32 server (the shared one, conftest.py). On
    this module's Q4_1 server one of three samples once differed between two identical calls (CI,
    2026-11-26): llama.cpp reuses the longest cached prompt prefix, and with quantised weights a
    one-token and a many-token batch take different kernels, so the logits move and a draw can flip
    (docs/models.md, "Generation mode", says so)."""
    from inference.scorers import build
    from inference.scorers.base import GenerationRequest, LoadConfig, SamplingSpec

    scorer = build("server", LoadConfig(source="server"), answers=None, prompt_format="raw", batch_size=4,
                   server={"urls": [llama_served.url], "start_token": "<|im_start|>"})
    spec = SamplingSpec(greedy=False, samples=3, temperature=1.0, max_new_tokens=6, seed=11)
    ask = [GenerationRequest(key=1, turns=(("user", PROMPTS[0]),), sampling=spec)]
    first, again = scorer.generate(ask), scorer.generate(ask)
    assert first == again and len(first[0][1]) == 3


def test_an_unreachable_server_is_refused_at_save():
    port = free_port()  # nothing listens there
    with pytest.raises(ValidationError) as caught:
        _server_config(f"http://127.0.0.1:{port}")
    assert "cannot be reached" in " ".join(caught.value.message_dict["server_urls"])
    assert not LanguageModel.objects.exists()


def test_a_missing_api_key_is_refused_at_save(llama_server, monkeypatch):
    monkeypatch.delenv("DUET_TEST_ABSENT_KEY", raising=False)
    monkeypatch.setenv("DUET_MODEL_API_KEYS", f"DUET_TEST_ABSENT_KEY={llama_server}")  # listed, bound, not set
    with pytest.raises(ValidationError) as caught:
        _server_config(llama_server, api_key_env="DUET_TEST_ABSENT_KEY")
    assert "DUET_TEST_ABSENT_KEY is not set here" in " ".join(caught.value.message_dict["api_key_env"])


def test_a_model_the_server_does_not_serve_is_refused_and_a_served_one_saves(llama_server):
    with pytest.raises(ValidationError, match="does not serve 'some/other-model'"):
        _server_config(llama_server, server_model="some/other-model")
    assert _server_config(llama_server).pk  # it answers, serves one model and gives prompt log-probabilities


def test_servers_of_different_models_are_refused_together(llama_server, llama_served):
    """A run spreads its items over the servers: this module's serves the Q4_1 GGUF, the session's
    the float32 one (another model id), so one configuration cannot list both."""
    with pytest.raises(ValidationError) as caught:
        _server_config(f"{llama_server}\n{llama_served.url}")
    (message,) = caught.value.message_dict["server_urls"]
    assert "The servers serve different models" in message and services.EMBEDDED_GGUF in message
    assert llama_served.url in message and not LanguageModel.objects.exists()


def test_a_chat_configuration_generates_through_the_chat_endpoint(llama_server):
    """The chat backend writes its answers through /v1/chat/completions (llama-cpp-python applies the
    GGUF's chat template); 004's demonstrations go as user/assistant messages."""
    import json

    from inference.scorers import build
    from inference.scorers.base import GenerationRequest, LoadConfig, SamplingSpec
    from designs.paired import dual_sided
    from designs.paired import prompting as ds_prompting
    from logic import prompting

    scorer = build("chat", LoadConfig(source="chat"), answers=None, prompt_format="chat", batch_size=4,
                   chat={"url": llama_server, "model": "smollm2"})
    item = prompting.ItemText(prompt=dual_sided._variant(1, "Tool Y is sharp", "Person X can cut with Tool "
                                                                   "Y").text, variant="template-1")
    turns = tuple((t.role, t.text) for t in ds_prompting.DUAL_SIDED_TWO_SHOT_COT.turns(item))
    ((prompt, (answer,)),) = scorer.generate([GenerationRequest(key=0, turns=turns,
                                                                sampling=SamplingSpec(max_new_tokens=8))])
    messages = json.loads(prompt)
    assert [m["role"] for m in messages] == ["user", "assistant", "user", "assistant", "user"]
    assert messages[1]["content"].startswith("True. ") and answer.text.strip() and 0 < answer.tokens <= 8
