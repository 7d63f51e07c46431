"""Serving the embedded SmolLM2 with llama-cpp-python's OpenAI-compatible server (the `server`
dependency group), for the tests and bench/models_server.py.

`f32_gguf()` writes (once, under VAR_DIR/models) the GGUF with its Q4_1 weights dequantised to
float32, the numbers transformers computes with; `start()` runs `python -m llama_cpp.server` on a
free loopback port with float32 key/value caches (llama.cpp's default f16 cache alone moves log p by
about 1e-3) and waits until it answers.
"""
from __future__ import annotations

import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import httpx

from studyserver.env import VAR_DIR

F32_NAME = "SmolLM2-135M-Instruct.F32.gguf"
START_TOKEN = "<|im_start|>"  # SmolLM2's BOS: what the hf scorer puts before every prompt


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

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def start(model: Path, *, log: Path, threads: int = 1, wait: float = 180.0) -> Served:
    """Start the server; raise RuntimeError with its log's tail when it does not answer within `wait` s."""
    port = free_port()
    command = [sys.executable, "-m", "llama_cpp.server", "--model", str(model), "--host", "127.0.0.1",
               "--port", str(port), "--n_threads", str(threads), "--n_ctx", "2048", "--type_k", "0", "--type_v", "0"]
    log.parent.mkdir(parents=True, exist_ok=True)
    handle = open(log, "wb")
    process = subprocess.Popen(command, stdout=handle, stderr=subprocess.STDOUT)
    served = Served(url=f"http://127.0.0.1:{port}", process=process, log=log)
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        if process.poll() is not None:
            break
        try:
            if httpx.get(f"{served.url}/v1/models", timeout=2).status_code == 200:
                return served
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    served.stop()
    tail = log.read_text(errors="replace")[-2000:]
    raise RuntimeError(f"llama-cpp-python's server did not start ({' '.join(command)}):\n{tail}")
