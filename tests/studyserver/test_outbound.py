"""One way out (issue 34 item 2): common/outbound.py against hostile peers on loopback — URLs
refused before any connection, the production policy refusing loopback, link-local and private
addresses and the deployment's own services, a DNS answer used once, a dripping peer cut at the total
deadline, a giant or compressed answer cut at the byte cap, failures said without the peer's words;
and API keys read only from the deployment's list, for the origins it binds them to."""
from __future__ import annotations

import asyncio
import socket
import time

import pytest

from common import outbound
from common.outbound import OutboundError
from tests import hostile

pytestmark = pytest.mark.db_independent


@pytest.fixture
def production(monkeypatch):
    """The production policy: DUET_PRODUCTION=true and no DUET_OUTBOUND_ALLOW (nothing non-public allowed)."""
    monkeypatch.setenv("DUET_PRODUCTION", "true")
    monkeypatch.delenv("DUET_OUTBOUND_ALLOW", raising=False)


def _get(url: str, path: str = "/v1/models", **options):
    return outbound.request("GET", url, path, **{"seconds": 5.0, "max_bytes": 1024 * 1024, **options})


@pytest.mark.parametrize("url,says", [
    ("{base}/v1?x=", "it has a query"),
    ("{base}/?", "it has a query"),
    ("{base}/#", "it has a fragment"),
    ("http://user:pw@127.0.0.1:{port}", "user-info"),
    ("ftp://127.0.0.1:{port}", "only http and https"),
    ("http://127.0.0.1:99999", "port is not a number"),
    ("http:///v1", "names no host"),
    ("http://127.0.0.1:{port}/a b", "spaces"),
])
def test_a_url_with_a_query_fragment_or_user_info_is_refused_before_any_connection(url, says):
    with hostile.Peer(hostile.openai_like) as peer:
        with pytest.raises(OutboundError) as caught:
            _get(url.format(base=peer.url, port=peer.port))
        assert caught.value.kind == outbound.URL and says in str(caught.value)
        time.sleep(0.05)
        assert peer.connections == 0


def test_a_path_prefix_is_kept():
    with hostile.Peer(hostile.openai_like) as peer:
        assert _get(peer.url + "/api/", "/v1/models").status == 200
        assert [r.path for r in peer.requests] == ["/api/v1/models"]


@pytest.mark.parametrize("url,kind", [
    ("http://169.254.169.254/latest/meta-data", "link-local"),
    ("http://10.1.2.3:8000", "private"),
    ("http://192.168.0.7", "private"),
    ("http://[fe80::1]:8000", "link-local"),
    ("http://0.0.0.0:8000", "unspecified"),
    ("http://224.0.0.1", "multicast"),
])
def test_the_production_policy_refuses_non_public_addresses(production, url, kind):
    started = time.monotonic()
    with pytest.raises(OutboundError) as caught:
        _get(url)
    assert caught.value.kind == outbound.DESTINATION and f"is a {kind} address" in str(caught.value)
    assert "DUET_OUTBOUND_ALLOW" in str(caught.value) and time.monotonic() - started < 1


def test_the_production_policy_refuses_loopback_without_connecting(production):
    with hostile.Peer(hostile.openai_like) as peer:
        for url in (peer.url, f"http://[::1]:{peer.port}", f"http://localhost:{peer.port}",
                    f"http://[::ffff:127.0.0.1]:{peer.port}"):
            with pytest.raises(OutboundError) as caught:
                _get(url)
            assert caught.value.kind == outbound.DESTINATION and "loopback" in str(caught.value), url
        time.sleep(0.05)
        assert peer.connections == 0


def test_an_administrator_allows_an_address_and_the_embedded_default_allows_loopback(production, monkeypatch):
    with hostile.Peer(hostile.openai_like) as peer:
        monkeypatch.setenv("DUET_OUTBOUND_ALLOW", f"127.0.0.1:{peer.port + 1}")  # another port: still refused
        with pytest.raises(OutboundError):
            _get(peer.url)
        for allowed in (f"127.0.0.1:{peer.port}", "127.0.0.0/8", "loopback"):
            monkeypatch.setenv("DUET_OUTBOUND_ALLOW", allowed)
            assert _get(peer.url).status == 200
        monkeypatch.setenv("DUET_PRODUCTION", "false")
        monkeypatch.delenv("DUET_OUTBOUND_ALLOW")
        assert _get(peer.url).status == 200


def test_the_deployments_own_services_are_refused_unless_named_with_their_port(monkeypatch):
    with hostile.Peer(hostile.openai_like) as peer:
        for variable, url in (("CACHE_URL", f"redis://127.0.0.1:{peer.port}/1"),
                              ("DATABASE_URL", f"postgres://duet:pw@localhost:{peer.port}/duet")):
            monkeypatch.setenv(variable, url)
            with pytest.raises(OutboundError) as caught:
                _get(peer.url)  # loopback is allowed here (the embedded default), the service is not
            assert "own database, broker or cache" in str(caught.value)
            monkeypatch.delenv(variable)
        assert peer.connections == 0
        monkeypatch.setenv("CELERY_BROKER_URL", f"redis://127.0.0.1:{peer.port}/0")
        monkeypatch.setenv("DUET_OUTBOUND_ALLOW", f"127.0.0.1:{peer.port}")
        assert _get(peer.url).status == 200


def test_a_host_name_is_resolved_once_and_the_checked_address_is_the_one_connected_to(monkeypatch):
    """DNS rebinding: the attacker's name server answers the check with an allowed address and every later
    question with the cloud's metadata address; the connection still goes where the check looked."""
    real = socket.getaddrinfo
    asked = []

    def rebinding(host, port, *args, **kwargs):
        if host != "rebind.example":
            return real(host, port, *args, **kwargs)
        asked.append(host)
        address = "127.0.0.1" if len(asked) == 1 else "169.254.169.254"
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, port))]

    monkeypatch.setattr(socket, "getaddrinfo", rebinding)
    with hostile.Peer(hostile.openai_like) as peer:
        answer = _get(f"http://rebind.example:{peer.port}")
        assert answer.status == 200 and asked == ["rebind.example"]
        assert peer.requests[0].headers["host"] == f"rebind.example:{peer.port}"  # the name, at the checked address


def test_a_name_with_one_refused_address_among_its_answers_is_refused(production, monkeypatch):
    monkeypatch.setenv("DUET_OUTBOUND_ALLOW", "127.0.0.1")
    real = socket.getaddrinfo

    def two(host, port, *args, **kwargs):
        if host != "mixed.example":
            return real(host, port, *args, **kwargs)
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (a, port)) for a in ("127.0.0.1", "10.9.8.7")]

    monkeypatch.setattr(socket, "getaddrinfo", two)
    with pytest.raises(OutboundError, match="10.9.8.7"):
        _get("http://mixed.example:8000")


def test_a_dripping_peer_is_cut_at_the_total_deadline():
    """One header byte every 0.3 s: each read returns in time, so httpx's per-read timeout would wait for ever."""
    with hostile.Peer(hostile.drip(0.3)) as peer:
        started = time.monotonic()
        with pytest.raises(OutboundError) as caught:
            _get(peer.url, seconds=1.5)
        took = time.monotonic() - started
        assert caught.value.kind == outbound.TIMEOUT and str(caught.value) == "did not answer within 1.5 s"
        assert 1.4 <= took < 2.2

        async def ask():
            async with outbound.AsyncSession(peer.url) as session:
                return await session.request("GET", "/v1/models", seconds=1.5)

        started = time.monotonic()
        with pytest.raises(OutboundError, match="did not answer within 1.5 s"):
            asyncio.run(ask())
        assert time.monotonic() - started < 2.2


def test_a_giant_answer_is_cut_at_the_byte_cap():
    with hostile.Peer(hostile.giant()) as peer:
        started = time.monotonic()
        with pytest.raises(OutboundError) as caught:
            _get(peer.url, max_bytes=256 * 1024)
        assert caught.value.kind == outbound.TOO_BIG and str(caught.value) == "sent more than 262,144 bytes"

        async def ask():
            async with outbound.AsyncSession(peer.url, max_bytes=1024 * 1024) as session:
                return await session.request("GET", "/v1/models", seconds=10)

        with pytest.raises(OutboundError, match="sent more than 1 MB"):
            asyncio.run(ask())
        assert time.monotonic() - started < 3


def test_a_compressed_answer_is_counted_as_it_is_decompressed():
    with hostile.Peer(hostile.gzip_bomb()) as peer:  # 50 MB of spaces in about 50 KB
        with pytest.raises(OutboundError, match="sent more than 1 MB"):
            _get(peer.url, max_bytes=1024 * 1024)


@pytest.mark.parametrize("code,words", [(401, "refused the key (HTTP 401)"), (403, "refused the key (HTTP 403)"),
                                        (404, "answered HTTP 404"), (500, "answered HTTP 500"),
                                        (302, "answered HTTP 302 (a redirect")])
def test_failures_are_said_by_class_without_the_peers_words(code, words):
    with hostile.Peer(hostile.status(code)) as peer:
        answer = _get(peer.url)
        assert answer.failure().startswith(words) and hostile.MARKER not in answer.failure()
        with pytest.raises(OutboundError) as caught:
            answer.json()
        assert str(caught.value) == "did not answer with JSON"


def test_a_closed_port_cannot_be_reached():
    from tests.integration.servers import free_port

    with pytest.raises(OutboundError) as caught:
        _get(f"http://127.0.0.1:{free_port()}")
    assert caught.value.kind == outbound.UNREACHABLE and str(caught.value) == "cannot be reached"


# ------------------------------------------------------------------------------------------- API keys
def test_a_key_is_read_only_from_the_list_and_only_for_its_origins(monkeypatch):
    monkeypatch.setenv("LAB_KEY", "sk-lab-123")
    monkeypatch.delenv("DUET_MODEL_API_KEYS", raising=False)
    with pytest.raises(OutboundError, match="LAB_KEY is not on this deployment's list"):
        outbound.api_key("LAB_KEY", urls=["https://api.openai.com"])
    monkeypatch.setenv("DUET_MODEL_API_KEYS", "LAB_KEY=https://api.openai.com|http://127.0.0.1:8000")
    assert outbound.api_key("LAB_KEY", urls=["https://api.openai.com/v1", "http://127.0.0.1:8000"]) == "sk-lab-123"
    for elsewhere in ("https://api.openai.com.evil.example", "http://api.openai.com", "https://api.openai.com:8443",
                      "http://127.0.0.1:8001"):
        with pytest.raises(OutboundError, match="is sent only to"):
            outbound.api_key("LAB_KEY", urls=[elsewhere])
    assert outbound.api_key("", urls=["http://anywhere"]) == ""


@pytest.mark.parametrize("name", ["SECRET_KEY", "DATABASE_URL", "CELERY_BROKER_URL", "CACHE_URL"])
def test_the_deployments_own_secrets_are_never_keys_even_when_listed(monkeypatch, name):
    monkeypatch.setenv(name, "postgres://duet:hunter2@db/duet")
    monkeypatch.setenv("DUET_MODEL_API_KEYS", f"{name}=http://127.0.0.1:8000")
    with pytest.raises(OutboundError, match="own settings, never a model API key"):
        outbound.api_key(name, urls=["http://127.0.0.1:8000"])


def test_a_listed_name_holding_a_service_url_is_refused(monkeypatch):
    monkeypatch.setenv("DATABASE_URL", "postgres://duet:hunter2@db/duet")
    monkeypatch.setenv("COPY_OF_DB", "postgres://duet:hunter2@db/duet")
    monkeypatch.setenv("DUET_MODEL_API_KEYS", "COPY_OF_DB=http://127.0.0.1:8000")
    with pytest.raises(OutboundError, match="never a model API key"):
        outbound.api_key("COPY_OF_DB", urls=["http://127.0.0.1:8000"])


def test_a_name_server_that_does_not_answer_holds_no_caller_past_the_deadline(monkeypatch):
    real = socket.getaddrinfo

    def stalled(host, port, *args, **kwargs):
        if host != "stalled.example":
            return real(host, port, *args, **kwargs)
        time.sleep(3)
        return real("127.0.0.1", port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", stalled)
    started = time.monotonic()
    with pytest.raises(OutboundError) as caught:
        _get("http://stalled.example:8000", seconds=1.0)
    assert time.monotonic() - started < 1.5
    assert caught.value.kind == outbound.UNREACHABLE and "did not resolve within 1 s" in str(caught.value)


def test_a_malformed_allow_list_is_said_not_raised(monkeypatch):
    monkeypatch.setenv("DUET_OUTBOUND_ALLOW", "gpu1:notaport")
    with pytest.raises(OutboundError, match="DUET_OUTBOUND_ALLOW: 'gpu1:notaport' is not a CIDR block"):
        _get("http://127.0.0.1:8000")
