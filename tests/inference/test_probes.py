"""The knowledge probe of 000 §4.1: a run kind of its own, p(first token of the country), known =
that token is the likeliest; through the task, run_model --knowledge-probe and the admin."""
from __future__ import annotations

import pytest
import torch
from django.core.management import call_command
from transformers import AutoModelForCausalLM, AutoTokenizer

from experiments.models import Study
from inference import probes, services
from inference.models import ModelRun, ProbeScore, RunKind, RunStatus
from inference.tasks import run_model_task
from tests.admin_form import change_form
from tests.inference.paired_tiny import build_llama

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="session")
def tiny_words(tmp_path_factory):
    return build_llama(tmp_path_factory.mktemp("tiny-llama-words"))


@pytest.fixture
def study():
    call_command("generate_items", "rulebreakers", "rbq", "--pairs", "6", "--seed", "1", "--variants", "follow/yes-no")
    return Study.objects.get(slug="rbq")


def reference(folder, prompt: str, accepted: tuple[str, ...]):
    """Independent: one unpadded float64 forward pass, no product code."""
    tokenizer = AutoTokenizer.from_pretrained(folder)
    model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32).eval()
    ids = [tokenizer.bos_token_id, *tokenizer.encode(prompt, add_special_tokens=False)]
    with torch.no_grad():
        probs = torch.softmax(model(torch.tensor([ids])).logits[0, -1].double(), dim=-1)
    firsts = list(dict.fromkeys(tokenizer.encode(" " + a, add_special_tokens=False)[0] for a in accepted))
    top = int(torch.argmax(probs))
    return sum(float(probs[t]) for t in firsts), top, firsts


def test_the_study_probes_each_city_or_instance_once(study):
    found = probes.study_probes(study)
    parts = {i.attributes["part"] for i in study.items.all()}
    assert {p.key.split(":", 1)[1] for p in found} == parts and len(found) == len(parts)
    for probe in found:
        kind, part = probe.key.split(":", 1)
        ending = "is in" if kind == "geographical" else "is a type of"
        assert probe.prompt == f"Complete the sentence: {part} {ending}"


def test_a_probe_run_scores_every_probe_as_an_independent_forward_pass_does(study, tiny_words):
    model = services.language_model_create(name="tiny-words", source=str(tiny_words), device="cpu")
    run = services.model_run_create(study=study, language_model=model, kind=RunKind.KNOWLEDGE_PROBE, batch_size=4)
    assert run.kind == RunKind.KNOWLEDGE_PROBE and run.items_total == len(probes.study_probes(study))
    assert run_model_task.apply(args=[run.pk]).get() == RunStatus.DONE  # the task dispatches on the kind
    run.refresh_from_db()
    assert run.items_done == run.items_total and not run.scores.exists()
    by_key = {p.key: p for p in probes.study_probes(study)}
    tokenizer = AutoTokenizer.from_pretrained(tiny_words)
    for score in ProbeScore.objects.filter(run=run):
        p, top, firsts = reference(tiny_words, score.prompt, by_key[score.probe_key].accepted)
        assert score.p_target == pytest.approx(p, abs=1e-6)
        assert score.target_token_ids == firsts
        assert score.top_token == tokenizer.decode([top]) and score.known == (top in firsts)
    before = list(ProbeScore.objects.filter(run=run).values_list("id", flat=True))
    assert run_model_task.apply(args=[run.pk]).get() == RunStatus.DONE  # redelivered: nothing changes
    assert list(ProbeScore.objects.filter(run=run).values_list("id", flat=True)) == before


def test_a_resumed_probe_run_does_not_repeat_probes_and_uses_the_one_run_loop(study):
    """Through the fake scorer: the one run loop, the probe strategy, resumed after a crash."""
    from inference.scorers.fake import FakeScorer
    from inference.scorers import AnswerSet, LoadConfig

    model = services.language_model_create(name="fake", source="/nowhere", device="cpu", backend="fake")
    run = services.model_run_create(study=study, language_model=model, kind=RunKind.KNOWLEDGE_PROBE, batch_size=2)
    ProbeScore.objects.create(run=run, probe_key=probes.study_probes(study)[0].key, prompt="p", target="t",
                              p_target=0.5, known=True)  # scored before a crash
    scorer = FakeScorer(LoadConfig(source="/nowhere"), answers=AnswerSet.yes_no())
    result = services.model_run_execute(run_id=run.pk, scorer=scorer)
    assert result.status == RunStatus.DONE and result.items_done == result.items_total
    assert sum(scorer.calls) == result.items_total - 1
    for score in ProbeScore.objects.filter(run=run).exclude(prompt="p"):
        # the fake top token is the first token of its likeliest spelling, so every probe is "known"
        assert score.target_token_ids == [32] and 0 < score.p_target <= 1 and score.known


def test_run_model_knowledge_probe_option_and_admin(study, tiny_words, admin_client, capsys):
    call_command("run_model", "rbq", "--model", str(tiny_words), "--device", "cpu", "--knowledge-probe", "--no-progress")
    out = capsys.readouterr().out
    run = ModelRun.objects.get(kind=RunKind.KNOWLEDGE_PROBE)
    assert f"Run {run.pk} done: {run.items_total}/{run.items_total} probes" in out
    page = admin_client.get("/admin/inference/probescore/")
    assert page.status_code == 200
    first = ProbeScore.objects.first()
    assert first.probe_key in page.content.decode() and first.target in page.content.decode()
    assert admin_client.get("/admin/inference/modelrun/?kind__exact=knowledge_probe").status_code == 200


def test_a_study_without_rulebreakers_has_nothing_to_probe():
    from django.core.exceptions import ValidationError

    from tests.factories import ItemFactory, StudyFactory

    study = StudyFactory()
    ItemFactory(study=study)
    model = services.language_model_create(name="fake2", source="/nowhere", device="cpu", backend="fake")
    with pytest.raises(ValidationError, match="nothing to probe"):
        services.model_run_create(study=study, language_model=model, kind=RunKind.KNOWLEDGE_PROBE)


def test_a_probe_run_is_launched_from_the_admin_add_form(study, tiny_words, admin_client, django_capture_on_commit_callbacks):
    from django.test import override_settings
    from django.urls import reverse

    model = services.language_model_create(name="tiny-words", source=str(tiny_words), device="cpu")
    add = reverse("admin:inference_modelrun_add")
    empty = Study.objects.create(slug="no-rules", title="none", design="modal-syllogisms")
    refused = admin_client.post(add, {"study": empty.pk, "language_model": model.pk, "kind": "knowledge_probe",
                                      "batch_size": 4, "device": "", "item_limit": ""})
    assert refused.status_code == 200 and b"nothing to probe" in refused.content and not ModelRun.objects.exists()
    url, page, fields = change_form(admin_client, f"{add}?study={study.pk}&language_model={model.pk}"
                                                  "&kind=knowledge_probe")
    assert f"every item of the study — {len(probes.study_probes(study))} probes" in page  # counted before launching
    with override_settings(DUET_TASK_MODE="eager"), django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(url, {**fields, "batch_size": 4})
    assert response.status_code == 302
    run = ModelRun.objects.get()
    assert run.kind == RunKind.KNOWLEDGE_PROBE and run.status == RunStatus.DONE
    assert ProbeScore.objects.filter(run=run).count() == run.items_total == len(probes.study_probes(study))
    assert not run.scores.exists()  # a probe run scores no items
