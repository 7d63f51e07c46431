"""A participant's browser over real HTTP: a cookie jar, Django's CSRF token, JSON trial saves.

It walks the flow as tests/experiments/participation/test_views.py does with Django's test client,
but against the gunicorn server, so every request crosses a socket.
"""
from __future__ import annotations

import html
import http.cookiejar
import json
import re
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from itertools import count

DESKTOP = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36"
_keys = count()


@dataclass
class Reply:
    status: int
    body: bytes
    url: str

    def json(self) -> dict:
        return json.loads(self.body)


@dataclass
class Browser:
    base: str
    jar: http.cookiejar.CookieJar = field(default_factory=http.cookiejar.CookieJar)

    def __post_init__(self):
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar))
        self.session_url = ""
        self.config: dict = {}

    def request(self, path: str, *, data: bytes | None = None, headers: dict | None = None) -> Reply:
        url = path if path.startswith("http") else self.base + path
        req = urllib.request.Request(url, data=data, headers={"User-Agent": DESKTOP, **(headers or {})})
        try:
            with self.opener.open(req, timeout=120) as response:  # wide: a loaded machine is slow, not broken
                return Reply(response.status, response.read(), response.geturl())
        except urllib.error.HTTPError as error:
            return Reply(error.code, error.read(), url)

    @property
    def csrf(self) -> str:
        return next(c.value for c in self.jar if c.name == "csrftoken")

    def post_form(self, path: str, data: dict | None = None) -> Reply:
        body = urllib.parse.urlencode({**(data or {}), "csrfmiddlewaretoken": self.csrf}).encode()
        return self.request(path, data=body, headers={"Content-Type": "application/x-www-form-urlencoded"})

    def post_json(self, path: str, body: dict) -> Reply:
        return self.request(path, data=json.dumps(body).encode(),
                            headers={"Content-Type": "application/json", "X-CSRFToken": self.csrf})

    # --- the flow --------------------------------------------------------------------------------
    def start(self, slug: str, pid: str) -> None:
        """Prolific link → consent → instructions; leaves the runner config of the trials page."""
        query = urllib.parse.urlencode({"PROLIFIC_PID": pid, "STUDY_ID": "prolific-study", "SESSION_ID": f"s-{pid}"})
        page = self.request(f"/s/{slug}/?{query}")
        assert page.status == 200 and b'id="consent-text"' in page.body, page.body[:500]
        self.session_url = page.url
        assert self.post_form(self.session_url + "consent", {"agree": "yes"}).status == 200
        assert self.post_form(self.session_url + "instructions").status == 200
        self.load()

    def load(self) -> dict:
        page = self.request(self.session_url)
        assert page.status == 200, page.status
        found = re.search(rb'<script id="runner-config" type="application/json">(.*?)</script>', page.body, re.S)
        assert found, page.body[:1000]
        self.config = json.loads(html.unescape(found.group(1).decode()))
        return self.config

    @property
    def token(self) -> str:
        return self.session_url.rstrip("/").split("/")[-1]

    def answer(self, index: int, *, code: str = "KeyF", key_id: str | None = None) -> dict:
        """The JSON a browser sends for trial `index` (call send() to send it)."""
        onset = 1_700_000_000_000.0 + index * 10_000
        return {
            "index": index, "item": self.config["trials"][index]["item"], "code": code, "key": code[-1].lower(),
            "idempotency_key": key_id or f"integration-{next(_keys):08d}-key", "onset_ms": onset,
            "response_ms": onset + 700 + 10 * index, "timed_out": False, "viewport_width": 1280,
            "viewport_height": 800, "focus_lost": False, "visibility_lost": False,
        }

    def send(self, body: dict) -> Reply:
        return self.post_json(self.session_url + "trial", body)

    def finish(self) -> Reply:
        return self.post_json(self.session_url + "finish", {})
