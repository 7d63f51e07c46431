"""Generation mode for the server and chat backends (issue 28): the same OpenAI-compatible client as
their scoring (client.py: bounded requests in flight per server, retries with backoff, Retry-After).

Each sample is one request (n = 1: llama.cpp's and llama-cpp-python's servers ignore `n`), spread
over the servers in turn: temperature 0 for greedy decoding; for sampled decoding the configuration's
temperature with top_p 1 and a seed per sample (item_seed of the configuration's seed, the item and
the sample), which vLLM and llama.cpp honour. Stop strings and max_tokens go to the server as
given. A chat model's separate reasoning (`reasoning_content`, vLLM's and DeepSeek's field) is
kept as <think>…</think> before the answer, so the parser never reads it.
"""
from __future__ import annotations

from . import client as http
from . import paced
from .base import Done, Generated, GenerationRequest, Stop, cut_at_stop, item_seed, raw_prompt


def _body(request: GenerationRequest, sample: int) -> dict:
    spec = request.sampling
    body = {"max_tokens": spec.max_new_tokens, "n": 1}
    if spec.greedy:
        body["temperature"] = 0.0
    else:
        body.update(temperature=spec.temperature, top_p=1.0, seed=item_seed(spec.seed, f"{request.key}:{sample}"))
    if spec.stop:
        body["stop"] = list(spec.stop)
    return body


def _generated(text: str, choice: dict, answer: dict, spec) -> Generated:
    text, stopped = cut_at_stop(text if isinstance(text, str) else "", spec.stop)
    tokens = (answer.get("usage") or {}).get("completion_tokens") or 0  # checked with the rest (numbers.py)
    tokens = int(tokens) if isinstance(tokens, float) and tokens.is_integer() else tokens
    reason = "length" if choice.get("finish_reason") == "length" and not stopped else "stop"
    return Generated(text=text, tokens=tokens, finish_reason=reason)


async def _samples(jobs: list[tuple[int, int]], requests: list[GenerationRequest], sample, report) -> list:
    """Every (request, sample) job run at once (`sample(n, i, s)` a coroutine); `report(key)` once all of
    a request's samples are written. Each request's samples, in request order."""
    left = [r.sampling.samples for r in requests]

    async def one(n: int, i: int, s: int) -> Generated:
        generated = await sample(n, i, s)
        left[i] -= 1
        if left[i] == 0 and report is not None:
            report(requests[i].key)
        return generated

    done = await http.gather(one(n, i, s) for n, (i, s) in enumerate(jobs))
    out: list[list[Generated]] = [[] for _ in requests]
    for (i, _), generated in zip(jobs, done):
        out[i].append(generated)
    return out


def completions_generate(scorer, requests: list[GenerationRequest], on_done: Done | None = None, *,
                         stop: Stop | None = None) -> list[tuple[str, tuple[Generated, ...]]]:
    """ServerScorer.generate: raw prompts (the start token + the rendered turns) to /v1/completions;
    `on_done(key)` once an item's samples are all written, `stop()` every second or so (paced.py)."""

    async def one(server, prompt: str, request: GenerationRequest, sample: int) -> Generated:
        answer = await server.client.post("/v1/completions", {"model": server.model, "prompt": prompt,
                                                              **_body(request, sample)})
        choice = answer["choices"][0]
        return _generated(choice.get("text", ""), choice, answer, request.sampling)

    def body(report):
        async def each(servers):
            prompts = [scorer.start_token + raw_prompt(r.turns) for r in requests]
            jobs = [(i, s) for i, r in enumerate(requests) for s in range(r.sampling.samples)]
            out = await _samples(jobs, requests, lambda n, i, s: one(servers[n % len(servers)], prompts[i],
                                                                      requests[i], s), report)
            return [(prompts[i], tuple(samples)) for i, samples in enumerate(out)]

        return scorer._session(each)

    return paced.run(body, on_done, stop=stop)


def chat_messages(scorer, turns: tuple[tuple[str, str], ...]) -> list[dict]:
    """The turns as chat messages (each question without its "Answer:" cue, as the chat scorer asks)."""
    messages = [{"role": "system", "content": scorer.system}] if getattr(scorer, "system", "") else []
    for role, text in turns:
        messages.append({"role": role, "content": scorer.question(text) if role == "user" else text.strip()})
    return messages


def chat_generate(scorer, requests: list[GenerationRequest], on_done: Done | None = None, *,
                  stop: Stop | None = None) -> list[tuple[str, tuple[Generated, ...]]]:
    """ChatScorer.generate: the turns as chat messages to /v1/chat/completions; the prompt stored is
    the messages as JSON; `on_done(key)` once an item's samples are all written, `stop()` every second
    or so (paced.py)."""
    import json

    async def one(client, messages: list[dict], request: GenerationRequest, sample: int) -> Generated:
        answer = await client.post("/v1/chat/completions", {"model": scorer.model, "messages": messages,
                                                            **_body(request, sample)})
        if answer.get("model") and hasattr(scorer, "reported_models"):
            scorer.seen(scorer.reported_models, answer["model"])
        choice = answer["choices"][0]
        message = choice.get("message") or {}
        text = message.get("content") or ""
        reasoning = message.get("reasoning_content") or message.get("reasoning") or ""
        if reasoning:  # the provider's separate thinking: kept apart, never parsed
            text = f"<think>{reasoning}</think>{text}"
        return _generated(text, choice, answer, request.sampling)

    async def body(report):
        async with http.ServerClient(scorer.url, concurrency=scorer.concurrency, retries=scorer.retries,
                                     timeout=scorer.timeout, api_key=scorer._api_key, usage=scorer.usage) as client:
            messages = [chat_messages(scorer, r.turns) for r in requests]
            jobs = [(i, s) for i, r in enumerate(requests) for s in range(r.sampling.samples)]
            out = await _samples(jobs, requests, lambda n, i, s: one(client, messages[i], requests[i], s), report)
        return [(json.dumps(messages[i], ensure_ascii=False), tuple(samples)) for i, samples in enumerate(out)]

    return paced.run(body, on_done, stop=stop)
