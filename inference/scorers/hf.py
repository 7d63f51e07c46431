"""The Hugging Face scorer: answer variants scored as continuations of the prompt, the prompt's
perplexity and the vocabulary's top next token. torch is imported here and in loading.py only.

One forward pass per prompt gives the log-probabilities at every position: the prompt's perplexity
(its counted positions), the top token and every one-token variant (the last position). A variant
of two or more tokens is finished teacher-forced on the prompt's key/value cache: its tokens but
the last are fed after the prompt (the prompt is not run again), in batches like the prompts, and
the log-probabilities of its tokens are summed.

Sequences are sorted by length and cut into batches (length buckets), left-padded with an attention
mask and explicit position ids, so a batched prompt is scored exactly as it would be alone. Every
sequence starts with the tokenizer's start token (BOS, else EOS; the convention of lm-evaluation-
harness's rolling log-likelihood), so each of the prompt's N tokens has a probability:
perplexity = exp(−1/N Σ log p(x_i | x_<i)) as in paper 003. After a chat template, N counts only
the tokens lying wholly inside the item's own text; the template's tokens condition but are not
counted.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from .base import AnswerSet, Request, Result, Variants, plan_variants
from .loading import Loaded, ModelDoesNotFit

ANSWER_CUE = "Answer:"


@dataclass(frozen=True)
class Prepared:
    ids: list[int]  # start token + the formatted prompt's tokens
    counted: list[bool]  # counted[i]: token i's NLL goes into the perplexity (never the start token)
    variants: Variants


class HFScorer:
    name = "hf"

    def __init__(self, loaded: Loaded, *, answers: AnswerSet, prompt_format: str = "raw", batch_size: int = 16):
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        if prompt_format not in ("raw", "chat"):
            raise ValueError(f"Unknown prompt format {prompt_format!r} (raw or chat).")
        self.loaded = loaded
        self.model = loaded.model
        self.tokenizer = loaded.tokenizer
        self.prompt_format = prompt_format
        self.batch_size = batch_size
        self.default_answers = answers
        tok = self.tokenizer
        self.prefix_id = tok.bos_token_id if tok.bos_token_id is not None else tok.eos_token_id
        pad = tok.pad_token_id if tok.pad_token_id is not None else tok.eos_token_id
        self.pad_id = pad if pad is not None else 0
        self.batch_sizes_run: list[int] = []
        self.continuation_rows: int = 0  # variants of 2+ tokens finished on the cache
        self.oom_backoffs: list[int] = []

    def describe(self) -> dict:
        from .loading import versions

        return {**versions(self.loaded), "prompt_format": self.prompt_format}

    # --- text → token ids -------------------------------------------------------------------
    def format_prompt(self, text: str) -> tuple[str, tuple[int, int]]:
        """The text the model reads and the character span of the item's own text inside it."""
        if self.prompt_format == "raw":
            return text, (0, len(text))
        if not getattr(self.tokenizer, "chat_template", None):
            raise ValueError("This tokenizer has no chat template; use the raw prompt format.")
        question = text.rstrip()
        if question.endswith(ANSWER_CUE):
            question = question[: -len(ANSWER_CUE)].rstrip()
        formatted = self.tokenizer.apply_chat_template(
            [{"role": "user", "content": question}], tokenize=False, add_generation_prompt=True
        )
        start = formatted.rfind(question)
        if start < 0:
            raise ValueError("The chat template rewrites the item's text, so its tokens cannot be told from the "
                             "template's for the perplexity; use the raw prompt format.")
        return formatted, (start, start + len(question))

    def _with_prefix(self, ids: list[int], counted: list[bool]) -> tuple[list[int], list[bool]]:
        if self.prefix_id is not None and (not ids or ids[0] != self.prefix_id):
            return [self.prefix_id, *ids], [False, *counted]
        return ids, [False, *counted[1:]]

    def prepare(self, requests: list[Request]) -> list[Prepared]:
        """Tokenise each prompt, mark the tokens its perplexity counts, and choose its variants."""
        formatted = [self.format_prompt(r.text) for r in requests]
        answer_sets = [r.answers or self.default_answers for r in requests]
        forms = [[text for form in a.surface_forms() for text in form] for a in answer_sets]
        texts = [f for f, _ in formatted] + [f + t for (f, _), fs in zip(formatted, forms) for t in fs]
        chat = self.prompt_format == "chat"
        encoded = self.tokenizer(texts, add_special_tokens=False, return_offsets_mapping=chat)
        all_ids = encoded["input_ids"]
        out: list[Prepared] = []
        at = len(requests)
        for n, ((_, (lo, hi)), answer_set) in enumerate(zip(formatted, answer_sets)):
            ids = list(all_ids[n])
            if chat:
                counted = [lo <= a and b <= hi and b > a for a, b in encoded["offset_mapping"][n]]
            else:
                counted = [True] * len(ids)
            whole = {text: all_ids[at + j] for j, text in enumerate(forms[n])}
            at += len(forms[n])
            variants = plan_variants(answer_set, lambda text, whole=whole, k=len(ids): tuple(whole[text][k:]))
            ids, counted = self._with_prefix(ids, counted)
            if len(ids) < 2:
                raise ValueError("An empty prompt cannot be scored.")
            out.append(Prepared(ids=ids, counted=counted, variants=variants))
        return out

    def encode(self, text: str) -> list[int]:
        return self.prepare([Request(key=0, text=text)])[0].ids

    # --- scoring --------------------------------------------------------------------------------
    def score(self, requests: list[Request]) -> list[Result]:
        """Each request is scored on its own answer set (Request.answers), in length-bucketed batches."""
        prepared = self.prepare(requests)
        order = sorted(range(len(requests)), key=lambda i: (len(prepared[i].ids), i))
        results: dict[int, Result] = {}
        start = 0
        while start < len(order):
            size = min(self.batch_size, len(order) - start)
            chunk = order[start : start + size]
            try:
                rows = self._score_batch([prepared[i] for i in chunk])
            except torch.OutOfMemoryError:
                self._free_memory()
                if size == 1:
                    raise ModelDoesNotFit(
                        "Out of memory scoring a single prompt; the model does not fit this worker's free memory."
                    ) from None
                self.batch_size = max(1, size // 2)
                self.oom_backoffs.append(self.batch_size)
                continue  # the same prompts again, in half-size batches
            for i, row in zip(chunk, rows):
                results[i] = Result(key=requests[i].key, variants=prepared[i].variants, **row)
            self.batch_sizes_run.append(size)
            start += size
        return [results[i] for i in range(len(requests))]

    def _free_memory(self) -> None:
        if torch.cuda.is_available():
            torch.cuda.empty_cache()

    def _forward(self, input_ids, attention_mask, position_ids, past_key_values=None, use_cache=False):
        """The model's output; a test subclass may inject failures here."""
        return self.model(input_ids=input_ids, attention_mask=attention_mask, position_ids=position_ids,
                          past_key_values=past_key_values, use_cache=use_cache)

    @torch.inference_mode()
    def _score_batch(self, batch: list[Prepared]) -> list[dict]:
        width = max(len(p.ids) for p in batch)
        ids = torch.full((len(batch), width), self.pad_id, dtype=torch.long)
        mask = torch.zeros((len(batch), width), dtype=torch.long)
        counted = torch.zeros((len(batch), width), dtype=torch.bool)
        for row, p in enumerate(batch):  # left padding: every sequence ends in the last column
            ids[row, width - len(p.ids) :] = torch.tensor(p.ids, dtype=torch.long)
            mask[row, width - len(p.ids) :] = 1
            counted[row, width - len(p.ids) :] = torch.tensor(p.counted)
        positions = (mask.cumsum(-1) - 1).clamp(min=0)
        device = self.loaded.device
        longer = [(row, text, tokens) for row, p in enumerate(batch)
                  for v in p.variants.by_label.values() for text, tokens in v.items() if len(tokens) > 1]
        out = self._forward(ids.to(device), mask.to(device), positions.to(device), use_cache=bool(longer))
        logits = out.logits.float()
        lse = torch.logsumexp(logits, dim=-1)  # (B, L): log Σ exp over the vocabulary
        last = logits[:, -1] - lse[:, -1:]  # log p(next token | prompt)
        top_logp, top_id = last.max(dim=-1)
        targets = ids[:, 1:].to(logits.device)
        nll = lse[:, :-1] - logits[:, :-1].gather(-1, targets.unsqueeze(-1)).squeeze(-1)
        scored = counted[:, 1:].to(logits.device)
        nll_sum = torch.where(scored, nll, torch.zeros_like(nll)).double().sum(-1).tolist()
        counts = scored.sum(-1).tolist()
        first = sorted({tokens[0] for p in batch for v in p.variants.by_label.values() for tokens in v.values()})
        column = {token: j for j, token in enumerate(first)}
        first_logp = last[:, first].double().cpu().tolist()
        rest = self._continue(out.past_key_values, mask, longer) if longer else {}
        top_id, top_logp = top_id.tolist(), top_logp.tolist()
        rows = []
        for row, p in enumerate(batch):
            logprobs = {text: first_logp[row][column[tokens[0]]] + rest.get((row, text), 0.0)
                        for v in p.variants.by_label.values() for text, tokens in v.items()}
            rows.append({"logprobs": logprobs, "nll_sum": float(nll_sum[row]), "prompt_tokens": int(counts[row]),
                         "top_token_id": int(top_id[row]), "top_token": self.tokenizer.decode([top_id[row]]),
                         "top_logprob": float(top_logp[row]),
                         "first_token_logprobs": {tokens[0]: first_logp[row][column[tokens[0]]]
                                                  for v in p.variants.by_label.values() for tokens in v.values()}})
        return rows

    def _continue(self, cache, mask, longer: list[tuple[int, str, tuple[int, ...]]]) -> dict[tuple[int, str], float]:
        """Σ log p(token_j | prompt, tokens before j) for j ≥ 1 of each variant of 2+ tokens: its tokens
        but the last are fed after the prompt on a copy of the prompt's cache rows, right-padded."""
        layers = getattr(cache, "layers", None)
        if layers is None or any(not hasattr(layer, "keys") for layer in layers):
            raise ValueError("This model's key/value cache cannot be reused to score answers of several tokens.")
        saved = [(layer.keys, layer.values) for layer in layers]
        device = self.loaded.device
        prompt_len = mask.sum(-1)
        found: dict[tuple[int, str], float] = {}
        for start in range(0, len(longer), self.batch_size):
            part = longer[start : start + self.batch_size]
            extra = max(len(t) for _, _, t in part) - 1
            feed = torch.full((len(part), extra), self.pad_id, dtype=torch.long)
            feed_mask = torch.zeros((len(part), extra), dtype=torch.long)
            for n, (_, _, tokens) in enumerate(part):
                feed[n, : len(tokens) - 1] = torch.tensor(tokens[:-1])
                feed_mask[n, : len(tokens) - 1] = 1
            rows = torch.tensor([row for row, _, _ in part])
            for layer, (keys, values) in zip(layers, saved):
                layer.keys = keys.index_select(0, rows.to(keys.device))
                layer.values = values.index_select(0, rows.to(values.device))
            attention = torch.cat([mask[rows], feed_mask], dim=-1)
            positions = prompt_len[rows].unsqueeze(-1) + torch.arange(extra).unsqueeze(0)
            logits = self._forward(feed.to(device), attention.to(device), positions.to(device),
                                   past_key_values=cache, use_cache=True).logits.float()
            logp = torch.log_softmax(logits, dim=-1)
            for n, (row, text, tokens) in enumerate(part):
                want = torch.tensor(tokens[1:], device=logp.device)
                found[row, text] = float(logp[n, : len(tokens) - 1].gather(-1, want.unsqueeze(-1)).double().sum())
            self.continuation_rows += len(part)
        for layer, (keys, values) in zip(layers, saved):
            layer.keys, layer.values = keys, values
        return found
