"""`/docs/`: the project's documentation (README.md and docs/*.md), each file served as text. The landing
page (demo/landing.py) lists them."""
from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse
from django.views.decorators.http import require_GET

from .env import BASE_DIR


def documents() -> dict[str, object]:
    """File name → path of each document served under /docs/ (nothing else is)."""
    found = {"README.md": BASE_DIR / "README.md"}
    found.update({path.name: path for path in sorted((BASE_DIR / "docs").glob("*.md"))})
    return {name: path for name, path in found.items() if path.is_file()}


@require_GET
def doc(request: HttpRequest, name: str) -> HttpResponse:
    path = documents().get(name)
    if path is None:
        raise Http404("No such document.")
    return HttpResponse(path.read_bytes(), content_type="text/plain; charset=utf-8")
