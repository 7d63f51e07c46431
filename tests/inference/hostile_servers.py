"""Hostile stand-ins for an inference server and a chat API: real HTTP servers on loopback that speak
the OpenAI-compatible protocol the server and chat scorers use, with a toy tokenizer (a word and the
space before it is one token), and answer whatever numbers a test tells them to (NaN, inf, +50, lists
of the wrong length, a 10 MB /props).

The completions server answers what the server scorer asks (server.py): /v1/models, /props, /tokenize
(llama.cpp's form), and /v1/completions with echo (every prompt token's log p, the first None as
llama.cpp gives it) or with logit_bias forcing one token (its log p). A prompt token has log p
PROMPT_LOGP; an answer word its ANSWER_LOGP (others OTHER_LOGP), so that the answers' probabilities
sum to less than 1 as a model's would. `Lies` says what to answer instead.
"""
from __future__ import annotations

import json
import math
import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PROMPT_LOGP = -1.0
ANSWER_LOGP = {" Yes": -0.7, " No": -1.2}
OTHER_LOGP = -6.0
MODEL = "toy-model"


def pieces(text: str) -> list[str]:
    """The toy tokenizer: each word with the spaces before it, newlines on their own."""
    return re.findall(r"\n|[ ]*[^ \n]+|[ ]+", text)


@dataclass
class Lies:
    """What the stand-in answers instead of an honest number."""

    answer: dict[str, object] = field(default_factory=dict)  # answer text → the log p it is given
    prompt_token: object = None  # the log p of the prompt's third token (None: honest)
    short_tops: bool = False  # echo: top_logprobs one entry shorter than token_logprobs
    short_echo: bool = False  # echo: token_logprobs without the prompt's first half
    props: dict | None = None  # what /props answers (None: HTTP 404)
    delay: float = 0.0  # seconds before each completion (or chat completion) is answered
    on_completion: object = None  # called with the prompt of each completion before it is answered
    chat_top: list | None = None  # the chat API's top_logprobs: [(text, log p)] (None: Yes 0.6, No 0.3)


class _Toy(BaseHTTPRequestHandler):
    lies: Lies
    vocabulary: dict[str, int]
    lock: threading.Lock

    def log_message(self, *args):
        pass

    def _send(self, status: int, body) -> None:
        data = body if isinstance(body, bytes) else json.dumps(body).encode()  # NaN and Infinity as Python writes them
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _id(self, piece: str) -> int:
        with self.lock:
            return self.vocabulary.setdefault(piece, len(self.vocabulary) + 1)

    def _text(self, token: int) -> str:
        with self.lock:
            return next(p for p, i in self.vocabulary.items() if i == token)

    def _answer_logp(self, piece: str):
        if piece in self.lies.answer:
            return self.lies.answer[piece]
        return ANSWER_LOGP.get(piece, OTHER_LOGP)

    def do_GET(self):
        if self.path == "/v1/models":
            return self._send(200, {"object": "list", "data": [{"id": MODEL, "object": "model", "owned_by": "toy"}]})
        if self.path == "/props" and self.lies.props is not None:
            return self._send(200, self.lies.props)
        self._send(404, {"error": "not here"})

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
        if self.path == "/tokenize":
            return self._send(200, {"tokens": [self._id(p) for p in pieces(body.get("content", ""))]})
        if self.path == "/v1/chat/completions":
            return self._chat(body)
        if self.path != "/v1/completions":
            return self._send(404, {"error": "not here"})
        if self.lies.on_completion is not None:
            self.lies.on_completion(body["prompt"])
        if self.lies.delay:
            threading.Event().wait(self.lies.delay)
        prompt = pieces(body["prompt"])
        if not body.get("echo"):  # one token forced by logit_bias
            (token,) = [int(t) for t in body.get("logit_bias", {})] or [self._id(" Yes")]
            text = self._text(token)
            value = self._answer_logp(text)
            logprobs = {"tokens": [text], "token_logprobs": [value], "top_logprobs": [{text: value}]}
            return self._send(200, {"choices": [{"text": text, "logprobs": logprobs, "finish_reason": "length"}],
                                    "usage": {"prompt_tokens": len(prompt), "completion_tokens": 1}})
        values: list = [None]
        for n, piece in enumerate(prompt[1:], start=1):
            last = n == len(prompt) - 1 and piece in (*ANSWER_LOGP, *self.lies.answer)
            values.append(self._answer_logp(piece) if last else
                          (self.lies.prompt_token if n == 2 and self.lies.prompt_token is not None else PROMPT_LOGP))
        generated = " Yes"
        tokens = [*prompt, generated]
        values.append(self._answer_logp(generated))
        tops = [None] + [{t: v} for t, v in zip(tokens[1:], values[1:])]
        if self.lies.short_echo:
            values = values[len(values) // 2:]
            tokens = tokens[len(tokens) // 2:]
        if self.lies.short_tops:
            tops = tops[:-2]
        logprobs = {"tokens": tokens, "token_logprobs": values, "top_logprobs": tops}
        self._send(200, {"choices": [{"text": body["prompt"] + generated, "logprobs": logprobs,
                                      "finish_reason": "length"}],
                         "usage": {"prompt_tokens": len(prompt), "completion_tokens": 1}})

    def _chat(self, body):
        if self.lies.delay:
            threading.Event().wait(self.lies.delay)
        listed = self.lies.chat_top or [("Yes", math.log(0.6)), ("No", math.log(0.3))]
        top = [{"token": t, "logprob": v} for t, v in listed]
        top = [{"token": e["token"], "logprob": self.lies.answer.get(e["token"], e["logprob"])} for e in top]
        first = {"token": top[0]["token"], "logprob": top[0]["logprob"], "top_logprobs": top}
        self._send(200, {"model": MODEL, "choices": [{"message": {"content": first["token"]},
                                                      "logprobs": {"content": [first]}, "finish_reason": "length"}],
                         "usage": {"prompt_tokens": 9, "completion_tokens": 1}})


class _Server(ThreadingHTTPServer):
    def handle_error(self, request, client_address):
        """A client that left before its answer (a cancelled run closes its requests) is no error here."""
        import sys

        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class Stand_in:
    """A hostile stand-in on 127.0.0.1 (`url`), serving until `stop()`."""

    def __init__(self, lies: Lies | None = None):
        self.lies = lies or Lies()
        handler = type("Handler", (_Toy,), {"lies": self.lies, "vocabulary": {}, "lock": threading.Lock()})
        self.server = _Server(("127.0.0.1", 0), handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self) -> Stand_in:
        return self

    def __exit__(self, *exc) -> None:
        self.stop()
