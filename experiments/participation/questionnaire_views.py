"""Thin views of the questionnaire pages (issue 47 item 2): the page's context for the session view, the
answer endpoint (JSON: one answer as it is given) and the page's Continue (a form POST carrying every answer
on the page, so the page works without its script). The rules are participation/questionnaires.py's.

    POST /s/<slug>/p/<token>/answer          {"question": id, "value": …, "idempotency_key": "…"}
    POST /s/<slug>/p/<token>/questionnaire   questionnaire=<id>, q<question id>=<answer> …
"""
from __future__ import annotations

import json

from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from logic.questions import LIKERT, AnswerError

from common import ratelimit

from . import questionnaires, services
from .selectors import participant_by_token

MAX_BODY = 16384
FIELD = "q{}"  # the form field of a question: q<question id>


def _known(kwargs: dict) -> bool:
    from .selectors import token_known

    return token_known(slug=kwargs.get("slug", ""), token=kwargs.get("token", ""))


def _rows(page: questionnaires.Page) -> list[dict]:
    """What the template shows of each question: the question, its field name, its saved answer, its message,
    and a Likert scale's points."""
    rows = []
    for question in page.questions:
        rule = question.rule()
        rows.append({
            "question": question, "field": FIELD.format(question.pk), "value": page.answers.get(question.pk, ""),
            "error": page.errors.get(question.pk, ""), "choices": rule.choices,
            "scale": [str(n) for n in rule.scale()] if question.kind == LIKERT else [], "cap": rule.cap(),
        })
    return rows


def page_context(participant, arm, placement: str, page: questionnaires.Page | None = None) -> dict:
    """The session view's context for a questionnaire step: the current page of `placement` and its rows."""
    page = page or questionnaires.current_page(participant=participant, arm=arm, placement=placement)
    kw = {"slug": participant.study.slug, "token": participant.token}
    return {"page": page, "rows": _rows(page) if page else [],
            "questionnaire_urls": {"answer": reverse("participant:answer", kwargs=kw),
                                   "submit": reverse("participant:questionnaire", kwargs=kw)}}


def _json_error(message: str, status: int, reason: str) -> JsonResponse:
    return JsonResponse({"error": message, "reason": reason, "final": reason not in ("out_of_order", "rate_limited")},
                        status=status)


@ratelimit.unknown_tokens_limited(json=True, known=_known)
@ratelimit.limit("trial", key="token", json=True)
@require_POST
def answer(request: HttpRequest, slug: str, token: str) -> JsonResponse:
    """One answer as it is given: 201 saved (new or changed), 200 a re-send or no change; 400 refused (nothing
    saved), 404/409 not this session's question now."""
    participant = participant_by_token(slug=slug, token=token)
    if participant is None:
        return _json_error("No such session.", 404, "unknown_session")
    if len(request.body) > MAX_BODY:
        return _json_error("The answer is too large.", 413, "bad_request")
    try:
        data = json.loads(request.body)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return _json_error("The body must be JSON.", 400, "bad_request")
    if not isinstance(data, dict) or not isinstance(data.get("question"), int) or isinstance(data["question"], bool):
        return _json_error("The body must name the question (its id) and the answer.", 400, "bad_request")
    try:
        receipt = questionnaires.answer_record(participant=participant, question_id=data["question"],
                                               value=data.get("value"), idempotency_key=data.get("idempotency_key", ""))
    except AnswerError as exc:
        return _json_error(str(exc), 400, "invalid")
    except services.FlowError as exc:
        return _json_error(exc.message, exc.status, exc.reason)
    return JsonResponse({"saved": True, "question": receipt.question.pk, "value": receipt.value,
                         "duplicate": receipt.duplicate}, status=201 if receipt.created else 200)


@ratelimit.unknown_tokens_limited(known=_known)
@ratelimit.limit("page", key="token")
@require_POST
def submit(request: HttpRequest, slug: str, token: str) -> HttpResponse:
    """The page's Continue: saved and on to the next step, or the page again with a message at each question
    refused (400, nothing saved)."""
    participant = participant_by_token(slug=slug, token=token)
    if participant is None:
        raise Http404("No such session.")
    try:
        questionnaire_id = int(request.POST.get("questionnaire", ""))
    except ValueError:
        return redirect("participant:session", slug=slug, token=token)
    page = questionnaires.current_page(participant=participant, arm=participant.study.human_arm,
                                       placement=_placement(participant))
    if page is None or page.questionnaire.pk != questionnaire_id:
        return redirect("participant:session", slug=slug, token=token)
    given = {q.pk: request.POST.get(FIELD.format(q.pk), "") for q in page.questions
             if FIELD.format(q.pk) in request.POST}
    try:
        questionnaires.questionnaire_submit(participant=participant, questionnaire_id=questionnaire_id, answers=given)
    except questionnaires.AnswersRefused as exc:
        page.answers = {**page.answers, **{k: str(v) for k, v in given.items()}}
        page.errors = exc.errors
        return _render_refused(request, participant, page)
    except services.FlowError:
        pass  # the session page shows whatever step the participant is really at
    return redirect("participant:session", slug=slug, token=token)


def _placement(participant) -> str:
    from . import flow

    step = flow.current_step(participant, participant.study.human_arm)
    return step.questionnaire or ""


def _render_refused(request, participant, page) -> HttpResponse:
    from . import flow

    arm = participant.study.human_arm
    step = flow.current_step(participant, arm)
    urls = {"session": reverse("participant:session", kwargs={"slug": participant.study.slug,
                                                              "token": participant.token})}
    context = {"participant": participant, "study": participant.study, "arm": arm, "step": step.name,
               "urls": urls, **page_context(participant, arm, page.questionnaire.placement, page)}
    return render(request, step.template, context, status=400)
