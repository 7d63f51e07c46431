"""The inference-server scorer: the quantities hf.py documents, read from an OpenAI-compatible
completions server (vLLM, SGLang, llama.cpp's server, llama-cpp-python's, TGI).

Per prompt (the configuration's start token + the item's text, raw prompt format):

* the server tokenizes (its tokenize endpoint: llama-cpp-python's /extras/tokenize, vLLM's and
  SGLang's /tokenize, llama.cpp's /tokenize); the variants are chosen by the continuation rule of
  base.plan_variants on the server's tokens: a variant's tokens are those of prompt + variant after
  the prompt's own. A server without a tokenize endpoint is refused unless a local tokenizer is
  given (`tokenizer`), which must then count the prompt's tokens as the server does (checked on
  every prompt against the server's `usage.prompt_tokens`).
* one completion with `echo` and `logprobs=1` (`max_tokens=1`, temperature 0) gives every prompt
  token's log-probability given the tokens before it (the perplexity, over the tokens after the
  start token) and the top next token (the largest entry of the last position's top_logprobs);
* each one-token variant: one short completion of the prompt with `logit_bias` forcing that token,
  which returns its log-probability before the bias (checked once per scorer against an echoed
  prompt + variant; a server whose log-probabilities include the bias is scored by echo alone);
* each variant of two or more tokens: one echoed completion of prompt + variant, its tokens'
  log-probabilities summed (lm-evaluation-harness's `local-completions` loglikelihood).

A server that gives the first token after the start token no log-probability (llama-cpp-python
returns null for the first echoed token) has that one filled by a forced one-token completion of
the start token alone, remembered per first token. Requests run concurrently (each server its own
bound on requests in flight, client.py); prompts are spread over the servers in turn, a few per
request slot under way at once and taken in order, so that they finish one by one (the run's
progress moves with each) and a cancelled run has little in flight to drop.
"""
from __future__ import annotations

import asyncio
import math
from dataclasses import dataclass, field

from . import client as http
from . import metadata, paced
from .base import AnswerSet, Done, Request, Result, Stop, Variants, plan_variants
from .numbers import BadAnswer

FORCE = 100.0  # logit_bias that makes a token the greedy choice
AGREE = 1e-4  # the bias check: log p read both ways agree within this
ITEMS_AT_ONCE = 2  # requests under way at once per server, per request it may have in flight (concurrency)


class NoTokenizer(RuntimeError):
    pass


@dataclass
class _Server:
    client: http.ServerClient
    model: str = ""
    tokenize_path: str = ""
    info: dict = field(default_factory=dict)


@dataclass(frozen=True)
class _Prepared:
    server: int
    prompt: str
    ids: list[int]
    start: int  # how many leading tokens are the start token (conditioned on, never counted)
    variants: Variants


class ServerScorer:
    name = "server"

    def __init__(self, *, urls: list[str], model: str = "", answers: AnswerSet, prompt_format: str = "raw",
                 start_token: str = "", concurrency: int = 4, api_key: str = "", tokenizer=None,
                 retries: int = 5, timeout: float = 300.0):
        if not urls:
            raise ValueError("A server configuration needs at least one server URL.")
        if prompt_format != "raw":
            raise ValueError("The server scorer reads raw prompts only (a chat template is the server's own): use "
                             "the raw prompt format, or the chat backend for chat models.")
        self.urls = [u.rstrip("/") for u in urls]
        self.model, self.default_answers, self.prompt_format = model, answers, prompt_format
        self.start_token, self.concurrency, self.tokenizer = start_token, concurrency, tokenizer
        self.retries, self.timeout = retries, timeout
        self._api_key = http.outbound.credential(api_key)  # held masked (common/outbound.py)
        self.bias_ok: bool | None = None  # None: not checked yet
        self.first_token_cache: dict[tuple[str, int], float] = {}
        self.server_info: list[dict] = []
        self.usage = http.Usage()

    # --- the run's record ------------------------------------------------------------------------
    def describe(self) -> dict:
        if not self.server_info:
            http.run(self._session(lambda servers: _nothing()))
        return {
            "scorer": "server", "prompt_format": self.prompt_format, "start_token": self.start_token,
            "servers": self.server_info, "concurrency_per_server": self.concurrency,
            "protocol": "completions: echo + logprobs=1, max_tokens=1, temperature 0",
            "one_token_variants": {None: "not checked yet", True: "logit_bias (checked against echo)",
                                   False: "echo (the server's log-probabilities include logit_bias)"}[self.bias_ok],
            "tokenizer": "server" if self.tokenizer is None else "local (checked against the server's token counts)",
            "dtype": "the server's", "device": "the server's", "files": {},
        }

    def usage_json(self) -> dict:
        return self.usage.as_json()

    # --- one event loop per score() call ---------------------------------------------------------
    async def _session(self, body):
        clients = [http.ServerClient(url, concurrency=self.concurrency, retries=self.retries, timeout=self.timeout,
                                     api_key=self._api_key, usage=self.usage) for url in self.urls]
        servers = [_Server(client=c) for c in clients]
        for c in clients:
            await c.__aenter__()
        try:
            await http.gather(self._introduce(s) for s in servers)
            if not self.server_info:
                self.server_info = [s.info for s in servers]
            return await body(servers)
        finally:
            for c in clients:
                await c.__aexit__(None, None, None)

    async def _introduce(self, server: _Server) -> None:
        """The server's model (the configured one must be served), version and settings."""
        c = server.client
        try:
            listed = (await c.get("/v1/models")).get("data") or []
        except http.ServerError as exc:
            raise http.ServerError(f"The server at {c.base_url} does not answer /v1/models ({exc}).") from None
        if not isinstance(listed, list) or not all(isinstance(m, dict) for m in listed):
            raise http.ServerError(f"The server at {c.base_url} answered /v1/models with no list of models.")
        ids = [m.get("id") for m in listed]
        if self.model and self.model not in ids:
            raise ValueError(f"The server at {c.base_url} serves {metadata.capped(ids, 1)}, not the configured model "
                             f"{self.model!r}.")
        server.model = self.model or (ids[0] if ids else "")
        entry = next((m for m in listed if m.get("id") == server.model), {})
        # what the run's record keeps of what the server says about itself: chosen keys, capped (metadata.py)
        info = {"url": c.base_url, "model": metadata.capped(server.model),
                "model_entry": metadata.chosen(entry, metadata.MODEL_KEYS)}
        for path, key in (("/version", "version"), ("/props", "settings"), ("/openapi.json", "api")):
            try:
                answer = await c.get(path, retry=False)
            except http.ServerError:
                continue
            if not isinstance(answer, dict):
                continue
            if key == "api":
                meta = answer.get("info") if isinstance(answer.get("info"), dict) else {}
                title = f"{meta.get('title', '')} {meta.get('version', '')}".strip()
                info.setdefault("version", metadata.capped(title))
            elif key == "settings":
                info["settings"] = metadata.chosen(answer, metadata.PROPS_KEYS)
            else:
                version = answer.get("version")
                info["version"] = metadata.capped(version if isinstance(version, str | int | float) else
                                                  metadata.chosen(answer, metadata.VERSION_KEYS))
        info = metadata.fitted(info)
        server.tokenize_path = await self._find_tokenizer(server) if self.tokenizer is None else ""
        info["tokenize"] = server.tokenize_path or "local tokenizer"
        server.info = info

    async def _find_tokenizer(self, server: _Server) -> str:
        for path in ("/extras/tokenize", "/tokenize"):
            try:
                await self._tokenize_at(server, path, "a")
                return path
            except (http.ServerError, KeyError, TypeError):
                continue
        raise NoTokenizer(f"The server at {server.client.base_url} has no tokenize endpoint (/extras/tokenize, "
                          "/tokenize); configure a local tokenizer (the model's source) to score with it.")

    async def _tokenize_at(self, server: _Server, path: str, text: str) -> list[int]:
        if path == "/extras/tokenize":  # llama-cpp-python (special tokens parsed, BOS as the model adds it)
            return list((await server.client.post(path, {"input": text}, retry=False))["tokens"])
        body = {"model": server.model, "prompt": text, "add_special_tokens": False,  # vLLM, SGLang
                "content": text, "add_special": False, "parse_special": True}  # llama.cpp's server
        tokens = (await server.client.post(path, body, retry=False))["tokens"]
        return [t if isinstance(t, int) else t["id"] for t in tokens]

    async def _tokenize(self, server: _Server, text: str) -> list[int]:
        if self.tokenizer is not None:
            return list(self.tokenizer(text, add_special_tokens=False)["input_ids"])
        return await self._tokenize_at(server, server.tokenize_path, text)

    # --- completions --------------------------------------------------------------------------
    async def _complete(self, server: _Server, prompt: str, *, echo: bool, bias: int | None = None) -> dict:
        body = {"model": server.model, "prompt": prompt, "echo": echo, "logprobs": 1, "max_tokens": 1,
                "temperature": 0.0}
        if bias is not None:
            body["logit_bias"] = {str(bias): FORCE}
        answer = await server.client.post("/v1/completions", body)
        choice = answer["choices"][0]
        if not choice.get("logprobs"):
            raise http.ServerError(f"The server at {server.client.base_url} returned no log-probabilities "
                                   "(llama-cpp-python: start it with logits_all; vLLM: max_logprobs ≥ 1).")
        return answer

    async def _forced(self, server: _Server, prompt: str, token: int, text: str | None,
                      tops: list | None = None) -> float | None:
        """log p(token | prompt) from a completion forced by logit_bias; None when the server did not
        produce the token asked for (its text differs). The position's top entries go to `tops`."""
        lp = (await self._complete(server, prompt, echo=False, bias=token))["choices"][0]["logprobs"]
        if not lp["tokens"] or (text is not None and lp["tokens"][0] != text):
            return None
        if tops is not None and lp["top_logprobs"] and lp["top_logprobs"][0]:
            tops.append(lp["top_logprobs"][0])
        return float(lp["token_logprobs"][0])

    @staticmethod
    def _echoed(answer: dict) -> tuple[list, list]:
        """(token_logprobs, top_logprobs) of the echoed prompt alone: the generated token (none when the
        model's greedy next token ended the text) dropped."""
        lp = answer["choices"][0]["logprobs"]
        generated = (answer.get("usage") or {}).get("completion_tokens")
        if generated is None:
            generated = 0 if answer["choices"][0].get("finish_reason") == "stop" else 1
        end = len(lp["token_logprobs"]) - int(generated)
        return lp["token_logprobs"][:end], lp["top_logprobs"][:end]

    async def _echoed_tail(self, server: _Server, prompt: str, count: int, tops: list | None = None) -> list[float]:
        """The log-probabilities of the last `count` tokens of `prompt` (echoed); the top entries at the
        first of them go to `tops`."""
        lp, top = self._echoed(await self._complete(server, prompt, echo=True))
        tail = lp[len(lp) - count:]
        if len(tail) != count or any(v is None for v in tail):
            raise http.ServerError(f"The server echoed {len(lp)} log-probabilities for a prompt of which {count} "
                                   "were needed.")
        if tops is not None and top[len(lp) - count]:
            tops.append(top[len(lp) - count])
        return [float(v) for v in tail]

    # --- scoring --------------------------------------------------------------------------------
    def score(self, requests: list[Request], on_done: Done | None = None, stop: Stop | None = None) -> list[Result]:
        """`on_done(key)` as each request is finished (paced.py: the run's progress per item); `stop()`
        every second or so while requests are in flight (it raises to stop them: a cancelled run)."""
        return paced.run(lambda report: self._session(lambda servers: self._score(servers, requests, report)),
                         on_done, stop=stop)

    async def _score(self, servers: list[_Server], requests: list[Request], report=None) -> list[Result]:
        """Each request tokenized, then scored, on its server (the n-th on server n mod their count). At most
        ITEMS_AT_ONCE × concurrency requests per server are under way at once, taken in order, so that one's
        later steps (its forced completions, its top token's tokens) are not queued behind every other
        request of the chunk: they finish one by one, in about their order, and the run's progress moves
        with each (issue 43). The server's logit_bias is checked once, on the first request, before any
        is scored."""
        window = asyncio.Semaphore(ITEMS_AT_ONCE * self.concurrency * len(servers))
        checked = asyncio.Event()
        if self.bias_ok is not None:
            checked.set()

        async def one(n: int, request: Request) -> Result:
            server = servers[n % len(servers)]
            async with window:
                p = await self._read(request.key, self._prepare(server, n % len(servers), request))
                if n == 0 and not checked.is_set():
                    await self._read(request.key, self._check_bias(server, p))
                    checked.set()
                await checked.wait()
                result = await self._read(request.key, self._score_one(server, request, p))
            if report is not None:
                report(request.key)
            return result

        return await http.gather(one(n, r) for n, r in enumerate(requests))

    @staticmethod
    async def _read(key, step):
        """A step of one request; an answer that cannot be read (a field missing, a list too short, a
        value of the wrong type) fails it naming the request (the run loop names the item)."""
        try:
            return await step
        except BadAnswer:
            raise
        except http.ServerError as exc:
            raise BadAnswer(key, str(exc)) from None
        except (KeyError, IndexError, TypeError, ValueError, AttributeError) as exc:
            raise BadAnswer(key, f"the server's answer could not be read ({type(exc).__name__}: "
                                 f"{metadata.capped(str(exc))})") from None

    async def _prepare(self, server: _Server, index: int, request: Request) -> _Prepared:
        prompt = self.start_token + request.text
        if not request.text.strip():
            raise ValueError("An empty prompt cannot be scored.")
        answer_set = request.answers or self.default_answers
        texts = [t for form in answer_set.surface_forms() for t in form]
        start_ids = await self._tokenize(server, self.start_token) if self.start_token else []
        ids, *whole = await http.gather([self._tokenize(server, prompt)] + [self._tokenize(server, prompt + t)
                                                                              for t in texts])
        if ids[: len(start_ids)] != start_ids:
            raise ValueError(f"The start token {self.start_token!r} does not begin the prompt's tokens.")
        by_text = dict(zip(texts, whole))
        variants = plan_variants(answer_set, lambda text: tuple(by_text[text][len(ids):]))
        return _Prepared(server=index, prompt=prompt, ids=ids, start=len(start_ids), variants=variants)

    async def _check_bias(self, server: _Server, p: _Prepared) -> None:
        """Does this server report a forced token's log-probability before the bias? One variant, both ways."""
        one = [(text, tokens) for v in p.variants.by_label.values() for text, tokens in v.items() if len(tokens) == 1]
        if not one:
            return
        text, tokens = one[0]
        forced = await self._forced(server, p.prompt, tokens[0], text)
        echoed = (await self._echoed_tail(server, p.prompt + text, 1))[0]
        self.bias_ok = forced is not None and abs(forced - echoed) <= AGREE

    async def _variant_logprob(self, server: _Server, p: _Prepared, text: str,
                               tokens: tuple[int, ...], tops: list) -> tuple[float, float]:
        """(log p of the variant's tokens summed, log p of its first token); the top entries of the
        position after the prompt go to `tops`."""
        if len(tokens) == 1 and self.bias_ok:
            value = await self._forced(server, p.prompt, tokens[0], text, tops)
            if value is not None:
                return value, value
        tail = await self._echoed_tail(server, p.prompt + text, len(tokens), tops)
        return math.fsum(tail), tail[0]

    async def _first_token(self, server: _Server, token: int) -> float:
        """log p(first token | start token), for servers that echo none for it."""
        key = (self.start_token, token)
        if key not in self.first_token_cache:
            if not self.start_token or self.bias_ok is False:
                raise http.ServerError("The server gives the first prompt token no log-probability and cannot be "
                                       "asked for it (no start token configured, or logit_bias unusable).")
            value = await self._forced(server, self.start_token, token, None)
            self.first_token_cache[key] = value
        return self.first_token_cache[key]

    async def _score_one(self, server: _Server, request: Request, p: _Prepared) -> Result:
        variants = [(text, tokens) for v in p.variants.by_label.values() for text, tokens in v.items()]
        tops: list[dict] = []  # the top entries after the prompt, as each request saw them
        echo, *values = await http.gather([self._complete(server, p.prompt, echo=True)] +
                                          [self._variant_logprob(server, p, t, k, tops) for t, k in variants])
        entries, top_entries = self._echoed(echo)  # the prompt's tokens, aligned from the end
        if len(echo["choices"][0]["logprobs"]["token_logprobs"]) > len(entries):  # the generated token's
            tops.append(echo["choices"][0]["logprobs"]["top_logprobs"][len(entries)] or {})
        usage = echo.get("usage") or {}
        if self.tokenizer is not None and usage.get("prompt_tokens") not in (None, len(p.ids), len(p.ids) + 1):
            raise ValueError(f"The local tokenizer writes the prompt as {len(p.ids)} tokens, the server as "
                             f"{usage['prompt_tokens']}: they do not agree; use the server's tokenizer.")
        offset = len(p.ids) - len(entries)
        nll, counted = [], 0
        for j in range(max(p.start, 1), len(p.ids)):
            k = j - offset
            value = entries[k] if 0 <= k < len(entries) else None
            if value is None:
                if j != p.start:
                    raise http.ServerError(f"The server gave token {j} of the prompt {p.prompt[:60]!r}… no "
                                           f"log-probability ({len(entries)} echoed for {len(p.ids)} tokens).")
                value = await self._first_token(server, p.ids[j])
            nll.append(-float(value))
            counted += 1
        # the largest entry any request saw after the prompt (each lists the top one): the top token,
        # even where it ended the echoed completion (an end-of-text token, whose text is empty)
        candidates = [kv for top in tops for kv in top.items()]
        top_token, top_logprob = max(candidates, key=lambda kv: kv[1]) if candidates else ("", float("nan"))
        top_id = next((tokens[0] for text, tokens in variants if len(tokens) == 1 and text == top_token), None)
        if top_id is None and top_token:
            tail = (await self._tokenize(server, p.prompt + top_token))[len(p.ids):]
            top_id = tail[0] if len(tail) == 1 else -1
        elif top_id is None:
            top_id = -1  # a control token (end of text): the server writes it as no text
        return Result(
            key=request.key, variants=p.variants, logprobs={t: v[0] for (t, _), v in zip(variants, values)},
            nll_sum=math.fsum(nll), prompt_tokens=counted, top_token_id=int(top_id), top_token=top_token,
            top_logprob=float(top_logprob),
            first_token_logprobs={tokens[0]: v[1] for (_, tokens), v in zip(variants, values)},
            prompt_logprobs=tuple(-v for v in nll),  # checked with the rest (numbers.py)
        )

    def generate(self, requests, on_done: Done | None = None, stop: Stop | None = None):
        """Generation mode (remote_generation.py): each sample one completion, spread over the servers."""
        from .remote_generation import completions_generate

        return completions_generate(self, requests, on_done, stop=stop)


async def _nothing():
    return None
