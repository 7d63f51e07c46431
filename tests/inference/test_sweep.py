"""A sweep from the admin (issue 37 item 3): "Run on a study" over the selected model configurations
launches one normal run per configuration (each queued, scored and done as any run), needs the
permission to add runs (a view-only user gets a 403 and nothing is launched), offers only the user's
teams' studies, and says in words what it refused."""
from __future__ import annotations

import re

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.test import Client, override_settings
from django.urls import reverse

from experiments.models import Team, default_team_id
from inference import services
from inference.models import ModelRun, ModelScore, RunStatus
from inference.sweeps import MAX_SWEEP, model_runs_sweep
from tests.factories import ItemFactory, StudyFactory, join_default_team
from tests.inference.tiny_models import PROMPTS

pytestmark = pytest.mark.django_db

CHANGELIST = "admin:inference_languagemodel_changelist"


def _staff(*codenames: str) -> Client:
    user = join_default_team(get_user_model().objects.create_user(f"staff-{'-'.join(codenames) or 'none'}",
                                                                  is_staff=True))
    user.user_permissions.add(*Permission.objects.filter(codename__in=codenames))
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def study():
    study = StudyFactory(slug="swept")
    for i in range(3):
        ItemFactory(study=study, prompt=PROMPTS[i], gold_answer="yes")
    return study


@pytest.fixture
def ten():
    """Ten configurations differing in their answers (each its own identity), of the default team (_staff's)."""
    team = Team.objects.get(pk=default_team_id())
    return [services.language_model_create(name=f"fake-{k}", source="/fake", backend="fake", device="cpu",
                                           answer_yes=f" Yes{k}", answer_no=f" No{k}", team=team) for k in range(10)]


def _sweep(client, models, study=None, **more):
    chosen = {"action": "run_sweep", "_selected_action": [m.pk for m in models], **more}
    if study is not None:
        chosen.update(confirm="yes", study=study.pk, batch_size=2)
    return client.post(reverse(CHANGELIST), chosen, follow=study is not None)


def test_ten_configurations_run_as_one_sweep_each_a_normal_run(study, ten, django_capture_on_commit_callbacks):
    runner = _staff("view_languagemodel", "add_modelrun", "view_modelrun")
    form = _sweep(runner, ten).content.decode()
    assert "Run model configurations on a study" in form and f'<option value="{study.pk}" selected>' in form
    assert all(model.name in form for model in ten) and not ModelRun.objects.exists()  # the form first
    with override_settings(DUET_TASK_MODE="eager"), django_capture_on_commit_callbacks(execute=True):
        page = _sweep(runner, ten, study)
    assert page.status_code == 200
    html = page.content.decode()  # (the message was rendered before the runs were scored: queued)
    # three items make no participant list (fewer than a list's length), so no item is one people could be
    # shown: the runs score every item (the scope's default where 'shown' holds none)
    assert "10 runs of swept queued (3 items each, every item of the study): " in html
    runs = list(ModelRun.objects.order_by("language_model__name"))
    assert [run.language_model for run in runs] == sorted(ten, key=lambda m: m.name)
    for run in runs:  # each a normal run, scored to the end (eager mode: at once)
        assert (run.study, run.status, run.items_done, run.items_total, run.batch_size, run.partial) == (
            study, RunStatus.DONE, 3, 3, 2, False)
        assert run.configuration["answer_yes"] == run.language_model.answer_yes
    assert ModelScore.objects.count() == 30 and ModelScore.objects.values("run", "item").distinct().count() == 30


def test_a_sweep_needs_the_permission_to_add_runs(study, ten):
    viewer = _staff("view_languagemodel", "check_languagemodel")
    assert "run_sweep" not in viewer.get(reverse(CHANGELIST)).content.decode()
    assert _sweep(viewer, ten[:2]).status_code == 403
    assert _sweep(viewer, ten[:2], study).status_code == 403
    assert not ModelRun.objects.exists()


def test_a_sweep_offers_only_the_users_teams_studies(study, ten):
    elsewhere = StudyFactory(slug="theirs", team=Team.objects.create(name="Another lab"))
    ItemFactory(study=elsewhere, prompt=PROMPTS[0], gold_answer="yes")
    runner = _staff("view_languagemodel", "add_modelrun")
    form = _sweep(runner, ten[:1]).content.decode()
    assert f'value="{study.pk}"' in form and f'value="{elsewhere.pk}"' not in form
    refused = _sweep(runner, ten[:1], elsewhere).content.decode()
    assert "Select a valid choice" in refused and not ModelRun.objects.exists()


def test_a_sweep_says_what_it_refused_and_runs_the_rest(study, ten):
    empty = StudyFactory(slug="empty")
    sweep = model_runs_sweep(study=empty, language_models=ten[:2])
    assert sweep.runs == [] and [m for m, _ in sweep.refused] == ten[:2]
    assert all("no" in why.lower() and "empty" in why for _, why in sweep.refused), sweep.refused
    with pytest.raises(Exception, match="Select at least one"):
        model_runs_sweep(study=study, language_models=[])
    with pytest.raises(Exception, match=f"at most {MAX_SWEEP} configurations"):
        model_runs_sweep(study=study, language_models=ten * 6)
    assert not ModelRun.objects.exists()
    with override_settings(DUET_TASK_MODE="eager"):
        sweep = model_runs_sweep(study=study, language_models=ten[:2], batch_size=0)
    assert sweep.runs == [] and all("batch" in why.lower() for _, why in sweep.refused), sweep.refused
