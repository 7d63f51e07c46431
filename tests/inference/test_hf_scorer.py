"""The Hugging Face scorer on tiny random Llama- and GPT-2-style models loaded through the product path."""
from pathlib import Path

import pytest
import torch

from inference import scorers
from inference.scorers.base import AnswerSpec, LoadConfig, Request
from inference.scorers.hf import HFScorer
from inference.scorers.loading import ModelDoesNotFit, load, unload_all
from tests.inference.tiny_models import PROMPTS, direct_scores


def make(folder, tmp_path, batch_size=8, cls=HFScorer, prompt_format="raw"):
    loaded = load(LoadConfig(source=str(folder), device="cpu"), cache_dir=tmp_path)
    return cls(loaded, answers=AnswerSpec(), prompt_format=prompt_format, batch_size=batch_size)


@pytest.fixture(params=["tiny_llama", "tiny_gpt2"])
def folder(request):
    return request.getfixturevalue(request.param)


def requests():
    return [Request(key=i, text=p) for i, p in enumerate(PROMPTS)]


def test_scores_equal_a_direct_computation(folder, tmp_path):
    scorer = make(folder, tmp_path)
    variants = {**scorer.variants.yes, **scorer.variants.no}
    assert " Yes" in variants and " No" in variants
    for result, prompt in zip(scorer.score(requests()), PROMPTS):
        answer, nll, count = direct_scores(folder, prompt, variants)
        assert result.prompt_tokens == count
        assert result.nll_sum == pytest.approx(nll, abs=1e-4 * count)
        for text, value in answer.items():
            assert result.logprobs[text] == pytest.approx(value, abs=1e-5)


def test_batched_equals_unbatched(folder, tmp_path):
    alone = make(folder, tmp_path, batch_size=1).score(requests())
    batched_scorer = make(folder, tmp_path, batch_size=4)
    batched = batched_scorer.score(requests())
    assert batched_scorer.batch_sizes_run == [4, 2]  # six prompts, sorted by length, padded on the left
    for a, b in zip(alone, batched):
        assert a.key == b.key and a.prompt_tokens == b.prompt_tokens
        assert abs(a.nll_sum - b.nll_sum) <= 1e-5 * a.prompt_tokens
        for text in a.logprobs:
            assert abs(a.logprobs[text] - b.logprobs[text]) <= 1e-5


def test_left_padding_without_position_ids_would_differ(tiny_gpt2, tmp_path):
    """The check above can fail: GPT-2's absolute positions shift when padding is not accounted for."""

    class NoPositions(HFScorer):
        def _forward(self, input_ids, attention_mask, position_ids):
            return self.model(input_ids=input_ids, attention_mask=attention_mask).logits

    alone = make(tiny_gpt2, tmp_path, batch_size=1).score(requests())
    wrong = make(tiny_gpt2, tmp_path, batch_size=6, cls=NoPositions).score(requests())
    worst = max(abs(a.logprobs[" Yes"] - b.logprobs[" Yes"]) for a, b in zip(alone, wrong))
    assert worst > 1e-3


class OutOfMemoryAbove2(HFScorer):
    """Fault injection: a forward pass over more than two prompts raises CUDA's out-of-memory error."""

    def _forward(self, input_ids, attention_mask, position_ids):
        if input_ids.shape[0] > self.limit:
            raise torch.OutOfMemoryError("CUDA out of memory (simulated)")
        return super()._forward(input_ids, attention_mask, position_ids)


def test_out_of_memory_halves_the_batch_and_retries(tiny_llama, tmp_path):
    reference = make(tiny_llama, tmp_path, batch_size=1).score(requests())
    scorer = make(tiny_llama, tmp_path, batch_size=6, cls=OutOfMemoryAbove2)
    scorer.limit = 2
    results = scorer.score(requests())
    assert scorer.oom_backoffs == [3, 1] and scorer.batch_size == 1
    assert [r.key for r in results] == [r.key for r in reference]
    for a, b in zip(reference, results):
        assert abs(a.logprobs[" No"] - b.logprobs[" No"]) <= 1e-5
    scorer.limit = 0
    with pytest.raises(ModelDoesNotFit, match="single prompt"):
        scorer.score(requests()[:1])


def test_chat_format_puts_the_question_in_the_user_turn(tiny_llama, tmp_path):
    scorer = make(tiny_llama, tmp_path)
    scorer.tokenizer.chat_template = (
        "{% for m in messages %}<s>{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}"
        "{% if add_generation_prompt %}assistant:{% endif %}"
    )
    scorer.prompt_format = "chat"
    text = scorer.format_prompt(PROMPTS[2])
    assert text == "<s>user: Question: can we infer that Mia is reading a book?\nassistant:"
    ids = scorer.encode(PROMPTS[2])
    assert ids[0] == scorer.tokenizer.bos_token_id and ids[1] != scorer.tokenizer.bos_token_id


def test_loader_reuses_one_model_per_process_and_refuses_what_does_not_fit(tiny_llama, tiny_gpt2, tmp_path):
    unload_all()
    first = load(LoadConfig(source=str(tiny_llama), device="cpu"), cache_dir=tmp_path)
    assert load(LoadConfig(source=str(tiny_llama), device="cpu"), cache_dir=tmp_path) is first
    other = load(LoadConfig(source=str(tiny_gpt2), device="cpu"), cache_dir=tmp_path)
    assert other is not first
    from inference.scorers import loading

    assert list(loading._CACHE) == [other.config]  # the first model was dropped
    unload_all()
    with pytest.raises(ModelDoesNotFit, match=r"does not fit this worker: its weights need .* GiB"):
        load(LoadConfig(source=str(tiny_llama), device="cpu"), cache_dir=tmp_path, memory_limit_gb=1e-6)


def test_registry_builds_by_name(tiny_llama, tmp_path):
    scorer = scorers.build("hf", LoadConfig(source=str(tiny_llama), device="cpu"), answers=AnswerSpec(),
                           prompt_format="raw", batch_size=2, cache_dir=Path(tmp_path), memory_limit_gb=None)
    assert scorers.versions(scorer)["torch"] == torch.__version__
    with pytest.raises(ValueError, match="Unknown scorer"):
        scorers.build("nope", LoadConfig(source="x"))
