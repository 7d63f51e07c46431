"""Configurations are checked when saved (issue 28 part 4): a hub id not in the local Hugging Face
cache, a folder without a model, a package not installed are refused with what to do, in the
service and in the admin's form; the admin's "Check" action scores one item and shows the answer."""
from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError
from django.test import override_settings
from django.urls import reverse

from inference import checks, services
from inference.models import GENERATION_DEFAULTS, LanguageModel, ModelRun, RunStatus
from tests.factories import ItemFactory, StudyFactory
from tests.inference.tiny_models import PROMPTS

pytestmark = pytest.mark.django_db

ADD_FIELDS = {"name": "new", "backend": "hf", "source": "", "gguf_file": "", "revision": "", "dtype": "float32",
              "prompt_format": "raw", "answer_yes": " Yes", "answer_no": " No", "answer_forms": "paper",
              "decision_rule": "paper", "device": "cpu"}


@pytest.fixture
def empty_hub_cache(tmp_path, monkeypatch):
    """An empty Hugging Face cache of this test's own (huggingface_hub reads constants.HF_HUB_CACHE)."""
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    return tmp_path / "hub"


def _cache(hub, repo_id: str, files: dict[str, str], revision: str = "main") -> None:
    """A hub cache entry laid out as huggingface_hub writes it (refs/<rev> → snapshots/<commit>/<file>)."""
    folder = hub / f"models--{repo_id.replace('/', '--')}"
    commit = "0123456789abcdef0123456789abcdef01234567"
    (folder / "refs").mkdir(parents=True)
    (folder / "refs" / revision).write_text(commit)
    for name, text in files.items():
        (folder / "snapshots" / commit).mkdir(parents=True, exist_ok=True)
        (folder / "snapshots" / commit / name).write_text(text)


def test_a_hub_id_not_in_the_cache_is_refused_with_how_to_download_it(empty_hub_cache):
    with pytest.raises(ValidationError) as caught:
        services.language_model_create(name="absent", source="nobody/absent-model")
    message = " ".join(caught.value.message_dict["source"])
    assert "is not in this machine's Hugging Face cache" in message and "hf download nobody/absent-model" in message
    assert str(empty_hub_cache) in message
    assert not LanguageModel.objects.exists()


def test_a_cached_hub_id_is_accepted_and_its_gguf_file_must_be_there(empty_hub_cache):
    _cache(empty_hub_cache, "someone/cached-model", {"config.json": "{}", "model.Q4.gguf": "x"})
    assert services.language_model_create(name="cached", source="someone/cached-model").pk
    assert services.language_model_create(name="cached-gguf", source="someone/cached-model",
                                          gguf_file="model.Q4.gguf").pk
    with pytest.raises(ValidationError, match="no model.Q8.gguf"):
        services.language_model_create(name="other", source="someone/cached-model", gguf_file="model.Q8.gguf")
    with pytest.raises(ValidationError, match="at revision 'v2'"):
        services.language_model_create(name="rev", source="someone/cached-model", revision="v2")


@pytest.mark.parametrize("source,says", [
    ("/no/such/folder", "No folder '/no/such/folder' on this machine"),
    ("pypi:no-such-model-package", "is not installed here"),
    ("not a hub id!", "neither a folder on this machine nor a valid Hugging Face hub id"),
])
def test_other_unusable_sources_are_refused(source, says):
    with pytest.raises(ValidationError, match=says):
        services.language_model_create(name="x", source=source)


def test_a_folder_without_a_model_is_refused(tmp_path):
    with pytest.raises(ValidationError, match="holds no config.json"):
        services.language_model_create(name="x", source=str(tmp_path))


def test_the_embedded_model_passes_its_check():
    assert checks.problems(services.language_model_embedded_default()) == []


def test_changing_the_source_is_checked_again(tiny_llama, empty_hub_cache):
    model = services.language_model_create(name="tiny", source=str(tiny_llama), device="cpu")
    with pytest.raises(ValidationError, match="not in this machine's Hugging Face cache"):
        services.language_model_update(model=model, source="nobody/absent-model")
    model.refresh_from_db()
    assert model.source == str(tiny_llama)


def test_the_admin_refuses_an_uncached_hub_id_at_save_with_the_message(admin_client, empty_hub_cache, tiny_llama):
    add = reverse("admin:inference_languagemodel_add")
    page = admin_client.post(add, {**ADD_FIELDS, "source": "nobody/absent-model"})
    assert page.status_code == 200 and not LanguageModel.objects.exists()
    body = page.content.decode()
    assert "is not in this machine&#x27;s Hugging Face cache" in body and "hf download nobody/absent-model" in body
    # the same form with a model that is here saves (generation fields left empty take their defaults)
    assert admin_client.post(add, {**ADD_FIELDS, "source": str(tiny_llama)}).status_code == 302
    saved = LanguageModel.objects.get()
    assert all(getattr(saved, name) == default for name, default in GENERATION_DEFAULTS.items())


def test_the_admin_refuses_bad_generation_settings_with_the_field_named(admin_client, tiny_llama):
    add = reverse("admin:inference_languagemodel_add")
    page = admin_client.post(add, {**ADD_FIELDS, "source": str(tiny_llama), "decision_rule": "generated",
                                   "sampling": "greedy", "samples": "4"})
    assert page.status_code == 200 and b"Greedy decoding writes the same answer every time" in page.content
    ok = admin_client.post(add, {**ADD_FIELDS, "source": str(tiny_llama), "decision_rule": "generated",
                                 "sampling": "sampled", "samples": "4", "temperature": "0.7", "max_new_tokens": "32",
                                 "stop": '["\\n\\n"]', "seed": "5", "generation_prompt": "paper",
                                 "answer_parser": "paper"})
    assert ok.status_code == 302
    saved = LanguageModel.objects.get()
    assert (saved.samples, saved.temperature, saved.stop, saved.seed) == (4, 0.7, '["\\n\\n"]', 5)


def test_the_check_action_scores_one_item_and_shows_the_answer(admin_client, django_capture_on_commit_callbacks):
    study = StudyFactory()
    for i in range(3):
        ItemFactory(study=study, prompt=PROMPTS[i], gold_answer="yes")
    model = services.language_model_create(name="fake-gen", source="/fake", backend="fake", device="cpu",
                                           decision_rule="generated")
    changelist = reverse("admin:inference_languagemodel_changelist")
    with override_settings(DUET_TASK_MODE="eager"), django_capture_on_commit_callbacks(execute=True):
        chosen = {"action": "check_configurations", "_selected_action": [model.pk]}
        form = admin_client.post(changelist, chosen).content.decode()  # first the study to check on
        assert 'name="study"' in form and f'<option value="{study.pk}" selected>' in form
        page = admin_client.post(changelist, {**chosen, "confirm": "yes", "study": study.pk}, follow=True)
    run = ModelRun.objects.get()
    assert run.status == RunStatus.DONE and run.partial and run.items_total == 1
    body = page.content.decode()
    # inside the test's transaction the task runs when the block ends, so the message says "queued"
    # (tests/e2e/test_admin_checks.py sees "answered" in a real server)
    assert f"check run {run.pk}</a> queued; its answer shows on its page" in body
    run_page = admin_client.get(reverse("admin:inference_modelrun_change", args=[run.pk])).content.decode()
    assert "Answer (first item)" in run_page and "over 1 sample(s); wrote “" in run_page


# --- a server without the log-probabilities: llama-cpp-python started with --logits_all False (conftest) ---


def _server_fields(url: str, **options) -> dict:
    return {"name": "no-logprobs", "source": services.EMBEDDED_SOURCE, "backend": "server", "server_urls": url,
            "start_token": "<|im_start|>", "device": "cpu", **options}


def test_a_server_without_log_probabilities_is_refused_at_save_with_what_to_do(llama_without_logprobs, admin_client):
    url = llama_without_logprobs.url
    with pytest.raises(ValidationError) as caught:
        services.language_model_create(**_server_fields(url))
    (message,) = caught.value.message_dict["decision_rule"]
    assert f"at {url} gives no log-probabilities of a prompt's tokens" in message
    assert "(asked for them, it answered HTTP 500)" in message and "logits_all=False" not in message  # not its words
    assert "without --logits_all False" in message and "choose the decision rule 'generated'" in message
    assert not LanguageModel.objects.exists()
    add = reverse("admin:inference_languagemodel_add")
    page = admin_client.post(add, {**ADD_FIELDS, **_server_fields(url), "concurrency": "2"})
    assert page.status_code == 200 and not LanguageModel.objects.exists()
    body = page.content.decode()
    assert "gives no log-probabilities of a prompt&#x27;s tokens" in body and "without --logits_all False" in body
    # what the message offers: the model writing its answer needs no log-probabilities
    assert services.language_model_create(**_server_fields(url, decision_rule="generated")).pk


def test_every_server_of_a_configuration_is_asked_for_its_log_probabilities(llama_server, llama_without_logprobs):
    url = llama_without_logprobs.url
    with pytest.raises(ValidationError) as caught:
        services.language_model_create(**_server_fields(f"{llama_server}\n{url}"))
    (message,) = caught.value.message_dict["decision_rule"]
    assert f"at {url} gives no" in message and llama_server not in message
    assert not LanguageModel.objects.exists()
