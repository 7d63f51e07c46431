"""A key never rides an error (issue 45 item 2): every exception of the HTTP stack becomes the client's own
error, raised afresh, and neither it nor any frame its traceback keeps holds a model API key or Prolific's
token in clear — what an error reporter capturing locals (Sentry's `include_local_variables`) would send.

The walk is stricter than a reporter: every local of every frame of the traceback (but the test's own),
followed through containers, attributes and chained exceptions, each value's repr and text searched."""
from __future__ import annotations

import asyncio
import json
import types
from pathlib import Path

import pytest

from prolific.client import Client, ProlificError
from common import outbound
from common.outbound import OutboundError
from tests import hostile

pytestmark = pytest.mark.db_independent
TESTS = Path(__file__).resolve().parents[1]
KEY = "sk-lab-SECRET-4f2a9c"
SKIPPED = (types.ModuleType, types.FunctionType, types.BuiltinFunctionType, types.CodeType, types.FrameType, type)


def clear_copies(error: BaseException, secret: str) -> list[str]:
    """Where `secret` is found in clear from `error`: its args and attributes, its traceback's frames' locals
    (frames of the tests themselves left out), and its chained exceptions, followed to any depth."""
    found, seen = [], set()

    def walk(value, where: str, depth: int = 0) -> None:
        if id(value) in seen or depth > 12 or isinstance(value, SKIPPED):
            return
        seen.add(id(value))
        if isinstance(value, str):
            found.extend([where] if secret in value else [])
            return
        if isinstance(value, bytes | bytearray | memoryview):
            found.extend([where] if secret.encode() in bytes(value) else [])
            return
        try:
            shown = repr(value)
        except Exception:  # noqa: BLE001 — a repr that fails shows nothing
            shown = ""
        if secret in shown:
            found.append(f"{where} (repr)")
        if isinstance(value, BaseException):
            exception(value, where, depth)
        if isinstance(value, dict):
            for k, v in list(value.items()):
                walk(k, f"{where} key", depth + 1)
                walk(v, f"{where}[{k!r}]", depth + 1)
        elif isinstance(value, list | tuple | set | frozenset):
            for i, v in enumerate(list(value)):
                walk(v, f"{where}[{i}]", depth + 1)
        if isinstance(value, types.MethodType):
            walk(value.__self__, f"{where}.__self__", depth + 1)
        attributes = getattr(value, "__dict__", None)
        if isinstance(attributes, dict):
            walk(attributes, f"{where}.__dict__", depth + 1)
        for slot in getattr(type(value), "__slots__", ()):
            walk(getattr(value, slot, None), f"{where}.{slot}", depth + 1)

    def exception(exc: BaseException, where: str, depth: int) -> None:
        walk(str(exc), f"{where} str", depth + 1)
        walk(exc.args, f"{where}.args", depth + 1)
        tb = exc.__traceback__
        while tb is not None:
            frame = tb.tb_frame
            if TESTS not in Path(frame.f_code.co_filename).resolve().parents:
                walk(dict(frame.f_locals), f"{where} frame {frame.f_code.co_name}", depth + 1)
            tb = tb.tb_next
        for chained in (exc.__cause__, exc.__context__):
            if chained is not None:
                walk(chained, f"{where} chained", depth + 1)

    walk(error, type(error).__name__)
    return found


def _ask(url: str, path: str, **options) -> OutboundError:
    with pytest.raises(OutboundError) as caught:
        outbound.request("GET", url, path, key=KEY, **{"seconds": 5.0, "max_bytes": 1024 * 1024, **options})
    return caught.value


LEAKY = """
def leaky(key):
    headers = {"authorization": f"Bearer {key}".encode()}
    raise ValueError("no")
"""


def test_the_walk_finds_a_key_where_the_old_client_left_it():
    """The check can fail: a key held as a local, a header's bytes or an attribute is found (`leaky` is
    compiled as code outside the tests, whose own frames the walk leaves out)."""
    space = {}
    exec(compile(LEAKY, "<outside the tests>", "exec"), space)
    with pytest.raises(ValueError) as caught:
        space["leaky"](KEY)
    found = clear_copies(caught.value, KEY)
    assert any(w.endswith("['key']") for w in found) and any(w.endswith("['authorization']") for w in found)
    assert clear_copies(RuntimeError(types.SimpleNamespace(token=KEY)), KEY)


@pytest.mark.parametrize("path", ["/v1/models\x01", "/v1/\x00models", "/v1/models\x7f"])
def test_a_path_httpx_refuses_is_the_clients_own_error_with_no_key_kept(path):
    """httpx.InvalidURL is not an httpx.HTTPError: it left the client unhandled, the key in its frames."""
    with hostile.Peer(hostile.openai_like) as peer:
        error = _ask(peer.url, path)
        assert error.kind == outbound.URL and "not a valid URL" in str(error)
        assert error.__context__ is None and error.__cause__ is None
        assert clear_copies(error, KEY) == [] and peer.connections == 0


def test_any_other_exception_of_the_http_stack_is_said_by_its_class_only():
    with hostile.Peer(hostile.openai_like) as peer:
        with pytest.raises(OutboundError) as caught:
            outbound.request("POST", peer.url, "/v1/completions", body={"prompt": object()}, key=KEY, seconds=5.0,
                             max_bytes=1024)  # httpx cannot encode the body: a TypeError, not an httpx error
        assert caught.value.kind == outbound.FAILED and outbound.FAILED not in outbound.RETRIABLE
        assert str(caught.value) == "was not asked: Duet's HTTP client failed (TypeError)"
        assert clear_copies(caught.value, KEY) == [] and peer.connections == 0


@pytest.mark.parametrize("behave,kind", [(hostile.drip(0.2), outbound.TIMEOUT), (hostile.giant(), outbound.TOO_BIG)])
def test_an_error_after_the_key_was_sent_keeps_no_copy_of_it(behave, kind):
    """The request with its Authorization header lived in httpx's frames and in its exception: both gone."""
    with hostile.Peer(behave) as peer:
        error = _ask(peer.url, "/v1/models", seconds=0.6)
        assert error.kind == kind and peer.requests[0].headers["authorization"] == f"Bearer {KEY}"
        assert clear_copies(error, KEY) == []


def test_the_async_session_keeps_no_copy_either():
    async def ask(url, path, seconds):
        async with outbound.AsyncSession(url, key=KEY) as session:
            return await session.request("GET", path, seconds=seconds)

    with hostile.Peer(hostile.drip(0.2)) as peer:
        for path, kind in (("/v1/models\x01", outbound.URL), ("/v1/models", outbound.TIMEOUT)):
            with pytest.raises(OutboundError) as caught:
                asyncio.run(ask(peer.url, path, 0.6))
            assert caught.value.kind == kind and clear_copies(caught.value, KEY) == []
        assert peer.requests[0].headers["authorization"] == f"Bearer {KEY}"
    with hostile.Peer(hostile.openai_like) as peer:
        assert asyncio.run(ask(peer.url, "/v1/models", 5.0)).status == 200
        assert peer.requests[0].headers["authorization"] == f"Bearer {KEY}"


def test_a_credential_shows_nothing():
    credential = outbound.Credential(KEY, scheme="Token")
    assert KEY not in repr(credential) and KEY.encode() not in b"".join(vars(credential).values())


# ------------------------------------------------------------------------------ a hostile Prolific
TOKEN = "prolific-token-SECRET-77e1"


def _hostile_prolific(next_href: str):
    """A Prolific stand-in whose first page of submissions links to `next_href` (the path written over its own
    origin when it starts with '{origin}')."""
    def behave(peer, conn, request):
        href = next_href.replace("{origin}", peer.url)
        page = {"results": [{"id": "s1", "participant_id": "p1"}], "_links": {"next": {"href": href}}}
        hostile.send(conn, 200, json.dumps(page).encode())
    return behave


@pytest.mark.parametrize("href", [
    "/api/v1/submissions/?study=S1&page=2\x01", "{origin}/api/v1/submissions/?page=2\x00",
    "/api/v1/submissions/\x7f?page=2", "http://[::1/api/v1/submissions/", "http://127.0.0.1:99999/api/v1/",
    "http://127.0.0.1:port/api/",
])
def test_a_hostile_next_link_gives_a_clean_error_and_no_token_in_any_frame(monkeypatch, href):
    monkeypatch.setenv("PROLIFIC_API_TOKEN", TOKEN)
    calls = []
    with hostile.Peer(_hostile_prolific(href)) as peer:
        client = Client(base_url=peer.url, record=lambda *call: calls.append(call))
        with pytest.raises(ProlificError) as caught:
            list(client.submissions("S1"))
        assert "not followed" in str(caught.value) and len(peer.requests) == 1
        assert peer.requests[0].headers["authorization"] == f"Token {TOKEN}"
    assert clear_copies(caught.value, TOKEN) == []
    assert [c[1] for c in calls] == ["/api/v1/submissions/?study=S1"]  # nothing with the link's characters stored


def test_a_path_the_http_stack_refuses_is_a_prolific_error_with_no_token_in_any_frame(monkeypatch):
    monkeypatch.setenv("PROLIFIC_API_TOKEN", TOKEN)
    with hostile.Peer(_hostile_prolific("")) as peer:
        client = Client(base_url=peer.url)
        with pytest.raises(ProlificError) as caught:
            client.call("GET", "/api/v1/submissions/?page=2\x01")
        assert str(caught.value).startswith("Prolific was not asked") and peer.connections == 0
    assert clear_copies(caught.value, TOKEN) == []
    assert TOKEN not in repr(client) and clear_copies(RuntimeError(client), TOKEN) == []


def test_a_runs_server_error_keeps_no_copy_of_the_model_key():
    """A run's client (inference/scorers/client.py), its session still open: the error and every frame it
    keeps — the client, its session, httpx's pool with its connection — hold the key masked only."""
    from inference.scorers.client import ServerClient, ServerError

    async def ask(url):
        async with ServerClient(url, api_key=KEY, retries=0) as client:
            try:
                await client.post("/v1/completions", {"prompt": "x"})
            except ServerError as error:
                return error, clear_copies(error, KEY) + clear_copies(RuntimeError(client), KEY)

    with hostile.Peer(hostile.internal_service) as peer:
        error, found = asyncio.run(ask(peer.url))
        assert "answered HTTP 400" in str(error) and hostile.MARKER not in str(error) and found == []
        assert peer.requests[0].headers["authorization"] == f"Bearer {KEY}"
