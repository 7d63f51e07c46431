"""Thin views of the participant flow: validate the request, call one service or selector, render.

Pages: /s/<slug>/ (entry with Prolific's parameters), /s/<slug>/p/<token>/ (the current step).
JSON: /s/<slug>/p/<token>/trial, /heartbeat, /finish (CSRF-protected like every POST).
Rate limits (common/ratelimit.py): the entry link per client IP, and new participations per
client IP and study (a share of the study's target); per token the JSON endpoints, and the session
page with its step POSTs; per client IP the requests naming unknown tokens (a known token is never
refused by that).
"""
from __future__ import annotations

import functools
import json
import re

from django.contrib.admin.views.decorators import staff_member_required
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.csrf import ensure_csrf_cookie
from django.views.decorators.http import require_GET, require_POST

from common import ratelimit

from ..models import KeyMapping, Participant, ParticipantStatus
from ..selectors import study_by_slug
from ..team_scope import study_or_404
from . import choice, flow, overview, prolific_redirect, questionnaire_views, services, texts, trials
from .consent import consent_page
from .payload import PayloadError, parse_trial
from .selectors import answered_indices, participant_by_token, study_and_arm, token_known

PROLIFIC_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
NO_KEYBOARD = re.compile(r"Mobi|Android|iPhone|iPad|iPod|Tablet|Silk|Kindle|PlayBook", re.I)
MAX_BODY = 8192


def _page(request, template, context=None, status=200):
    return render(request, template, context or {}, status=status)


def _study_or_404(slug):
    study = study_by_slug(slug=slug)
    if study is None:
        raise Http404("No such study.")
    return study


def _study_and_new_arm(slug):
    study = _study_or_404(slug)
    return study, services.human_arm_ensure(study=study)


def _entry_ident(request: HttpRequest, kwargs: dict) -> str:
    """The entry link counts per client address and Prolific id (participants behind one NAT address
    each have their own count); `entry_ip` caps the address as a whole."""
    return f"{ratelimit.client_ip(request)}|{request.GET.get('PROLIFIC_PID', '')[:64]}"


@ratelimit.limit("entry_ip", key="ip")
@ratelimit.limit("entry", key=_entry_ident)
@require_GET
def entry(request: HttpRequest, slug: str) -> HttpResponse:
    study, arm = study_and_arm(slug=slug) or _study_and_new_arm(slug)
    names = (arm.pid_param, arm.study_param, arm.session_param)
    values = {name: request.GET.get(name, "").strip() for name in names}
    problems = [name for name, value in values.items() if not PROLIFIC_ID.match(value)]
    if problems:
        return _page(request, "participant/bad_link.html", {"study": study, "problems": problems}, 400)
    if not arm.input_mode().phones and NO_KEYBOARD.search(request.headers.get("User-Agent", "")):
        return redirect("participant:incompatible", slug=slug)  # keys (or clicks) only: phones are turned away
    ids = {"prolific_pid": values[arm.pid_param], "prolific_session_id": values[arm.session_param]}
    try:  # one's own earlier session: resumed, counting against no limit
        known = services.participant_resume(study=study, **ids)
    except services.FlowError as exc:
        return _page(request, "participant/unavailable.html", {"study": study, "message": exc.message}, exc.status)
    if known is not None:
        return redirect("participant:session", slug=slug, token=known.token)
    # a new participation: counted per client address (made-up ids must not fill a study); per address and
    # study, a share of the study's target (one address cannot fill a study: issue 26 item 7), and per address
    # over all studies; the share is taken back if none starts
    ip = ratelimit.client_ip(request)
    share = ("new_participant_share", f"{ip}|{study.pk}", ratelimit.share_rate(arm.target_sample_size))
    for scope, ident, rate in (share, ("new_participant", ip, ratelimit.rate_for("new_participant"))):
        decision = ratelimit.hit(scope, ident, rate)
        if not decision.allowed:
            if scope != share[0]:
                ratelimit.release(*share)
            return ratelimit.too_many(request, decision, json=False)
    try:
        participant, created = services.participant_start(
            study=study, prolific_study_id=values[arm.study_param], arm=arm, looked_up=True, **ids,
        )
    except services.FlowError as exc:
        ratelimit.release(*share)  # refused (full, closed, another session's id): no participation started
        return _page(request, "participant/unavailable.html", {"study": study, "message": exc.message}, exc.status)
    if not created:  # a concurrent first visit with the same ids won: resumed
        ratelimit.release(*share)
    return redirect("participant:session", slug=slug, token=participant.token)


@staff_member_required
@require_GET
def preview(request: HttpRequest, slug: str) -> HttpResponse:
    """Staff of the study's team walk through the flow as a preview participant, kept apart from the
    real data (another team's study: 404, and no preview participant is made)."""
    study = study_or_404(user=request.user, slug=slug)
    try:
        participant, _ = services.participant_start(
            study=study, prolific_pid=f"preview-{request.user.pk}", preview=True
        )
    except services.FlowError as exc:
        return _page(request, "participant/unavailable.html", {"study": study, "message": exc.message}, exc.status)
    return redirect("participant:session", slug=slug, token=participant.token)


@require_GET
def incompatible(request: HttpRequest, slug: str) -> HttpResponse:
    study = _study_or_404(slug)
    arm = services.human_arm_ensure(study=study)
    code = arm.incompatible_device_code
    # as the completion page: Prolific's return link with the code; without a code, Prolific itself
    # (where the participant chooses "Return"), never a dead end
    redirect = prolific_redirect.redirect_url(arm, code) or prolific_redirect.prolific_home(arm)
    return _page(request, "participant/incompatible.html", {"study": study, "code": code, "redirect": redirect})


def _known(kwargs: dict) -> bool:
    """For the per-address limit on unknown tokens: a known token is never refused by it."""
    return token_known(slug=kwargs.get("slug", ""), token=kwargs.get("token", ""))


def _participant(slug: str, token: str) -> Participant:
    participant = participant_by_token(slug=slug, token=token)
    if participant is None:
        raise Http404("No such session.")
    return participant


def _urls(participant: Participant) -> dict:
    kw = {"slug": participant.study.slug, "token": participant.token}
    names = ("session", "consent", "instructions", "practice", "trial", "heartbeat", "finish", "no_keyboard")
    urls = {name: reverse(f"participant:{name}", kwargs=kw) for name in names}
    urls["incompatible"] = reverse("participant:incompatible", kwargs={"slug": participant.study.slug})
    return urls


def _mapping(participant: Participant) -> dict:
    return {k: v.value for k, v in trials.KEY_ANSWERS[KeyMapping(participant.key_mapping)].items()}


_CODE_FIELDS = {
    ParticipantStatus.COMPLETED: "completion_code",
    ParticipantStatus.NO_CONSENT: "no_consent_code",
    ParticipantStatus.FAILED_ATTENTION: "failed_attention_code",
}


def _ending(participant: Participant) -> dict:
    field = _CODE_FIELDS.get(participant.status)
    if field is None:  # in progress, returned or excluded: no code, nowhere to send the participant
        return {"status": participant.status, "code": "", "redirect": ""}
    arm = participant.study.human_arm
    code = getattr(arm, field)
    redirect = "" if participant.is_preview else prolific_redirect.redirect_url(arm, code)
    return {"status": participant.status, "code": code, "redirect": redirect}


@ratelimit.unknown_tokens_limited(known=_known)
@ratelimit.limit("page", key="token")
@ensure_csrf_cookie
@require_GET
def session(request: HttpRequest, slug: str, token: str) -> HttpResponse:
    participant = _participant(slug, token)
    arm = participant.study.human_arm
    step = flow.current_step(participant, arm)
    context = {"participant": participant, "study": participant.study, "arm": arm, "step": step.name,
               "urls": _urls(participant), "mapping": _mapping(participant), "ending": _ending(participant),
               "option_keys": choice.runner_keys(participant.study), "answering": _answering(arm)}
    if step.name == "consent":
        context["consent"] = consent_page(arm, questions=len(participant.plan))
    elif step.name == "instructions":
        context["overview"] = overview.session_overview(participant=participant, arm=arm)
        context["instructions_text"] = texts.instructions(arm, mapping=context["mapping"], overview=context["overview"],
                                                          option_keys=context["option_keys"])
    elif step.name == "ended":
        context["texts"] = {"end": texts.end_text(arm), "debrief": texts.debrief(arm)}
    elif step.name in ("practice", "trials"):
        context["runner"] = _runner_config(participant, arm, step.name, context["urls"])
    elif step.questionnaire is not None:  # a questionnaire page (questionnaire_views.py)
        context.update(questionnaire_views.page_context(participant, arm, step.questionnaire))
    return _page(request, step.template, context)


def _answering(arm) -> dict:
    """The arm's answer input as the pages read it (issue 47 item 3): buttons shown, phones allowed."""
    mode = arm.input_mode()
    return {"mode": mode.value, "buttons": mode.buttons, "phones": mode.phones}


_SHOWN = ("premises", "question", "answer", "options")  # what the browser needs of a practice question


def _runner_config(participant, arm, phase, urls) -> dict:
    if phase == "practice":
        trials = [{"index": i, **{k: q[k] for k in _SHOWN if k in q}} for i, q in enumerate(arm.practice)]
    else:
        items = {i.pk: i for i in participant.study.items.filter(pk__in=participant.plan)}
        trials = [
            {"index": i, "item": pk, "premises": items[pk].premises, "question": items[pk].question,
             **choice.trial_fields(items[pk])}
            for i, pk in enumerate(participant.plan)
        ]
    return {
        "phase": phase, "trials": trials, "answered": answered_indices(participant=participant),
        "mapping": _mapping(participant), "blank_ms": arm.blank_ms, "time_limit_ms": arm.time_limit_ms,
        "urls": urls, "storage_key": f"duet:{participant.token}", "preview": participant.is_preview,
        "option_keys": choice.runner_keys(participant.study),  # four-option trials: key per position
        # issue 47: yes/no trials also answered by the on-screen buttons (click, tap); the end page's own text,
        # and whether a debrief follows on the session page (the runner then goes there, not to Prolific)
        "buttons": arm.input_mode().buttons, "end_text": texts.end_text(arm), "debrief": bool(texts.debrief(arm)),
    }


def _step_post(service):
    @ratelimit.unknown_tokens_limited(known=_known)
    @ratelimit.limit("page", key="token")
    @require_POST
    def view(request: HttpRequest, slug: str, token: str) -> HttpResponse:
        participant = _participant(slug, token)
        try:
            service(participant=participant, request=request)
        except services.FlowError:
            pass  # the session page shows whatever step the participant is really at
        return redirect("participant:session", slug=slug, token=token)
    return view


CONSENT_ANSWERS = {"yes": True, "no": False}  # the consent page's two buttons; anything else changes nothing


@ratelimit.unknown_tokens_limited(known=_known)
@ratelimit.limit("page", key="token")
@require_POST
def consent(request: HttpRequest, slug: str, token: str) -> HttpResponse:
    """Only the page's explicit answers count: agree=yes consents, agree=no declines for good;
    anything else (a missing, malformed or repeated field: `agree=yes&agree=no` is no answer) is a 400
    and leaves the session as it was."""
    participant = _participant(slug, token)
    sent = request.POST.getlist("agree")
    agree = CONSENT_ANSWERS.get(sent[0]) if len(sent) == 1 else None
    if agree is None:
        return _page(request, "participant/bad_request.html",
                     {"study": participant.study, "message": "Please answer with one of the two buttons on the consent page.",
                      "session_url": reverse("participant:session", kwargs={"slug": slug, "token": token})}, 400)
    try:
        services.participant_consent(participant=participant, agree=agree)
    except services.FlowError:
        pass  # the session page shows whatever step the participant is really at
    return redirect("participant:session", slug=slug, token=token)



@ratelimit.unknown_tokens_limited(known=_known)
@ratelimit.limit("page", key="token")
@require_POST
def no_keyboard(request: HttpRequest, slug: str, token: str) -> HttpResponse:
    """The consent and instructions pages' own check found no keyboard (device.js): the session ends as
    returned and the participant gets the page that asks for a keyboard, with the study's code. Refused
    (the session has answers, or has ended): the session page, at whatever step it is."""
    participant = _participant(slug, token)
    if participant.study.human_arm.input_mode().phones:  # a study answered by touch keeps its phones
        return redirect("participant:session", slug=slug, token=token)
    try:
        services.participant_screen_out(participant=participant)
    except services.FlowError:
        return redirect("participant:session", slug=slug, token=token)
    return redirect("participant:incompatible", slug=slug)


instructions = _step_post(lambda participant, request: services.participant_instructions_done(participant=participant))
practice = _step_post(lambda participant, request: services.participant_practice_done(participant=participant))


def _printable(text: str) -> str:
    """A header as storable text: no NUL or other control characters, no lone surrogates."""
    return text if text.isprintable() else "".join(ch for ch in text if ch.isprintable())


# Refusals that a retry or a reload can undo: the browser keeps the answer (sender.js). Every other
# refusal is for good ("final": the answer is malformed, already saved, or the session is over).
NOT_FINAL = frozenset({"out_of_order", "misconfigured", "rate_limited"})


def _json_error(message: str, status: int, reason: str = "bad_request") -> JsonResponse:
    return JsonResponse({"error": message, "reason": reason, "final": reason not in NOT_FINAL}, status=status)


def _session_json(view):
    """A JSON endpoint of one session (heartbeat, finish): the participant its token names, looked up in one place,
    or 404 'unknown_session'; the view is called with the participant."""
    @functools.wraps(view)
    def wrapped(request: HttpRequest, slug: str, token: str) -> JsonResponse:
        participant = participant_by_token(slug=slug, token=token)
        if participant is None:
            return _json_error("No such session.", 404, "unknown_session")
        return view(request, participant)
    return wrapped


@ratelimit.unknown_tokens_limited(json=True, known=_known)
@require_POST
def trial(request: HttpRequest, slug: str, token: str) -> JsonResponse:
    """Save one answer: the body parsed once here, the save's rules in trials.py.

    Rate limited per token like the other JSON endpoints, except that the save of a new answer is not
    counted: a participant has at most as many as its list has trials, each saved once, so they
    cannot flood the server, and a genuine answer is never refused for speed. Every other request
    (re-sent, refused, malformed, unknown session) is counted once it is answered (the one over the
    limit gets a 429), and a token over its limit is then refused before any work until its window
    ends."""
    ident, rate = ratelimit.ident_for(request, "token", {"slug": slug, "token": token}), ratelimit.rate_for("trial")
    refused = ratelimit.refused_here("trial", ident, rate)
    if refused is not None:
        return ratelimit.too_many(request, refused, json=True)
    response = _trial(request, slug, token)
    if response.status_code != 201:
        decision = ratelimit.hit("trial", ident, rate)
        if not decision.allowed:  # answered all the same: a re-sent answer is safe to send again later
            return ratelimit.too_many(request, decision, json=True)
    return response


def _trial(request: HttpRequest, slug: str, token: str) -> JsonResponse:
    if not token or len(token) > 64:
        return _json_error("No such session.", 404, "unknown_session")
    try:
        if len(request.body) > MAX_BODY:
            raise PayloadError("The trial is too large.")
        try:
            data = json.loads(request.body)
        except (ValueError, UnicodeDecodeError):
            raise PayloadError("The body must be JSON.") from None
        except RecursionError:  # nesting deeper than the parser follows (found by tests/security)
            raise PayloadError("The body must be JSON describing one trial (it is nested too deeply).") from None
        payload = parse_trial(data)
    except PayloadError as exc:  # an unknown session is still a 404, whatever the body
        if participant_by_token(slug=slug, token=token) is None:
            return _json_error("No such session.", 404, "unknown_session")
        return _json_error(str(exc), 413 if len(request.body) > MAX_BODY else 400)
    try:
        receipt = trials.trial_submit(slug=slug, token=token, payload=payload,
                                      user_agent=_printable(request.META.get("HTTP_USER_AGENT", "")))
    except PayloadError as exc:
        return _json_error(str(exc), 400)
    except services.FlowError as exc:
        return _json_error(exc.message, exc.status, exc.reason)
    return JsonResponse(
        {"saved": True, "duplicate": not receipt.created, "index": receipt.trial.index,
         **_ending(receipt.participant)},
        status=201 if receipt.created else 200,
    )


@ratelimit.unknown_tokens_limited(json=True, known=_known)
@ratelimit.limit("session", key="token", json=True)
@require_POST
@_session_json
def heartbeat(request: HttpRequest, participant: Participant) -> JsonResponse:
    services.participant_heartbeat(participant=participant)
    return JsonResponse({"answered": answered_indices(participant=participant), "status": participant.status})


@ratelimit.unknown_tokens_limited(json=True, known=_known)
@ratelimit.limit("session", key="token", json=True)
@require_POST
@_session_json
def finish(request: HttpRequest, participant: Participant) -> JsonResponse:
    try:
        participant = services.participant_finish(participant=participant)
    except services.FlowError as exc:
        return _json_error(exc.message, exc.status, exc.reason)
    return JsonResponse(_ending(participant))
