"""Tiny random models with their tokenizers, built locally (nothing is downloaded).

* "gpt2" and "llama": GPT-2- and Llama-style models with a byte-level BPE tokenizer (" Yes" one token);
* "llama-sp": a Llama-style model with a SentencePiece-style Metaspace tokenizer, written the way
  Llama-2's and Mistral's tokenizer.json are (a "▁" prepended, spaces written "▁", no
  pre-tokenizer): " Yes" alone is two tokens ("▁", "▁Yes"), after "Answer:" it is one, and " YES"
  is several.

Every tokenizer has a chat template that inserts a system turn, so the chat format's template
tokens are many. They are saved with save_pretrained and loaded back through the product's loading
code, so the tests exercise the real path.
"""
from __future__ import annotations

import functools
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


CHAT_TEMPLATE = (
    "{{ bos_token }}system:\nYou answer questions about statements.\n"
    "{% for m in messages %}{{ m['role'] }}:\n{{ m['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}assistant:{% endif %}"
)


def build_sentencepiece_tokenizer(extra_corpus: tuple[str, ...] = ()):
    from tokenizers import SentencePieceBPETokenizer, decoders, normalizers
    from transformers import PreTrainedTokenizerFast

    raw = SentencePieceBPETokenizer()
    raw.train_from_iterator(CORPUS + list(extra_corpus), vocab_size=420, min_frequency=2,
                            special_tokens=["<s>", "</s>", "<unk>"], initial_alphabet=list("YESNOyesno\n?:'"))
    core = raw._tokenizer
    core.normalizer = normalizers.Sequence([normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")])
    core.pre_tokenizer = None
    core.decoder = decoders.Sequence([decoders.Replace("▁", " "), decoders.Fuse(), decoders.Strip(content=" ", left=1)])
    return PreTrainedTokenizerFast(tokenizer_object=core, bos_token="<s>", eos_token="</s>", unk_token="<unk>")


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
    if kind in ("llama", "llama-sp"):
        tokenizer = (build_sentencepiece_tokenizer(extra_corpus) if kind == "llama-sp"
                     else build_tokenizer("<s>", "</s>", extra_corpus))
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
    tokenizer.chat_template = CHAT_TEMPLATE
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def chat_text(tokenizer, prompt: str) -> tuple[str, str]:
    """(the template's text before the item's text, the whole chat text), written out by hand."""
    question = prompt.rstrip().removesuffix("Answer:").rstrip()
    before = f"{tokenizer.bos_token}system:\nYou answer questions about statements.\nuser:\n"
    return before, before + question + "\nassistant:"


@functools.lru_cache(maxsize=4)
def _reference_model(folder: str):
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    return AutoTokenizer.from_pretrained(folder), AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32).eval()


def direct_scores(folder: Path, prompt: str, variants, prompt_format: str = "raw") -> tuple[dict[str, float], float, int]:
    """An independent reference with plain transformers: one prompt and one variant at a time, no
    padding, no batching, no cache, float64 log-softmax, no product code.

    A variant's tokens are those of text + variant after the text's own tokens; its log p is the sum
    of its tokens' log p, each after the text and the variant's tokens before it. Perplexity counts
    every token of a raw prompt; after the chat template, the tokens between the template's text
    before the item and the item's end (found by encoding the two prefixes, not by offsets)."""
    import torch

    tokenizer, model = _reference_model(str(folder))
    encode = lambda text: tokenizer.encode(text, add_special_tokens=False)  # noqa: E731
    if prompt_format == "chat":
        before, text = chat_text(tokenizer, prompt)
        question = prompt.rstrip().removesuffix("Answer:").rstrip()
        ids = encode(text)
        first, last = len(encode(before)), len(encode(before + question))
    else:
        text = prompt
        ids = [tokenizer.bos_token_id, *encode(text)]
        first, last = 1, len(ids)

    def logp_rows(sequence):
        with torch.no_grad():
            return torch.log_softmax(model(torch.tensor([sequence])).logits[0].double(), dim=-1)

    logp = logp_rows(ids)
    nll = -sum(float(logp[t - 1, ids[t]]) for t in range(max(first, 1), last))
    answer = {}
    for variant in variants:
        cont = encode(text + variant)[len(encode(text)):]
        rows = logp_rows(ids + cont[:-1])
        answer[variant] = sum(float(rows[len(ids) - 1 + j, token]) for j, token in enumerate(cont))
    return answer, nll, last - max(first, 1)
