import pytest

from tests.inference.tiny_models import build


@pytest.fixture(scope="session")
def tiny_llama(tmp_path_factory):
    return build("llama", tmp_path_factory.mktemp("tiny-llama"))


@pytest.fixture(scope="session")
def tiny_gpt2(tmp_path_factory):
    return build("gpt2", tmp_path_factory.mktemp("tiny-gpt2"))
