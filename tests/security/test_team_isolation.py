"""A lab's studies are its own (issue 34 item 6). Lab A has a study with everything under it: items,
interpretations, participants (a Prolific id), trials, a model run with scores, probe scores and a
generated answer, a report with its files, a pilot, a power analysis. A staff user of lab B holds
every permission there is and sees none of it:

* every admin model, found in admin.site._registry (a model registered later is walked without
  touching this file): its list (also searched and filtered), its add page's choices, each of lab A's
  objects' change, delete and history pages, and every action posted with lab A's objects selected;
* every URL of the project, found by walking the resolver (tests/security/test_access.py): the
  downloads, the report's files, the item pages, the participant preview — filled in with lab A's
  objects, GET and POST;

and nothing changes. A member of lab A with the same permissions sees all of it (the control).
A model whose admin is not team-scoped must be named in SHARED, with why it holds no study's data,
and must not reach a study through its relations. Model configurations are a team's own (issue 45):
lab A's, with its internal server's name, is hidden from lab B like its study; one shared with lab B
is read-only to it (tests/security/test_configuration_redirect.py replays the redirect of issue 45)."""
from __future__ import annotations

import pytest
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group, Permission
from django.test import Client
from django.urls import reverse

from analysis.models import PowerAnalysis, Report, ReportStatus
from experiments.models import MappingPreset
from experiments.models import Participant, Study
from experiments.participation import services, trials
from experiments.participation.payload import parse_trial
from experiments.participation.pilot import Pilot
from experiments.models import Team
from inference.models import GeneratedAnswer, LanguageModel, ModelRun, ModelScore, ProbeScore
from tests.admin_form import change_form
from tests.experiments.participation.conftest import make_open_study, trial_data
from tests.security.test_access import all_patterns, concrete

pytestmark = pytest.mark.django_db

PID = "5f1a2b3c4d5e6f7a8b9c0d1e"
SLUG, TITLE, TEAM_A = "lab-a-hidden-study", "Lab A hidden title", "Lab A hidden team"
CONFIGURATION, INTERNAL_SERVER = "lab-a-hidden-configuration", "lab-a-internal-gpu.example"
MARKERS = (PID, SLUG, TITLE, TEAM_A, "lab-a-probe-key", "lab-a-generated-text", "lab-a-report-text", CONFIGURATION,
           INTERNAL_SERVER)

# Admin models that belong to no study, each with why it is shared by every team.
SHARED = {
    get_user_model(): "staff accounts: no study data (a team's members are chosen from them)",
    Group: "permission groups: no study data",
    MappingPreset: "named column mappings of a design's bank: column names, no study and no rows",
}


def _axes_models():
    from django.apps import apps

    return {m for m in apps.get_app_config("axes").get_models()} if apps.is_installed("axes") else set()


def _reaches_study(model, depth: int = 0, seen=()) -> bool:
    """Whether `model` leads to a Study through its forward relations."""
    if model is Study:
        return True
    if depth > 4 or model in seen:
        return False
    return any(_reaches_study(f.related_model, depth + 1, (*seen, model))
               for f in model._meta.get_fields() if f.is_relation and f.concrete and f.related_model is not None)


@pytest.fixture
def world(tmp_path):
    """Lab A's study and everything under it; lab B's member and lab A's member, each with every
    permission (neither a superuser)."""
    study = make_open_study(interpretations=6, items_per_participant=3, attention_checks=[], practice=[])
    lab_a, lab_b = Team.objects.create(name=TEAM_A), Team.objects.create(name="Lab B")
    Study.objects.filter(pk=study.pk).update(slug=SLUG, title=TITLE, team=lab_a)
    study.refresh_from_db()
    person, _ = services.participant_start(study=study, prolific_pid=PID, prolific_session_id="sess-a")
    services.participant_consent(participant=person, agree=True)
    services.participant_instructions_done(participant=person)
    person.refresh_from_db()
    trials.trial_record(participant=person, payload=parse_trial(trial_data(person, 0)))
    lm = LanguageModel.objects.create(name=CONFIGURATION, source="test/lab-a", backend="server",
                                      server_urls=f"http://{INTERNAL_SERVER}:8000", team=lab_a)
    run = ModelRun.objects.create(study=study, language_model=lm, status="done")
    item = study.items.first()
    score = ModelScore.objects.create(
        run=run, item=item, logprobs={}, token_ids={}, p_yes=0.6, p_no=0.3, relative_p_yes=2 / 3,
        soft_accuracy=2 / 3, decision="yes", perplexity=9.0, prompt_tokens=70, answer_mass=0.9)
    GeneratedAnswer.objects.create(score=score, sample=0, text="lab-a-generated-text", parsed="yes", tokens=3,
                                   finish_reason="stop")
    ProbeScore.objects.create(run=run, probe_key="lab-a-probe-key", prompt="p", target="t", p_target=0.5,
                              known=True)
    out = tmp_path / "report"
    (out / "data").mkdir(parents=True)
    (out / "report.html").write_text(f"<p>lab-a-report-text {PID}</p>")
    (out / "data" / "trials.csv").write_text(f"participant\n{PID}\n")
    Report.objects.create(study=study, status=ReportStatus.DONE, out_dir=str(out))
    Pilot.objects.create(study=study, participants=3, status="done")
    PowerAnalysis.objects.create(study=study, status="done")
    MappingPreset.objects.create(name="shared-preset", design="csv-import", mapping={})
    users = {}
    for name, team in (("member-a", lab_a), ("member-b", lab_b)):
        user = get_user_model().objects.create_user(name, password="pw-" * 6, is_staff=True)
        user.user_permissions.set(Permission.objects.all())
        team.members.add(user)
        users[name] = user
    return {"study": study, "person": person, "users": users, "teams": (lab_a, lab_b)}


def _client(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _body(response) -> bytes:
    if response.streaming:
        body = b"".join(response.streaming_content)
        # not response.close(): it sends request_finished, which closes the test's database connection
        if getattr(response, "file_to_stream", None) is not None:
            response.file_to_stream.close()
        return body
    return response.content


def _leaks(response, where: str, typed: str = "") -> list[str]:
    """Lab A's data in the response (`typed`: what lab B typed into a search box, echoed back)."""
    body = _body(response).replace(typed.encode(), b"") if typed else _body(response)
    return [f"{marker!r} shown at {where}" for marker in MARKERS if marker.encode() in body]


def _snapshot():
    counts = {m.__name__: m._default_manager.count() for m in admin.site._registry}
    return (counts, sorted(Study.objects.values_list("pk", "status", "team_id", "title")),
            sorted(Participant.objects.values_list("pk", "status", "is_preview")))


def _listed(client, model) -> set:
    """The pks the model's admin list holds for the client's user (the whole list, not one page)."""
    url = reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_changelist")
    response = client.get(url)
    assert response.status_code == 200, (model.__name__, response.status_code)
    return set(response.context["cl"].queryset.values_list("pk", flat=True))


def test_every_admin_model_is_team_scoped_or_named_shared():
    for model, model_admin in admin.site._registry.items():
        if getattr(model_admin, "team_scoped", False):
            continue
        assert model in SHARED or model in _axes_models(), (
            f"{model.__name__}'s admin is not team-scoped (experiments/team_admin.py) and not named shared here")
        assert not _reaches_study(model), f"{model.__name__} is shared but reaches a study"


def test_another_labs_member_sees_and_changes_nothing_in_any_admin_model(world):
    b = _client(world["users"]["member-b"])
    a = _client(world["users"]["member-a"])
    before = _snapshot()
    problems = []
    for model, model_admin in admin.site._registry.items():
        if not getattr(model_admin, "team_scoped", False):
            continue
        name = f"{model._meta.app_label}_{model._meta.model_name}"
        theirs = _listed(a, model)
        assert theirs, f"the world has no {model.__name__} of lab A: add one to the fixture"
        if _listed(b, model) & theirs:
            problems.append(f"lab B lists lab A's {model.__name__}")
        changelist = reverse(f"admin:{name}_changelist")
        queries = [{"q": marker} for marker in (PID, SLUG, "lab-a-probe-key")]
        path = getattr(model_admin, "study_path", None)
        if path is not None:
            queries.append({f"{path}__id__exact" if path else "id__exact": world["study"].pk})
        for query in queries:
            response = b.get(changelist, query)
            problems += _leaks(response, f"{changelist}?{query}", typed=query.get("q", ""))
            found = set(response.context["cl"].queryset.values_list("pk", flat=True)) if response.status_code == 200 \
                else set()
            if found & theirs:
                problems.append(f"lab B finds lab A's {model.__name__} with {query}")
        if model_admin.has_add_permission(_request(world["users"]["member-b"])):
            problems += _leaks(b.get(reverse(f"admin:{name}_add")), f"{name}_add")
        pk = sorted(theirs)[0]
        for view in ("change", "delete", "history"):
            url = reverse(f"admin:{name}_{view}", args=[pk])
            response = b.get(url)
            if response.status_code == 200:
                problems.append(f"lab B opened {url}")
            problems += _leaks(b.get(url, follow=True), url)
        problems += _leaks(b.post(reverse(f"admin:{name}_delete", args=[pk]), {"post": "yes"}, follow=True),
                           f"POST {name}_delete")
        actions = model_admin.get_actions(_request(world["users"]["member-b"]))
        for action in actions:
            response = b.post(changelist, {"action": action, "_selected_action": [pk], "confirm": "yes",
                                           "post": "yes", "index": 0}, follow=True)
            problems += _leaks(response, f"action {action} on {model.__name__}")
        for field in model._meta.fields:
            if field.is_relation:
                response = b.get(reverse("admin:autocomplete"), {"app_label": model._meta.app_label, "term": "",
                                                                 "model_name": model._meta.model_name,
                                                                 "field_name": field.name})
                problems += _leaks(response, f"autocomplete {name}.{field.name}")
    assert problems == [], "\n".join(problems)
    assert _snapshot() == before


def _request(user):
    from django.test import RequestFactory

    request = RequestFactory().get("/admin/")
    request.user = user
    return request


def _objects(world, client) -> dict:
    """For test_access.concrete: each model's first object lab A sees, the study, a token."""
    objects = {model: model._default_manager.get(pk=sorted(_listed(client, model))[0])
               for model, model_admin in admin.site._registry.items() if getattr(model_admin, "team_scoped", False)}
    objects[Team] = world["teams"][0]
    objects[get_user_model()] = world["users"]["member-a"]
    objects["token"] = world["person"].token
    return objects


ADMIN_OWN = {"admin:index", "admin:login", "admin:logout", "admin:password_change", "admin:password_change_done",
             "admin:jsi18n", "admin:app_list", "admin:autocomplete"}


def test_every_url_filled_with_another_labs_objects_refuses_and_shows_nothing(world):
    """The resolver's every admin URL and the participant preview, filled with lab A's objects, as
    lab B's member: a URL naming one of lab A's objects is refused (403/404, or a redirect to a page
    without its data), no page shows lab A's data, and nothing changes."""
    a = _client(world["users"]["member-a"])
    objects = _objects(world, a)
    b = _client(world["users"]["member-b"])
    before = _snapshot()
    problems = []
    routes = [(route, name) for route, name in all_patterns()
              if route.startswith("admin/") and name not in ADMIN_OWN or name == "participant:preview"]
    assert any(name == "admin:experiments_study_trials_csv" for _, name in routes)
    for route, name in routes:
        if _model_is_shared(route):
            continue  # a shared model's pages (users, configurations, presets): whoever holds the permission
        url = concrete(route, objects)
        names_an_object = any(f"<{p}" in route or f":{p}>" in route for p in ("pk", "object_id", "slug"))
        for method in ("get", "post"):
            response = getattr(b, method)(url, {"confirm": "yes", "write": "yes", "design": "modal-syllogisms"})
            if names_an_object and response.status_code == 200:
                problems.append(f"lab B got 200 at {method.upper()} {url} ({name})")
            problems += _leaks(response, f"{method.upper()} {url} ({name})")
            if response.status_code == 302:
                problems += _leaks(b.get(response["Location"]), f"{url} → {response['Location']}")
    assert problems == [], "\n".join(problems)
    assert _snapshot() == before
    assert not Participant.objects.filter(is_preview=True).exists()  # no preview participant in lab A's study


def _model_is_shared(route: str) -> bool:
    from tests.security.test_access import _model_for

    return _model_for(route) in SHARED


def test_the_own_labs_member_reaches_the_same_downloads(world):
    """The control: the URLs above are real; lab A's member gets the exports, files and pages."""
    a = _client(world["users"]["member-a"])
    study, report = world["study"], Report.objects.get()
    for url in (reverse("admin:experiments_study_trials_csv", args=[study.pk]),
                reverse("admin:analysis_report_html", args=[report.pk]),
                reverse("admin:analysis_report_zip", args=[report.pk]),
                reverse("admin:experiments_study_generate", args=[study.pk]),
                reverse("admin:experiments_study_upload", args=[study.pk]),
                reverse("admin:experiments_study_change", args=[study.pk])):
        response = a.get(url)
        assert response.status_code == 200, (url, response.status_code)
        _body(response)
    with_ids = reverse("admin:experiments_study_trials_csv", args=[study.pk]) + "?prolific_ids=1"
    assert PID.encode() in _body(a.get(with_ids))
    preview = a.get(reverse("participant:preview", kwargs={"slug": SLUG}))
    assert preview.status_code == 302 and Participant.objects.filter(is_preview=True, study=study).exists()


def test_list_filters_and_choices_name_only_the_users_teams_studies(world):
    b = _client(world["users"]["member-b"])
    mine = Study.objects.create(slug="lab-b-study", title="Lab B study", design="modal-syllogisms",
                                team=world["teams"][1])
    for name in ("experiments_item", "experiments_participant", "experiments_trial", "inference_modelrun",
                 "analysis_report", "inference_modelscore"):
        page = b.get(reverse(f"admin:{name}_changelist")).content.decode()
        assert SLUG not in page and TITLE not in page, name
    page = b.get(reverse("admin:inference_modelrun_add")).content.decode()
    assert "lab-b-study" in page and SLUG not in page  # the study select: lab B's studies only
    refused = b.post(reverse("admin:inference_modelrun_add"), {
        "study": world["study"].pk, "language_model": LanguageModel.objects.get().pk, "batch_size": 8,
        "device": "cpu", "item_limit": ""})
    assert refused.status_code == 200 and not ModelRun.objects.filter(study=world["study"]).exclude(
        pk=ModelRun.objects.get(study=world["study"]).pk).exists()
    assert "study" in refused.context["adminform"].form.errors
    assert mine.pk in _listed(b, Study)


def test_a_study_made_in_the_admin_goes_to_the_makers_team(world):
    lab_a, lab_b = world["teams"]
    maker = world["users"]["member-b"]
    client = _client(maker)
    add = reverse("admin:experiments_study_add")
    url, page, fields = change_form(client, add)
    assert list(client.get(add).context["adminform"].form.fields["team"].queryset) == [lab_b]
    assert fields["team"] == str(lab_b.pk)  # chosen for them: their one team
    fields.update({"slug": "made-by-b", "title": "Made by B", "design": "modal-syllogisms"})
    response = client.post(url, fields)
    assert response.status_code == 302, response.context["adminform"].form.errors
    assert Study.objects.get(slug="made-by-b").team == lab_b
    # another team's id typed in is refused
    response = client.post(url, {**fields, "slug": "into-a", "team": str(lab_a.pk)})
    assert response.status_code == 200 and not Study.objects.filter(slug="into-a").exists()
    # with several teams, they choose among theirs
    lab_c = Team.objects.create(name="Lab C")
    lab_c.members.add(maker)
    offered = client.get(add).context["adminform"].form.fields["team"].queryset
    assert set(offered) == {lab_b, lab_c}
    response = client.post(url, {**fields, "slug": "made-in-c", "team": str(lab_c.pk)})
    assert response.status_code == 302 and Study.objects.get(slug="made-in-c").team == lab_c
    # a staff user in no team is told why they cannot make one
    loner = get_user_model().objects.create_user("loner", password="pw-" * 6, is_staff=True)
    loner.user_permissions.set(Permission.objects.filter(codename__in=("add_study", "view_study")))
    page = _client(loner).get(add).content.decode()
    assert "You are in no team yet" in page


def test_teams_and_their_members_are_managed_in_the_admin(world):
    lab_a, lab_b = world["teams"]
    member_b = world["users"]["member-b"]
    client = _client(member_b)
    assert _listed(client, Team) == {lab_b.pk}
    newcomer = get_user_model().objects.create_user("newcomer", password="pw-" * 6, is_staff=True)
    url, _, fields = change_form(client, reverse("admin:experiments_team_change", args=[lab_b.pk]))
    response = client.post(url, {"name": "Lab B", "members": [member_b.pk, newcomer.pk]})
    assert response.status_code == 302
    assert set(lab_b.members.all()) == {member_b, newcomer}
    # a team they make has them as a member (else they could not see it)
    assert client.post(reverse("admin:experiments_team_add"), {"name": "Lab B2"}).status_code == 302
    assert member_b in Team.objects.get(name="Lab B2").members.all()
    # lab A's team cannot be changed by them
    client.post(reverse("admin:experiments_team_change", args=[lab_a.pk]), {"name": "taken", "members": [member_b.pk]})
    lab_a.refresh_from_db()
    assert lab_a.name == TEAM_A and member_b not in lab_a.members.all()


@pytest.mark.django_db(transaction=True)
def test_the_migration_puts_existing_studies_in_the_default_team_with_the_staff():
    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor

    before, after = [("experiments", "0015_item_link_kind")], [("experiments", "0016_teams")]
    executor = MigrationExecutor(connection)
    executor.migrate(before)
    old = MigrationExecutor(connection).loader.project_state(before).apps
    study = old.get_model("experiments", "Study").objects.create(slug="old", title="Old", design="modal-syllogisms")
    User = old.get_model("auth", "User")
    staff = User.objects.create(username="old-staff", is_staff=True)
    User.objects.create(username="old-visitor", is_staff=False)
    MigrationExecutor(connection).migrate(after)
    MigrationExecutor(connection).migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())
    team = Team.objects.get(name="Default team")
    assert Study.objects.get(pk=study.pk).team == team
    assert [u.username for u in team.members.all()] == [staff.username]


def test_a_configurations_check_runs_only_on_the_checkers_teams_studies(world, settings):
    """A shared configuration's "Check" is a run on the newest study with items of the user's teams,
    never on another team's study (whose first item it would show)."""
    from django.core.exceptions import ValidationError

    from experiments.team_scope import visible_studies
    from inference import services as inference

    settings.DUET_TASK_MODE = "eager"
    fake = LanguageModel.objects.create(name="fake-check", source="fake", backend="fake")
    with pytest.raises(ValidationError, match="no study with items"):
        inference.language_model_check(model=fake, studies=visible_studies(world["users"]["member-b"]))
    assert not ModelRun.objects.filter(language_model=fake).exists()
    run = inference.language_model_check(model=fake, studies=visible_studies(world["users"]["member-a"]))
    assert run.study == world["study"]


def test_a_configuration_shared_read_only_is_deleted_by_its_owners_alone_and_names_none_of_their_runs(world):
    """A configuration lab A shares with lab B: lab B sees it, and its delete page (and the list's delete
    action) refuses, naming the kinds of object in the way, never lab A's run or study; nothing is
    deleted. Lab A's member (the owner) sees its own run named."""
    b = _client(world["users"]["member-b"])
    lm = LanguageModel.objects.get(name=CONFIGURATION)
    lm.shared_with.add(world["teams"][1])
    assert lm.pk in _listed(b, LanguageModel)
    refused = b.get(reverse("admin:inference_languagemodel_delete", args=[lm.pk]))
    assert refused.status_code == 403
    action = b.post(reverse("admin:inference_languagemodel_changelist"),
                    {"action": "delete_selected", "_selected_action": [lm.pk]}).content.decode()
    assert "model configuration" in action and SLUG not in action
    b.post(reverse("admin:inference_languagemodel_delete", args=[lm.pk]), {"post": "yes"})
    b.post(reverse("admin:inference_languagemodel_changelist"),
           {"action": "delete_selected", "_selected_action": [lm.pk], "post": "yes"})
    assert LanguageModel.objects.filter(pk=lm.pk).exists() and ModelRun.objects.filter(language_model=lm).exists()
    own = _client(world["users"]["member-a"]).get(reverse("admin:inference_languagemodel_delete", args=[lm.pk]))
    assert SLUG in own.content.decode()  # the control: lab A's member sees its own run named
