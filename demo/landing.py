"""`/`: where someone who just started Duet lands — links to the admin, the documentation
(common/documents.py serves it as pages under /docs/) and, when the demo has been set up, the demo study (a
fresh participant link and the staff preview)."""
from __future__ import annotations

import secrets

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from experiments.models import Study, StudyStatus
from common.documents import GUIDE, documents

from . import DEMO_SLUG


def _demo(request: HttpRequest) -> dict | None:
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
    return render(request, "landing.html", {"demo": _demo(request), "documents": list(documents()), "guide": GUIDE})
