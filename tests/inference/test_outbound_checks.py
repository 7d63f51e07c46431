"""The doors a model configuration opens (issue 34 items 1, 2 and 7), tried with the attacker's probes
as real listeners on loopback: a listener catching the Bearer header never receives the secret key,
the database URL, an unlisted or a misbound key — not even when the save is refused for another
reason; an internal service's error text never reaches a form, a run's error or the log; a silent or
dripping server is refused within the check's wall-clock cap, said to be busy, not unreachable; one
check more than DUET_CHECKS_AT_ONCE is refused at once; naming a key needs its own permission."""
from __future__ import annotations

import html
import logging
import threading
import time

import pytest
from django.contrib.auth.models import Permission
from django.core.exceptions import ValidationError
from django.urls import reverse

from inference import checks, services
from inference.models import LanguageModel, ModelRun, RunStatus
from tests import hostile
from tests.factories import ItemFactory, StudyFactory
from tests.integration.servers import free_port

pytestmark = pytest.mark.django_db

FORM = {"name": "probe", "backend": "server", "source": services.EMBEDDED_SOURCE, "gguf_file": "", "revision": "",
        "dtype": "float32", "prompt_format": "raw", "answer_yes": " Yes", "answer_no": " No", "answer_forms": "paper",
        "decision_rule": "paper", "device": "cpu", "concurrency": "1"}


def _config(url: str, **options) -> LanguageModel:
    return services.language_model_create(name=options.pop("name", "probe"), source=services.EMBEDDED_SOURCE,
                                          backend="server", server_urls=url, device="cpu", **options)


@pytest.fixture
def catcher():
    """A listener that answers as an OpenAI-compatible server and records every header it is sent."""
    with hostile.Peer(hostile.openai_like) as peer:
        yield peer


@pytest.fixture
def fresh_slots(monkeypatch):
    """The process's bound on checks at once, read again from the environment for this test."""
    monkeypatch.setattr(checks, "_RUNNING", None, raising=False)


@pytest.mark.parametrize("name", ["SECRET_KEY", "DATABASE_URL", "UNLISTED_KEY", "MISBOUND_KEY"])
def test_a_listener_never_receives_a_secret_an_unlisted_or_a_misbound_key(catcher, monkeypatch, settings, name):
    monkeypatch.setenv("DATABASE_URL", "postgres://duet:db-password-0xd1@db:5432/duet")
    monkeypatch.setenv("UNLISTED_KEY", "sk-unlisted-0xd2")
    monkeypatch.setenv("MISBOUND_KEY", "sk-misbound-0xd3")
    monkeypatch.setenv("DUET_MODEL_API_KEYS", "MISBOUND_KEY=https://api.openai.com")
    secrets = (settings.SECRET_KEY, "db-password-0xd1", "sk-unlisted-0xd2", "sk-misbound-0xd3")
    with pytest.raises(ValidationError) as caught:
        _config(catcher.url, name="leak", api_key_env=name)
    said = " ".join(caught.value.messages)
    assert "DUET_MODEL_API_KEYS" in said
    assert catcher.connections == 0  # refused before any request
    _config(catcher.url, name="twin")  # a configuration with the same options: the next save is a duplicate
    with pytest.raises(ValidationError, match="already has exactly these options"):
        _config(catcher.url, name="leak", api_key_env=name)
    sent = [r for r in catcher.requests if "authorization" in r.headers]
    assert sent == [], f"the key was sent: {[r.headers['authorization'][:12] for r in sent]}"
    assert not any(s in repr(catcher.requests) for s in secrets)
    assert not any(s in said for s in secrets)
    assert LanguageModel.objects.filter(name="leak").count() == 0


def test_a_listed_key_reaches_its_bound_origin_only(catcher, monkeypatch):
    monkeypatch.setenv("LAB_KEY", "sk-lab-0xd4")
    monkeypatch.setenv("DUET_MODEL_API_KEYS", f"LAB_KEY={catcher.url}")
    assert _config(catcher.url, api_key_env="LAB_KEY").pk
    assert {r.headers.get("authorization") for r in catcher.requests} == {"Bearer sk-lab-0xd4"}
    with hostile.Peer(hostile.openai_like) as other:  # a second server, not bound: nothing goes there
        with pytest.raises(ValidationError, match="is sent only to"):
            _config(f"{catcher.url}\n{other.url}", name="two", api_key_env="LAB_KEY", server_model="m")
        assert other.connections == 0


def test_an_internal_services_words_never_reach_the_form_the_run_or_the_log(admin_client, caplog):
    caplog.set_level(logging.DEBUG)
    with hostile.Peer(hostile.internal_service) as service:
        with pytest.raises(ValidationError) as caught:
            _config(service.url)
        said = " ".join(caught.value.messages)
        assert "answered HTTP 400" in said and hostile.MARKER not in said
        page = admin_client.post(reverse("admin:inference_languagemodel_add"), {**FORM, "server_urls": service.url})
        assert page.status_code == 200 and b"answered HTTP 400" in page.content
        assert hostile.MARKER.encode() not in page.content
        # a configuration saved when the server still worked, run against it now
        lm = LanguageModel.objects.create(name="saved", source=services.EMBEDDED_SOURCE, backend="server",
                                          server_urls=service.url, device="cpu", decision_rule="generated")
        study = StudyFactory()
        ItemFactory(study=study)
        run = services.model_run_create(study=study, language_model=lm, batch_size=1, item_limit=1)
        services.model_run_execute(run_id=run.pk)
        run.refresh_from_db()
    assert run.status == RunStatus.FAILED and "answered HTTP 400" in run.error, run.error
    assert hostile.MARKER not in run.error and hostile.MARKER not in caplog.text


@pytest.mark.parametrize("behave", [hostile.silent(), hostile.drip(0.3)], ids=["busy", "dripping"])
def test_a_slow_server_is_refused_within_the_check_cap_and_said_to_be_busy(monkeypatch, fresh_slots, behave):
    monkeypatch.setenv("DUET_CHECK_SECONDS", "2")
    with hostile.Peer(behave) as server:
        started = time.monotonic()
        with pytest.raises(ValidationError) as caught:
            _config(server.url)
        took = time.monotonic() - started
    (said,) = caught.value.message_dict["server_urls"]
    assert took < 3.5, f"the check held its thread {took:.1f} s"
    assert "did not answer within 2 s" in said and "busy" in said and "cannot be reached" not in said


def test_one_check_more_than_the_bound_is_refused_at_once(monkeypatch, fresh_slots):
    monkeypatch.setenv("DUET_CHECK_SECONDS", "4")
    monkeypatch.setenv("DUET_CHECKS_AT_ONCE", "2")
    with hostile.Peer(hostile.silent()) as server:
        hanging = [threading.Thread(target=checks.problems, args=(LanguageModel(
            backend="server", server_urls=server.url, source="x"),)) for _ in range(2)]
        for thread in hanging:
            thread.start()
        deadline = time.monotonic() + 10
        while server.connections < 2 and time.monotonic() < deadline:
            time.sleep(0.02)
        started = time.monotonic()
        found = checks.problems(LanguageModel(backend="server", server_urls=server.url, source="x"))
        assert time.monotonic() - started < 0.5
        assert found == [(None, "Other configurations are being checked right now (their servers are slow to "
                                "answer); save again in a minute.")]
        for thread in hanging:
            thread.join(10)
        assert server.connections == 2  # the refused one sent nothing


def test_a_dead_url_says_cannot_be_reached_and_nothing_about_a_missing_url(admin_client):
    url = f"http://127.0.0.1:{free_port()}"
    page = admin_client.post(reverse("admin:inference_languagemodel_add"), {**FORM, "server_urls": url})
    body = page.content.decode()
    assert page.status_code == 200 and f"The server at {url} cannot be reached" in body
    assert "needs at least one server URL" not in body
    page = admin_client.post(reverse("admin:inference_languagemodel_add"), {**FORM, "server_urls": url + "/?x="})
    assert "it has a query" in page.content.decode() and "needs at least one server URL" not in page.content.decode()


def test_a_dead_url_is_told_how_to_start_a_server_on_its_own_port_then_to_save_again(admin_client):
    port = free_port()
    page = admin_client.post(reverse("admin:inference_languagemodel_add"),
                             {**FORM, "server_urls": f"http://127.0.0.1:{port}"})
    body = html.unescape(page.content.decode())
    assert f"python manage.py serve_model --port {port} (start token <|im_start|>)" in body
    assert f"llama-server -m MODEL.gguf --port {port};" in body and f"vllm serve MODEL --port {port}" in body
    assert "or correct the URL. Then save again." in body
    assert "--port 8000" not in body and "--host" not in body  # this machine: its loopback is enough


def test_a_dead_url_on_duets_own_port_is_told_to_serve_on_another(monkeypatch):
    port = free_port()  # stands for 8000, where Duet serves (nothing listens on this one)
    monkeypatch.setattr(checks, "DUET_PORT", port)
    ((field, said),) = checks.problems(LanguageModel(backend="server", server_urls=f"http://localhost:{port}/api",
                                                     source="x"))
    assert field == "server_urls"
    assert f"serve_model --port {checks.SERVE_PORT} " in said and f"--port {port}" not in said
    assert (f"Port {port} is where Duet itself serves (manage.py demo, the web image): start the model server on "
            f"another port, e.g. {checks.SERVE_PORT}, and give that URL (http://localhost:{checks.SERVE_PORT}/api)."
            in said)


def test_the_check_action_on_a_server_gone_down_says_how_to_start_it_and_to_run_check_again(
        admin_client, django_capture_on_commit_callbacks):
    """A Check saves nothing: its message says to run Check again, not to save again."""
    study = StudyFactory()
    ItemFactory(study=study, prompt="Is Leo sewing?\nAnswer:")
    port = free_port()
    gone = LanguageModel.objects.create(name="gone", backend="server", server_urls=f"http://127.0.0.1:{port}",
                                        source=services.EMBEDDED_SOURCE, device="cpu")  # its server has stopped
    chosen = {"action": "check_configurations", "_selected_action": [gone.pk], "confirm": "yes", "study": study.pk}
    with django_capture_on_commit_callbacks(execute=True):
        page = admin_client.post(reverse("admin:inference_languagemodel_changelist"), chosen, follow=True)
    body = html.unescape(page.content.decode())
    assert f"Gone: The server at http://127.0.0.1:{port} cannot be reached" in body  # (the name, capitalised)
    assert f"python manage.py serve_model --port {port} " in body and "Then run Check again." in body
    assert "save again" not in body and not ModelRun.objects.exists()  # refused before any run


def test_naming_a_key_needs_its_own_permission(catcher, monkeypatch, client, django_user_model):
    monkeypatch.setenv("LAB_KEY", "sk-lab-0xd5")
    monkeypatch.setenv("DUET_MODEL_API_KEYS", f"LAB_KEY={catcher.url}")
    staff = django_user_model.objects.create_user("staff", password="pw-staff-9", is_staff=True)
    staff.user_permissions.set(Permission.objects.filter(
        codename__in=["add_languagemodel", "view_languagemodel", "change_languagemodel"]))
    with pytest.raises(ValidationError, match="needs the permission"):
        services.language_model_create(name="keyed", source=services.EMBEDDED_SOURCE, backend="server",
                                       server_urls=catcher.url, api_key_env="LAB_KEY", by=staff)
    client.force_login(staff)
    add = reverse("admin:inference_languagemodel_add")
    assert 'name="api_key_env"' not in client.get(add).content.decode()  # shown read-only
    from experiments.models import Team, default_team_id

    Team.objects.get(pk=default_team_id()).members.add(staff)  # a configuration is a team's (issue 45)
    saved = client.post(add, {**FORM, "server_urls": catcher.url, "api_key_env": "LAB_KEY",
                              "team": default_team_id()})
    assert saved.status_code == 302  # saved, without the key
    assert not LanguageModel.objects.exclude(api_key_env="").exists()
    assert all("authorization" not in r.headers for r in catcher.requests)
    LanguageModel.objects.all().delete()  # what the form saved without the key (its field is read-only)
    staff.user_permissions.add(Permission.objects.get(codename="name_api_key"))
    staff = django_user_model.objects.get(pk=staff.pk)
    assert services.language_model_create(name="keyed", source=services.EMBEDDED_SOURCE, backend="server",
                                          server_urls=catcher.url, api_key_env="LAB_KEY", by=staff).pk
    assert ModelRun.objects.count() == 0
