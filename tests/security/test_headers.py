"""Security headers on participant pages and the admin: a Content-Security-Policy that allows only our
own static scripts (common/security.py), X-Frame-Options DENY, Referrer-Policy, nosniff, and
HSTS when served over HTTPS. Every participant page is rendered and checked for inline script or
style, which the policy would block."""
from __future__ import annotations

import json
import re
from html.parser import HTMLParser

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse

from experiments.models import HumanArm
from experiments.participation.selectors import participant_by_token
from common.security import ADMIN_POLICY, PARTICIPANT_POLICY
from tests.experiments.participation.conftest import make_open_study, trial_data

pytestmark = pytest.mark.django_db
DESKTOP = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36"


class InlineFinder(HTMLParser):
    """Collects what a strict CSP blocks: inline <script>, <style>, style="…" and on…= handlers."""

    def __init__(self):
        super().__init__()
        self.found: list[str] = []
        self._script = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        for name in attrs:
            if name == "style" or name.startswith("on"):
                self.found.append(f"<{tag} {name}=…>")
        if tag == "style":
            self.found.append("<style>")
        if tag == "script" and "src" not in attrs and attrs.get("type") != "application/json":
            self._script = tag

    def handle_data(self, data):
        if self._script and data.strip():
            self.found.append(f"inline script: {data.strip()[:60]}")

    def handle_endtag(self, tag):
        if tag == "script":
            self._script = None


def inline_parts(html: str) -> list[str]:
    finder = InlineFinder()
    finder.feed(html)
    return finder.found


def assert_common_headers(response):
    assert response["X-Frame-Options"] == "DENY"
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["Referrer-Policy"] == "same-origin"
    assert response["Cross-Origin-Opener-Policy"] == "same-origin"


def test_the_policies_allow_only_our_own_origin():
    for policy in (PARTICIPANT_POLICY, ADMIN_POLICY):
        assert "script-src 'self';" in policy and "frame-ancestors 'none'" in policy and "object-src 'none'" in policy
        assert "unsafe-eval" not in policy and "http" not in policy
    assert "unsafe-inline" not in PARTICIPANT_POLICY
    assert "style-src 'self' 'unsafe-inline'" in ADMIN_POLICY  # Django's change list and report.html


def _spoiled_after_opening():
    """An open study whose arm was then set to lists that cannot be drawn (an unavailable study)."""
    study = make_open_study(interpretations=6, items_per_participant=6, attention_checks=[])
    HumanArm.objects.filter(study=study).update(items_per_participant=7)
    return study


def _pages_of_a_participant(study, settings) -> dict[str, object]:
    """Every page a participant can meet, rendered by the real views."""
    settings.DUET_RATELIMITS = {"entry_ip": "2/m", "trial": "off", "session": "off"}  # the 3rd entry is refused
    browser = Client(HTTP_USER_AGENT=DESKTOP)
    pages = {"bad link": browser.get(f"/s/{study.slug}/", {"PROLIFIC_PID": "<x>"})}
    entry = browser.get(f"/s/{study.slug}/", {"PROLIFIC_PID": "abc", "STUDY_ID": "st", "SESSION_ID": "se"})
    session = entry["Location"]
    pages["too many requests"] = browser.get(f"/s/{study.slug}/", {"PROLIFIC_PID": "abd", "STUDY_ID": "st", "SESSION_ID": "sf"})
    pages["incompatible device"] = browser.get(f"/s/{study.slug}/incompatible/")
    pages["unavailable"] = Client(HTTP_USER_AGENT=DESKTOP, REMOTE_ADDR="192.0.2.9").get(
        "/s/" + _spoiled_after_opening().slug + "/",
        {"PROLIFIC_PID": "abc", "STUDY_ID": "st", "SESSION_ID": "se"})
    pages["consent"] = browser.get(session)
    browser.post(session + "consent", {"agree": "yes"})
    pages["instructions"] = browser.get(session)
    browser.post(session + "instructions")
    pages["practice"] = browser.get(session)
    browser.post(session + "practice")
    pages["trials"] = browser.get(session)
    participant = participant_by_token(slug=study.slug, token=session.rstrip("/").split("/")[-1])
    for index in range(len(participant.plan)):
        browser.post(session + "trial", json.dumps(trial_data(participant, index)), content_type="application/json")
    pages["finish (json)"] = browser.post(session + "finish")
    pages["ended"] = browser.get(session)
    return pages


def test_participant_pages_carry_the_strict_policy_and_no_inline_code(settings):
    study = make_open_study(interpretations=6, items_per_participant=3, attention_checks=[], practice=[
        {"premises": ["Mia is painting a fence."], "question": "Can we infer that Mia is painting a fence?", "answer": "yes"}])
    pages = _pages_of_a_participant(study, settings)
    assert pages["too many requests"].status_code == 429 and pages["unavailable"].status_code == 503
    assert b"practice" in pages["practice"].content.lower() and b"runner-config" in pages["trials"].content
    assert b"C0MPLETE" in pages["ended"].content and b"page-config" in pages["ended"].content
    for name, response in pages.items():
        assert response["Content-Security-Policy"] == PARTICIPANT_POLICY, name
        assert_common_headers(response)
        if response["Content-Type"].startswith("text/html"):
            assert inline_parts(response.content.decode()) == [], name
            assert re.search(r'<link rel="stylesheet" href="/static/experiments/participant.css">',
                             response.content.decode()), name


def test_the_admin_keeps_working_under_its_policy(client):
    client.force_login(get_user_model().objects.create_superuser("boss", password="pw-" * 6))
    study = make_open_study(interpretations=6, items_per_participant=3, attention_checks=[], practice=[])
    for url in (reverse("admin:index"), reverse("admin:experiments_study_change", args=[study.pk]),
                reverse("admin:experiments_study_changelist"), reverse("admin:inference_modelrun_add"),
                reverse("admin:experiments_participant_changelist")):
        response = client.get(url)
        assert response.status_code == 200, url
        assert response["Content-Security-Policy"] == ADMIN_POLICY
        assert_common_headers(response)
        scripts = [p for p in inline_parts(response.content.decode()) if p.startswith("inline script")]
        assert scripts == [], url  # the admin's scripts are files too, so script-src stays 'self'
    assert Client().get(reverse("admin:login"))["Content-Security-Policy"] == ADMIN_POLICY


def test_hsts_and_https_redirects_when_served_over_https(settings):
    settings.SECURE_HSTS_SECONDS = 31_536_000
    settings.SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    settings.SECURE_SSL_REDIRECT = True
    settings.SECURE_REDIRECT_EXEMPT = [r"^healthz$"]
    browser = Client()
    plain = browser.get("/admin/login/")
    assert plain.status_code == 301 and plain["Location"].startswith("https://")
    assert browser.get("/healthz").status_code == 200  # the container's own health check stays on HTTP
    secure = browser.get("/admin/login/", secure=True)
    assert secure["Strict-Transport-Security"] == "max-age=31536000; includeSubDomains"
