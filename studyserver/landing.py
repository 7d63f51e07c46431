"""`/`: where someone who just started Duet lands — links to the admin, the documentation and, when
the demo has been set up, the demo study (a fresh participant link and the staff preview). `/docs/`
lists the project's documentation (README.md and docs/*.md) and serves each file as text."""
from __future__ import annotations

import secrets

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from .env import BASE_DIR

DEMO_SLUG = "modal-syllogisms-demo"  # the study `manage.py demo` sets up (its DEMO_SLUG)


def documents() -> dict[str, object]:
    """File name → path of each document served under /docs/ (nothing else is)."""
    found = {"README.md": BASE_DIR / "README.md"}
    found.update({path.name: path for path in sorted((BASE_DIR / "docs").glob("*.md"))})
    return {name: path for name, path in found.items() if path.is_file()}


def _demo(request: HttpRequest) -> dict | None:
    from experiments.models import Study, StudyStatus

    study = Study.objects.filter(slug=DEMO_SLUG).select_related("human_arm").first()
    if study is None:
        return None
    visit = secrets.token_hex(6)  # a fresh pseudonymous participant each time, as the demo prints
    arm = getattr(study, "human_arm", None)
    params = (getattr(arm, "pid_param", "PROLIFIC_PID"), getattr(arm, "study_param", "STUDY_ID"),
              getattr(arm, "session_param", "SESSION_ID"))
    entry = reverse("participant:entry", kwargs={"slug": study.slug})
    link = f"{entry}?{params[0]}=demo-{visit}&{params[1]}={study.slug}&{params[2]}=demo-session-{visit}"
    return {"study": study, "open": study.status == StudyStatus.OPEN, "link": link,
            "preview": reverse("participant:preview", kwargs={"slug": study.slug})}


@never_cache
@require_GET
def landing(request: HttpRequest) -> HttpResponse:
    return render(request, "landing.html", {"demo": _demo(request), "documents": list(documents())})


@require_GET
def doc(request: HttpRequest, name: str) -> HttpResponse:
    path = documents().get(name)
    if path is None:
        raise Http404("No such document.")
    return HttpResponse(path.read_bytes(), content_type="text/plain; charset=utf-8")
