"""Issue 28 part 4 in a real headless Chromium at 1366 px: a model configuration whose hub id is not in
this machine's Hugging Face cache is refused at save with what to do, nothing saved; the "Check"
action on a configuration that generates its answers scores one item and shows what it wrote.

Background work runs in the server's own thread (DUET_TASK_MODE=eager), as in test_admin_study.py.
"""
from __future__ import annotations

import pytest

from inference import services
from inference.models import LanguageModel, ModelRun
from tests.e2e.admin_walk import admin_walk
from tests.factories import ItemFactory, StudyFactory
from tests.inference.tiny_models import PROMPTS


@pytest.mark.django_db(transaction=True)
def test_an_uncached_hub_id_is_refused_and_check_shows_an_answer(live_server, monkeypatch, tmp_path, settings):
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hub"))  # an empty cache of this test's own
    settings.DUET_TASK_MODE = "eager"
    study = StudyFactory()
    ItemFactory(study=study, prompt=PROMPTS[0], gold_answer="no")
    generating = services.language_model_create(name="fake-generating", source="/fake", backend="fake", device="cpu",
                                                decision_rule="generated")

    with admin_walk(live_server, monkeypatch) as walk:
        page = walk.page
        page.goto(f"{walk.admin}/inference/languagemodel/add/")
        page.fill("#id_name", "Absent 7B")
        page.fill("#id_source", "nobody/absent-model-7b")
        page.click("input[name=_save]")
        page.wait_for_selector(".errornote")
        error = page.inner_text(".field-source .errorlist")
        assert "'nobody/absent-model-7b' is not in this machine's Hugging Face cache" in error
        assert "hf download nobody/absent-model-7b" in error
        assert page.evaluate("document.documentElement.scrollWidth") <= 1366  # the message wraps, no sideways scroll
        assert not LanguageModel.objects.filter(name="Absent 7B").exists()

        walk.action("check_configurations", generating.pk, changelist="inference/languagemodel")
        assert page.input_value("#id_study") == str(study.pk)  # the study to check on: the newest preselected
        page.click("input[value=Check]")
        page.wait_for_selector(".messagelist")
        said = page.inner_text(".messagelist")
        run = ModelRun.objects.get(language_model=generating)
        assert f"check run {run.pk} answered: item {study.items.get().code} (gold no): " in said
        assert "over 1 sample(s); wrote “" in said
        page.click(f".messagelist a:has-text('check run {run.pk}')")
        page.wait_for_selector(".field-answer")
        assert "wrote “" in page.inner_text(".field-answer")
