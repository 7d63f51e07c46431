"""`/docs/`: the documentation as pages in the site's style (common/documents.py renders the Markdown with
markdown-it-py): an index with the researcher's guide first, every document a page whose links to other
documents, to anchors and from code spans naming a document work as page links, and whose raw HTML is
shown as text, never passed through."""
from __future__ import annotations

import re

import pytest

from common import documents


def _html(client, path: str) -> str:
    page = client.get(path)
    assert page.status_code == 200, path
    assert page["Content-Type"] == "text/html; charset=utf-8"
    return page.content.decode()


@pytest.mark.django_db
def test_the_index_lists_the_guide_first_then_every_document_with_its_title(client):
    html = _html(client, "/docs/")
    listed = re.findall(r'<li[^>]*><a href="/docs/([^"]+)">([^<]+)</a>', html)
    assert [name for name, _ in listed] == list(documents.documents())
    assert listed[0] == ("guide.md", "The researcher&#x27;s guide")
    assert ("README.md", "Duet") in listed and ("models.md", "Language models (the model arm)") in listed
    assert 'rel="stylesheet" href="/static/experiments/participant.css"' in html  # the site's style
    assert 'rel="icon" href="/static/studyserver/favicon.svg"' in html


@pytest.mark.django_db
def test_the_guide_is_organised_by_task_and_points_to_admin_pages_not_source_files(client):
    html = _html(client, "/docs/guide.md")
    headings = re.findall(r'<h2 id="([^"]+)">([^<]+)</h2>', html)
    assert [title for _, title in headings][:6] == [
        "Build a study", "Pilot", "Run models", "Launch on Prolific", "Review and pay", "Read the report"]
    assert "Studies and items → Studies → Add study" in html and "Model configurations → Add" in html
    text = documents.documents()["guide.md"].read_text(encoding="utf-8")
    assert not re.search(r"\b[a-z_]+/[a-z_/]+\.py\b", text), "the guide names a source file"
    assert not re.search(r"\bissue \d+", text, re.I), "the guide names an issue number"
    for href in re.findall(r'href="(/docs/[^"#]+)(?:#([^"]*))?"', html):
        target = _html(client, href[0])
        if href[1]:
            assert f'id="{href[1]}"' in target, f"{href[0]}#{href[1]}: no such anchor"


@pytest.mark.django_db
def test_links_between_documents_become_page_links_with_their_anchors(client):
    readme = _html(client, "/docs/README.md")
    assert '<a href="/docs/production.md#security-settings">' in readme  # docs/production.md#security-settings
    assert '<a href="/docs/models.md">docs/models.md</a>' in readme  # [docs/models.md](docs/models.md)
    production = _html(client, "/docs/production.md")
    assert '<h2 id="security-settings">Security settings</h2>' in production
    guide = _html(client, "/docs/guide.md")
    assert '<a href="/docs/README.md">README</a>' in guide  # [README](../README.md), from docs/
    assert '<a href="/docs/participants.md#simulated-pilots">' in guide
    # a document named in the text links to it, from the repository's root as the documents write it
    models = _html(client, "/docs/models.md")
    assert "(docs/analysis.md)" in documents.documents()["models.md"].read_text(encoding="utf-8")
    assert '(<a href="/docs/analysis.md">docs/analysis.md</a>)' in models


@pytest.mark.django_db
def test_raw_html_is_text_and_a_link_to_a_source_file_is_left_as_its_words(client, settings, tmp_path, monkeypatch):
    base = tmp_path
    (base / "docs").mkdir()
    (base / "README.md").write_text("# Top\n")
    (base / "docs" / "x.md").write_text(
        "# Hostile\n\nA participant is P<id>; <script>alert(1)</script> and <b onclick=x>bold</b>.\n\n"
        "[the checker](../logic/checker.py), [models](models.md), [top](../README.md#top), [here](#two), "
        "[out](https://example.org/a). See README.md#top, `docs/x.md`, `logic/checker.py` and docs/none.md.\n\n## Two\n\n## Two\n\n| a | b |\n| ---: | :-: |\n| 1 | 2 |\n",
        encoding="utf-8")
    monkeypatch.setattr(documents, "BASE_DIR", base)
    html = _html(client, "/docs/x.md")
    assert "<script>" not in html and "<b onclick" not in html and "<b>" not in html
    assert "P&lt;id&gt;" in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "<p>the checker, models, " in html and 'href="../logic' not in html  # no document: its words, no dead link
    assert '<a href="/docs/README.md#top">top</a>' in html
    assert 'See <a href="/docs/README.md#top">README.md#top</a>, <a href="/docs/x.md"><code>docs/x.md</code></a>, ' \
        '<code>logic/checker.py</code> and docs/none.md.' in html
    assert '<a href="#two">here</a>' in html and '<a href="https://example.org/a">out</a>' in html
    assert '<h2 id="two">Two</h2>' in html and '<h2 id="two-1">Two</h2>' in html  # as GitHub numbers twins
    assert '<th class="align-right">a</th>' in html and '<td class="align-center">2</td>' in html
    assert "style=" not in html  # the Content-Security-Policy allows no inline style


def test_markdown_it_is_a_core_dependency_of_the_web_process():
    import tomllib

    from common.env import BASE_DIR

    core = tomllib.loads((BASE_DIR / "pyproject.toml").read_text())["project"]["dependencies"]
    assert any(re.match(r"markdown-it-py\b", spec) for spec in core)
