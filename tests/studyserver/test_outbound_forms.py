"""Outbound, the last forms (issue 45 item 2): every IPv6 form that embeds an IPv4 address is judged by the
IPv4 address(es) it carries, deprecated site-local fec0::/10 and unassigned IPv6 space are refused, and the
deployment's own database, broker and cache are refused by host — every port, every address the host
resolves to, the embedded forms of those addresses — with this machine's loopback refused on their ports.
The checks run in `outbound.target`, before any connection: nothing here connects anywhere."""
from __future__ import annotations

import ipaddress
import socket

import pytest

from common import outbound
from common.outbound import OutboundError

pytestmark = pytest.mark.db_independent


@pytest.fixture
def production(monkeypatch):
    """The production policy (nothing non-public allowed) and no own services but the test's."""
    monkeypatch.setenv("DUET_PRODUCTION", "true")
    for name in ("DUET_OUTBOUND_ALLOW", "DATABASE_URL", "CELERY_BROKER_URL", "CACHE_URL"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def embedded(monkeypatch):
    """The embedded default: loopback allowed (a model server on this machine), no own services but the test's."""
    monkeypatch.setenv("DUET_PRODUCTION", "false")
    for name in ("DUET_OUTBOUND_ALLOW", "DATABASE_URL", "CELERY_BROKER_URL", "CACHE_URL"):
        monkeypatch.delenv(name, raising=False)


def _url(host: str, port: int = 8000) -> str:
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def _refused(url: str) -> str:
    with pytest.raises(OutboundError) as caught:
        outbound.target(url)
    assert caught.value.kind == outbound.DESTINATION, str(caught.value)
    return str(caught.value)


# (the IPv6 address as an attacker writes it, the IPv4 address(es) it carries, what the first refused one is)
FORMS = [
    ("64:ff9b::a9fe:a9fe", ["169.254.169.254"], "link-local"),  # NAT64, the cloud's metadata address
    ("64:ff9b::7f00:1", ["127.0.0.1"], "loopback"),
    ("64:ff9b::10.0.0.5", ["10.0.0.5"], "private"),
    ("2002:7f00:1::", ["127.0.0.1"], "loopback"),  # 6to4: bits 16-47
    ("2002:a9fe:a9fe::1", ["169.254.169.254"], "link-local"),
    ("2002:a00:5:1::2", ["10.0.0.5"], "private"),
    ("::127.0.0.1", ["127.0.0.1"], "loopback"),  # IPv4-compatible
    ("::a9fe:a9fe", ["169.254.169.254"], "link-local"),
    ("::10.0.0.5", ["10.0.0.5"], "private"),
    ("::ffff:0:7f00:1", ["127.0.0.1"], "loopback"),  # SIIT (IPv4-translated)
    ("::ffff:0:a9fe:a9fe", ["169.254.169.254"], "link-local"),
    ("::ffff:7f00:1", ["127.0.0.1"], "loopback"),  # IPv4-mapped
    ("::ffff:169.254.169.254", ["169.254.169.254"], "link-local"),
    # Teredo: the server (bits 32-63) and the client (the last 32 bits, inverted) are both judged
    ("2001:0:4136:e378:8000:63bf:80ff:fffe", ["65.54.227.120", "127.0.0.1"], "loopback"),
    ("2001:0:4136:e378::5601:5601", ["65.54.227.120", "169.254.169.254"], "link-local"),
    ("2001:0:a00:5::f7f7:f7f7", ["10.0.0.5", "8.8.8.8"], "private"),
    # the local-use NAT64 prefix (any length from /48 to /96): every position RFC 6052 allows is judged
    ("64:ff9b:1::a9fe:a9fe", ["169.254.169.254", "0.0.0.169", "0.0.0.0"], "link-local"),
    ("64:ff9b:1:a00:0:500::", ["0.0.0.0", "0.5.0.0", "0.0.5.0", "10.0.0.5"], "unspecified"),
]


@pytest.mark.parametrize("written,ipv4,kind", FORMS, ids=[f[0] for f in FORMS])
def test_an_ipv6_form_is_judged_by_the_ipv4_address_it_carries(production, written, ipv4, kind):
    assert [str(a) for a in outbound.carried(ipaddress.ip_address(written))] == ipv4
    said = _refused(_url(written))
    assert f"is a {kind} address" in said and "carried in" in said and "DUET_OUTBOUND_ALLOW" in said


@pytest.mark.parametrize("written,kind", [("fec0::1", "site-local"), ("feff:1:2::3", "site-local"),
                                          ("4000::1", "reserved"), ("::2", "private")])
def test_site_local_and_unassigned_ipv6_addresses_are_refused(production, written, kind):
    assert f"is a {kind} address" in _refused(_url(written))


@pytest.mark.parametrize("written", ["64:ff9b::808:808", "2002:808:808::1", "::ffff:808:808",
                                     "2001:0:4136:e378:8000:63bf:f7f7:f7f7", "2606:4700:4700::1111"])
def test_a_form_carrying_a_public_address_is_public(production, written):
    assert ipaddress.ip_address(outbound.target(_url(written)).address) == ipaddress.ip_address(written)


def test_an_allow_entry_matches_the_carried_address_or_the_address_as_written(production, monkeypatch):
    monkeypatch.setenv("DUET_OUTBOUND_ALLOW", "10.0.0.0/8")
    assert outbound.target(_url("64:ff9b::a00:7")).address == "64:ff9b::a00:7"
    assert "link-local" in _refused(_url("64:ff9b::a9fe:a9fe"))
    assert "private" in _refused(_url("64:ff9b:1::a00:7"))  # its /64 position carries 0.0.0.10, not allowed
    monkeypatch.setenv("DUET_OUTBOUND_ALLOW", "64:ff9b:1::/48")  # an administrator's own NAT64 prefix, named
    assert outbound.target(_url("64:ff9b:1::a00:7")).host == "64:ff9b:1::a00:7"


# ------------------------------------------------------------------------------ own services, by host
@pytest.mark.parametrize("url", [
    "http://10.0.0.5:5432", "http://10.0.0.5:8000", "http://10.0.0.5", "http://[64:ff9b::a00:5]:5432",
    "http://[::ffff:10.0.0.5]:9000", "http://[::10.0.0.5]:5432", "http://[2002:a00:5::1]:5432",
    "http://[::ffff:0:a00:5]:8080", "http://[2001:0:a00:5::f7f7:f7f7]:8000",
    "http://127.0.0.1:5432", "http://[::1]:5432", "http://0.0.0.0:5432",
])
def test_the_database_host_is_refused_on_every_port_and_in_every_form(production, monkeypatch, url):
    """A lab that allows its private network still cannot reach its database's host (10.0.0.5), on any port or
    written any way, nor the database's port on this machine."""
    monkeypatch.setenv("DATABASE_URL", "postgres://duet:pw@10.0.0.5:5432/duet")
    monkeypatch.setenv("DUET_OUTBOUND_ALLOW", "10.0.0.0/8,loopback")
    assert "own database, broker or cache" in _refused(url)


def test_another_host_on_the_databases_port_is_judged_as_any_address(production, monkeypatch):
    monkeypatch.setenv("DATABASE_URL", "postgres://duet:pw@10.0.0.5:5432/duet")
    assert "is a private address" in _refused("http://10.0.0.6:5432")  # production: the private rule
    monkeypatch.setenv("DUET_OUTBOUND_ALLOW", "10.0.0.0/8")
    assert outbound.target("http://10.0.0.6:5432").address == "10.0.0.6"  # allowed: it is not the database's host
    monkeypatch.setenv("DUET_OUTBOUND_ALLOW", "10.0.0.0/8,10.0.0.5:8000")  # named with its port: a model server
    assert outbound.target("http://10.0.0.5:8000").address == "10.0.0.5"  # on the database's host
    assert "own database" in _refused("http://10.0.0.5:5432")


def test_every_address_the_services_host_resolves_to_is_refused(production, monkeypatch):
    monkeypatch.setenv("CELERY_BROKER_URL", "redis://broker.internal:6379/0")
    monkeypatch.setenv("DUET_OUTBOUND_ALLOW", "10.0.0.0/8")
    real = socket.getaddrinfo
    names = {"broker.internal": ("10.0.0.5", "10.0.0.7"), "alias.internal": ("10.0.0.7",),
             "gpu.internal": ("10.0.0.9",)}

    def resolve(host, port, *args, **kwargs):
        if host not in names:
            return real(host, port, *args, **kwargs)
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (a, port)) for a in names[host]]

    monkeypatch.setattr(socket, "getaddrinfo", resolve)
    for url in ("http://10.0.0.7:8000", "http://alias.internal:9000", "http://broker.internal:80",
                "http://[64:ff9b::a00:7]:6379"):
        assert "own database, broker or cache" in _refused(url), url
    assert outbound.target("http://gpu.internal:8000").address == "10.0.0.9"


@pytest.mark.parametrize("url", [
    "http://127.0.0.1:6379", "http://127.0.0.2:6379", "http://[::1]:6379", "http://localhost:6379",
    "http://0.0.0.0:6379", "http://[::]:6379", "http://[::ffff:127.0.0.1]:6379", "http://[::127.0.0.1]:6379",
    "http://[64:ff9b::7f00:2]:6379", "http://[::ffff:0:7f00:1]:6379",
])
def test_on_the_embedded_default_a_local_service_is_refused_on_every_loopback_address(embedded, monkeypatch, url):
    monkeypatch.setenv("CACHE_URL", "redis://127.0.0.1:6379/1")
    assert "own database, broker or cache" in _refused(url)


def test_on_the_embedded_default_a_model_server_on_this_machine_is_still_allowed(embedded, monkeypatch):
    """The services' ports on this machine are refused, not the machine: a llama.cpp server on loopback
    beside a local Redis is the embedded default's model server."""
    monkeypatch.setenv("CACHE_URL", "redis://localhost:6379/1")
    monkeypatch.setenv("DATABASE_URL", "postgres://duet:pw@10.0.0.5:5432/duet")  # elsewhere: its port here too
    for url in ("http://127.0.0.1:8080", "http://[::1]:8080", "http://localhost:8080", "http://127.0.0.2:8000"):
        assert outbound.target(url).port in (8080, 8000), url
    for url in ("http://127.0.0.1:6379", "http://127.0.0.1:5432", "http://localhost:5432"):
        assert "own database, broker or cache" in _refused(url), url
    monkeypatch.setenv("DUET_OUTBOUND_ALLOW", "loopback,127.0.0.1:6379")  # named with its port: allowed there
    assert outbound.target("http://127.0.0.1:6379").port == 6379
    assert "own database" in _refused("http://127.0.0.2:6379")


def test_a_name_whose_dns64_answer_carries_an_internal_address_is_refused(production, monkeypatch):
    """On an IPv6-only network a DNS64 resolver answers an IPv4-only name with 64:ff9b::<its IPv4 address>."""
    real = socket.getaddrinfo

    def dns64(host, port, *args, **kwargs):
        if host != "metadata.example":
            return real(host, port, *args, **kwargs)
        return [(socket.AF_INET6, socket.SOCK_STREAM, 6, "", ("64:ff9b::a9fe:a9fe", port, 0, 0))]

    monkeypatch.setattr(socket, "getaddrinfo", dns64)
    said = _refused("http://metadata.example/latest/meta-data")
    assert "is a link-local address (169.254.169.254, carried in 64:ff9b::a9fe:a9fe)" in said
