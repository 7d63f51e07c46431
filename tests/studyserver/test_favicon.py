"""Every page names the site's icon, a static file, so no browser asks for a /favicon.ico that is not there
(a 404 on every participant page)."""
from __future__ import annotations

import re

import pytest
from django.contrib.staticfiles import finders
from django.test import Client

from tests.experiments.participation.conftest import make_open_study

ICON = '<link rel="icon" href="/static/studyserver/favicon.svg" type="image/svg+xml">'
DESKTOP = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36"


def test_the_icon_is_a_static_svg_file():
    path = finders.find("studyserver/favicon.svg")
    assert path is not None
    text = open(path, encoding="utf-8").read()
    assert text.startswith("<svg") and 'xmlns="http://www.w3.org/2000/svg"' in text


@pytest.mark.django_db
def test_participant_pages_the_start_page_the_docs_and_the_admin_link_the_icon(admin_client):
    study = make_open_study(interpretations=6, items_per_participant=3, attention_checks=[], practice=[])
    browser = Client(HTTP_USER_AGENT=DESKTOP)
    entry = browser.get(f"/s/{study.slug}/", {"PROLIFIC_PID": "p-icon", "STUDY_ID": "s", "SESSION_ID": "x"})
    pages = {
        "consent": browser.get(entry["Location"]),
        "bad link": browser.get(f"/s/{study.slug}/"),
        "no keyboard": browser.get(f"/s/{study.slug}/incompatible/"),
        "start page": browser.get("/"),
        "docs": browser.get("/docs/"),
        "a document": browser.get("/docs/guide.md"),
        "admin login": Client().get("/admin/login/"),
        "admin": admin_client.get("/admin/"),
        "a study's admin page": admin_client.get(f"/admin/experiments/study/{study.pk}/change/"),
    }
    for name, page in pages.items():
        html = page.content.decode()
        assert page["Content-Type"].startswith("text/html"), name
        assert html.count('rel="icon"') == 1 and ICON in html, name
        assert re.search(r"<head>.*" + re.escape(ICON) + r".*</head>", html, re.S), name
