"""A counting proxy on loopback in front of a real server (issue 43: what a cancelled run still sends).

Every byte passes unchanged both ways; the proxy reads the client's side as HTTP/1.1 requests (a
request line, headers, a body of Content-Length bytes: what httpx sends) and records, for each, the
time its head arrived (time.time(), comparable with another process's clock on this machine) and its
request line; it counts the connections the client opened and those the client closed. So a test
reads what the real server was sent, and when, whatever the client's own bookkeeping says.
"""
from __future__ import annotations

import socket
import threading
import time
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Arrival:
    at: float  # time.time() when the request's head had arrived
    method: str
    path: str


@dataclass
class CountingProxy:
    upstream_port: int
    upstream_host: str = "127.0.0.1"
    arrivals: list[Arrival] = field(default_factory=list)
    opened: int = 0
    closed: int = 0  # connections the client closed (its end of file)

    def __post_init__(self):
        self._lock = threading.Lock()
        self._stopped = threading.Event()
        self._sock = socket.socket()
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(64)
        self.port = self._sock.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def open(self) -> int:
        """Connections the client holds open now."""
        with self._lock:
            return self.opened - self.closed

    def since(self, moment: float) -> list[Arrival]:
        with self._lock:
            return [a for a in self.arrivals if a.at > moment]

    def _accept(self) -> None:
        while not self._stopped.is_set():
            try:
                client, _ = self._sock.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection((self.upstream_host, self.upstream_port), timeout=30)
            except OSError:
                client.close()
                continue
            upstream.settimeout(None)
            with self._lock:
                self.opened += 1
            threading.Thread(target=self._forward_requests, args=(client, upstream), daemon=True).start()
            threading.Thread(target=self._forward_answers, args=(upstream, client), daemon=True).start()

    def _arrived(self, method: str, path: str) -> None:
        with self._lock:
            self.arrivals.append(Arrival(time.time(), method, path))

    def _forward_requests(self, client: socket.socket, upstream: socket.socket) -> None:
        heads = _Heads(self._arrived)
        try:
            while True:
                chunk = client.recv(65536)
                if not chunk:
                    break
                heads.feed(chunk)
                upstream.sendall(chunk)
        except OSError:
            pass
        finally:
            with self._lock:
                self.closed += 1
            for sock in (upstream, client):
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                sock.close()

    def _forward_answers(self, upstream: socket.socket, client: socket.socket) -> None:
        try:
            while True:
                chunk = upstream.recv(65536)
                if not chunk:
                    break
                client.sendall(chunk)
        except OSError:
            pass
        finally:
            try:
                client.shutdown(socket.SHUT_WR)
            except OSError:
                pass

    def close(self) -> None:
        self._stopped.set()
        self._sock.close()

    def __enter__(self) -> CountingProxy:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class _Heads:
    """A client's byte stream split into HTTP/1.1 requests: `arrived(method, path)` as each head is whole
    (its body, Content-Length bytes, skipped as it comes)."""

    def __init__(self, arrived):
        self.arrived, self.buffer, self.skip = arrived, b"", 0

    def feed(self, data: bytes) -> None:
        taken = min(self.skip, len(data))
        self.skip -= taken
        self.buffer += data[taken:]
        while not self.skip:
            end = self.buffer.find(b"\r\n\r\n")
            if end < 0:
                return
            lines = self.buffer[:end].decode("latin-1").split("\r\n")
            method, path = (lines[0].split(" ") + ["", ""])[:2]
            length = next((int(line.split(":", 1)[1]) for line in lines[1:]
                           if line.lower().startswith("content-length:")), 0)
            self.arrived(method, path)
            rest = self.buffer[end + 4:]
            body = min(length, len(rest))
            self.skip, self.buffer = length - body, rest[body:]
