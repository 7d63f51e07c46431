"""The simulated participants: one aiohttp session for all, each doing what the browser does."""
from __future__ import annotations

import asyncio
import html
import json
import math
import random
import re
import time
import uuid
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from http.cookies import SimpleCookie
from urllib.parse import urlencode, urlsplit

from .common import DESKTOP, SLUG, BenchError, expect

# Unscaled pauses of one participant, in seconds (multiplied by --time-scale).
CONSENT_S, INSTRUCTIONS_S, PRACTICE_S, HEARTBEAT_S = 25.0, 40.0, 6.0, 30.0
ANSWER_MEDIAN_S, ANSWER_SIGMA = 7.0, 0.5  # log-normal answer times (median 7 s)



# --- clients ----------------------------------------------------------------------------------
RUNNER = re.compile(rb'<script id="runner-config" type="application/json">(.*?)</script>', re.S)
RETRY_STATUSES = {408, 429, 500, 502, 503, 504}


@dataclass
class Reply:
    status: int
    body: bytes
    headers: dict
    seconds: float

    def json(self) -> dict:
        return json.loads(self.body)


@dataclass
class Person:
    pid: str
    session: str = ""  # the session page's path
    csrf: str = ""
    config: dict = field(default_factory=dict)

    @property
    def token(self) -> str:
        return self.session.rstrip("/").rsplit("/", 1)[-1]


class Load:
    """One aiohttp session for every simulated participant (each keeps its own CSRF cookie)."""

    def __init__(self, base: str, http, rng: random.Random, scale: float):
        self.base, self.http, self.rng, self.scale = base, http, rng, scale
        self.lat: dict[str, list[float]] = defaultdict(list)
        self.count: Counter = Counter()
        self.acked: dict[tuple[str, int], str] = {}
        self.failures: list[str] = []

    @staticmethod
    def request(person: Person | None = None, *, form=None, body=None) -> tuple[bytes | None, dict]:
        """A request's body (encoded) and headers, as a browser sends them."""
        headers = {"User-Agent": DESKTOP}
        data = None
        if person is not None and person.csrf:
            headers["Cookie"] = f"csrftoken={person.csrf}"
        if form is not None:
            data = urlencode({**form, "csrfmiddlewaretoken": person.csrf}).encode()
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        elif body is not None:
            data = json.dumps(body).encode()
            headers.update({"Content-Type": "application/json", "X-CSRFToken": person.csrf})
        return data, headers

    async def call(self, method: str, path: str, person: Person | None = None, *, form=None, body=None,
                   built: tuple[bytes | None, dict] | None = None) -> Reply:
        """One request; `built` is one made beforehand by request() (phase 2 builds them before a burst)."""
        data, headers = built if built is not None else self.request(person, form=form, body=body)
        t0 = time.perf_counter()
        async with self.http.request(method, self.base + path, data=data, headers=headers, allow_redirects=False) as r:
            content = await r.read()
            cookies = r.headers.getall("Set-Cookie", [])
        reply = Reply(r.status, content, dict(r.headers), time.perf_counter() - t0)
        for raw in cookies:
            jar = SimpleCookie(raw)
            if person is not None and "csrftoken" in jar:
                person.csrf = jar["csrftoken"].value
        return reply

    async def send(self, method: str, path: str, person: Person | None = None, **kw) -> Reply:
        """A request retried with backoff on network errors, 5xx and 429 (Retry-After), like sender.js."""
        import aiohttp

        delay = 0.1
        for _ in range(12):
            try:
                reply = await self.call(method, path, person, **kw)
            except (aiohttp.ClientError, asyncio.TimeoutError):
                self.count["network retries"] += 1
            else:
                if reply.status not in RETRY_STATUSES:
                    return reply
                self.count[f"{reply.status} answers retried"] += 1
                if reply.status == 429:
                    delay = max(delay, float(reply.headers.get("Retry-After", 1)))
            await asyncio.sleep(delay * (0.5 + self.rng.random()))
            delay = min(delay * 2, 5.0)
        raise BenchError(f"{method} {path}: no answer after 12 tries")

    async def pause(self, seconds: float) -> None:
        if self.scale:
            await asyncio.sleep(seconds * self.scale)

    def answer_s(self) -> float:
        return self.rng.lognormvariate(math.log(ANSWER_MEDIAN_S), ANSWER_SIGMA)

    # --- the flow ---
    async def load(self, person: Person) -> dict:
        page = await self.send("GET", person.session, person)
        expect(page.status == 200, f"session page answered {page.status}")
        found = RUNNER.search(page.body)
        person.config = json.loads(html.unescape(found.group(1).decode())) if found else {}
        return person.config

    async def step(self, person: Person, name: str, form: dict | None = None) -> dict:
        reply = await self.send("POST", person.session + name, person, form=form or {})
        expect(reply.status == 302, f"{name} answered {reply.status}")
        return await self.load(person)

    async def enter(self, person: Person, *, pauses: bool) -> None:
        query = urlencode({"PROLIFIC_PID": person.pid, "STUDY_ID": "bench-study", "SESSION_ID": f"s-{person.pid}"})
        entry = await self.send("GET", f"/s/{SLUG}/?{query}", person)
        expect(entry.status == 302 and "/p/" in entry.headers.get("Location", ""), f"entry answered {entry.status}")
        if pauses:  # phase 1
            self.lat["entry"].append(entry.seconds)
        person.session = urlsplit(entry.headers["Location"]).path
        await self.load(person)
        expect(bool(person.csrf), "the session page set no csrftoken cookie")
        await self.pause(CONSENT_S if pauses else 0)
        await self.step(person, "consent", {"agree": "yes"})
        await self.pause(INSTRUCTIONS_S if pauses else 0)
        config = await self.step(person, "instructions")
        expect(config.get("phase") == "practice", f"after instructions: phase {config.get('phase')!r}")
        for _ in config["trials"]:
            await self.pause(PRACTICE_S if pauses else 0)
        config = await self.step(person, "practice")
        expect(config.get("phase") == "trials", f"after practice: phase {config.get('phase')!r}")

    def answer(self, trial: dict) -> dict:
        onset, code = time.time() * 1000, self.rng.choice(["KeyF", "KeyJ"])
        return {"index": trial["index"], "item": trial["item"], "code": code, "key": code[-1].lower(),
                "idempotency_key": str(uuid.uuid4()), "onset_ms": onset,
                "response_ms": onset + self.answer_s() * 1000, "timed_out": False, "viewport_width": 1280,
                "viewport_height": 800, "focus_lost": False, "visibility_lost": False}

    async def save(self, person: Person, body: dict, kind: str) -> None:
        reply = await self.send("POST", person.session + "trial", person, body=body)
        first = kind != "resend"
        expect(reply.status == (201 if first else 200), f"trial {body['index']} ({kind}) answered {reply.status}: "
               f"{reply.body[:200]!r}")
        expect(reply.json().get("duplicate") is (not first), f"trial {body['index']} ({kind}): wrong duplicate flag")
        self.lat[kind].append(reply.seconds)
        self.acked[(person.token, body["index"])] = body["idempotency_key"]

    async def finish(self, person: Person) -> None:
        reply = await self.send("POST", person.session + "finish", person, body={})
        expect(reply.status == 200 and reply.json().get("status") == "completed", f"finish answered {reply.status}")

    async def take_study(self, person: Person, arrival: float, retry_rate: float, reload_rate: float) -> None:
        await asyncio.sleep(arrival)
        await self.enter(person, pauses=True)
        done = set(person.config["answered"])
        every = max(1, round(HEARTBEAT_S / seconds_per_answer()))  # the browser's beat, in answers
        while pending := [t for t in person.config["trials"] if t["index"] not in done]:
            await self.pause(person.config["blank_ms"] / 1000)
            body = self.answer(pending[0])
            await self.pause(body["response_ms"] / 1000 - body["onset_ms"] / 1000)
            await self.save(person, body, "trial")
            done.add(body["index"])
            if self.rng.random() < retry_rate:
                await self.save(person, dict(body), "resend")
                self.count["re-sent answers (same key)"] += 1
            if len(done) % every == 0:
                reply = await self.send("POST", person.session + "heartbeat", person, body={})
                expect(reply.status == 200, f"heartbeat answered {reply.status}")
                self.count["heartbeats"] += 1
            if self.rng.random() < reload_rate:
                done = set((await self.load(person))["answered"])
                self.count["reloads mid-study"] += 1
        await self.finish(person)
        self.count["completed"] += 1

    async def guarded(self, coro) -> None:
        try:
            await coro
        except BenchError as exc:
            self.failures.append(str(exc))
        except Exception as exc:  # noqa: BLE001 — one participant's surprise is reported, the others go on
            self.failures.append(f"{type(exc).__name__}: {exc}")



def seconds_per_answer() -> float:
    """Mean seconds between two answers of one participant in real time: the answer, then the blank."""
    return ANSWER_MEDIAN_S * math.exp(ANSWER_SIGMA ** 2 / 2) + 0.5
