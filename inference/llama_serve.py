"""Serving the embedded SmolLM2 with llama-cpp-python's OpenAI-compatible server (the `server`
dependency group), for `manage.py serve_model`, the tests and bench/models_server.py.

`f32_gguf()` writes (once, under VAR_DIR/models) the GGUF with its Q4_1 weights dequantised to
float32, the numbers transformers computes with; `start()` runs `python -m llama_cpp.server` on a
free loopback port (or the one given: a server restarted where its configuration points) with float32
key/value caches (llama.cpp's default f16 cache alone moves log p by about 1e-3) and waits until it
answers a one-token completion with its prompt's log-probabilities: the first one pages the weights
and llama-cpp-python's n_ctx × vocabulary array of scores in (seconds to tens of seconds on a busy
machine: a smaller `n_ctx` costs less), which a save-time check's short probe must not pay. Its log
(the access log: what each server answered, `Served.answered`) is written as it goes.
`logits_all=False` starts it the way that gives no log-probabilities (llama-cpp-python 0.3.16 then
answers any request for them with HTTP 500, "logprobs is not supported for models created with
logits_all=False").
"""
from __future__ import annotations

import re
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from common import outbound
from common.env import VAR_DIR

F32_NAME = "SmolLM2-135M-Instruct.F32.gguf"
START_TOKEN = "<|im_start|>"  # SmolLM2's BOS: what the hf scorer puts before every prompt
ACCESS_LINE = re.compile(r'"([A-Z]+) (\S+) HTTP/[\d.]+" (\d{3})')  # uvicorn's access log


def embedded_gguf() -> Path:
    from inference.scorers.loading import resolve_source
    from inference.services import EMBEDDED_GGUF, EMBEDDED_SOURCE

    return Path(resolve_source(EMBEDDED_SOURCE, EMBEDDED_GGUF)) / EMBEDDED_GGUF


def f32_gguf(folder: Path | None = None) -> Path:
    from inference.scorers.gguf_f32 import dequantise

    target = (folder or VAR_DIR / "models" / "llama-server") / F32_NAME
    if not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        dequantise(embedded_gguf(), target)
    return target


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Served:
    url: str
    process: subprocess.Popen
    log: Path

    @property
    def port(self) -> int:
        return int(self.url.rsplit(":", 1)[1])

    def answered(self) -> list[tuple[str, str, int]]:
        """(method, path, status) of each request the server has answered so far, in order, read from
        its access log: what this server did, whatever the client's own bookkeeping says."""
        return [(m.group(1), m.group(2), int(m.group(3)))
                for m in ACCESS_LINE.finditer(self.log.read_text(errors="replace"))]

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()



def _ask(own: outbound.Target, method: str, path: str, *, seconds: float, body: dict | None = None):
    return outbound.request(method, own.base, path, body=body, seconds=seconds, max_bytes=1 << 20, checked=own)

def start(model: Path, *, log: Path, threads: int = 1, wait: float = 180.0, port: int | None = None,
          logits_all: bool = True, n_ctx: int = 2048, host: str = "127.0.0.1") -> Served:
    """Start the server (listening on `host`: loopback unless told otherwise); raise RuntimeError with its
    log's tail when it does not answer within `wait` s."""
    port = port or free_port()
    command = [sys.executable, "-u", "-m", "llama_cpp.server", "--model", str(model), "--host", host,
               "--port", str(port), "--n_threads", str(threads), "--n_ctx", str(n_ctx),
               "--type_k", "0", "--type_v", "0", "--logits_all", str(logits_all)]
    log.parent.mkdir(parents=True, exist_ok=True)
    handle = open(log, "ab")
    process = subprocess.Popen(command, stdout=handle, stderr=subprocess.STDOUT)  # -u: its log line by line
    asked = "127.0.0.1" if host in ("0.0.0.0", "") else host  # where this machine reaches it
    served = Served(url=f"http://{asked}:{port}", process=process, log=log)
    # the server this process started: its own address, not a configured destination (no allow-list to pass)
    own = outbound.Target("http", asked, port, "", asked)
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        if process.poll() is not None:
            break
        try:  # through the one outbound client (deadline, byte cap), to the process started here and nowhere else
            if _ask(own, "GET", "/v1/models", seconds=2).status == 200:
                warm = {"prompt": "Is this a warm-up? Yes or no?", "max_tokens": 1, "temperature": 0.0}
                if logits_all:  # the first echo touches the n_ctx × vocabulary scores (15 s at 2048 when busy)
                    warm.update(echo=True, logprobs=1)
                _ask(own, "POST", "/v1/completions", body=warm, seconds=max(1.0, deadline - time.monotonic()))
                return served
        except outbound.OutboundError:
            pass
        time.sleep(0.5)
    served.stop()
    tail = log.read_text(errors="replace")[-2000:]
    raise RuntimeError(f"llama-cpp-python's server did not start ({' '.join(command)}):\n{tail}")
