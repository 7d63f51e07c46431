"""Prolific's API, through Duet's one outbound client (common/outbound.py; DESIGN.md habit 18).

* The origin is PROLIFIC_API_URL and the token PROLIFIC_API_TOKEN (common/env.py), read when a
  client is made; the token goes in `Authorization: Token <token>` to that origin only — never to a
  `_links.next.href` on another origin (refused) — and is kept in no row, log line or page.
* Every request has a total deadline and a byte cap; a failure is said by class ("answered HTTP 400",
  "did not answer within 20 s"), never with Prolific's own text.
* 429 and 5xx are retried with backoff (Retry-After honoured up to a cap) for the requests that are safe
  to repeat: reads, and the transitions Prolific documents as idempotent. `retry=False` is for the
  requests that are not (creating a study, setting up and paying bonuses): one try, and an answer that
  cannot be read leaves the outcome unknown to the caller, who records it as such.
* Every call is handed to `record(method, path, status, seconds, error)` (prolific/services.py stores
  it on the study for the researcher to see): the path as sent, which holds Prolific's ids only (a
  study's, a submission's, a bulk payment's), never the token or a body.
* A client may be given a total `deadline` (time.monotonic()) for all its requests together — a sync's
  (prolific/services.py): each request gets what is left of it, a retry's wait that would pass it is not
  waited, and a request at or past it is ProlificDeadline. Lists are read a page at a time (`page`), at most
  MAX_RESULTS results a page, so a caller holds one page, never the whole list.
* The token is held in an outbound.Credential (masked; its repr says nothing) and no frame of this module holds it in a local;
  an error from the request — OutboundError, or anything else the HTTP stack raises, such as httpx.InvalidURL
  for a `next` link with a control character — becomes a ProlificError raised outside the `except` block, so
  it carries no context whose frames hold the request's locals (issue 45 item 2).
"""
from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from urllib.parse import urlsplit

from common import env, outbound
from common.outbound import OutboundError

SECONDS = 20.0  # total deadline of one request
MAX_BYTES = 4 * 1024 * 1024  # one page of submissions is far smaller
RETRIES = 4  # tries after the first, for retriable answers
BACKOFF = 0.5  # seconds before the first retry; doubled each time
MAX_WAIT = 30.0  # the longest Retry-After honoured
MAX_PAGES = 1000
MAX_RESULTS = 500  # results in one page of a list (Prolific's default page size is 20)
FILTER_PAGES = 20  # pages of Prolific's list of filters read at most (prolific/filters.py caps its entries)


class ProlificError(Exception):
    """A request to Prolific that failed, in words (never Prolific's own text); `status` when it answered."""

    def __init__(self, message: str, *, status: int | None = None, unknown: bool = False):
        super().__init__(message)
        self.status, self.unknown = status, unknown


class ProlificDeadline(ProlificError):
    """The client's total deadline came before a request could be made or finished."""


NO_TOKEN = ("PROLIFIC_API_TOKEN is not set: create a token in Prolific's web app (Settings › API token) and set it "
            "in the server's environment.")


def token_set() -> bool:
    """Whether the environment holds an API token (the publish page says so when it opens); never the token."""
    return bool(env.prolific_api_token())


Record = Callable[[str, str, int | None, float, str], None]


def _no_record(method: str, path: str, status: int | None, seconds: float, error: str) -> None:
    return None


class Client:
    def __init__(self, *, record: Record = _no_record, base_url: str | None = None, token: str | None = None,
                 sleep: Callable[[float], None] = time.sleep, backoff: float | None = None):
        self.base_url = (base_url or env.prolific_api_url()).rstrip("/")
        token = env.prolific_api_token() if token is None else token
        if not token:
            raise ProlificError(NO_TOKEN)
        self._credential = outbound.Credential(token, scheme="Token")  # held masked: no frame shows it in clear
        token = None  # (this frame keeps no copy)
        self.deadline: float | None = None  # time.monotonic() by which every request is done (None: none)
        self._record, self._sleep = record, sleep
        self._backoff = BACKOFF if backoff is None else backoff
        parts = urlsplit(self.base_url)
        self.origin = (parts.scheme.lower(), (parts.hostname or "").lower(), parts.port)

    def __repr__(self) -> str:  # never the token
        return f"<prolific.Client {self.base_url}>"

    # ------------------------------------------------------------------ one request
    def _left(self) -> float:
        """Seconds one request may take: SECONDS, or less when the client's deadline comes first."""
        if self.deadline is None:
            return SECONDS
        left = self.deadline - time.monotonic()
        if left <= 0.05:
            raise ProlificDeadline("Prolific: the deadline passed before every request was made")
        return min(SECONDS, left)

    def _once(self, method: str, path: str, body: dict | None) -> outbound.Answer:
        seconds = self._left()
        started = time.monotonic()
        failure = ""
        try:
            answer = outbound.request(method, self.base_url, path, body=body, key=self._credential,
                                      seconds=seconds, max_bytes=MAX_BYTES)
        except OutboundError as exc:
            failure = str(exc)
        except Exception as exc:  # noqa: BLE001 — whatever the HTTP stack raises (httpx.InvalidURL…): said by class
            failure = f"could not be asked ({type(exc).__name__})"
        if failure:  # raised here, outside the except block: the error holds no context, no frame of the request
            self._record(method, path, None, time.monotonic() - started, failure)
            if self.deadline is not None and time.monotonic() >= self.deadline - 0.05:
                raise ProlificDeadline(f"Prolific {failure} (the deadline passed)", unknown=True)
            raise ProlificError(f"Prolific {failure}", unknown=True)
        self._record(method, path, answer.status, time.monotonic() - started, answer.failure())
        return answer

    def call(self, method: str, path: str, body: dict | None = None, *, retry: bool = True, ok=(200, 201, 204)):
        """The answer's JSON ({} for an empty body); ProlificError otherwise. `retry` only for safe requests."""
        wait = self._backoff
        for attempt in range(RETRIES + 1 if retry else 1):
            answer = self._once(method, path, body)
            if answer.status in ok:
                try:
                    return answer.json() if answer.content.strip() else {}
                except OutboundError as exc:
                    failure = str(exc)
                raise ProlificError(f"Prolific {failure} to {method} {path}", status=answer.status, unknown=True)
            retriable = answer.status == 429 or answer.status >= 500
            if not (retry and retriable) or attempt == RETRIES:
                raise ProlificError(f"Prolific {answer.failure()} to {method} {path}"
                                    + (" (after retries)" if retry and retriable else ""),
                                    status=answer.status, unknown=retriable)
            after = _retry_after(answer)
            pause = min(wait if after is None else after, MAX_WAIT)
            if self.deadline is not None and time.monotonic() + pause >= self.deadline:
                raise ProlificDeadline(f"Prolific {answer.failure()} to {method} {path}, and its wait before a retry "
                                       "would pass the deadline", status=answer.status, unknown=True)
            self._sleep(pause)
            wait *= 2
        raise AssertionError("unreachable")

    # ------------------------------------------------------------------ pagination
    def page(self, path: str) -> tuple[list[dict], str]:
        """One page of a paginated list: its results (MAX_RESULTS at most) and the path of the next page ('' on the
        last), `_links.next.href` followed on the same origin only."""
        page = self.call("GET", path)
        results = page.get("results") if isinstance(page, dict) else None
        if not isinstance(results, list):
            raise ProlificError(f"Prolific answered {path} without a list of results")
        if len(results) > MAX_RESULTS:
            raise ProlificError(f"Prolific answered {path} with more than {MAX_RESULTS} results in one page")
        links = page.get("_links")
        following = links.get("next") if isinstance(links, dict) else None
        href = following.get("href") if isinstance(following, dict) else None
        return [r for r in results if isinstance(r, dict)], self._same_origin(href) if href else ""

    def pages(self, path: str, *, most: int = MAX_PAGES) -> Iterator[dict]:
        """Every result of a paginated list, a page at a time (at most `most` pages)."""
        first = path
        for _ in range(most):
            results, path = self.page(path)
            yield from results
            if not path:
                return
        raise ProlificError(f"Prolific's list {first} has more than {most} pages")

    def _same_origin(self, href) -> str:
        if not isinstance(href, str) or len(href) > 2000 or not href.isascii() or \
                any(c.isspace() or ord(c) < 32 or ord(c) == 127 or c == "\\" for c in href):
            raise ProlificError("Prolific's next page is not a URL Duet follows (control characters, spaces, "
                                "backslashes or non-ASCII characters): not followed")
        try:
            parts = urlsplit(href)
            where = (parts.scheme.lower(), (parts.hostname or "").lower(), parts.port)
        except ValueError:
            raise ProlificError("Prolific's next page is not a URL: not followed") from None
        if parts.scheme or parts.netloc:
            if where != self.origin:
                raise ProlificError("Prolific's next page points to another server: not followed (the token is "
                                    "only sent to PROLIFIC_API_URL)")
        if not parts.path.startswith("/"):
            raise ProlificError("Prolific's next page is not a path on its server: not followed")
        return parts.path + (f"?{parts.query}" if parts.query else "")

    # ------------------------------------------------------------------ the endpoints Duet uses
    def studies(self) -> Iterator[dict]:
        return self.pages("/api/v1/studies/")

    def study_create(self, body: dict) -> dict:
        return self.call("POST", "/api/v1/studies/", body, retry=False)

    def filters(self) -> Iterator[dict]:
        """Prolific's list of filters (each filter's id, type, data type, choices or bounds): outside data, read by
        prolific/filters.py's read_list, which checks each entry's shape and caps the list."""
        return self.pages("/api/v1/filters/", most=FILTER_PAGES)

    def study_get(self, study_id: str) -> dict:
        return self.call("GET", f"/api/v1/studies/{_id(study_id)}/")

    def study_publish(self, study_id: str) -> dict:
        return self.call("POST", f"/api/v1/studies/{_id(study_id)}/transition/", {"action": "PUBLISH"})

    def submissions(self, study_id: str) -> Iterator[dict]:
        return self.pages(submissions_path(study_id))

    def submission_get(self, submission_id: str) -> dict:
        return self.call("GET", f"/api/v1/submissions/{_id(submission_id)}/")

    def submission_transition(self, submission_id: str, body: dict) -> dict:
        return self.call("POST", f"/api/v1/submissions/{_id(submission_id)}/transition/", body)

    def submission_request_return(self, submission_id: str, reasons: list[str]) -> dict:
        return self.call("POST", f"/api/v1/submissions/{_id(submission_id)}/request-return/",
                         {"request_return_reasons": reasons})

    def bonus_set_up(self, study_id: str, csv_bonuses: str) -> dict:
        return self.call("POST", "/api/v1/submissions/bonus-payments/",
                         {"study_id": study_id, "csv_bonuses": csv_bonuses}, retry=False)

    def bonus_pay(self, bulk_id: str) -> dict:
        """NOT idempotent on Prolific's side: a second call pays again. Never retried here."""
        return self.call("POST", f"/api/v1/bulk-bonus-payments/{_id(bulk_id)}/pay/", retry=False,
                         ok=(200, 201, 202, 204))


def submissions_path(study_id: str) -> str:
    """The first page of a study's submissions."""
    return f"/api/v1/submissions/?study={_id(study_id)}"


def _id(value: str) -> str:
    text = str(value)
    if not text or not all(c.isalnum() or c in "-_" for c in text) or len(text) > 64:
        raise ProlificError(f"{text[:70]!r} is not a Prolific id")
    return text


def _retry_after(answer: outbound.Answer) -> float | None:
    text = answer.headers.get("retry-after", "").strip()
    try:
        return max(0.0, float(text)) if text else None
    except ValueError:
        return None
