"""Hostile peers on loopback (issue 34): real sockets, one thread per connection, each behaving as an
attacker's server would — recording the Authorization header it is sent, answering with an internal
service's error text, dripping one byte at a time, never answering, or sending without end.

`Peer(behave)` listens on 127.0.0.1; `behave(peer, conn, request)` writes the answer. Every request is
recorded (method, path, headers) before it is answered; `peer.connections` counts accepted sockets.
"""
from __future__ import annotations

import gzip
import json
import socket
import threading
import time
from dataclasses import dataclass, field

MARKER = "INTERNAL-SERVICE-MARKER-7c1e"  # an internal service's words: must never be echoed


@dataclass
class Request:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class Peer:
    behave: object
    requests: list[Request] = field(default_factory=list)
    connections: int = 0

    def __post_init__(self):
        self.stopped = threading.Event()
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.port = self.sock.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _accept(self):
        while not self.stopped.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket):
        try:
            with conn:
                conn.settimeout(30)
                while not self.stopped.is_set():
                    request = _read(conn)
                    if request is None:
                        return
                    self.requests.append(request)
                    if self.behave(self, conn, request) is False:  # the connection is done
                        return
        except OSError:
            return

    def close(self):
        self.stopped.set()
        self.sock.close()

    def __enter__(self) -> Peer:
        return self

    def __exit__(self, *exc):
        self.close()


def _read(conn: socket.socket) -> Request | None:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return None
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    method, path, _ = lines[0].split(" ", 2)
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    length = int(headers.get("content-length", "0") or 0)
    while len(body) < length:
        chunk = conn.recv(65536)
        if not chunk:
            break
        body += chunk
    return Request(method, path, headers, body)


def send(conn: socket.socket, status: int, body: bytes, content_type: str = "application/json",
         extra: str = "") -> None:
    conn.sendall(f"HTTP/1.1 {status} X\r\ncontent-type: {content_type}\r\ncontent-length: {len(body)}\r\n{extra}"
                 "\r\n".encode() + body)


def models(ids=("m",)) -> bytes:
    return json.dumps({"object": "list", "data": [{"id": i} for i in ids]}).encode()


def openai_like(peer, conn, request):
    """An OpenAI-compatible server: one model, prompt log-probabilities, chat top_logprobs."""
    if request.path.endswith("/v1/models"):
        send(conn, 200, models())
    else:
        choice = {"text": "Yes", "logprobs": {"token_logprobs": [None, -0.5], "content": [{"token": "Yes"}]},
                  "message": {"content": "Yes"}}
        send(conn, 200, json.dumps({"choices": [choice]}).encode())


def internal_service(peer, conn, request):
    """An internal service: it lists a model and tokenizes (so a save or a run goes on), then refuses every
    other request (HTTP 400, not retried) with its own error text — the marker — in JSON, as OpenAI's
    {"error": {"message": …}} would."""
    if request.path.endswith("/v1/models"):
        send(conn, 200, models())
    elif request.path.endswith("tokenize"):
        asked = json.loads(request.body or b"{}")
        text = str(asked.get("input") or asked.get("content") or "")
        send(conn, 200, json.dumps({"tokens": list(range(1, len(text) + 1))}).encode())  # a token a character
    else:
        send(conn, 400, json.dumps({"error": {"message": f"{MARKER} redis://10.0.0.5:6379 auth failed"}}).encode())


def drip(interval: float = 0.3, lasting: float = 30.0):
    """Sends a status line, then one header byte every `interval` s for `lasting` s: httpx's per-read
    timeouts never fire."""
    def behave(peer, conn, request):
        conn.sendall(b"HTTP/1.1 200 OK\r\nx-pad: ")
        ends = time.monotonic() + lasting
        while time.monotonic() < ends and not peer.stopped.is_set():
            conn.sendall(b"a")
            time.sleep(interval)
        return False
    return behave


def silent(lasting: float = 30.0):
    """Reads the request and says nothing (a server busy with a run), up to `lasting` s."""
    def behave(peer, conn, request):
        peer.stopped.wait(lasting)
        return False
    return behave


def giant(total: int = 64 * 1024 * 1024):
    """A 200 answer with no length that goes on for `total` bytes (a JSON list of zeros)."""
    def behave(peer, conn, request):
        conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nconnection: close\r\n\r\n[")
        chunk = b"0," * 32768
        for _ in range(total // len(chunk)):
            conn.sendall(chunk)
        return False
    return behave


def gzip_bomb(size: int = 50 * 1024 * 1024):
    """A small gzip answer that decompresses to `size` bytes."""
    packed = gzip.compress(b" " * size, compresslevel=9)

    def behave(peer, conn, request):
        send(conn, 200, packed, extra="content-encoding: gzip\r\n")
    return behave


def status(code: int, body: bytes = MARKER.encode()):
    def behave(peer, conn, request):
        send(conn, code, body, content_type="text/plain")
    return behave
