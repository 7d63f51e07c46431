"""The hosted-chat scorer: p(Yes) and p(No) from the top log-probabilities of a chat model's first
answer token (OpenAI-compatible chat completions with `logprobs` and `top_logprobs`).

Hosted chat APIs give no prompt log-probabilities and no tokenizer, so:

* the item's question goes in the user turn (the "Answer:" cue dropped, as hf.py's chat format) and
  one token is generated greedily (temperature 0, max_tokens 1), with the top k alternatives;
* p(Yes) sums the probabilities of the yes forms found among those k (every surface form of the
  configuration's answer forms, compared as text, exactly), p(No) likewise; a form outside the top k
  counts 0, so p(Yes) and p(No) are lower bounds, and what the k leave uncovered, 1 − Σ top-k, is
  stored per score as `outside_top_k` (the report states it);
* two of the k with the same text (two tokens that decode alike, e.g. a word and its byte-level
  spelling) are two disjoint events with that text, so the text's probability is their sum:
  log p(text) = log(e^a + e^b) (`merged`); the k entries' total is unchanged by this;
* there is no perplexity (prompt_tokens 0, perplexity NaN): the report says so and fits Eq. 4 for
  these configurations without its perplexity term;
* a score's "token ids" are the forms' positions in the answer forms (the API has no token ids);
  the top-token decision reads the generated token's text against them.

API keys come from the environment (services.api_key), held masked (outbound.Credential) and written only
into request headers.
"""
from __future__ import annotations

import math

from . import client as http
from . import metadata, paced
from .base import AnswerSet, Done, Request, Result, Stop, Variants
from .numbers import BadAnswer

SEEN_MAX = 20  # distinct model names and fingerprints a run's record keeps

ANSWER_CUE = "Answer:"
TOP_K = 20  # OpenAI's most; a server that allows fewer is asked for what it allows (its error says)


class ChatScorer:
    name = "chat"

    def __init__(self, *, url: str, model: str, answers: AnswerSet, prompt_format: str = "chat",
                 concurrency: int = 4, api_key: str = "", top_k: int = TOP_K, retries: int = 6,
                 timeout: float = 120.0, system: str = ""):
        if not model:
            raise ValueError("A chat configuration names the provider's model.")
        self.url, self.model, self.default_answers = url.rstrip("/"), model, answers
        self.prompt_format, self.concurrency, self.top_k = prompt_format, concurrency, top_k
        self.retries, self.timeout, self.system = retries, timeout, system
        self._api_key = http.outbound.credential(api_key)  # held masked (common/outbound.py)
        self.usage = http.Usage()
        self.reported_models: set[str] = set()
        self.fingerprints: set[str] = set()

    def describe(self) -> dict:
        return {
            "scorer": "chat", "url": self.url, "model": self.model, "top_k": self.top_k,
            "reported_models": sorted(self.reported_models), "system_fingerprints": sorted(self.fingerprints),
            "protocol": "chat completions: max_tokens=1, temperature 0, logprobs + top_logprobs",
            "perplexity": "none (a chat API gives no prompt log-probabilities)",
            "concurrency": self.concurrency, "dtype": "the provider's", "device": "the provider's", "files": {},
        }

    def usage_json(self) -> dict:
        return {**self.usage.as_json(), "reported_models": sorted(self.reported_models)}

    @staticmethod
    def question(text: str) -> str:
        question = text.rstrip()
        if question.endswith(ANSWER_CUE):
            question = question[: -len(ANSWER_CUE)].rstrip()
        return question

    def score(self, requests: list[Request], on_done: Done | None = None, stop: Stop | None = None) -> list[Result]:
        """`on_done(key)` as each request is answered (paced.py: the run's progress per item); `stop()`
        every second or so while requests are in flight (it raises to stop them: a cancelled run)."""
        return paced.run(lambda report: self._score(requests, report), on_done, stop=stop)

    async def _score(self, requests: list[Request], report=None) -> list[Result]:
        async def one(client, request: Request) -> Result:
            try:
                result = await self._one(client, request)
            except http.ServerError as exc:
                raise BadAnswer(request.key, str(exc)) from None
            except (KeyError, IndexError, TypeError, ValueError, AttributeError) as exc:
                if isinstance(exc, BadAnswer):
                    raise
                raise BadAnswer(request.key, f"the chat API's answer could not be read ({type(exc).__name__}: "
                                             f"{metadata.capped(str(exc))})") from None
            if report is not None:
                report(request.key)
            return result

        async with http.ServerClient(self.url, concurrency=self.concurrency, retries=self.retries,
                                     timeout=self.timeout, api_key=self._api_key, usage=self.usage) as client:
            return await http.gather(one(client, r) for r in requests)

    def seen(self, names: set[str], value) -> None:
        """Keep a model name or fingerprint the provider reported (capped: metadata.py)."""
        if len(names) < SEEN_MAX:
            names.add(metadata.capped(str(value)))

    async def _one(self, client: http.ServerClient, request: Request) -> Result:
        messages = [{"role": "system", "content": self.system}] if self.system else []
        messages.append({"role": "user", "content": self.question(request.text)})
        body = {"model": self.model, "messages": messages, "max_tokens": 1, "temperature": 0.0,
                "logprobs": True, "top_logprobs": self.top_k}
        answer = await client.post("/v1/chat/completions", body)
        if answer.get("model"):
            self.seen(self.reported_models, answer["model"])
        if answer.get("system_fingerprint"):
            self.seen(self.fingerprints, answer["system_fingerprint"])
        content = ((answer["choices"][0].get("logprobs") or {}).get("content")) or []
        if not content:
            raise http.ServerError(f"The chat API at {self.url} returned no logprobs for model {self.model!r}; "
                                   "this model cannot be scored by probability.")
        first = content[0]
        top = self.merged((str(entry["token"]), float(entry["logprob"])) for entry in first.get("top_logprobs") or [])
        top.setdefault(str(first["token"]), float(first["logprob"]))
        return self.result(request, top, str(first["token"]), float(first["logprob"]))

    @staticmethod
    def merged(entries) -> dict[str, float]:
        """text → log p of the top-k entries, two entries with the same text summed: log(e^a + e^b),
        computed as max + log1p(e^(min − max)) (no underflow). A value that is not a log-probability is
        kept as given, for the run's check to name (numbers.py)."""
        top: dict[str, float] = {}
        for text, value in entries:
            if text not in top:
                top[text] = value
                continue
            a, b = top[text], value
            if not (math.isfinite(a) and math.isfinite(b)):
                top[text] = a if not math.isfinite(a) else b
                continue
            high, low = max(a, b), min(a, b)
            top[text] = high + math.log1p(math.exp(low - high))
        return top

    def result(self, request: Request, top: dict[str, float], token: str, logprob: float) -> Result:
        """A Result from the first answer token's top-k (text → log p)."""
        answer_set = request.answers or self.default_answers
        forms = answer_set.surface_forms()
        position = {text: n for n, form in enumerate(forms) for text in form}
        by_label: dict[str, dict[str, tuple[int, ...]]] = {label: {} for label in answer_set.labels}
        for form in forms:
            for label, text in zip(answer_set.labels, form, strict=True):
                if text in top and text not in by_label[label]:
                    by_label[label][text] = (position[text] * len(answer_set.labels) + answer_set.labels.index(label),)
        missing = tuple((form, "not among the top k") for form in forms
                        if not any(t in top for t in form))
        variants = Variants(by_label=by_label, dropped=missing)
        logprobs = {text: top[text] for v in by_label.values() for text in v}
        ids = {text: tokens[0] for v in by_label.values() for text, tokens in v.items()}
        covered = math.fsum(math.exp(min(v, 1.0)) for v in top.values())  # (a bad value is named by numbers.py)
        return Result(
            key=request.key, variants=variants, logprobs=logprobs, nll_sum=0.0, prompt_tokens=0,
            top_token_id=ids.get(token, -1), top_token=token, top_logprob=logprob,
            first_token_logprobs={ids[t]: lp for t, lp in logprobs.items()},
            outside_top_k=1.0 - covered,  # checked (numbers.py): within float error of [0, 1], then clamped
            top_k_logprobs=dict(top),
        )

    def generate(self, requests, on_done: Done | None = None, stop: Stop | None = None):
        """Generation mode (remote_generation.py): each sample one chat completion; thinking the provider
        returns apart is kept apart."""
        from .remote_generation import chat_generate

        return chat_generate(self, requests, on_done, stop=stop)

