"""A stand-in for Prolific's API on loopback, written from Prolific's API reference (docs.prolific.com,
api-reference): a real HTTP server (one thread per connection) holding studies, submissions and bonus
payments in memory.

What it follows from the reference:
* `Authorization: Token <token>`; anything else is 401;
* POST /api/v1/studies/ creates a draft (201; 400 without name, external_study_url, completion_codes,
  total_available_places, estimated_completion_time or reward, and 400 for a `filters` entry Prolific would refuse:
  an id not in its list, a select filter's value not among its choices, a range outside its bounds); the payload
  is kept as sent (`created`); GET /api/v1/studies/ lists them;
* GET /api/v1/filters/ lists the filters (FILTERS: each filter_id, title, type, data_type, and a select filter's
  choices or a range filter's min and max), PAGE_SIZE at a time; previous_studies_blocklist (data type StudyID)
  lists the studies created here as its choices, as Prolific lists a workspace's studies;
  POST /api/v1/studies/{id}/transition/ with {"action": "PUBLISH"} publishes (status ACTIVE);
* GET /api/v1/submissions/?study={id} lists submissions PAGE_SIZE at a time with their basic fields (id,
  participant id, status, start time, the code entered), `_links.next.href` an absolute URL on its own origin
  (null on the last page); GET /api/v1/submissions/{id}/ gives one in full: time_taken (seconds) and
  `bonus_payments` (amounts paid, in cents);
* POST /api/v1/submissions/{id}/transition/: APPROVE, or REJECT with a message of at least 100 characters and
  a rejection_category; only from AWAITING REVIEW (400 otherwise), except that repeating the transition
  already made is ignored (200) — the reference calls the endpoint idempotent;
  POST /api/v1/submissions/{id}/request-return/;
* POST /api/v1/submissions/bonus-payments/ with study_id and csv_bonuses ("participant_id,amount" lines,
  amounts in the study's currency) sets up a bulk payment (201, its id; 400 for a participant not in the
  study); POST /api/v1/bulk-bonus-payments/{id}/pay/ pays it — **every time it is called** (not idempotent).

Faults for the tests: `fail(path_part, status, times)` answers a status instead of handling the request;
with after=True it handles it first (a payment made, and the client sees a failure). With status DROP the
connection is closed without an answer instead (after=True: the request took effect, its answer is lost).
"""
from __future__ import annotations

import hashlib
import json
import secrets
import threading
from dataclasses import dataclass, field
from decimal import Decimal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

PAGE_SIZE = 2
DROP = 0  # a fault's status: close the connection without answering
CATEGORIES = {"TOO_QUICKLY", "TOO_SLOWLY", "FAILED_INSTRUCTIONS", "INCOMP_LONGITUDINAL", "FAILED_CHECK",
              "LOW_EFFORT", "MALINGERING", "NO_CODE", "BAD_CODE", "NO_DATA", "UNSUPP_DEVICE", "OTHER"}
LISTED = ("id", "participant_id", "status", "started_at", "study_code")  # what the list gives of a submission
# Prolific's filter list as its reference shows it (api-reference › Filters › List all filters): the common
# filters Duet names, one of each other kind, and the previous-studies exclusion (its choices: the studies).
FILTERS = (
    {"filter_id": "first-language", "title": "First language", "type": "select", "data_type": "ChoiceID",
     "choices": {"19": "English", "34": "German", "42": "French"}},
    {"filter_id": "fluent-languages", "title": "Fluent languages", "type": "select", "data_type": "ChoiceID",
     "choices": {"19": "English", "34": "German", "42": "French"}},
    {"filter_id": "current-country-of-residence", "title": "Current Country of Residence", "type": "select",
     "data_type": "ChoiceID", "choices": {"0": "United Kingdom", "1": "United States", "5": "Germany"}},
    {"filter_id": "approval_rate", "title": "Approval Rate", "type": "range", "data_type": "integer",
     "min": 0, "max": 100},
    {"filter_id": "approval_numbers", "title": "Approval Numbers", "type": "range", "data_type": "integer",
     "min": 0, "max": 100000},
    {"filter_id": "handedness", "title": "Handedness", "type": "select", "data_type": "ChoiceID",
     "choices": {"0": "Right-handed", "1": "Left-handed", "2": "Ambidextrous"}},
    {"filter_id": "date-of-birth", "title": "Date of birth", "type": "range", "data_type": "date",
     "min": "1900-01-01", "max": "2008-12-31"},
    {"filter_id": "previous_studies_blocklist", "title": "Exclude participants from previous studies",
     "type": "select", "data_type": "StudyID", "choices": {}},
)
REQUIRED_STUDY = ("name", "external_study_url", "completion_codes", "total_available_places",
                  "estimated_completion_time", "reward")


def pid(name: str) -> str:
    """A participant id in Prolific's format (24 hexadecimal digits) named by `name` in a test."""
    return hashlib.sha256(name.encode()).hexdigest()[:24]


@dataclass
class Call:
    method: str
    path: str
    authorization: str
    body: dict


@dataclass
class State:
    token: str
    studies: dict = field(default_factory=dict)
    submissions: dict = field(default_factory=dict)  # id → dict
    bulks: dict = field(default_factory=dict)  # id → {"study": …, "lines": [(pid, cents)]}
    payments: list = field(default_factory=list)  # (pid, cents) once per payment made
    transitions: list = field(default_factory=list)  # (submission id, action) actually made
    returns: list = field(default_factory=list)
    calls: list = field(default_factory=list)
    faults: list = field(default_factory=list)  # [path_part, status, times_left]
    created: list = field(default_factory=list)  # the body of every create-study call that made a study


class StandIn:
    def __init__(self, token: str = "test-token-" + secrets.token_hex(4)):
        self.state = State(token=token)
        self.lock = threading.Lock()
        handler = type("Handler", (_Handler,), {"standin": self})
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()

    # ------------------------------------------------------------ set-up helpers for tests
    def add_submission(self, study_id: str, participant_id: str, *, status: str = "AWAITING REVIEW",
                       time_taken: int = 600, study_code: str = "", submission_id: str | None = None) -> str:
        sid = submission_id or secrets.token_hex(12)
        self.state.submissions[sid] = {"id": sid, "study_id": study_id, "participant_id": participant_id,
                                       "status": status, "time_taken": time_taken, "study_code": study_code,
                                       "started_at": "2026-11-28T10:00:00Z", "bonus_payments": []}
        return sid

    def fail(self, path_part: str, status: int, times: int = 1, *, after: bool = False):
        """Answer `status` to the next `times` requests whose "METHOD path" holds `path_part`: instead of handling
        them, or (after=True) after handling them — the request took effect, the client sees a failure."""
        self.state.faults.append([path_part, status, times, after])

    def paid(self) -> dict[str, int]:
        """Participant id → how many payments reached them."""
        out: dict[str, int] = {}
        for pid, _ in self.state.payments:
            out[pid] = out.get(pid, 0) + 1
        return out

    # ------------------------------------------------------------ the API
    def handle(self, method: str, raw_path: str, auth: str, body: dict) -> tuple[int, dict | None, dict]:
        s = self.state
        parts = urlsplit(raw_path)
        path, query = parts.path, parse_qs(parts.query)
        s.calls.append(Call(method, raw_path, auth, body))
        if auth != f"Token {s.token}":
            return 401, {"error": "Invalid token"}, {}
        for fault in s.faults:
            if fault[0] in f"{method} {path}" and fault[2] > 0:
                fault[2] -= 1
                if fault[3]:
                    self._route(method, path, query, body)
                return fault[1], {"error": "stand-in fault"}, {"retry-after": "0"} if fault[1] == 429 else {}
        return self._route(method, path, query, body)

    def _route(self, method: str, path: str, query: dict, body: dict):
        s = self.state
        segs = [p for p in path.split("/") if p]  # api v1 …
        if segs[:2] != ["api", "v1"]:
            return 404, None, {}
        rest = segs[2:]
        if rest == ["studies"] and method == "POST":
            missing = [k for k in REQUIRED_STUDY if k not in body]
            if missing:
                return 400, {"error": {"missing": missing}}, {}
            wrong = self._filters_wrong(body.get("filters", []))
            if wrong:
                return 400, {"error": {"filters": wrong}}, {}
            sid = secrets.token_hex(12)
            s.studies[sid] = {**body, "id": sid, "status": "UNPUBLISHED"}
            s.created.append(json.loads(json.dumps(body)))
            return 201, s.studies[sid], {}
        if rest == ["filters"] and method == "GET":
            return 200, self._page(self.filters(), "/api/v1/filters/", query), {}
        if rest == ["studies"] and method == "GET":
            return 200, self._page(list(s.studies.values()), "/api/v1/studies/", query), {}
        if len(rest) == 3 and rest[0] == "studies" and rest[2] == "transition" and method == "POST":
            study = s.studies.get(rest[1])
            if study is None:
                return 404, None, {}
            if body.get("action") != "PUBLISH":
                return 400, {"error": "action"}, {}
            study["status"] = "ACTIVE"
            return 200, study, {}
        if rest == ["submissions"] and method == "GET":
            rows = [x for x in s.submissions.values() if x["study_id"] == (query.get("study") or [""])[0]]
            rows = [{k: x[k] for k in LISTED} for x in rows]  # the list's basic fields; the rest on its page
            return 200, self._page(rows, "/api/v1/submissions/", query), {}
        if len(rest) == 2 and rest[0] == "submissions" and method == "GET" and rest[1] in s.submissions:
            return 200, s.submissions[rest[1]], {}
        if rest == ["submissions", "bonus-payments"] and method == "POST":
            return self._bonus_set_up(body)
        if len(rest) == 3 and rest[0] == "submissions" and method == "POST":
            sub = s.submissions.get(rest[1])
            if sub is None:
                return 404, None, {}
            if rest[2] == "transition":
                return self._transition(sub, body)
            if rest[2] == "request-return":
                if not isinstance(body.get("request_return_reasons"), list):
                    return 400, {"error": "request_return_reasons"}, {}
                s.returns.append(sub["id"])
                return 200, {"id": sub["id"]}, {}
        if len(rest) == 3 and rest[0] == "bulk-bonus-payments" and rest[2] == "pay" and method == "POST":
            bulk = s.bulks.get(rest[1])
            if bulk is None:
                return 404, None, {}
            for pid, cents in bulk["lines"]:  # not idempotent: every call pays
                s.payments.append((pid, cents))
                for sub in s.submissions.values():
                    if sub["participant_id"] == pid and sub["study_id"] == bulk["study"]:
                        sub["bonus_payments"].append(cents)
                        break
            return 202, {}, {}
        return 404, None, {}

    def filters(self) -> list[dict]:
        listed = [dict(f) for f in FILTERS]
        for f in listed:
            if f["filter_id"] == "previous_studies_blocklist":
                f["choices"] = {sid: x.get("internal_name", "") for sid, x in self.state.studies.items()}
        return listed

    def _filters_wrong(self, filters) -> str:
        """What Prolific would refuse in a create's `filters` ('' : nothing)."""
        known = {f["filter_id"]: f for f in self.filters()}
        if not isinstance(filters, list):
            return "filters is not a list"
        for entry in filters:
            f = known.get(entry.get("filter_id")) if isinstance(entry, dict) else None
            if f is None:
                return "unknown filter"
            if f["type"] == "select":
                values = entry.get("selected_values")
                if not isinstance(values, list) or not values or any(v not in f["choices"] for v in values):
                    return f"{f['filter_id']}: a value not among its choices"
            else:
                chosen = entry.get("selected_range")
                if not isinstance(chosen, dict) or not chosen or set(chosen) - {"lower", "upper"}:
                    return f"{f['filter_id']}: selected_range"
                if any(not f["min"] <= v <= f["max"] for v in chosen.values()):
                    return f"{f['filter_id']}: outside its bounds"
        return ""

    def _page(self, rows: list, path: str, query: dict) -> dict:
        page = int((query.get("page") or ["1"])[0])
        chunk = rows[(page - 1) * PAGE_SIZE:page * PAGE_SIZE]
        more = page * PAGE_SIZE < len(rows)
        study = (query.get("study") or [""])[0]
        href = f"{self.url}{path}?" + (f"study={study}&" if study else "") + f"page={page + 1}"
        return {"results": chunk, "_links": {"self": {"href": None}, "next": {"href": href if more else None},
                                             "previous": {"href": None}}, "meta": {"count": len(rows)}}

    def _transition(self, sub: dict, body: dict):
        action = body.get("action")
        target = {"APPROVE": "APPROVED", "REJECT": "REJECTED"}.get(action)
        if target is None:
            return 400, {"error": "action"}, {}
        if action == "REJECT" and (len(str(body.get("message", ""))) < 100
                                   or body.get("rejection_category") not in CATEGORIES):
            return 400, {"error": "message and rejection_category"}, {}
        if sub["status"] == target:
            return 200, sub, {}  # idempotent: the same request again is ignored
        if sub["status"] != "AWAITING REVIEW":
            return 400, {"error": "status"}, {}
        sub["status"] = target
        self.state.transitions.append((sub["id"], action))
        return 200, sub, {}

    def _bonus_set_up(self, body: dict):
        study, text = body.get("study_id"), body.get("csv_bonuses")
        if study not in self.state.studies or not isinstance(text, str):
            return 400, {"error": "study_id and csv_bonuses"}, {}
        lines = []
        takers = {x["participant_id"] for x in self.state.submissions.values() if x["study_id"] == study}
        for line in filter(None, text.splitlines()):
            pid, _, amount = line.partition(",")
            if pid not in takers:
                return 400, {"error": f"{pid} did not take part"}, {}
            lines.append((pid, int(Decimal(amount) * 100)))
        bid = secrets.token_hex(12)
        self.state.bulks[bid] = {"study": study, "lines": lines}
        total = sum(c for _, c in lines)
        return 201, {"id": bid, "study": study, "amount": total, "fees": round(total / 3, 2),
                     "total_amount": round(total * 4 / 3, 2)}, {}


class _Handler(BaseHTTPRequestHandler):
    standin: StandIn

    def log_message(self, *args):
        return None

    def _serve(self):
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else {}
        except ValueError:
            body = {}
        with self.standin.lock:
            status, payload, headers = self.standin.handle(self.command, self.path,
                                                           self.headers.get("authorization", ""),
                                                           body if isinstance(body, dict) else {})
        if status == DROP:  # the connection goes down before any answer: the client reads nothing
            self.close_connection = True
            return
        data = b"" if payload is None else json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = _serve
