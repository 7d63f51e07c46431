"""Model configurations: options asked for are never ignored, a configuration with runs never
changes, and a run stores its configuration and what makes it reproducible."""
import math
from io import StringIO

import pytest
from django.core.exceptions import ValidationError
from django.core.management import call_command
from django.urls import reverse

from inference import services
from inference.models import LanguageModel, ModelRun, ModelScore, RunStatus
from tests.factories import ItemFactory, StudyFactory
from tests.inference.tiny_models import PROMPTS, direct_scores

pytestmark = pytest.mark.django_db


@pytest.fixture
def study():
    study = StudyFactory(slug="conf-study")
    for i, prompt in enumerate(PROMPTS):
        ItemFactory(study=study, prompt=prompt, gold_answer="yes" if i % 2 else "no")
    return study


def test_a_registered_configuration_is_reused_only_when_nothing_asked_differs(tiny_llama):
    raw, created = services.language_model_resolve(name_or_path=str(tiny_llama))
    assert created and raw.prompt_format == "raw" and raw.answer_yes == " Yes"
    assert services.language_model_resolve(name_or_path=raw.name) == (raw, False)
    assert services.language_model_resolve(name_or_path=raw.name, prompt_format="raw", dtype="float32") == (raw, False)

    chat, created = services.language_model_resolve(name_or_path=raw.name, prompt_format="chat")
    assert created and chat.pk != raw.pk and chat.name == f"{raw.name} [chat, yes='Yes', no='No']"
    assert (chat.prompt_format, chat.answer_yes, chat.answer_no, chat.source) == ("chat", "Yes", "No", raw.source)
    # asked again, from either name: the same chat configuration, not a third
    assert services.language_model_resolve(name_or_path=raw.name, prompt_format="chat") == (chat, False)
    assert services.language_model_resolve(name_or_path=str(tiny_llama), prompt_format="chat") == (chat, False)

    half, created = services.language_model_resolve(name_or_path=raw.name, dtype="bfloat16")
    assert created and half.dtype == "bfloat16" and half.name == f"{raw.name} [bfloat16]"
    rule, _ = services.language_model_resolve(name_or_path=raw.name, decision_rule="top_token")
    assert rule.decision_rule == "top_token" and rule.pk not in (raw.pk, chat.pk, half.pk)
    assert LanguageModel.objects.count() == 4


def test_the_embedded_default_gets_a_chat_twin_and_bad_options_are_refused():
    default, _ = services.language_model_resolve(name_or_path="smollm2")
    assert default.name == services.EMBEDDED_NAME
    chat, created = services.language_model_resolve(name_or_path="smollm2", prompt_format="chat")
    assert created and chat.gguf_file == default.gguf_file and chat.prompt_format == "chat"
    with pytest.raises(ValidationError, match="Unknown configuration option"):
        services.language_model_resolve(name_or_path="smollm2", nucleus=0.7)
    with pytest.raises(ValidationError, match="reads"):
        services.language_model_resolve(name_or_path="smollm2", gguf_file="other.gguf")


def test_a_configuration_with_runs_keeps_its_options(study, tiny_llama):
    model = services.language_model_create(name="tiny", source=str(tiny_llama), device="cpu")
    services.language_model_update(model=model, prompt_format="chat", answer_yes="Yes", answer_no="No")  # no runs yet
    services.model_run_create(study=study, language_model=model)
    with pytest.raises(ValidationError, match="has runs, so its dtype cannot change"):
        services.language_model_update(model=model, dtype="bfloat16")
    model.refresh_from_db()
    assert model.dtype == "float32"
    services.language_model_update(model=model, device="cpu", name="tiny renamed")  # not part of the numbers
    with pytest.raises(ValidationError, match="already has exactly these options"):
        services.language_model_create(name="twin", source=str(tiny_llama), prompt_format="chat")


def test_the_admin_refuses_to_change_a_configuration_with_runs_and_saves_as_new(admin_client, study, tiny_llama):
    model = services.language_model_create(name="tiny", source=str(tiny_llama), device="cpu")
    services.model_run_create(study=study, language_model=model)
    page = admin_client.get(reverse("admin:inference_languagemodel_change", args=[model.pk])).content.decode()
    assert 'name="prompt_format"' not in page and "Save as new" in page  # read-only once it has runs
    add = reverse("admin:inference_languagemodel_add")
    fields = {"name": "tiny chat", "backend": "hf", "source": str(tiny_llama), "gguf_file": "", "revision": "",
              "dtype": "float32", "prompt_format": "chat", "answer_yes": "Yes", "answer_no": "No",
              "answer_forms": "paper", "decision_rule": "paper", "device": "cpu"}
    assert admin_client.post(add, fields).status_code == 302
    twin = admin_client.post(add, {**fields, "name": "tiny chat again"})
    assert twin.status_code == 200 and b"already has exactly these options" in twin.content
    assert LanguageModel.objects.filter(prompt_format="chat").count() == 1


def test_run_model_chat_after_raw_makes_a_second_configuration_with_other_scores(study, tiny_llama):
    out = StringIO()
    call_command("run_model", "conf-study", "--model", str(tiny_llama), "--device", "cpu", "--no-progress", stdout=out)
    raw_run = ModelRun.objects.get()
    out = StringIO()
    call_command("run_model", "conf-study", "--model", raw_run.language_model.name, "--prompt-format", "chat",
                 "--device", "cpu", "--no-progress", stdout=out)
    assert "New model configuration" in out.getvalue()
    chat_run = ModelRun.objects.exclude(pk=raw_run.pk).get()
    assert chat_run.language_model_id != raw_run.language_model_id
    assert chat_run.configuration["prompt_format"] == "chat" and raw_run.configuration["prompt_format"] == "raw"
    raw = {s.item_id: s for s in ModelScore.objects.filter(run=raw_run)}
    chat = {s.item_id: s for s in ModelScore.objects.filter(run=chat_run)}
    assert set(raw) == set(chat)
    assert all(abs(raw[i].p_yes - chat[i].p_yes) > 1e-6 for i in raw)
    assert all(raw[i].prompt_tokens != chat[i].prompt_tokens or raw[i].perplexity != chat[i].perplexity for i in raw)


def test_run_model_on_a_metaspace_tokenizer_scores_every_item_as_an_independent_computation(study, tiny_sp):
    """Llama-2/Mistral-style tokenizer: ' Yes' alone is two tokens; every item is scored, every
    stored number equals plain transformers one prompt at a time. Every surface form is summed
    (--answer-forms all), so the variants of several tokens are scored too."""
    call_command("run_model", "conf-study", "--model", str(tiny_sp), "--device", "cpu", "--batch-size", "4",
                 "--answer-forms", "all", "--no-progress", stdout=StringIO())
    run = ModelRun.objects.get()
    assert run.status == RunStatus.DONE and run.items_done == len(PROMPTS)
    assert run.versions["files"]["tokenizer.json"] and run.versions["transformers"]
    for score in ModelScore.objects.filter(run=run).select_related("item"):
        assert list(score.variants["yes"]) == [" Yes", " yes", " YES", "Yes", "yes", "YES"]
        assert list(score.variants["no"]) == [" No", " no", " NO", "No", "no", "NO"]
        reference, nll, count = direct_scores(tiny_sp, score.item.prompt, list(score.token_ids))
        p_yes = math.fsum(math.exp(reference[t]) for t in score.variants["yes"])
        p_no = math.fsum(math.exp(reference[t]) for t in score.variants["no"])
        assert score.p_yes == pytest.approx(p_yes, rel=1e-5) and score.p_no == pytest.approx(p_no, rel=1e-5)
        assert score.answer_mass == pytest.approx(p_yes + p_no, rel=1e-5)
        assert score.prompt_tokens == count and score.perplexity == pytest.approx(math.exp(nll / count), rel=1e-5)
