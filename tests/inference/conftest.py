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
