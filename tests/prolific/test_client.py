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
