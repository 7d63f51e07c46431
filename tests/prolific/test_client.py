"""The Prolific client (issue 38 item 1) against the stand-in and hostile peers on loopback: the token only
to its origin, pagination on the same origin only, 429/5xx retried for safe requests and never for the
ones that are not, failures in words without Prolific's text, every call recorded; no test reaches the real
host."""
from __future__ import annotations

import json
import socket

import pytest

from prolific.client import Client, ProlificError
from tests import hostile

pytestmark = pytest.mark.db_independent


def _client(standin, calls=None, **options):
    def record(method, path, status, seconds, error):
        if calls is not None:
            calls.append((method, path, status, error))
    return Client(record=record, **options)


def test_a_list_is_followed_page_by_page_with_the_token_and_every_call_recorded(standin):
    for n in range(5):
        standin.add_submission("S1", f"p{n}")
    standin.add_submission("OTHER", "px")
    calls = []
    got = list(_client(standin, calls).submissions("S1"))
    assert [s["participant_id"] for s in got] == [f"p{n}" for n in range(5)]
    assert [c[1] for c in calls] == ["/api/v1/submissions/?study=S1", "/api/v1/submissions/?study=S1&page=2",
                                     "/api/v1/submissions/?study=S1&page=3"]
    assert all(c[2] == 200 and c[3] == "" for c in calls)
    assert {c.authorization for c in standin.state.calls} == {f"Token {standin.state.token}"}


def test_429_and_5xx_are_retried_for_a_read_but_a_pay_is_tried_once(standin):
    standin.add_submission("S1", "p0")
    standin.fail("GET /api/v1/submissions/", 429)
    standin.fail("GET /api/v1/submissions/", 503)
    calls = []
    assert len(list(_client(standin, calls).submissions("S1"))) == 1
    assert [c[2] for c in calls] == [429, 503, 200]
    standin.fail("/pay/", 503)
    with pytest.raises(ProlificError) as caught:
        _client(standin, calls).bonus_pay("abc123")
    assert caught.value.unknown and "answered HTTP 503" in str(caught.value)
    assert sum(1 for c in standin.state.calls if c.path.endswith("/pay/")) == 1


def test_a_failure_is_said_in_words_without_prolifics_text_and_the_token_is_never_shown(standin):
    with pytest.raises(ProlificError) as caught:
        _client(standin).study_create({"name": "x"})  # the stand-in refuses it: fields missing
    said = str(caught.value)
    assert "answered HTTP 400" in said and "missing" not in said and caught.value.status == 400
    client = _client(standin)
    assert standin.state.token not in repr(client) and standin.state.token not in said
    with pytest.raises(ProlificError, match="refused the key"):
        Client(token="wrong").study_get("abc")


def test_without_a_token_the_client_says_which_variable_to_set(monkeypatch):
    monkeypatch.delenv("PROLIFIC_API_TOKEN", raising=False)
    with pytest.raises(ProlificError, match="PROLIFIC_API_TOKEN is not set"):
        Client()


def test_a_next_page_on_another_origin_is_not_followed_and_gets_no_token(monkeypatch):
    with hostile.Peer(hostile.openai_like) as elsewhere:
        page = json.dumps({"results": [{"id": "a"}], "_links": {"next": {"href": elsewhere.url + "/steal"}}}).encode()
        with hostile.Peer(lambda peer, conn, request: hostile.send(conn, 200, page)) as first:
            monkeypatch.setenv("PROLIFIC_API_TOKEN", "secret-token-1")
            with pytest.raises(ProlificError, match="another server"):
                list(Client(base_url=first.url).submissions("S1"))
            assert first.requests[0].headers["authorization"] == "Token secret-token-1"
        assert elsewhere.connections == 0


def test_no_test_can_reach_prolifics_real_host(monkeypatch):
    with pytest.raises(socket.gaierror, match="never reach Prolific"):
        socket.getaddrinfo("api.prolific.com", 443)
    monkeypatch.delenv("PROLIFIC_API_URL", raising=False)
    monkeypatch.setenv("PROLIFIC_API_TOKEN", "t")
    calls = []
    client = Client(record=lambda *call: calls.append(call))
    assert client.base_url == "https://api.prolific.com"
    with pytest.raises(ProlificError, match="cannot be reached"):
        client.study_get("abc")
    assert calls[0][2] is None  # recorded, with no answer


def _frames_below(excinfo) -> list:
    """Every frame an error path keeps: the traceback below the test, and those of any chained exception."""
    frames, exc, tb = [], excinfo.value, excinfo.tb.tb_next
    while exc is not None:
        while tb is not None:
            frames.append(tb.tb_frame)
            tb = tb.tb_next
        exc = exc.__cause__ or exc.__context__
        tb = exc.__traceback__ if exc is not None else None
    return frames


def _holds(frame, secret: str) -> bool:
    return any(secret in repr(value) or secret in repr(getattr(value, "__dict__", "")) for value in
               frame.f_locals.values())


@pytest.mark.parametrize("href", ["/api/v1/submissions/?study=S1&page=2\x00", "/api/v1/submissions/\n?page=2",
                                  "/api/v1/sub missions/", "/api/v1/submissions/\x7f", "/api/v1/subm\u0131ssions/"])
def test_a_hostile_next_link_gives_a_clean_error_and_no_frame_holds_the_token(monkeypatch, href):
    page = json.dumps({"results": [{"id": "a"}], "_links": {"next": {"href": href}}}).encode()
    with hostile.Peer(lambda peer, conn, request: hostile.send(conn, 200, page)) as prolific:
        with pytest.raises(ProlificError, match="not a URL Duet follows") as caught:
            list(Client(base_url=prolific.url, token="secret-token-2").submissions("S1"))
        assert len(prolific.requests) == 1  # the first page only
    assert caught.value.__cause__ is None and caught.value.__context__ is None
    assert not any(_holds(frame, "secret-token-2") for frame in _frames_below(caught))


def test_an_error_from_the_http_stack_becomes_the_clients_own_without_the_requests_frames(monkeypatch):
    """A path httpx cannot send (a control character: httpx.InvalidURL, which is not an httpx.HTTPError) asked
    directly: a ProlificError in words, raised with no context, so no frame of the request (whose locals hold
    the Authorization header) is kept by it."""
    with hostile.Peer(hostile.openai_like) as prolific:
        client = Client(base_url=prolific.url, token="secret-token-3")
        with pytest.raises(ProlificError) as caught:
            client.call("GET", "/api/v1/submissions/?study=\x00")
        assert prolific.connections == 0
    assert str(caught.value).startswith("Prolific ") and "secret-token-3" not in str(caught.value)
    assert caught.value.__cause__ is None and caught.value.__context__ is None
    frames = _frames_below(caught)
    assert frames and not any(_holds(frame, "secret-token-3") for frame in frames)
    assert "secret-token-3" not in repr(client) and "secret-token-3" not in repr(vars(client))


def test_a_deadline_bounds_every_request_and_every_wait(monkeypatch):
    import time

    from prolific.client import ProlificDeadline

    with hostile.Peer(hostile.drip(0.2, 10)) as slow:
        client = Client(base_url=slow.url, token="t")
        client.deadline = time.monotonic() + 1.0
        started = time.monotonic()
        with pytest.raises(ProlificDeadline):
            client.study_get("abc")
        assert time.monotonic() - started < 1.6
        with pytest.raises(ProlificDeadline):  # past the deadline: nothing more is asked
            client.study_get("abc")
        assert slow.connections == 1
    waits = []
    with hostile.Peer(lambda peer, conn, request: hostile.send(conn, 429, b"{}", extra="retry-after: 30\r\n")) as busy:
        client = Client(base_url=busy.url, token="t", sleep=waits.append)
        client.deadline = time.monotonic() + 5.0
        with pytest.raises(ProlificDeadline, match="would pass the deadline"):
            client.study_get("abc")
    assert waits == []  # a 30 s Retry-After is not waited when 5 s are left
