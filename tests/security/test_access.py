"""Who may reach what: every URL pattern of the project, found by walking the resolver (so a URL
added later is covered without touching this file), tried by an anonymous visitor, a participant
(a browser holding a participant token), a logged-in user who is not staff and a staff user
without permissions. Researchers' pages (admin, exports, reports, model runs, report downloads)
must answer with the login page or 403/404/405, never data; participant endpoints answer only to
their own token under their own study's slug, and a refused request changes nothing."""
from __future__ import annotations

import json
import re

import pytest
from django.contrib.auth import get_user_model
from django.contrib.contenttypes.models import ContentType
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, resolve

from analysis.models import Report, ReportStatus
from experiments.models import Item, Participant, Study, Trial
from experiments.participation import trials
from experiments.participation import services
from experiments.participation.payload import parse_trial
from inference.models import LanguageModel, ModelRun, ModelScore
from tests.experiments.participation.conftest import make_open_study, trial_data

pytestmark = pytest.mark.django_db

PID = "5f1a2b3c4d5e6f7a8b9c0d1e"  # the Prolific id that must never leak to the wrong person
# anyone may open them: a status, a login form, logging out, the start page and the project's documentation
PUBLIC = {"healthz", "admin:login", "admin:logout", "landing", "docs", "doc"}
# What a logged-in staff user without any permission may open: the admin's own pages, no data.
STAFF_OWN = {"admin:index", "admin:password_change", "admin:password_change_done", "admin:logout", "admin:jsi18n"}


def _walk(patterns, prefix="", namespace=""):
    for entry in patterns:
        if isinstance(entry, URLResolver):
            inner = ":".join(n for n in (namespace, entry.namespace or "") if n)
            yield from _walk(entry.url_patterns, prefix + str(entry.pattern), inner)
        elif isinstance(entry, URLPattern):
            name = f"{namespace}:{entry.name}" if namespace and entry.name else (entry.name or f"{namespace}:?")
            yield prefix + str(entry.pattern), name


def all_patterns() -> list[tuple[str, str]]:
    return list(_walk(get_resolver().url_patterns))


def _model_for(route: str):
    """admin/<app>/<model>/…: the model whose admin the route belongs to (None elsewhere)."""
    match = re.match(r"^admin/(\w+)/(\w+)/", route)
    if not match:
        return None
    try:
        return ContentType.objects.get_by_natural_key(match.group(1), match.group(2)).model_class()
    except ContentType.DoesNotExist:
        return None


def concrete(route: str, objects: dict) -> str:
    """A real URL for a route, naming existing objects so that a refusal is a refusal, not a 404."""
    model = _model_for(route)
    pk = str(objects[model].pk) if model in objects else "1"
    study = objects[Study]
    values = {
        "slug": study.slug, "token": objects["token"], "pk": pk, "object_id": pk, "id": pk,
        "content_type_id": str(ContentType.objects.get_for_model(Study).pk), "app_label": "experiments",
        "url": "experiments/nothing-here/", "name": "csv-import",
    }
    if route.startswith("admin/r/"):
        values["object_id"] = str(study.pk)

    def fill(match):
        name = match.group("name")
        return values[name]

    url = re.sub(r"<(?:\w+:)?(?P<name>\w+)>", fill, route)
    url = re.sub(r"\(\?P<(?P<name>\w+)>[^)]*\)", fill, url)
    return "/" + url.replace("^", "").replace("$", "")


@pytest.fixture
def world(tmp_path):
    """A study with items, participants, trials, a model run with a score and a finished report."""
    study = make_open_study(interpretations=6, items_per_participant=3, attention_checks=[], practice=[])
    owner, _ = services.participant_start(study=study, prolific_pid=PID, prolific_session_id="sess-owner")
    services.participant_consent(participant=owner, agree=True)
    services.participant_instructions_done(participant=owner)
    owner.refresh_from_db()
    trials.trial_record(participant=owner, payload=parse_trial(trial_data(owner, 0)))
    lm = LanguageModel.objects.create(name="lm-access", source="test/lm-access")
    run = ModelRun.objects.create(study=study, language_model=lm, status="done")
    item = Item.objects.filter(study=study).first()
    score = ModelScore.objects.create(
        run=run, item=item, logprobs={}, token_ids={}, p_yes=0.6, p_no=0.3, relative_p_yes=2 / 3,
        soft_accuracy=2 / 3, decision="yes", perplexity=9.0, prompt_tokens=70, answer_mass=0.9)
    out = tmp_path / "report"
    (out / "data").mkdir(parents=True)
    (out / "report.html").write_text(f"<p>secret report {PID}</p>")
    (out / "data" / "trials.csv").write_text(f"participant\n{PID}\n")
    report = Report.objects.create(study=study, status=ReportStatus.DONE, out_dir=str(out))
    User = get_user_model()
    admin = User.objects.create_superuser("boss", password="pw-" * 6)
    objects = {
        Study: study, Item: item, Participant: owner, Trial: owner.trials.get(), LanguageModel: lm,
        ModelRun: run, ModelScore: score, Report: report, User: admin, "token": owner.token,
        ContentType.objects.get_by_natural_key("experiments", "interpretation").model_class(): study.interpretations.first(),
    }
    return objects


def _snapshot():
    rows = (Study, Item, Participant, Trial, ModelRun, ModelScore, Report, get_user_model())
    state = list(Participant.objects.order_by("pk").values_list(
        "status", "consented_at", "instructions_done_at", "practice_done_at", "attention_failures"))
    return {m.__name__: m.objects.count() for m in rows}, state, list(Study.objects.values_list("status", "title"))


def _participant_client(objects) -> Client:
    """A browser that holds a participant token: it has opened its own session page (CSRF cookie set)."""
    browser = Client()
    assert browser.get(f"/s/{objects[Study].slug}/p/{objects['token']}/").status_code == 200
    return browser


def _clients(objects):
    User = get_user_model()
    plain = User.objects.create_user("plain", password="pw-" * 6)
    staff = User.objects.create_user("staff-no-perms", password="pw-" * 6, is_staff=True)
    return {"anonymous": (Client(), None), "participant": (_participant_client(objects), None),
            "non-staff": (Client(), plain), "staff without permissions": (Client(), staff)}


def _refused(client, response, role: str, name: str, where: str, hops: int = 0) -> str | None:
    """None when the response is a refusal (login redirect, 403, 404, 405), or a redirect inside the
    admin that ends in one; otherwise what went wrong."""
    body = b"" if response.streaming else response.content
    if PID.encode() in body:
        return f"{role} saw a Prolific id at {where}"
    if response.status_code in (403, 404, 405):
        return None
    if response.status_code == 302 and response["Location"].startswith("/admin/login/"):
        return None
    if role == "staff without permissions" and name in STAFF_OWN and response.status_code in (200, 302):
        return None
    if response.status_code == 302 and response["Location"].startswith("/admin/") and hops < 3:
        location = response["Location"]
        match = resolve(location.split("?")[0])
        followed = f"{match.namespace}:{match.url_name}" if match.namespace else match.url_name
        return _refused(client, client.get(location), role, followed, f"{where} → {location}", hops + 1)
    return f"{role} got {response.status_code} at {where}"


def test_the_walk_finds_the_researchers_and_the_participants_urls():
    names = {name for _, name in all_patterns()}
    for expected in ("admin:experiments_study_trials_csv", "admin:analysis_report_html", "admin:analysis_report_zip",
                     "admin:inference_modelrun_add", "admin:experiments_participant_changelist",
                     "participant:trial", "participant:finish", "participant:preview"):
        assert expected in names


def test_researchers_urls_refuse_everyone_but_staff_with_permissions(world):
    clients = _clients(world)
    before = _snapshot()
    routes = [(route, name) for route, name in all_patterns()
              if not name.startswith("participant:") or name == "participant:preview"]
    problems = []
    for role, (client, user) in clients.items():
        for route, name in routes:
            if name in PUBLIC or (name == "participant:preview" and role == "staff without permissions"):
                continue  # any staff member may preview the flow (recorded as a preview, never as data)
            url = concrete(route, world)
            for method in ("get", "post"):
                if user is not None:
                    client.force_login(user)
                response = getattr(client, method)(url, {"action": "delete_selected", "post": "yes",
                                                         "_selected_action": [world[Study].pk]})
                problem = _refused(client, response, role, name, f"{method.upper()} {url} ({name})")
                if problem:
                    problems.append(problem)
    assert problems == [], "\n".join(problems)
    assert _snapshot() == before


def test_staff_with_permissions_reach_the_same_urls(world, client):
    """The control: the URLs built above are real (a superuser gets the exports and reports)."""
    client.force_login(world[get_user_model()])
    for name in ("admin:experiments_study_trials_csv", "admin:analysis_report_html", "admin:analysis_report_zip",
                 "admin:experiments_participant_change", "admin:inference_modelrun_change", "admin:experiments_study_change"):
        route = next(r for r, n in all_patterns() if n == name)
        response = client.get(concrete(route, world))
        assert response.status_code == 200, (name, response.status_code)


def test_public_pages_show_no_data(world):
    health = Client().get("/healthz")
    assert health.status_code == 200 and set(json.loads(health.content)) == {"status", "database"}
    login = Client().get("/admin/login/")
    assert login.status_code == 200 and PID.encode() not in login.content


def _participant_routes():
    return [(route, name) for route, name in all_patterns() if name.startswith("participant:") and "<str:token>" in route]


def test_participant_endpoints_answer_only_their_own_token_under_their_own_study(world, settings):
    # dozens of unknown tokens from one address: the per-address limit on those (test_ratelimit.py) is
    # off here, so every answer is the access decision itself
    settings.DUET_RATELIMITS = {**settings.DUET_RATELIMITS, "unknown_token": "off"}
    other_study = make_open_study(interpretations=6, items_per_participant=3, attention_checks=[], practice=[])
    stranger, _ = services.participant_start(study=other_study, prolific_pid="stranger", prolific_session_id="sess-x")
    services.participant_consent(participant=stranger, agree=True)
    services.participant_instructions_done(participant=stranger)
    owner = world[Participant]
    before = _snapshot()
    routes = _participant_routes()
    assert {n for _, n in routes} >= {"participant:session", "participant:trial", "participant:heartbeat",
                                       "participant:finish", "participant:consent"}
    cases = {
        "token under another study's slug": (other_study.slug, owner.token),
        "another study's token under this slug": (owner.study.slug, stranger.token),
        "a guessed token": (owner.study.slug, "x" * 43),
        "an over-long token": (owner.study.slug, "y" * 500),
        "no such study": ("no-such-study", owner.token),
    }
    browser = _participant_client(world)
    for case, (slug, token) in cases.items():
        for route, name in routes:
            url = "/" + route.replace("<slug:slug>", slug).replace("<str:token>", token)
            for method in ("get", "post"):
                body = json.dumps(trial_data(owner, 1))
                response = getattr(browser, method)(url, body, content_type="application/json") if method == "post" \
                    else browser.get(url)
                assert response.status_code in (404, 405), (case, method, url, response.status_code)
                assert PID.encode() not in response.content and owner.token.encode() not in response.content
    assert _snapshot() == before


def test_a_participant_cannot_answer_someone_elses_items(world):
    """Holding a token lets you answer your own list only: another participant's items are refused."""
    owner = world[Participant]
    other, _ = services.participant_start(study=owner.study, prolific_pid="neighbour", prolific_session_id="sess-n")
    services.participant_consent(participant=other, agree=True)
    services.participant_instructions_done(participant=other)
    other.refresh_from_db()
    foreign = [pk for pk in other.plan if pk not in owner.plan]
    assert foreign
    before = _snapshot()
    browser = _participant_client(world)
    body = {**trial_data(owner, 1), "item": foreign[0]}
    response = browser.post(f"/s/{owner.study.slug}/p/{owner.token}/trial", json.dumps(body),
                            content_type="application/json")
    assert response.status_code == 400 and "not trial 1" in response.json()["error"]
    assert _snapshot() == before
