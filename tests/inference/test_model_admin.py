"""The model configurations' admin as a researcher meets it (issue 34 items 5 and 7, issue 35 item 3):
each action needs its own permission and says its failures in words; a configuration with runs may
change its name, device, servers and concurrency; the form stores the answers as shown (' Yes'), shows
their spaces ('␣Yes'), takes stop strings one per line, and lets "Check" score a chosen study."""
from __future__ import annotations

import json
import shutil
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.test import Client, override_settings
from django.urls import reverse

from inference import services
from inference.models import LanguageModel, ModelRun, RunStatus
from tests.factories import ItemFactory, StudyFactory, join_default_team
from tests.inference.tiny_models import PROMPTS

pytestmark = pytest.mark.django_db

CHANGELIST = "admin:inference_languagemodel_changelist"
FAKE = {"name": "fake", "backend": "fake", "source": "/fake", "gguf_file": "", "revision": "", "dtype": "float32",
        "device": "cpu", "prompt_format": "raw", "answer_yes": " Yes", "answer_no": " No", "answer_forms": "paper",
        "decision_rule": "paper", "server_urls": "", "server_model": "", "start_token": "", "concurrency": "",
        "api_key_env": ""}


def _staff(*codenames: str) -> Client:
    user = join_default_team(get_user_model().objects.create_user(f"staff-{'-'.join(codenames) or 'none'}",
                                                                  is_staff=True))
    user.user_permissions.add(*Permission.objects.filter(codename__in=codenames))
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def studies():
    older, newer = StudyFactory(slug="older"), StudyFactory(slug="newer")
    for study in (older, newer):
        for i in range(2):
            ItemFactory(study=study, prompt=PROMPTS[i], gold_answer="yes")
    return older, newer


@pytest.fixture
def fake_model():
    """A configuration of the default team (_staff's: a team sees its own configurations, issue 45)."""
    from experiments.models import Team, default_team_id

    return services.language_model_create(name="fake", source="/fake", backend="fake", device="cpu",
                                          team=Team.objects.get(pk=default_team_id()))


def _check(client, model, study=None, **more):
    chosen = {"action": "check_configurations", "_selected_action": [model.pk], **more}
    if study is not None:
        chosen.update(confirm="yes", study=study.pk)
    return client.post(reverse(CHANGELIST), chosen, follow=study is not None)


def test_check_needs_its_own_permission_and_a_view_only_user_gets_a_403(studies, fake_model):
    viewer = _staff("view_languagemodel")
    listing = viewer.get(reverse(CHANGELIST)).content.decode()
    assert "check_configurations" not in listing and 'name="action"' not in listing  # no action offered
    assert _check(viewer, fake_model).status_code == 403
    assert _check(viewer, fake_model, studies[0]).status_code == 403
    assert not ModelRun.objects.exists()  # nothing created, nothing asked
    checker = _staff("view_languagemodel", "check_languagemodel")
    assert "check_configurations" in checker.get(reverse(CHANGELIST)).content.decode()
    with override_settings(DUET_TASK_MODE="eager"):
        page = _check(checker, fake_model, studies[0])
    assert page.status_code == 200 and ModelRun.objects.get().study == studies[0]


def test_check_scores_the_study_chosen_the_newest_preselected(admin_client, studies, fake_model):
    older, newer = studies
    form = _check(admin_client, fake_model).content.decode()
    assert f'<option value="{newer.pk}" selected>' in form and f'<option value="{older.pk}">' in form
    with override_settings(DUET_TASK_MODE="eager"):
        _check(admin_client, fake_model, older)
    run = ModelRun.objects.get()
    assert run.study == older and run.items_total == 1 and run.partial


def test_a_check_that_fails_is_a_message_never_a_500(admin_client, studies, tmp_path):
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "config.json").write_text("{}")
    model = services.language_model_create(name="gone", source=str(folder), device="cpu")
    shutil.rmtree(folder)  # the model's folder went away since it was saved
    page = _check(admin_client, model, studies[0])
    assert page.status_code == 200
    said = [str(m) for m in page.context["messages"]]
    assert len(said) == 1 and said[0].startswith("gone: No folder") and not ModelRun.objects.exists()


@pytest.mark.django_db(transaction=True)  # the run is queued on commit: a real one, so it has failed by the message
def test_a_check_whose_run_fails_says_so(admin_client, studies, fake_model, monkeypatch):
    from inference import scorers

    def broken(*args, **kwargs):
        raise RuntimeError("the scorer broke")

    monkeypatch.setitem(scorers.REGISTRY.entries, "fake", broken)
    with override_settings(DUET_TASK_MODE="eager"):
        page = _check(admin_client, fake_model, studies[0])
    assert page.status_code == 200
    run = ModelRun.objects.get()
    assert run.status == RunStatus.FAILED
    said = " ".join(str(m) for m in page.context["messages"])
    assert f"check run {run.pk}</a> failed: " in said and "the scorer broke" in said


def test_cancel_and_retry_need_the_change_permission(studies, fake_model):
    run = services.model_run_create(study=studies[0], language_model=fake_model)
    viewer = _staff("view_modelrun")
    runs = reverse("admin:inference_modelrun_changelist")
    assert "cancel_jobs" not in viewer.get(runs).content.decode()
    assert viewer.post(runs, {"action": "cancel_jobs", "_selected_action": [run.pk]}).status_code == 403
    run.refresh_from_db()
    assert run.status == RunStatus.QUEUED
    changer = _staff("view_modelrun", "change_modelrun")
    changer.post(runs, {"action": "cancel_jobs", "_selected_action": [run.pk]})
    run.refresh_from_db()
    assert run.status == RunStatus.CANCELLED


# --- answers as shown, stop strings one per line -------------------------------------------------------


def test_the_add_form_stores_the_answers_with_their_spaces_and_shows_them(admin_client, studies):
    add = admin_client.get(reverse("admin:inference_languagemodel_add")).content.decode()
    assert 'name="answer_yes" value=" Yes"' in add  # prefilled with the space ...
    assert admin_client.post(reverse("admin:inference_languagemodel_add"), FAKE).status_code == 302
    saved = LanguageModel.objects.get()
    assert (saved.answer_yes, saved.answer_no) == (" Yes", " No")  # ... and stored with it
    assert "␣Yes / ␣No" in admin_client.get(reverse(CHANGELIST)).content.decode()
    # the same options as run_model's configuration of the same source: one configuration, not two
    twin = admin_client.post(reverse("admin:inference_languagemodel_add"), {**FAKE, "name": "again"})
    assert b"already has exactly these options" in twin.content
    services.model_run_create(study=studies[0], language_model=saved)  # fixed once it has runs: shown read-only
    page = admin_client.get(reverse("admin:inference_languagemodel_change", args=[saved.pk])).content.decode()
    assert 'name="answer_yes"' not in page and '<div class="readonly">␣Yes</div>' in page
    spaces_only = admin_client.post(reverse("admin:inference_languagemodel_add"),
                                    {**FAKE, "name": "blank", "answer_yes": "  "})
    assert b"An answer needs at least one character besides spaces" in spaces_only.content


def test_stop_strings_are_typed_one_per_line(admin_client):
    fields = {**FAKE, "decision_rule": "generated", "sampling": "greedy", "samples": "1", "temperature": "1",
              "max_new_tokens": "32", "stop": "\\n\\n\r\nQuestion:\r\n", "seed": "0", "generation_prompt": "paper",
              "answer_parser": "paper"}
    assert admin_client.post(reverse("admin:inference_languagemodel_add"), fields).status_code == 302
    saved = LanguageModel.objects.get()
    assert json.loads(saved.stop) == ["\n\n", "Question:"]
    page = admin_client.get(reverse("admin:inference_languagemodel_change", args=[saved.pk])).content.decode()
    assert "\\n\\n\nQuestion:</textarea>" in page  # shown as typed
    bad = admin_client.post(reverse("admin:inference_languagemodel_add"),
                            {**fields, "name": "bad", "stop": "a\nb\nc\nd\ne"})
    assert b"At most 4 stop strings" in bad.content and LanguageModel.objects.count() == 1


# --- a configuration with runs changes its servers; server configurations need no source ---------------


class _Models(BaseHTTPRequestHandler):
    """An OpenAI-compatible server's /v1/models, serving one model (what a generating configuration's
    save-time check asks)."""

    def do_GET(self):  # noqa: N802 (http.server's name)
        body = json.dumps({"object": "list", "data": [{"id": "served-model", "object": "model"}]}).encode()
        self.send_response(200 if self.path == "/v1/models" else 404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def model_servers():
    started = [ThreadingHTTPServer(("127.0.0.1", 0), _Models) for _ in range(2)]
    for server in started:
        threading.Thread(target=server.serve_forever, daemon=True).start()
    yield [f"http://127.0.0.1:{server.server_address[1]}" for server in started]
    for server in started:
        server.shutdown()
        server.server_close()


def test_a_configuration_with_runs_may_change_its_concurrency_device_and_name_and_new_servers_make_a_version(
        admin_client, studies, model_servers):
    first, second = model_servers
    fields = {**FAKE, "name": "served", "backend": "server", "source": "", "decision_rule": "generated",
              "server_urls": first, "concurrency": "2"}
    add = admin_client.post(reverse("admin:inference_languagemodel_add"), fields)
    assert add.status_code == 302, add.content.decode()[-3000:]
    model = LanguageModel.objects.get()
    assert model.source == ""  # a server configuration needs no source
    run = services.model_run_create(study=studies[0], language_model=model)
    change = reverse("admin:inference_languagemodel_change", args=[model.pk])
    posted = {"name": "served again", "device": "cuda", "server_urls": first, "concurrency": "8", "api_key_env": ""}
    response = admin_client.post(change, posted)
    assert response.status_code == 302, response.content.decode()[-3000:]
    model.refresh_from_db()
    assert (model.name, model.device, model.urls(), model.concurrency) == ("served again", "cuda", [first], 8)
    assert model.decision_rule == "generated" and model.answer_yes == " Yes"  # the fixed options as they were
    # new servers on a configuration with runs: a new version (issue 45); the old one and its run stay
    response = admin_client.post(change, {**posted, "name": "served again", "server_urls": f"{first}\n{second}"},
                                 follow=True)
    said = [str(m) for m in response.context["messages"]]
    assert any("make a new version, 'served again v2'" in m for m in said), said
    newer = LanguageModel.objects.get(replaces=model)
    assert (newer.name, newer.device, newer.urls(), newer.concurrency) == ("served again v2", "cuda", [first, second], 8)
    assert newer.identity() == model.identity()
    model.refresh_from_db()
    assert model.urls() == [first] and run.configuration["server_urls"] == [first]


def test_the_form_speaks_of_every_library(admin_client):
    page = admin_client.get(reverse("admin:inference_languagemodel_add")).content.decode()
    assert "a fake scorer exists for tests only" not in page
    assert "OpenAI-compatible completions server" in page and "Server and chat: optional" in page
    missing = admin_client.post(reverse("admin:inference_languagemodel_add"), {**FAKE, "source": ""})
    assert b"Say which model to load" in missing.content and not LanguageModel.objects.exists()


def test_a_scores_top_token_shows_its_space(admin_client, studies, fake_model, django_capture_on_commit_callbacks):
    with override_settings(DUET_TASK_MODE="eager"), django_capture_on_commit_callbacks(execute=True):
        run = services.model_run_launch(study=studies[0], language_model=fake_model, item_limit=1)
    score = run.scores.get()
    assert score.top_token == " "  # the fake scorer's top token: the first character of ' Yes' or ' No'
    listing = admin_client.get(reverse("admin:inference_modelscore_changelist")).content.decode()
    assert '<td class="field-top_token_shown">␣</td>' in listing
    page = admin_client.get(reverse("admin:inference_modelscore_change", args=[score.pk])).content.decode()
    assert '<div class="readonly">␣</div>' in page
    run_page = admin_client.get(reverse("admin:inference_modelrun_change", args=[run.pk])).content.decode()
    assert "<td>␣Yes</td>" in run_page and "<td>␣No</td>" in run_page  # the configuration the run stored


def test_save_as_new_on_a_configuration_with_runs_opens_the_add_form_with_its_options(admin_client, studies):
    model = services.language_model_create(name="fake", source="/fake", backend="fake", device="cpu")
    services.model_run_create(study=studies[0], language_model=model)
    change = reverse("admin:inference_languagemodel_change", args=[model.pk])
    moved = admin_client.post(change, {"name": "fake", "device": "cpu", "server_urls": "", "concurrency": "4",
                                       "api_key_env": "", "_saveasnew": "Save as new"}, follow=True)
    body = moved.content.decode()  # before: every read-only option "This field is required."
    assert moved.redirect_chain[-1][0].startswith(reverse("admin:inference_languagemodel_add"))
    assert "This field is required" not in body and "has runs, so its options stay as they are" in body
    assert 'name="answer_yes" value=" Yes"' in body and 'value="fake (new options)"' in body
    fields = {**FAKE, "name": "fake (new options)", "prompt_format": "chat"}
    assert admin_client.post(reverse("admin:inference_languagemodel_add"), fields).status_code == 302
    assert LanguageModel.objects.get(name="fake (new options)").prompt_format == "chat"
    assert LanguageModel.objects.get(pk=model.pk).prompt_format == "raw"


class _ModelsOnce(_Models):
    """Answers /v1/models once, then 404: a server that passed the form's check and is gone by the save."""

    asked = 0

    def do_GET(self):  # noqa: N802
        type(self).asked += 1
        if type(self).asked > 1:
            self.path = "/gone"
        super().do_GET()


def test_a_refusal_at_save_is_a_message_with_nothing_saved(admin_client):
    server = ThreadingHTTPServer(("127.0.0.1", 0), _ModelsOnce)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}"
        fields = {**FAKE, "name": "flaky", "backend": "server", "source": "", "decision_rule": "generated",
                  "server_urls": url}
        page = admin_client.post(reverse("admin:inference_languagemodel_add"), fields, follow=True)
    finally:
        server.shutdown()
        server.server_close()
    assert page.status_code == 200 and _ModelsOnce.asked == 2  # the form's check, then the save's
    said = " ".join(str(m) for m in page.context["messages"])
    assert said.startswith("Not saved: ") and "HTTP 404" in said and not LanguageModel.objects.exists()
