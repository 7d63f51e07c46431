"""The Hugging Face scorer: one forward pass per prompt gives the answer log-probabilities (last
position) and the prompt's perplexity (all positions). torch is imported here and in loading.py only.

Sequences are sorted by length and cut into batches (length buckets), left-padded with an attention
mask and explicit position ids, so a batched prompt is scored exactly as it would be alone. Every
sequence starts with the tokenizer's start token (BOS, else EOS; the convention of lm-evaluation-
harness's rolling log-likelihood), so each of the prompt's N tokens has a probability:
perplexity = exp(−1/N Σ log p(x_i | x_<i)) as in paper 003.
"""
from __future__ import annotations

import torch

from .base import AnswerSet, AnswerSpec, Request, Result, Variants, pick_variants
from .loading import Loaded, ModelDoesNotFit

ANSWER_CUE = "Answer:"


class HFScorer:
    def __init__(self, loaded: Loaded, *, answers: AnswerSpec, prompt_format: str = "raw", batch_size: int = 16):
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        self.loaded = loaded
        self.model = loaded.model
        self.tokenizer = loaded.tokenizer
        self.prompt_format = prompt_format
        self.batch_size = batch_size
        self.default_answers = answers.answer_set()
        self._variants: dict[AnswerSet, Variants] = {}
        self.variants = self.variants_for(None)
        self.variant_texts = [*self.variants.yes, *self.variants.no]
        self.variant_ids = [*self.variants.yes.values(), *self.variants.no.values()]
        tok = self.tokenizer
        self.prefix_id = tok.bos_token_id if tok.bos_token_id is not None else tok.eos_token_id
        pad = tok.pad_token_id if tok.pad_token_id is not None else tok.eos_token_id
        self.pad_id = pad if pad is not None else 0
        self.batch_sizes_run: list[int] = []
        self.oom_backoffs: list[int] = []

    def variants_for(self, answers: AnswerSet | None) -> Variants:
        """The single-token variants of an answer set (the model's yes/no answers when None), cached."""
        answers = answers or self.default_answers
        if answers not in self._variants:
            encode = lambda text: self.tokenizer.encode(text, add_special_tokens=False)  # noqa: E731
            self._variants[answers] = pick_variants(answers, encode)
        return self._variants[answers]

    # --- text → token ids -------------------------------------------------------------------
    def format_prompt(self, text: str) -> str:
        if self.prompt_format == "raw":
            return text
        if self.prompt_format == "chat":
            if not getattr(self.tokenizer, "chat_template", None):
                raise ValueError("This tokenizer has no chat template; use the raw prompt format.")
            question = text.rstrip()
            if question.endswith(ANSWER_CUE):
                question = question[: -len(ANSWER_CUE)].rstrip()
            return self.tokenizer.apply_chat_template(
                [{"role": "user", "content": question}], tokenize=False, add_generation_prompt=True
            )
        raise ValueError(f"Unknown prompt format {self.prompt_format!r} (raw or chat).")

    def encode(self, text: str) -> list[int]:
        ids = self.tokenizer.encode(self.format_prompt(text), add_special_tokens=False)
        if self.prefix_id is not None and (not ids or ids[0] != self.prefix_id):
            ids = [self.prefix_id, *ids]
        if len(ids) < 2:
            raise ValueError("An empty prompt cannot be scored.")
        return ids

    # --- scoring --------------------------------------------------------------------------------
    def score(self, requests: list[Request]) -> list[Result]:
        """Each request is scored on its own answer set (Request.answers), all in one forward pass."""
        encoded = [self.encode(r.text) for r in requests]
        wanted = [self.variants_for(r.answers).token_ids() for r in requests]
        order = sorted(range(len(requests)), key=lambda i: (len(encoded[i]), i))
        results: dict[int, Result] = {}
        start = 0
        while start < len(order):
            size = min(self.batch_size, len(order) - start)
            chunk = order[start : start + size]
            try:
                rows = self._score_batch([encoded[i] for i in chunk], [wanted[i] for i in chunk])
            except torch.OutOfMemoryError:
                self._free_memory()
                if size == 1:
                    raise ModelDoesNotFit(
                        "Out of memory scoring a single prompt; the model does not fit this worker's free memory."
                    ) from None
                self.batch_size = max(1, size // 2)
                self.oom_backoffs.append(self.batch_size)
                continue  # the same prompts again, in half-size batches
            for i, (logprobs, nll_sum, count) in zip(chunk, rows):
                results[i] = Result(key=requests[i].key, logprobs=logprobs, nll_sum=nll_sum, prompt_tokens=count)
            self.batch_sizes_run.append(size)
            start += size
        return [results[i] for i in range(len(requests))]

    def _free_memory(self) -> None:
        if torch.cuda.is_available():
            torch.cuda.empty_cache()

    def _forward(self, input_ids, attention_mask, position_ids):
        """The model's logits; a test subclass may inject failures here."""
        out = self.model(input_ids=input_ids, attention_mask=attention_mask, position_ids=position_ids, use_cache=False)
        return out.logits

    @torch.inference_mode()
    def _score_batch(self, seqs: list[list[int]], wanted: list[dict[str, int]]) -> list[tuple[dict[str, float], float, int]]:
        """`wanted[row]`: variant text → token id whose log p after sequence `row` is returned."""
        width = max(len(s) for s in seqs)
        ids = torch.full((len(seqs), width), self.pad_id, dtype=torch.long)
        mask = torch.zeros((len(seqs), width), dtype=torch.long)
        for row, seq in enumerate(seqs):  # left padding: every sequence ends in the last column
            ids[row, width - len(seq) :] = torch.tensor(seq, dtype=torch.long)
            mask[row, width - len(seq) :] = 1
        positions = (mask.cumsum(-1) - 1).clamp(min=0)
        device = self.loaded.device
        logits = self._forward(ids.to(device), mask.to(device), positions.to(device)).float()
        lse = torch.logsumexp(logits, dim=-1)  # (B, L): log Σ exp over the vocabulary
        columns = sorted({token for row in wanted for token in row.values()})  # the batch's answer tokens
        answer = logits[:, -1, columns] - lse[:, -1:]
        targets = ids[:, 1:].to(logits.device)
        token_logit = logits[:, :-1].gather(-1, targets.unsqueeze(-1)).squeeze(-1)
        nll = lse[:, :-1] - token_logit
        scored = (mask[:, 1:] * mask[:, :-1]).bool().to(logits.device)
        nll_sum = torch.where(scored, nll, torch.zeros_like(nll)).double().sum(-1)
        counts = scored.sum(-1)
        answer = answer.double().cpu().tolist()
        column = {token: j for j, token in enumerate(columns)}
        return [
            ({text: answer[row][column[token]] for text, token in wanted[row].items()},
             float(nll_sum[row]), int(counts[row]))
            for row in range(len(seqs))
        ]
