"""A researcher launches a run from admin and with run_model, watches progress and reads the scores."""
import re
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.test import override_settings
from django.urls import reverse

from inference import services
from inference.models import LanguageModel, ModelRun, RunStatus
from tests.admin_form import change_form
from tests.factories import ItemFactory, StudyFactory
from tests.inference.tiny_models import PROMPTS

pytestmark = pytest.mark.django_db


@pytest.fixture
def study():
    study = StudyFactory(slug="tiny-study")
    for i, prompt in enumerate(PROMPTS):
        ItemFactory(study=study, prompt=prompt, gold_answer="yes" if i % 2 else "no")
    return study


def test_launch_from_admin_watch_progress_and_read_scores(admin_client, study, tiny_llama, django_capture_on_commit_callbacks):
    model = services.language_model_create(name="tiny", source=str(tiny_llama), device="cpu")
    add = reverse("admin:inference_modelrun_add")
    assert admin_client.get(add).status_code == 200
    url, page, fields = change_form(admin_client, f"{add}?study={study.pk}&language_model={model.pk}")
    assert f"— {len(PROMPTS)} items, no measured rate yet (the default)" in page  # each scope's count, before launching
    with override_settings(DUET_TASK_MODE="eager"), django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(url, {**fields, "batch_size": 4})
    assert response.status_code == 302
    run = ModelRun.objects.get()
    assert run.status == RunStatus.DONE and run.items_done == len(PROMPTS)

    listing = admin_client.get(reverse("admin:inference_modelrun_changelist")).content.decode()
    assert f"{len(PROMPTS)} / {len(PROMPTS)} items (100 %)" in listing
    page = admin_client.get(reverse("admin:inference_modelrun_change", args=[run.pk])).content.decode()
    assert "<progress" in page and 'http-equiv="refresh"' not in page and "transformers" in page
    scores = admin_client.get(reverse("admin:inference_modelscore_changelist") + f"?run__id__exact={run.pk}").content.decode()
    assert scores.count("field-soft_accuracy") == len(PROMPTS)
    model_page = admin_client.get(reverse("admin:inference_languagemodel_change", args=[model.pk])).content.decode()
    yes_ids = run.scores.first().token_ids[" Yes"]
    assert f"␣Yes={yes_ids}" in model_page  # its space shown (issue 35 item 3)


def test_admin_refuses_bad_input_and_refreshes_a_running_run(admin_client, study, tiny_llama):
    model = services.language_model_create(name="tiny", source=str(tiny_llama), device="cpu")
    empty = StudyFactory()
    response = admin_client.post(reverse("admin:inference_modelrun_add"),
                                 {"study": empty.pk, "language_model": model.pk, "batch_size": 4, "device": "gpu9"})
    assert response.status_code == 200 and b"Device must be auto, cpu, cuda or cuda:N" in response.content
    response = admin_client.post(reverse("admin:inference_modelrun_add"),
                                 {"study": empty.pk, "language_model": model.pk, "batch_size": 4, "device": "cpu"})
    assert response.status_code == 200 and b"has no yes/no items to score" in response.content
    assert not ModelRun.objects.exists()
    run = services.model_run_create(study=study, language_model=model)
    services.model_run_transition(run=run, to=RunStatus.RUNNING)
    page = admin_client.get(reverse("admin:inference_modelrun_change", args=[run.pk])).content.decode()
    assert 'http-equiv="refresh"' in page and "0 / 6 items (0 %)" in page
    admin_client.post(reverse("admin:inference_modelrun_changelist"), {"action": "cancel_jobs", "_selected_action": [run.pk]})
    run.refresh_from_db()
    assert run.status == RunStatus.CANCELLED


def test_run_model_command_shows_progress_and_scores(study, tiny_llama):
    out, err = StringIO(), StringIO()
    call_command("run_model", "tiny-study", "--model", str(tiny_llama), "--device", "cpu", "--batch-size", "4",
                 stdout=out, stderr=err)
    run = ModelRun.objects.get()
    assert run.status == RunStatus.DONE and run.scores.count() == len(PROMPTS)
    assert f"Run {run.pk} done: 6/6 items scored." in out.getvalue()
    assert "p(yes)=" in out.getvalue()
    # the progress the admin shows: items done, items/s (time left while there is some)
    assert f"Run {run.pk}: 0 / 6 items (0 %)" in out.getvalue()
    assert re.search(rf"Run {run.pk}: 6 / 6 items \(100 %\), [0-9.]+ items/(s|min)", out.getvalue()), out.getvalue()
    assert LanguageModel.objects.get().source == str(tiny_llama)

    call_command("run_model", "--run", str(run.pk), stdout=StringIO(), stderr=StringIO())  # resume: a no-op
    assert run.scores.count() == len(PROMPTS)


@pytest.mark.parametrize("args, message", [
    (["no-such-study"], "No study with slug"),
    (["tiny-study", "--batch-size", "0"], "at least 1"),
    (["tiny-study", "--limit", "0"], "at least 1"),
    (["--run", "999"], "No model run with id 999"),
    ([], "Name a study"),
])
def test_run_model_command_bad_input(study, args, message):
    with pytest.raises(CommandError, match=message):
        call_command("run_model", *args, stdout=StringIO(), stderr=StringIO())
    assert not ModelRun.objects.exists() and not LanguageModel.objects.exists()


def test_run_model_command_reports_a_failed_run(study, tmp_path):
    # a folder without a model is refused before any run (issue 28: checked when the configuration is saved)
    with pytest.raises(CommandError, match=r"holds no config.json"):
        call_command("run_model", "tiny-study", "--model", str(tmp_path), "--device", "cpu",
                     stdout=StringIO(), stderr=StringIO())
    assert not ModelRun.objects.exists()
    (tmp_path / "config.json").write_text("{}")  # looks like a model, fails to load: the run fails and says so
    with pytest.raises(CommandError, match=r"failed: .*"):
        call_command("run_model", "tiny-study", "--model", str(tmp_path), "--device", "cpu",
                     stdout=StringIO(), stderr=StringIO())
    assert ModelRun.objects.get().status == RunStatus.FAILED
