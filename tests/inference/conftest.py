import pytest

from tests.inference.tiny_models import build


@pytest.fixture(scope="session")
def tiny_llama(tmp_path_factory):
    return build("llama", tmp_path_factory.mktemp("tiny-llama"))


@pytest.fixture(scope="session")
def tiny_gpt2(tmp_path_factory):
    return build("gpt2", tmp_path_factory.mktemp("tiny-gpt2"))


@pytest.fixture(scope="session")
def tiny_sp(tmp_path_factory):
    """Llama-style, with a SentencePiece/Metaspace tokenizer: ' Yes' alone is two tokens."""
    return build("llama-sp", tmp_path_factory.mktemp("tiny-llama-sp"))


def start_llama(tmp_path_factory, **options):
    """llama-cpp-python's server running SmolLM2's weights (dequantised to float32) on the CPU
    (inference.llama_serve.start's options), its log in a folder of its own. Skipped locally when it
    cannot start; under CI=true that fails."""
    import os

    from inference import llama_serve

    try:
        return llama_serve.start(llama_serve.f32_gguf(), log=tmp_path_factory.mktemp("llama") / "server.log",
                                 **options)
    except (RuntimeError, ImportError, OSError) as exc:
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(f"the llama.cpp server could not start: {exc}")
        pytest.skip(f"the llama.cpp server could not start: {exc}")


@pytest.fixture(scope="session")
def llama_served(tmp_path_factory):
    """The session's llama.cpp server (llama_serve.Served: its URL and its log)."""
    served = start_llama(tmp_path_factory)
    yield served
    served.stop()


@pytest.fixture(scope="session")
def llama_server(llama_served):
    """The session's llama.cpp server's URL."""
    return llama_served.url


@pytest.fixture(scope="session")
def llama_without_logprobs(tmp_path_factory):
    """The same weights started the way that gives no log-probabilities (--logits_all False):
    llama-cpp-python 0.3.16 answers any request for them with HTTP 500 saying so."""
    served = start_llama(tmp_path_factory, logits_all=False, n_ctx=512)
    yield served
    served.stop()


@pytest.fixture
def scored_keys(monkeypatch):
    """scored_keys(backend) -> a list that collects the keys of every request the scorers of `backend`
    built from now on score (what a resumed run recomputes)."""
    from inference import scorers

    def watch(backend: str) -> list:
        seen: list = []
        original = scorers.REGISTRY[backend]

        def counting(*args, **kwargs):
            scorer = original(*args, **kwargs)
            real = scorer.score
            scorer.score = lambda requests, **options: (seen.extend(r.key for r in requests),
                                                        real(requests, **options))[1]
            return scorer

        monkeypatch.setitem(scorers.REGISTRY.entries, backend, counting)
        return seen

    return watch


@pytest.fixture
def patient_checks(monkeypatch):
    """A configuration's save-time check waits 5 s for a server's /v1/models and 15 s for its one-token
    completion: on a machine busy with other tests a shared llama.cpp server can take longer, which is slow,
    not broken. The deadlines themselves are tested against hostile servers in test_outbound_checks.py."""
    from inference import checks

    monkeypatch.setattr(checks, "PROBE_TIMEOUT", 60.0)
    monkeypatch.setattr(checks, "COMPLETION_PROBE_TIMEOUT", 120.0)
    monkeypatch.setenv("DUET_CHECK_SECONDS", "240")
