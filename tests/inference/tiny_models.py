"""Tiny random Llama-style and GPT-2-style models with a byte-level BPE tokenizer, built locally.

They are saved with save_pretrained and loaded back through the product's loading code, so the
tests exercise the real path without downloading anything.
"""
from __future__ import annotations

from pathlib import Path

SENTENCES = [
    "Consider the following statements:", "Question: Based on these statements, can we infer that",
    "Answer: Yes", "Answer: No", "Yes, it is certain.", "No, it is possible.", "yes or no", "Yes No yes no",
    "Leo is sewing a button or Caleb is opening a package.", "Leo isn't sewing a button.",
    "If it's uncertain whether Gael is stuffing a cushion, then it's certain that Wesley is hammering a nail.",
    "It's possible that Mia is reading a book.", "It's certain that Ava is baking bread.",
]
CORPUS = SENTENCES * 20 + [" Yes", " No", " yes", " no", "Yes", "No", "yes", "no"] * 40

PROMPTS = [
    "Consider the following statements:\nLeo is sewing a button or Caleb is opening a package.\nLeo isn't sewing a "
    "button.\nQuestion: Based on these statements, can we infer that Caleb is opening a package?\nAnswer:",
    "Consider the following statements:\nIt's certain that Ava is baking bread.\nQuestion: Based on these "
    "statements, can we infer that Ava is baking bread?\nAnswer:",
    "Question: can we infer that Mia is reading a book?\nAnswer:",
    "Consider the following statements:\nIf it's uncertain whether Gael is stuffing a cushion, then it's certain "
    "that Wesley is hammering a nail.\nIt's uncertain whether Gael is stuffing a cushion.\nQuestion: Based on "
    "these statements, can we infer that it's certain that Wesley is hammering a nail?\nAnswer:",
    "It's possible that Mia is reading a book.\nAnswer:",
    "Leo is sewing a button.\nQuestion: Yes or no?\nAnswer:",
]


def build_tokenizer(bos: str, eos: str, extra_corpus: tuple[str, ...] = ()):
    from tokenizers import ByteLevelBPETokenizer
    from transformers import PreTrainedTokenizerFast

    raw = ByteLevelBPETokenizer()
    raw.train_from_iterator(CORPUS + list(extra_corpus), vocab_size=420, min_frequency=2, special_tokens=sorted({bos, eos}))
    return PreTrainedTokenizerFast(tokenizer_object=raw._tokenizer, bos_token=bos, eos_token=eos)


def build(kind: str, folder: Path, extra_corpus: tuple[str, ...] = ()) -> Path:
    """Write a tiny random `kind` ('llama' or 'gpt2') model and its tokenizer into folder
    (`extra_corpus`: more tokenizer training text, e.g. so that ' A' … ' D' are single tokens)."""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel, LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    if kind == "llama":
        tokenizer = build_tokenizer("<s>", "</s>", extra_corpus)
        config = LlamaConfig(
            vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
            num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=256, initializer_range=0.3,
            bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id, tie_word_embeddings=False,
        )
        model = LlamaForCausalLM(config)
    else:
        tokenizer = build_tokenizer("<|endoftext|>", "<|endoftext|>", extra_corpus)
        config = GPT2Config(
            vocab_size=len(tokenizer), n_positions=256, n_embd=32, n_layer=2, n_head=4, initializer_range=0.3,
            bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
        )
        model = GPT2LMHeadModel(config)
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def direct_scores(folder: Path, prompt: str, variants: dict[str, int]) -> tuple[dict[str, float], float, int]:
    """An independent reference: one unpadded sequence, float64 log-softmax, no product code."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(folder)
    model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32).eval()
    ids = [tokenizer.bos_token_id, *tokenizer.encode(prompt, add_special_tokens=False)]
    with torch.no_grad():
        logits = model(torch.tensor([ids])).logits[0].double()
    logp = torch.log_softmax(logits, dim=-1)
    answer = {text: float(logp[-1, token]) for text, token in variants.items()}
    nll = -sum(float(logp[t, ids[t + 1]]) for t in range(len(ids) - 1))
    return answer, nll, len(ids) - 1
