"""A deterministic scorer without a model, for tests of what surrounds a scorer (runs, resuming,
reports): no torch, no weights, the same numbers for the same prompt every time.

Its "tokenizer" writes each character as one token (its code point), so " Yes" is four tokens and
every variant takes the multi-token path of the maths. Its "model" gives each variant a
log-probability from a hash of (source, prompt, variant), and each prompt character a NLL of
1 + (its code point mod 7) / 10; the top token is the first token of the likeliest variant.
"""
from __future__ import annotations

import hashlib
import math

from .base import (
    AnswerSet, Generated, GenerationRequest, LoadConfig, Request, Result, cut_at_stop, item_seed, plan_variants, raw_prompt,
)

# What the fake "model" writes in generation mode: a yes, a no, a letter, an answer no parser reads, a
# thinking model's answer (chosen by a hash of the prompt, the seed and the sample).
FAKE_ANSWERS = ("Yes. The premises give it.", "No, it does not follow.\nAnswer: No", "B) is the one.",
                "It depends on the reading.", "<think>Both premises hold, so</think>Yes")


class FakeScorer:
    name = "fake"
    distribution = False  # its log-probabilities are hashes, not one distribution (numbers.py checks the rest)

    def __init__(self, config: LoadConfig, *, answers: AnswerSet, prompt_format: str = "raw", batch_size: int = 16):
        if prompt_format not in ("raw", "chat"):
            raise ValueError(f"Unknown prompt format {prompt_format!r} (raw or chat).")
        self.config, self.default_answers, self.prompt_format = config, answers, prompt_format
        self.batch_size = batch_size
        self.calls: list[int] = []  # how many requests each score() call got

    def describe(self) -> dict:
        return {"scorer": "fake", "prompt_format": self.prompt_format, "device": "cpu", "dtype": self.config.dtype,
                "files": {}}

    def _logp(self, prompt: str, text: str) -> float:
        digest = hashlib.sha256(f"{self.config.source}|{self.prompt_format}|{prompt}|{text}".encode()).digest()
        return -0.5 - 6.0 * int.from_bytes(digest[:4], "big") / 2**32

    def score(self, requests: list[Request], on_done=None, stop=None) -> list[Result]:
        self.calls.append(len(requests))
        out = []
        for request in requests:
            if stop is not None:
                stop()
            variants = plan_variants(request.answers or self.default_answers, lambda t: tuple(ord(c) for c in t))
            logprobs = {text: self._logp(request.text, text) for v in variants.by_label.values() for text in v}
            best = max(logprobs, key=logprobs.get)
            out.append(Result(
                key=request.key, variants=variants, logprobs=logprobs,
                nll_sum=math.fsum(1 + (ord(c) % 7) / 10 for c in request.text), prompt_tokens=len(request.text),
                top_token_id=ord(best[0]), top_token=best[0], top_logprob=logprobs[best],
                first_token_logprobs={ord(t[0]): max(p for u, p in logprobs.items() if u[0] == t[0]) for t in logprobs},
            ))
            if on_done is not None:
                on_done(request.key)
        return out

    def generate(self, requests: list[GenerationRequest], on_done=None,
                 stop=None) -> list[tuple[str, tuple[Generated, ...]]]:
        out = []
        for request in requests:
            if stop is not None:
                stop()
            prompt = raw_prompt(request.turns)
            spec = request.sampling
            samples = []
            for n in range(spec.samples):
                pick = hashlib.sha256(f"{self.config.source}|{prompt}|{item_seed(spec.seed, request.key)}|{n}"
                                      f"|{spec.greedy}".encode()).digest()[0] % len(FAKE_ANSWERS)
                text, stopped = cut_at_stop(FAKE_ANSWERS[pick][: spec.max_new_tokens], spec.stop)
                long = len(FAKE_ANSWERS[pick]) > spec.max_new_tokens
                samples.append(Generated(text=text, tokens=len(text), finish_reason="length" if long and not stopped
                                         else "stop"))
            out.append((prompt, tuple(samples)))
            if on_done is not None:
                on_done(request.key)
        return out
