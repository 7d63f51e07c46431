"""`manage.py serve_model` (issue 34 item 7): started as a researcher would start it, it serves the embedded
SmolLM2 on the port asked, says what to put in a 'server' configuration, answers /v1/models and an echoed
completion with the prompt's log-probabilities, and stops with its server on SIGTERM."""
from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

from tests.integration.servers import free_port

ROOT = Path(__file__).resolve().parents[2]


def _lines(stream, into: queue.Queue) -> None:
    for line in iter(stream.readline, ""):
        into.put(line)
    into.put(None)


@pytest.mark.db_independent
def test_serve_model_serves_the_embedded_model_until_stopped():
    try:
        import llama_cpp  # noqa: F401
    except ImportError:
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail("CI needs llama-cpp-python (the server group)")
        pytest.skip("llama-cpp-python is not installed")
    port = free_port()
    command = [sys.executable, "manage.py", "serve_model", "--port", str(port), "--n-ctx", "512"]
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               start_new_session=True)
    said: queue.Queue = queue.Queue()
    threading.Thread(target=_lines, args=(process.stdout, said), daemon=True).start()
    out: list[str] = []
    try:
        deadline = time.monotonic() + 300
        while not any("Ctrl-C stops the server" in line for line in out) and time.monotonic() < deadline:
            try:
                line = said.get(timeout=max(0.1, deadline - time.monotonic()))
            except queue.Empty:
                break
            if line is None:
                break
            out.append(line)
        text = "".join(out)
        url = f"http://127.0.0.1:{port}"
        assert f"Serving SmolLM2-135M-Instruct (float32 weights) at {url}" in text, text
        assert f"library 'server'; server URLs {url}; start token <|im_start|>;" in text
        models = httpx.get(f"{url}/v1/models", timeout=30).json()
        assert models["data"] and models["data"][0]["id"]
        echoed = httpx.post(f"{url}/v1/completions", timeout=60, json={
            "prompt": "<|im_start|>Is this a test? Answer:", "max_tokens": 1, "temperature": 0, "echo": True,
            "logprobs": 1}).json()
        logprobs = echoed["choices"][0]["logprobs"]["token_logprobs"]
        assert len(logprobs) > 3 and all(p is None or p <= 0 for p in logprobs)  # the prompt's, as a run reads
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=60) == 0
        with pytest.raises(httpx.HTTPError):  # the server went with it
            httpx.get(f"{url}/v1/models", timeout=5)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
