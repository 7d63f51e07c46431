"""The Hugging Face scorer: answer variants scored as continuations of the prompt, the prompt's
perplexity and the vocabulary's top next token. torch is imported here and in loading.py only.

One forward pass per prompt gives the log-probabilities at every position: the prompt's perplexity
(its counted positions), the top token and every one-token variant (the last position). Variants
of two or more tokens are finished teacher-forced on the prompts' key/value cache, in one more
forward pass per batch: each prompt's variants' tokens but the last are fed after it as a tree (a
shared prefix once), each token attending to the prompt and to the tokens before it in its own
variant only, and the log-probabilities of a variant's tokens are summed.

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

from .base import (
    AnswerSet, Generated, GenerationRequest, Request, Result, Variants, cut_at_stop, item_seed, plan_variants, raw_prompt,
)
from .loading import Loaded, ModelDoesNotFit

ANSWER_CUE = "Answer:"


def _logsumexp(logits):
    """log Σ exp over the last dimension. On CPU in slices of about a mebibyte, which stay in the
    processor's cache (over twice as fast on SmolLM2's (16, 70, 49152) logits); every position's
    value is computed alone either way."""
    if logits.device.type != "cpu":
        return torch.logsumexp(logits, dim=-1)
    flat = logits.reshape(-1, logits.shape[-1])
    step = max(1, (1 << 18) // logits.shape[-1])
    slices = [torch.logsumexp(flat[i : i + step], dim=-1) for i in range(0, flat.shape[0], step)]
    return torch.cat(slices).view(logits.shape[:-1])


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
    def score(self, requests: list[Request], on_done=None, stop=None) -> list[Result]:
        """Each request is scored on its own answer set (Request.answers), in length-bucketed batches;
        `on_done(key)` for each request of a batch as the batch is done, `stop()` before each batch."""
        prepared = self.prepare(requests)
        order = sorted(range(len(requests)), key=lambda i: (len(prepared[i].ids), i))
        results: dict[int, Result] = {}
        start = 0
        while start < len(order):
            if stop is not None:
                stop()
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
                if on_done is not None:
                    on_done(requests[i].key)
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
        lse = _logsumexp(logits)  # (B, L): log Σ exp over the vocabulary
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
        """Σ log p(token_j | prompt, tokens before j) for j ≥ 1 of each variant of 2+ tokens, in one more
        forward pass on the prompts' key/value cache.

        Each prompt's variants are fed after it as one tree: a node for every distinct prefix of their
        tokens but the last (" YES" = ▁ Y E S feeds ▁, ▁Y, ▁YE; " NO" = ▁ N O shares ▁), each node at
        the position its token has in prompt + variant and attending to the prompt and to its own
        ancestors only (a 4D attention mask), so every node sees exactly what it would see in
        prompt + variant alone; log p(token_j) is read at the node of the tokens before it."""
        layers = getattr(cache, "layers", None)
        implementation = getattr(self.model.config, "_attn_implementation", None)
        reusable = layers is not None and all(hasattr(layer, "keys") for layer in layers)
        if not reusable or implementation not in ("sdpa", "eager"):  # a 4D mask is used as given by these two
            raise ValueError("This model's key/value cache or attention cannot be reused to score answers of several "
                             f"tokens (attention {implementation!r}; sdpa or eager is needed).")
        trees: dict[int, dict[tuple[int, ...], int]] = {}  # prompt row → {prefix fed → its node}
        for row, _, tokens in longer:
            nodes = trees.setdefault(row, {})
            for j in range(1, len(tokens)):
                nodes.setdefault(tokens[:j], len(nodes))
        rows = sorted(trees)
        size = max(map(len, trees.values()))
        width = mask.shape[-1]
        window = getattr(self.model.config, "sliding_window", None)
        if window is not None and width + size > window:
            raise ValueError(f"Prompts of {width} tokens exceed this model's sliding attention window ({window}).")
        prompt_len = mask.sum(-1).tolist()
        feed = [[self.pad_id] * size for _ in rows]
        positions = [[0] * size for _ in rows]
        allowed = torch.zeros((len(rows), size, width + size), dtype=torch.bool)
        allowed[:, :, :width] = mask[rows].bool().unsqueeze(1)
        allowed[:, :, width:] = torch.eye(size, dtype=torch.bool)  # every node sees itself (padding too)
        for n, row in enumerate(rows):
            for prefix, node in trees[row].items():
                feed[n][node] = prefix[-1]
                positions[n][node] = prompt_len[row] + len(prefix) - 1
                for j in range(1, len(prefix)):
                    allowed[n, node, width + trees[row][prefix[:j]]] = True
        if rows != list(range(mask.shape[0])):
            index = torch.tensor(rows)
            for layer in layers:
                layer.keys = layer.keys.index_select(0, index.to(layer.keys.device))
                layer.values = layer.values.index_select(0, index.to(layer.values.device))
        dtype = self.model.dtype
        additive = torch.zeros(allowed.shape, dtype=dtype).masked_fill_(~allowed, torch.finfo(dtype).min).unsqueeze(1)
        device = self.loaded.device
        logits = self._forward(torch.tensor(feed, device=device), additive.to(device),
                               torch.tensor(positions, device=device), past_key_values=cache, use_cache=True).logits
        logp = torch.log_softmax(logits.float(), dim=-1)
        where = {row: n for n, row in enumerate(rows)}
        picks = [(where[row], trees[row][tokens[:j]], tokens[j])  # (row, node of the tokens before j, token j)
                 for row, _, tokens in longer for j in range(1, len(tokens))]
        at = torch.tensor(picks, device=logp.device)
        values = logp[at[:, 0], at[:, 1], at[:, 2]].double().tolist()
        found: dict[tuple[int, str], float] = {}
        k = 0
        for row, text, tokens in longer:
            found[row, text] = sum(values[k : k + len(tokens) - 1])
            k += len(tokens) - 1
        self.continuation_rows += len(longer)
        return found

    # --- generation mode ------------------------------------------------------------------------
    def generation_prompt(self, turns: tuple[tuple[str, str], ...]) -> str:
        """The text the model continues: the turns joined (raw) or through the chat template, each
        question without a trailing answer cue (as format_prompt does)."""
        if self.prompt_format == "raw":
            return raw_prompt(turns)
        if not getattr(self.tokenizer, "chat_template", None):
            raise ValueError("This tokenizer has no chat template; use the raw prompt format.")
        messages = []
        for role, text in turns:
            text = text.rstrip()
            if role == "user" and text.endswith(ANSWER_CUE):
                text = text[: -len(ANSWER_CUE)].rstrip()
            messages.append({"role": role, "content": text})
        return self.tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)

    def _prompt_ids(self, text: str) -> list[int]:
        ids = list(self.tokenizer(text, add_special_tokens=False)["input_ids"])
        return self._with_prefix(ids, [True] * len(ids))[0]

    def _stop_ids(self) -> set[int]:
        found = self.model.generation_config.eos_token_id
        ids = set(found if isinstance(found, list) else [found]) if found is not None else set()
        if self.tokenizer.eos_token_id is not None:
            ids.add(self.tokenizer.eos_token_id)
        return ids

    def _finish(self, new_ids: list[int], spec) -> Generated:
        stops = self._stop_ids()
        ended = next((i for i, t in enumerate(new_ids) if t in stops), None)
        kept = new_ids if ended is None else new_ids[:ended]
        text, stopped = cut_at_stop(self.tokenizer.decode(kept, skip_special_tokens=False), spec.stop)
        if stopped:
            kept_tokens = len(self.tokenizer(text, add_special_tokens=False)["input_ids"]) if text else 0
        else:
            kept_tokens = len(kept)
        reason = "stop" if stopped or ended is not None else "length"
        return Generated(text=text, tokens=kept_tokens, finish_reason=reason)

    @torch.inference_mode()
    def generate(self, requests: list[GenerationRequest], on_done=None,
                 stop=None) -> list[tuple[str, tuple[Generated, ...]]]:
        """Greedy requests in left-padded batches; sampled ones one item at a time, seeded by the
        configuration's seed and the item (item_seed), with n = num_return_sequences; `on_done(key)`
        as each item's samples are written, `stop()` before each batch or item."""
        prompts = [self.generation_prompt(r.turns) for r in requests]
        out: dict[int, tuple[Generated, ...]] = {}
        greedy = [i for i, r in enumerate(requests) if r.sampling.greedy]
        for start in range(0, len(greedy), self.batch_size):
            if stop is not None:
                stop()
            chunk = greedy[start : start + self.batch_size]
            rows = self._generate([self._prompt_ids(prompts[i]) for i in chunk], requests[chunk[0]].sampling, n=1)
            for i, row in zip(chunk, rows):
                out[i] = (row,)
                if on_done is not None:
                    on_done(requests[i].key)
        for i, request in enumerate(requests):
            if not request.sampling.greedy:
                if stop is not None:
                    stop()
                torch.manual_seed(item_seed(request.sampling.seed, request.key))
                out[i] = tuple(self._generate([self._prompt_ids(prompts[i])], request.sampling,
                                              n=request.sampling.samples))
                if on_done is not None:
                    on_done(request.key)
        return [(prompts[i], out[i]) for i in range(len(requests))]

    def _generate(self, batch: list[list[int]], spec, *, n: int) -> list[Generated]:
        width = max(map(len, batch))
        ids = torch.full((len(batch), width), self.pad_id, dtype=torch.long)
        mask = torch.zeros((len(batch), width), dtype=torch.long)
        for row, p in enumerate(batch):
            ids[row, width - len(p):] = torch.tensor(p, dtype=torch.long)
            mask[row, width - len(p):] = 1
        options = {"max_new_tokens": spec.max_new_tokens, "pad_token_id": self.pad_id, "num_return_sequences": n}
        if spec.greedy:
            options.update(do_sample=False, temperature=None, top_p=None, top_k=None)
        else:  # plain sampling at the temperature: no top-k or top-p from the model's generation config
            options.update(do_sample=True, temperature=spec.temperature, top_p=1.0, top_k=0)
        if spec.stop:
            options.update(stop_strings=list(spec.stop), tokenizer=self.tokenizer)
        device = self.loaded.device
        produced = self.model.generate(input_ids=ids.to(device), attention_mask=mask.to(device), **options)
        return [self._finish(row[width:].tolist(), spec) for row in produced]
