"""The Hugging Face scorer on tiny random models loaded through the product path, against an
independent computation with plain transformers (tiny_models.direct_scores): byte-level BPE
(GPT-2- and Llama-style) and a SentencePiece/Metaspace tokenizer in which ' Yes' alone is two tokens."""
from pathlib import Path

import pytest
import torch

from inference import scorers
from inference.scorers.base import AnswerSet, LoadConfig, Request
from inference.scorers.hf import HFScorer
from inference.scorers.loading import ModelDoesNotFit, load, unload_all
from tests.inference.tiny_models import PROMPTS, chat_text, direct_scores


def make(folder, tmp_path, batch_size=8, cls=HFScorer, prompt_format="raw", answers=None):
    loaded = load(LoadConfig(source=str(folder), device="cpu"), cache_dir=tmp_path)
    if answers is None:
        answers = AnswerSet.yes_no(*(("Yes", "No") if prompt_format == "chat" else (" Yes", " No")))
    return cls(loaded, answers=answers, prompt_format=prompt_format, batch_size=batch_size)


@pytest.fixture(params=["tiny_llama", "tiny_gpt2", "tiny_sp"])
def folder(request):
    return request.getfixturevalue(request.param)


def requests():
    return [Request(key=i, text=p) for i, p in enumerate(PROMPTS)]


@pytest.mark.parametrize("prompt_format", ["raw", "chat"])
def test_scores_equal_an_independent_computation(folder, tmp_path, prompt_format):
    scorer = make(folder, tmp_path, prompt_format=prompt_format)
    results = scorer.score(requests())
    for result, prompt in zip(results, PROMPTS):
        texts = [t for v in result.variants.by_label.values() for t in v]
        answer, nll, count = direct_scores(folder, prompt, texts, prompt_format)
        assert result.prompt_tokens == count
        assert result.nll_sum == pytest.approx(nll, abs=1e-5 * count)
        for text, value in answer.items():
            assert result.logprobs[text] == pytest.approx(value, abs=1e-5), text
    # the multi-token path was taken wherever a variant is several tokens
    longer = [t for r in results for t, ids in r.variants.token_ids().items() if len(ids) > 1]
    assert scorer.continuation_rows == len(longer)


def test_metaspace_yes_is_two_tokens_alone_and_one_after_the_prompt(tiny_sp, tmp_path):
    scorer = make(tiny_sp, tmp_path)
    assert len(scorer.tokenizer.encode(" Yes", add_special_tokens=False)) == 2
    result = scorer.score(requests()[:1])[0]
    ids = result.variants.token_ids()
    assert len(ids[" Yes"]) == 1 and len(ids[" No"]) == 1
    assert len(ids[" YES"]) > 1 and len(ids[" NO"]) > 1  # scored through the cache, not dropped
    assert scorer.continuation_rows >= 2


def test_variant_sets_are_symmetric(folder, tmp_path):
    for prompt_format in ("raw", "chat"):
        scorer = make(folder, tmp_path, prompt_format=prompt_format)
        for result in scorer.score(requests()):
            yes, no = result.variants.yes, result.variants.no
            assert len(yes) == len(no) >= 1
            # the same surface form for both answers: " Yes" ↔ " No", "yes" ↔ "no", …
            assert [t.replace("Yes", "X").replace("yes", "x").replace("YES", "X!") for t in yes] == \
                   [t.replace("No", "X").replace("no", "x").replace("NO", "X!") for t in no]


def test_batched_equals_unbatched(folder, tmp_path):
    alone = make(folder, tmp_path, batch_size=1).score(requests())
    batched_scorer = make(folder, tmp_path, batch_size=4)
    batched = batched_scorer.score(requests())
    assert batched_scorer.batch_sizes_run == [4, 2]  # six prompts, sorted by length, padded on the left
    for a, b in zip(alone, batched):
        assert a.key == b.key and a.prompt_tokens == b.prompt_tokens and a.top_token_id == b.top_token_id
        assert abs(a.nll_sum - b.nll_sum) <= 1e-5 * a.prompt_tokens
        for text in a.logprobs:
            assert abs(a.logprobs[text] - b.logprobs[text]) <= 1e-5


def test_left_padding_without_position_ids_would_differ(tiny_gpt2, tmp_path):
    """The check above can fail: GPT-2's absolute positions shift when padding is not accounted for."""

    class NoPositions(HFScorer):
        def _forward(self, input_ids, attention_mask, position_ids, past_key_values=None, use_cache=False):
            return self.model(input_ids=input_ids, attention_mask=attention_mask, past_key_values=past_key_values,
                              use_cache=use_cache)

    alone = make(tiny_gpt2, tmp_path, batch_size=1).score(requests())
    wrong = make(tiny_gpt2, tmp_path, batch_size=6, cls=NoPositions).score(requests())
    worst = max(abs(a.logprobs[" Yes"] - b.logprobs[" Yes"]) for a, b in zip(alone, wrong))
    assert worst > 1e-3


def test_top_token_is_the_argmax_over_the_vocabulary(tiny_sp, tmp_path):
    scorer = make(tiny_sp, tmp_path)
    loaded = scorer.loaded
    for result, prompt in zip(scorer.score(requests()), PROMPTS):
        ids = [scorer.tokenizer.bos_token_id, *scorer.tokenizer.encode(prompt, add_special_tokens=False)]
        with torch.no_grad():
            logits = loaded.model(torch.tensor([ids])).logits[0, -1].double()
        assert result.top_token_id == int(torch.argmax(logits))
        assert result.top_logprob == pytest.approx(float(torch.log_softmax(logits, -1).max()), abs=1e-5)


def test_chat_perplexity_counts_the_item_text_only(tiny_sp, tmp_path):
    scorer = make(tiny_sp, tmp_path, prompt_format="chat")
    text, (lo, hi) = scorer.format_prompt(PROMPTS[2])
    before, whole = chat_text(scorer.tokenizer, PROMPTS[2])
    assert text == whole and text[lo:hi] == "Question: can we infer that Mia is reading a book?"
    prepared = scorer.prepare([Request(key=0, text=PROMPTS[2])])[0]
    raw = make(tiny_sp, tmp_path).prepare([Request(key=0, text=PROMPTS[2])])[0]
    assert len(prepared.ids) > len(raw.ids)  # the template's tokens condition …
    assert 0 < sum(prepared.counted) < len(prepared.ids) - 1  # … but are not counted
    assert not prepared.counted[0] and not any(prepared.counted[-3:])  # nor is the start or "assistant:"


class OutOfMemoryAbove2(HFScorer):
    """Fault injection: a forward pass over more than two prompts raises CUDA's out-of-memory error."""

    def _forward(self, input_ids, attention_mask, position_ids, past_key_values=None, use_cache=False):
        if input_ids.shape[0] > self.limit:
            raise torch.OutOfMemoryError("CUDA out of memory (simulated)")
        return super()._forward(input_ids, attention_mask, position_ids, past_key_values, use_cache)


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


def test_configured_answers_that_cannot_be_told_apart_are_refused(tiny_llama, tmp_path):
    scorer = make(tiny_llama, tmp_path, answers=AnswerSet.yes_no(" Yes", " Yes"))
    with pytest.raises(ValueError, match="cannot be scored"):
        scorer.score(requests()[:1])


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


def test_file_hashes_name_weights_and_tokenizer(tiny_llama, tmp_path):
    import hashlib

    unload_all()
    loaded = load(LoadConfig(source=str(tiny_llama), device="cpu"), cache_dir=tmp_path)
    files = loaded.extra["files"]
    assert {"model.safetensors", "tokenizer.json", "config.json"} <= set(files)
    assert files["model.safetensors"] == hashlib.sha256((Path(tiny_llama) / "model.safetensors").read_bytes()).hexdigest()


def test_registry_builds_by_name(tiny_llama, tmp_path):
    scorer = scorers.build("hf", LoadConfig(source=str(tiny_llama), device="cpu"), answers=AnswerSet.yes_no(),
                           prompt_format="raw", batch_size=2, cache_dir=Path(tmp_path), memory_limit_gb=None)
    assert scorer.describe()["torch"] == torch.__version__
    assert {"hf", "fake"} <= set(scorers.names())
    with pytest.raises(ValueError, match="Unknown scorer"):
        scorers.build("nope", LoadConfig(source="x"))


def test_the_multi_token_tree_pass_is_the_same_under_eager_attention(tiny_sp, tmp_path):
    """The tree of long variants rests on a 4D attention mask, which sdpa and eager attention take as given
    (other attention implementations are refused by HFScorer._continue with a message)."""
    sdpa = make(tiny_sp, tmp_path).score(requests())
    scorer = make(tiny_sp, tmp_path)
    scorer.model.set_attn_implementation("eager")
    try:
        eager = scorer.score(requests())
        for a, b in zip(sdpa, eager):
            for text in a.logprobs:
                assert abs(a.logprobs[text] - b.logprobs[text]) <= 1e-5
    finally:
        scorer.model.set_attn_implementation("sdpa")
