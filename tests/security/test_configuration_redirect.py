"""Another team cannot redirect a lab's model runs (issue 45 item 1), replayed through the admin.

The attack as it was found: team A's configuration sends its items to team A's server; a staff user of
team B holding `change_languagemodel` only changed its server URLs to team B's server (a 302, no
warning), and team A's next run sent its prompts (LAB-A-SECRET-PROMPT-0 …) there. Here both servers
are real HTTP servers on loopback speaking the completions protocol (tests/inference/hostile_servers.py)
and each records the prompts it is sent; the runs execute for real (services.model_run_execute).

Now: team B's user finds no such configuration (its list, change, history and delete pages, and a
posted change, refused with nothing changed), and a run created before its configuration changes —
through the admin by its own team (a new version), or by any write to the configuration's row — still
sends its prompts to the server it was created with.
"""
from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.test import Client
from django.urls import reverse

from experiments.models import Team
from inference import services
from inference.models import Backend, LanguageModel, ModelRun, RunStatus
from tests.admin_form import change_form
from tests.factories import ItemFactory, StudyFactory
from tests.inference.hostile_servers import Lies, Stand_in

pytestmark = pytest.mark.django_db

SECRET = "LAB-A-SECRET-PROMPT-{}"
NAME, INTERNAL = "lab-a-internal-configuration", "lab-a-gpu"


class Recording(Stand_in):
    """A completions server that records the prompt of every completion it is asked for."""

    def __init__(self):
        self.prompts: list[str] = []
        super().__init__(Lies(on_completion=self.prompts.append))


@pytest.fixture
def servers():
    made = {name: Recording() for name in ("a", "a2", "b")}
    yield made
    for server in made.values():
        server.stop()


def _user(name: str, team: Team, *codenames: str):
    user = get_user_model().objects.create_user(name, password="pw-" * 6, is_staff=True)
    user.user_permissions.set(Permission.objects.filter(content_type__app_label="inference", codename__in=codenames))
    team.members.add(user)
    return user


def _client(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def lab(servers):
    """Team A's study (its prompts secret) and server configuration; a member of each team."""
    team_a, team_b = Team.objects.create(name="Lab A"), Team.objects.create(name="Lab B")
    study = StudyFactory(team=team_a)
    for n in range(3):
        ItemFactory(study=study, prompt=f"{SECRET.format(n)} is sewing.\nQuestion: Is it sewing?\nAnswer:")
    lm = LanguageModel(name=NAME, source=INTERNAL, backend=Backend.SERVER, server_urls=servers["a"].url,
                       concurrency=2, team=team_a)
    lm.full_clean()
    lm.save()  # (the save-time check is inference/checks.py's, tested on its own)
    member_a = _user("member-a", team_a, "view_languagemodel", "change_languagemodel", "add_languagemodel",
                     "view_modelrun", "add_modelrun")
    member_b = _user("member-b", team_b, "change_languagemodel")  # the attacker: change_languagemodel only
    return {"study": study, "lm": lm, "a": member_a, "b": member_b, "teams": (team_a, team_b)}


def _sent(server: Recording) -> list[str]:
    return [prompt for prompt in server.prompts if "LAB-A-SECRET-PROMPT" in prompt]


def test_another_teams_staff_user_can_neither_see_nor_redirect_the_configuration(lab, servers):
    lm, b = lab["lm"], _client(lab["b"])
    before = LanguageModel.objects.values().get(pk=lm.pk)
    # what the attacker posted: team A's configuration pointed at team B's server
    own = _client(lab["a"])
    url, _, fields = change_form(own, reverse("admin:inference_languagemodel_change", args=[lm.pk]))
    fields = {k: v for k, v in fields.items() if v != "" or k != "shared_with"}
    attack = {**fields, "server_urls": servers["b"].url, "_save": "Save"}

    listed = b.get(reverse("admin:inference_languagemodel_changelist"))
    assert listed.status_code == 200
    assert lm.pk not in set(listed.context["cl"].queryset.values_list("pk", flat=True))
    for view in ("change", "history", "delete"):
        page = b.get(reverse(f"admin:inference_languagemodel_{view}", args=[lm.pk]), follow=True)
        body = page.content.decode()
        assert page.status_code in (200, 403, 404) and NAME not in body and servers["a"].url not in body
        if page.status_code == 200:  # the admin's "does not exist" redirect, to its index
            assert page.redirect_chain and page.redirect_chain[-1][0] == reverse("admin:index"), view
            assert "doesn’t exist" in body
    response = b.post(url, attack)
    assert response.status_code in (302, 403, 404)
    if response.status_code == 302:
        assert response["Location"] == reverse("admin:index")  # "doesn't exist", not "changed successfully"
    assert b.post(reverse("admin:inference_languagemodel_delete", args=[lm.pk]), {"post": "yes"}).status_code in (
        302, 403, 404)
    assert LanguageModel.objects.values().get(pk=lm.pk) == before
    assert LanguageModel.objects.count() == 1  # no version made either

    # team A's next run goes to team A's server, and nothing to team B's
    run = services.model_run_create(study=lab["study"], language_model=lm, batch_size=2)
    run = services.model_run_execute(run_id=run.pk)
    assert run.status == RunStatus.DONE, run.error
    assert len(_sent(servers["a"])) >= 3 and _sent(servers["b"]) == []

    # the control: the same post by team A's own member is accepted (and makes a new version: it has runs)
    assert own.post(url, {**attack, "server_urls": servers["a2"].url}).status_code == 302


def test_a_run_created_before_its_configuration_changes_executes_against_the_urls_it_was_created_with(
        lab, servers):
    lm, own = lab["lm"], _client(lab["a"])
    queued = services.model_run_create(study=lab["study"], language_model=lm, batch_size=2)
    assert queued.configuration["server_urls"] == [servers["a"].url]

    # team A's member moves the configuration to another server through the admin: a new version
    url, _, fields = change_form(own, reverse("admin:inference_languagemodel_change", args=[lm.pk]))
    fields = {k: v for k, v in fields.items() if v != "" or k != "shared_with"}
    response = own.post(url, {**fields, "server_urls": servers["a2"].url, "_save": "Save"}, follow=True)
    assert response.status_code == 200
    assert "new version" in response.content.decode()
    lm.refresh_from_db()
    newer = LanguageModel.objects.get(replaces=lm)
    assert lm.urls() == [servers["a"].url] and newer.urls() == [servers["a2"].url]
    assert newer.name == f"{NAME} v2" and newer.team == lab["teams"][0] and newer.source == INTERNAL
    # the old version is read-only and takes no new run; the run form offers the new one only
    page = own.get(reverse("admin:inference_languagemodel_change", args=[lm.pk])).content.decode()
    assert 'name="server_urls"' not in page
    offered = own.get(reverse("admin:inference_modelrun_add")).context["adminform"].form.fields["language_model"]
    assert list(offered.queryset) == [newer]

    # whatever writes the old row now (the worst case: team B's server), the queued run keeps its own
    LanguageModel.objects.filter(pk=lm.pk).update(server_urls=servers["b"].url, api_key_env="")
    done = services.model_run_execute(run_id=queued.pk)
    assert done.status == RunStatus.DONE, done.error
    assert len(_sent(servers["a"])) >= 3
    assert _sent(servers["b"]) == [] and _sent(servers["a2"]) == []
    assert [entry["url"] for entry in done.versions["servers"]] == [servers["a"].url]

    # a run of the new version goes to the new server
    later = services.model_run_create(study=lab["study"], language_model=newer, batch_size=2)
    assert services.model_run_execute(run_id=later.pk).status == RunStatus.DONE
    assert len(_sent(servers["a2"])) >= 3 and _sent(servers["b"]) == []


def test_a_shared_configuration_is_read_only_to_the_team_it_is_shared_with(lab, servers):
    lm = lab["lm"]
    team_b = lab["teams"][1]
    lm.shared_with.add(team_b)  # team A's explicit act
    reader = _user("reader-b", team_b, "view_languagemodel", "change_languagemodel", "delete_languagemodel",
                   "view_modelrun", "add_modelrun")
    b = _client(reader)
    page = b.get(reverse("admin:inference_languagemodel_change", args=[lm.pk]))
    assert page.status_code == 200 and NAME in page.content.decode()
    assert 'name="server_urls"' not in page.content.decode()  # the read-only page
    before = LanguageModel.objects.values().get(pk=lm.pk)
    url, _, fields = change_form(b, reverse("admin:inference_languagemodel_change", args=[lm.pk]))
    assert b.post(url, {**fields, "name": NAME, "server_urls": servers["b"].url,
                        "_save": "Save"}).status_code == 403
    assert b.post(reverse("admin:inference_languagemodel_delete", args=[lm.pk]), {"post": "yes"}).status_code == 403
    assert LanguageModel.objects.values().get(pk=lm.pk) == before and LanguageModel.objects.count() == 1
    # team B runs it on its own study (sharing's point), never on team A's
    theirs = StudyFactory(team=team_b)
    ItemFactory(study=theirs, prompt="Lab B's own prompt.\nAnswer:")
    offered = b.get(reverse("admin:inference_modelrun_add")).context["adminform"].form.fields["language_model"]
    assert list(offered.queryset) == [lm]
    assert services.model_run_create(study=theirs, language_model=lm).configuration["server_urls"] == [
        servers["a"].url]
    lm.shared_with.remove(team_b)
    assert b.get(reverse("admin:inference_languagemodel_change", args=[lm.pk])).status_code == 302
    assert list(b.get(reverse("admin:inference_modelrun_add")).context["adminform"].form.fields[
        "language_model"].queryset) == []
    with pytest.raises(Exception, match="another team's and not shared"):
        services.model_run_create(study=theirs, language_model=lm)
    assert ModelRun.objects.filter(study=theirs).count() == 1
