"""DUET_PUBLIC_ORIGIN (issue 43 item 5): read and normalised by common/env.py (a malformed value stops the
process at start-up), and judged by common/public_origin.py: https, and a host participants on the internet
can open (addresses judged as outbound requests judge them; local-only names refused by name)."""
from __future__ import annotations

import pytest

from common import env
from common.public_origin import origin_problem

pytestmark = pytest.mark.db_independent


@pytest.mark.parametrize("given,kept", [
    ("", ""),
    ("https://duet.example.org", "https://duet.example.org"),
    ("  HTTPS://Duet.Example.ORG/ ", "https://duet.example.org"),
    ("https://duet.example.org:8443", "https://duet.example.org:8443"),
    ("http://127.0.0.1:8000", "http://127.0.0.1:8000"),  # well formed: refused where it is used, with the reason
    ("https://[2001:db8::1]", "https://[2001:db8::1]"),
])
def test_the_setting_is_read_and_normalised(monkeypatch, given, kept):
    monkeypatch.setenv("DUET_PUBLIC_ORIGIN", given)
    assert env.public_origin() == kept


@pytest.mark.parametrize("given", ["duet.example.org", "ftp://duet.example.org", "https://duet.example.org/s/",
                                   "https://duet.example.org?x=1", "https://user@duet.example.org",
                                   "https://duet.example.org:99999", "https://", "https://duet .org"])
def test_a_malformed_setting_stops_the_process_with_what_to_write(monkeypatch, given):
    monkeypatch.setenv("DUET_PUBLIC_ORIGIN", given)
    with pytest.raises(env.SettingsError, match="DUET_PUBLIC_ORIGIN must be scheme://host"):
        env.public_origin()


@pytest.mark.parametrize("origin", ["https://duet.example.org", "https://duet.example.org:8443",
                                    "https://8.8.8.8", "https://[2606:4700:4700::1111]", "https://duet.lab.ac.uk"])
def test_public_https_origins_pass(origin):
    assert origin_problem(origin) == ""


@pytest.mark.parametrize("origin,words", [
    ("", "No public origin is set"),
    ("http://duet.example.org", "is not https"),
    ("https://127.0.0.1:8000", "loopback address"),
    ("https://127.8.9.1", "loopback address"),
    ("https://[::1]:8000", "loopback address"),
    ("https://[::ffff:127.0.0.1]", "loopback address"),  # an IPv4-mapped form, judged by the IPv4 it carries
    ("https://10.0.0.5", "private address"),
    ("https://172.16.4.4", "private address"),
    ("https://[fd00::1]", "private address"),
    ("https://169.254.169.254", "link-local address"),
    ("https://[fe80::1]", "link-local address"),
    ("https://0.0.0.0", "address"),
    ("https://224.0.0.1", "multicast address"),
    ("https://localhost", "no domain"),
    ("https://testserver", "no domain"),
    ("https://studies.localhost", "local-only name"),
    ("https://duet.local", "local-only name"),
    ("https://duet.internal", "local-only name"),
    ("https://gpu.lan", "local-only name"),
    ("https://x.home.arpa", "local-only name"),
    ("https://duet.test", "local-only name"),
    ("https://duet.example.org/path", "not scheme://host"),
])
def test_origins_participants_cannot_open_are_refused_with_the_reason_and_what_to_do(origin, words):
    problem = origin_problem(origin)
    assert words in problem and "DUET_PUBLIC_ORIGIN" in problem
