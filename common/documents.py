"""`/docs/`: the project's documentation (docs/guide.md first, README.md, then docs/*.md) as pages in the
site's style. The landing page (demo/landing.py) links the index.

The Markdown is rendered by markdown-it-py (its "commonmark" preset with tables added) with raw HTML
off: a document's `<id>` or `<script>` is shown as text, never passed through. After parsing, one pass
over the tokens makes the pages work as pages:
* a link to another document (`docs/models.md`, `../README.md`, `models.md#runs`) becomes that page's
  address, its anchor kept; a link to a file that is not a served document (a source file) is left as
  its text, not as a link into nothing;
* a document named in the text or in a code span (docs/models.md, `README.md`), as the documents name
  each other from the repository's root, links to it;
* every heading gets an id as GitHub makes it ("Security settings" → `security-settings`), so the
  anchors the documents use work here too;
* a table cell's alignment is a class, not an inline style (the Content-Security-Policy allows none).
"""
from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET
from markdown_it import MarkdownIt
from markdown_it.token import Token

from .env import BASE_DIR

GUIDE = "guide.md"  # the researcher's guide, by task: listed first
_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def documents() -> dict[str, Path]:
    """File name → path of each document served under /docs/ (nothing else is), the guide first, then
    the README, then docs/*.md by name."""
    docs = sorted((BASE_DIR / "docs").glob("*.md"))
    found = {p.name: p for p in docs if p.name == GUIDE}
    found["README.md"] = BASE_DIR / "README.md"
    found.update({p.name: p for p in docs if p.name != GUIDE})
    return {name: path for name, path in found.items() if path.is_file()}


@dataclass(frozen=True)
class Page:
    name: str
    title: str
    summary: str  # the document's first paragraph, as text (the index shows it)
    html: str


def _markdown() -> MarkdownIt:
    return MarkdownIt("commonmark", {"html": False}).enable("table")


def _relative(path: Path) -> str:
    return path.resolve().relative_to(BASE_DIR.resolve()).as_posix()


def _targets() -> dict[str, str]:
    """Repository path of each served document ("docs/models.md", "README.md") → its file name."""
    return {_relative(path): name for name, path in documents().items()}


def _document_href(target: str, base: str, targets: dict[str, str]) -> str | None:
    """The page address of a link to `target` written in a document at repository path `base`: the
    document's page (anchor kept), the same page's anchor, an outside address as it is; None for a
    file that is not a served document."""
    if target.startswith("#") or _SCHEME.match(target):
        return target
    path, _, anchor = target.partition("#")
    resolved = posixpath.normpath(posixpath.join(posixpath.dirname(base), path))
    name = targets.get(resolved)
    if name is None:
        return None
    return reverse("doc", args=[name]) + (f"#{anchor}" if anchor else "")


def slug(text: str) -> str:
    """A heading's anchor as GitHub writes it: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")


def _code_href(text: str, base: str, targets: dict[str, str]) -> str | None:
    """A code span naming a document (`docs/models.md`, `README.md#configuration-environment`), from the
    repository's root or from the document's folder: that document's page; None for anything else."""
    path = text.partition("#")[0]
    for where in ("", base):
        if posixpath.normpath(posixpath.join(posixpath.dirname(where), path)) in targets and path:
            return _document_href(text, where, targets)
    return None


# A document named in running text ("see docs/models.md", "README.md#configuration-environment")
_NAMED = re.compile(r"(?<![\w/.-])((?:\.\./)?(?:docs/)?[\w-]+\.md)(#[\w-]+)?(?![\w/-])")


def _link(href: str, inner: list[Token]) -> list[Token]:
    return [Token("link_open", "a", 1, attrs={"href": href}), *inner, Token("link_close", "a", -1)]


def _named_in_text(token: Token, base: str, targets: dict[str, str]) -> list[Token]:
    """A text token with each document it names made a link to that document's page."""
    out, at = [], 0
    for match in _NAMED.finditer(token.content):
        href = _code_href(match.group(0), base, targets)
        if href is None:
            continue
        if match.start() > at:
            out.append(Token("text", "", 0, content=token.content[at:match.start()]))
        out += _link(href, [Token("text", "", 0, content=match.group(0))])
        at = match.end()
    if not out:
        return [token]
    if at < len(token.content):
        out.append(Token("text", "", 0, content=token.content[at:]))
    return out


def _link_inlines(children: list[Token], base: str, targets: dict[str, str]) -> list[Token]:
    out: list[Token] = []
    opened: list[bool] = []  # per open link: kept (True) or dropped (False: its close is dropped too)
    for token in children:
        if token.type == "link_open":
            href = _document_href(str(token.attrGet("href") or ""), base, targets)
            opened.append(href is not None)
            if href is None:
                continue
            token.attrSet("href", href)
        elif token.type == "link_close":
            if not opened.pop():
                continue
        elif token.type == "code_inline" and not any(opened):  # not already inside a link
            href = _code_href(token.content, base, targets)
            if href is not None:
                out += _link(href, [token])
                continue
        elif token.type == "text" and not any(opened):
            out += _named_in_text(token, base, targets)
            continue
        out.append(token)
    return out


def _text(children: list[Token]) -> str:
    """An inline's words without its Markdown (the index's summary line)."""
    return "".join(" " if c.type in ("softbreak", "hardbreak") else c.content for c in children
                   if c.type in ("text", "code_inline", "softbreak", "hardbreak"))


def _render(name: str, text: str) -> Page:
    md = _markdown()
    tokens = md.parse(text)
    base, targets = _relative(documents()[name]), _targets()
    used: dict[str, int] = {}
    title, summary = name, ""
    for at, token in enumerate(tokens):
        if token.type == "heading_open":
            heading = _text(tokens[at + 1].children or [])
            anchor = slug(heading)
            count = used.get(anchor, 0)
            used[anchor] = count + 1
            token.attrSet("id", anchor if not count else f"{anchor}-{count}")
            if token.tag == "h1" and title == name:
                title = heading
        elif token.type == "paragraph_open" and not summary and token.level == 0:
            summary = _text(tokens[at + 1].children or [])
        elif token.type in ("th_open", "td_open"):
            style = str(token.attrGet("style") or "")
            if style.startswith("text-align:"):
                token.attrs.pop("style")
                token.attrSet("class", "align-" + style.split(":", 1)[1])
        if token.type == "inline" and token.children:
            token.children = _link_inlines(token.children, base, targets)
    return Page(name=name, title=title, summary=summary, html=md.renderer.render(tokens, md.options, {}))


@lru_cache(maxsize=64)
def _page(name: str, stamp: int) -> Page:
    return _render(name, documents()[name].read_text(encoding="utf-8"))


def page(name: str) -> Page | None:
    """The document `name` as a page (rendered again only when its file changes); None: no such document."""
    path = documents().get(name)
    return None if path is None else _page(name, path.stat().st_mtime_ns)


@require_GET
def index(request: HttpRequest) -> HttpResponse:
    pages = [page(name) for name in documents()]
    return render(request, "docs/index.html", {"pages": pages, "guide": GUIDE})


@require_GET
def doc(request: HttpRequest, name: str) -> HttpResponse:
    found = page(name)
    if found is None:
        raise Http404("No such document.")
    return render(request, "docs/page.html", {"page": found, "pages": [page(n) for n in documents()]})
