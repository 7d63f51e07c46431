"""A lab's configurations and runs are its own (issue 45 item 1), the services' side: a run executes from
the configuration it was created with; new servers on a configuration with runs make a new version;
each team has its own configurations, shared with others read-only by an explicit act; the migration
gives existing configurations their owners and completes existing runs' snapshots. The admin replay of
the attack: tests/security/test_configuration_redirect.py."""
from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.core.exceptions import ValidationError
from django.test import Client
from django.urls import reverse

from experiments.models import Team
from inference import services
from inference.models import Backend, LanguageModel, ModelRun
from tests.admin_form import change_form
from tests.factories import ItemFactory, StudyFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def teams():
    return Team.objects.create(name="Lab A"), Team.objects.create(name="Lab B"), Team.objects.create(name="Lab C")


def _study(team):
    study = StudyFactory(team=team)
    ItemFactory(study=study)
    ItemFactory(study=study)
    return study


def _fake(name="fake", team=None, **fields):
    return services.language_model_create(name=name, source="fake", backend=Backend.FAKE, device="cpu", team=team,
                                          **fields)


def test_a_run_is_scored_as_its_snapshot_says_whatever_the_configuration_row_says_later(teams):
    lm = _fake(team=teams[0], answer_yes=" Yes", answer_no=" No")
    run = services.model_run_create(study=_study(teams[0]), language_model=lm)
    LanguageModel.objects.filter(pk=lm.pk).update(source="elsewhere", answer_yes=" Sure", prompt_format="chat",
                                                  device="cuda")
    run = ModelRun.objects.get(pk=run.pk)
    scorer = services._build_scorer(run)
    assert scorer.config.source == "fake" and scorer.prompt_format == "raw" and scorer.config.device == "cpu"
    assert run.effective_device == "cpu" and run.ran_with.answer_yes == " Yes"
    done = services.model_run_execute(run_id=run.pk)
    assert done.status == "done", done.error
    assert all(" Yes" in score.logprobs and " Sure" not in score.logprobs for score in done.scores.all())


def test_a_run_without_a_snapshot_refuses_to_run_rather_than_read_the_configuration(teams):
    lm = _fake(team=teams[0])
    run = ModelRun.objects.create(study=_study(teams[0]), language_model=lm, items_total=2)
    with pytest.raises(ValidationError, match="keeps no configuration"):
        services._build_scorer(run)


def test_new_servers_on_a_configuration_with_runs_make_a_new_version_and_the_old_one_stays(teams):
    lab_a, lab_b, lab_c = teams
    lm = _fake(name="gpt", team=lab_a, server_urls="https://one.example")
    lm.shared_with.add(lab_c)
    same = services.language_model_update(model=lm, server_urls="https://two.example")  # no runs yet: in place
    assert same.pk == lm.pk and LanguageModel.objects.count() == 1
    run = services.model_run_create(study=_study(lab_a), language_model=lm)
    v2 = services.language_model_update(model=lm, server_urls="https://three.example", concurrency=8)
    assert v2.pk != lm.pk and v2.name == "gpt v2" and v2.replaces == lm and v2.team == lab_a
    assert list(v2.shared_with.all()) == [lab_c] and v2.concurrency == 8 and v2.identity() == lm.identity()
    lm.refresh_from_db()
    assert lm.urls() == ["https://two.example"] and lm.concurrency == 4 and lm.newer_version() == v2
    assert ModelRun.objects.get(pk=run.pk).configuration["name"] == "gpt"
    with pytest.raises(ValidationError, match="was replaced by 'gpt v2'"):
        services.language_model_update(model=lm, name="gpt renamed")
    with pytest.raises(ValidationError, match="was replaced by 'gpt v2'"):
        services.model_run_create(study=_study(lab_a), language_model=lm)
    # a name or a device changes in place; so does a new version without runs
    assert services.language_model_update(model=v2, device="cpu").pk == v2.pk
    services.model_run_create(study=_study(lab_a), language_model=v2)
    v3 = services.language_model_update(model=v2, server_urls="https://four.example")
    assert v3.name == "gpt v3" and v3.replaces == v2
    renamed = services.language_model_update(model=v3, name="gpt on four")
    assert renamed.pk == v3.pk and renamed.name == "gpt on four"
    # the twin rule sees current versions only: the old ones share the new one's options
    with pytest.raises(ValidationError, match="'gpt on four' already has exactly these options"):
        _fake(name="gpt again", team=lab_a)


def test_each_team_has_its_own_configurations_and_runs_only_its_own_or_those_shared_with_it(teams):
    lab_a, lab_b, lab_c = teams
    mine = _fake(name="a's", team=lab_a)
    theirs = _fake(name="b's", team=lab_b)  # the same options: another team's, never named to it
    with pytest.raises(ValidationError, match="'a's' already has exactly these options"):
        _fake(name="a's twin", team=lab_a)
    study_a = _study(lab_a)
    with pytest.raises(ValidationError, match="another team's and not shared"):
        services.model_run_create(study=study_a, language_model=theirs)
    theirs.shared_with.add(lab_a)
    assert services.model_run_create(study=study_a, language_model=theirs).study == study_a
    assert services.model_run_create(study=study_a, language_model=mine).study == study_a
    nobodys = _fake(name="superuser's")  # of no team: only a superuser (or a command) picks it
    assert services.model_run_create(study=study_a, language_model=nobodys).study == study_a
    # another configuration of a named one (other options) is the named one's team's, shared as it is
    variant, created = services.language_model_resolve(name_or_path="b's", prompt_format="chat")
    assert created and variant.team == lab_b and list(variant.shared_with.all()) == [lab_a]


def test_an_owners_save_in_the_admin_keeps_shares_with_teams_they_are_not_in(teams):
    lab_a, lab_b, lab_c = teams
    lm = _fake(name="a's", team=lab_a)
    lm.shared_with.add(lab_c)  # a superuser's act: the owner is not in lab C
    owner = get_user_model().objects.create_user("owner", password="pw-" * 6, is_staff=True)
    owner.user_permissions.set(Permission.objects.filter(codename__in=("view_languagemodel", "change_languagemodel")))
    lab_a.members.add(owner)
    client = Client()
    client.force_login(owner)
    url, page, fields = change_form(client, reverse("admin:inference_languagemodel_change", args=[lm.pk]))
    assert "Lab C" not in page and "Lab B" not in page  # only the owner's teams are offered
    fields = {k: v for k, v in fields.items() if v != "" or k != "shared_with"}
    response = client.post(url, {**fields, "name": "a's renamed"})
    assert response.status_code == 302, response.context["adminform"].form.errors
    lm.refresh_from_db()
    assert lm.name == "a's renamed" and list(lm.shared_with.all()) == [lab_c]
    # another team's id posted as the owner is refused
    response = client.post(url, {**fields, "team": str(lab_b.pk)})
    assert response.status_code == 200 and LanguageModel.objects.get(pk=lm.pk).team == lab_a


def test_a_new_configuration_made_in_the_admin_goes_to_the_makers_team(teams, admin_client):
    lab_a = teams[0]
    maker = get_user_model().objects.create_user("maker", password="pw-" * 6, is_staff=True)
    maker.user_permissions.set(Permission.objects.filter(codename__in=("view_languagemodel", "add_languagemodel")))
    lab_a.members.add(maker)
    client = Client()
    client.force_login(maker)
    form = client.get(reverse("admin:inference_languagemodel_add")).context["adminform"].form
    assert list(form.fields["team"].queryset) == [lab_a] and form.fields["team"].required
    assert form.initial["team"] == lab_a.pk
    # a superuser may leave it to no team (then only superusers see it)
    assert not admin_client.get(reverse("admin:inference_languagemodel_add")).context[
        "adminform"].form.fields["team"].required


@pytest.mark.django_db(transaction=True)
def test_the_migration_gives_configurations_owners_and_completes_the_runs_snapshots():
    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor

    teams_app = [node for node in MigrationExecutor(connection).loader.graph.leaf_nodes() if node[0] == "experiments"]
    before = [("inference", "0012_name_api_key_permission"), *teams_app]
    after = [("inference", "0013_teams_configurations_owned"), *teams_app]
    MigrationExecutor(connection).migrate(before)
    old = MigrationExecutor(connection).loader.project_state(before).apps
    OldTeam, OldStudy = old.get_model("experiments", "Team"), old.get_model("experiments", "Study")
    OldModel, OldRun = old.get_model("inference", "LanguageModel"), old.get_model("inference", "ModelRun")
    lab_a, lab_b = OldTeam.objects.create(name="Old lab A"), OldTeam.objects.create(name="Old lab B")
    study_a = OldStudy.objects.create(slug="old-a", title="A", design="modal-syllogisms", team=lab_a)
    study_b = OldStudy.objects.create(slug="old-b", title="B", design="modal-syllogisms", team=lab_b)
    used = OldModel.objects.create(name="used", source="s", backend="server", server_urls="http://now.example",
                                   concurrency=3)
    unused = OldModel.objects.create(name="unused", source="s")
    first = OldRun.objects.create(study=study_b, language_model=used,
                                  configuration={"name": "used", "backend": "server", "source": "s"})
    OldRun.objects.create(study=study_a, language_model=used, configuration={"name": "used"})
    OldRun.objects.create(study=study_a, language_model=used,
                          configuration={"name": "used", "server_urls": ["http://then.example"]})
    MigrationExecutor(connection).migrate(after)
    MigrationExecutor(connection).migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())
    used, unused = LanguageModel.objects.get(name="used"), LanguageModel.objects.get(name="unused")
    assert used.team.name == "Old lab A" and [t.name for t in used.shared_with.all()] == ["Old lab B"]
    assert unused.team is None and not unused.shared_with.exists()
    runs = list(ModelRun.objects.filter(language_model=used).order_by("pk"))
    assert runs[0].pk == first.pk
    assert runs[0].configuration["server_urls"] == ["http://now.example"] and runs[0].configuration["concurrency"] == 3
    assert runs[2].configuration["server_urls"] == ["http://then.example"]  # what a snapshot held is kept
    assert all(set(LanguageModel.IDENTITY) <= set(run.configuration) for run in runs)
    assert runs[1].ran_with.urls() == ["http://now.example"]
