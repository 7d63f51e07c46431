"""Real servers for the integration tests, started natively on loopback: Redis, gunicorn, a Celery
worker, and a dedicated PostgreSQL database on the server scripts/test.sh started.

Every process is our child, in its own process group, with its output in a log file under a tmp
dir; every wait is bounded in time and raises ServerError with the log's tail when it runs out. The
bounds are wide (minutes): a loaded machine is slow, not broken, and a wait ends as soon as its
condition holds.
"""
from __future__ import annotations

import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parents[2]
PYTHON = sys.executable


class ServerError(RuntimeError):
    """A server would not start or stop in time."""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for(check: Callable[[], object], *, timeout: float, what: str, log: Path | None = None, interval: float = 0.1):
    """Poll `check` until it returns something truthy; ServerError (with the log's tail) after `timeout` s."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            value = check()
        except Exception:  # not up yet
            value = None
        if value:
            return value
        time.sleep(interval)
    tail = log.read_text(errors="replace")[-3000:] if log and log.exists() else ""
    raise ServerError(f"{what} not reached within {timeout:.0f} s.\n{tail}")


class Process:
    """One child process in its own session (so kill -9 reaches it and nothing else)."""

    def __init__(self, name: str, argv: list[str], *, env: dict, log: Path):
        self.name, self.argv, self.env, self.log = name, argv, env, log
        self.proc: subprocess.Popen | None = None

    def start(self) -> None:
        with open(self.log, "ab") as out:
            self.proc = subprocess.Popen(self.argv, cwd=ROOT, env=self.env, stdout=out, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL, start_new_session=True)

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def signal(self, sig: int) -> None:
        if self.alive:
            os.killpg(self.proc.pid, sig)

    def stop(self, timeout: float = 60) -> None:
        """SIGTERM, then SIGKILL if it does not exit in time."""
        if not self.alive:
            return
        self.signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()

    def kill(self) -> None:
        """kill -9, as a crash would."""
        if self.alive:
            self.signal(signal.SIGKILL)
        if self.proc is not None:
            self.proc.wait(60)


class Redis(Process):
    def __init__(self, folder: Path):
        self.port = free_port()
        folder.mkdir(parents=True, exist_ok=True)
        # appendonly + fsync always: a stopped and restarted Redis keeps the queued tasks (as in docker/compose).
        argv = [shutil.which("redis-server") or "redis-server", "--port", str(self.port), "--bind", "127.0.0.1",
                "--dir", str(folder), "--daemonize", "no", "--save", "", "--appendonly", "yes",
                "--appendfsync", "always", "--protected-mode", "yes"]
        super().__init__("redis", argv, env=dict(os.environ), log=folder / "redis.log")

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def ping(self) -> bool:
        with socket.create_connection(("127.0.0.1", self.port), timeout=10) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(16).startswith(b"+PONG")

    def start(self) -> None:
        super().start()
        wait_for(self.ping, timeout=60, what="Redis answering PING", log=self.log)


class Gunicorn(Process):
    def __init__(self, folder: Path, env: dict, workers: int = 2):
        self.port = free_port()
        argv = [PYTHON, "-m", "gunicorn", "studyserver.wsgi:application", "--bind", f"127.0.0.1:{self.port}",
                "--workers", str(workers), "--graceful-timeout", "10", "--timeout", "120"]
        super().__init__("gunicorn", argv, env=env, log=folder / "gunicorn.log")

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def healthy(self) -> bool:
        with urllib.request.urlopen(self.base + "/healthz", timeout=10) as response:
            return response.status == 200

    def start(self) -> None:
        super().start()
        wait_for(self.healthy, timeout=180, what="gunicorn answering /healthz", log=self.log)


class Worker(Process):
    """`celery -A studyserver worker -Q cpu --pool solo`: one process, so kill -9 kills the task too."""

    count = 0

    def __init__(self, folder: Path, env: dict):
        Worker.count += 1
        argv = [PYTHON, "-m", "celery", "-A", "studyserver", "worker", "-Q", "cpu", "--pool", "solo",
                "--loglevel", "INFO", "-n", f"integration{Worker.count}@%h", "--without-mingle", "--without-gossip"]
        super().__init__("worker", argv, env=env, log=folder / f"worker-{Worker.count}.log")

    def start(self) -> None:
        offset = self.log.stat().st_size if self.log.exists() else 0
        super().start()
        wait_for(lambda: "ready." in self.log.read_text(errors="replace")[offset:] or not self.alive and "exited",
                 timeout=300, what="Celery worker ready", log=self.log)
        if not self.alive:
            raise ServerError(f"The Celery worker exited.\n{self.log.read_text(errors='replace')[-3000:]}")


class Database:
    """A dedicated database on the PostgreSQL server of `server_url`, owned by its role, dropped at the end."""

    def __init__(self, server_url: str):
        parts = urlsplit(server_url)
        self.server_url = server_url
        self.name = f"duet_integration_{os.getpid()}_{secrets.token_hex(3)}"
        self.url = urlunsplit(parts._replace(path="/" + self.name))

    def _admin(self, sql: str) -> None:
        import psycopg

        with psycopg.connect(_libpq(self.server_url), autocommit=True, connect_timeout=30) as conn:
            conn.execute(sql)

    def create(self) -> None:
        self._admin(f'CREATE DATABASE "{self.name}"')

    def drop(self) -> None:
        self._admin(f'DROP DATABASE IF EXISTS "{self.name}" WITH (FORCE)')

    def connect(self):
        import psycopg

        return psycopg.connect(_libpq(self.url), autocommit=True, connect_timeout=30)

    def query(self, sql: str, params: tuple = ()) -> list[tuple]:
        with self.connect() as conn:
            return conn.execute(sql, params).fetchall()


def _libpq(url: str) -> str:
    return url.replace("postgres://", "postgresql://", 1)


def manage(env: dict, *args: str, timeout: float = 600) -> str:
    """Run manage.py in a subprocess against the integration servers; its stdout, or an error with both streams."""
    done = subprocess.run([PYTHON, str(ROOT / "manage.py"), *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=timeout)
    if done.returncode != 0:
        raise ServerError(f"manage.py {' '.join(args)} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    return done.stdout


def script(env: dict, source: str, timeout: float = 600) -> str:
    """Run Python with Django set up against the integration servers (a separate process, like an operator)."""
    prelude = "import django, json\ndjango.setup()\n"
    done = subprocess.run([PYTHON, "-c", prelude + source], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=timeout)
    if done.returncode != 0:
        raise ServerError(f"script failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    return done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""
