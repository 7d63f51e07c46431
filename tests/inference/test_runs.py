"""Model runs through services and the Celery task: scores, progress, resume after a crash, failures."""
import math

import pytest
from django.core.exceptions import ValidationError
from django.test import override_settings

from inference import services
from inference.models import ModelRun, ModelScore, RunStatus
from inference.scorers.loading import unload_all
from inference.tasks import run_model_task
from tests.factories import ItemFactory, StudyFactory
from tests.inference.tiny_models import PROMPTS, direct_scores

pytestmark = pytest.mark.django_db


@pytest.fixture
def study():
    study = StudyFactory()
    for i in range(10):
        ItemFactory(study=study, prompt=PROMPTS[i % len(PROMPTS)].replace("Leo", f"Leo{i}"),
                    gold_answer="yes" if i % 3 else "no")
    return study


@pytest.fixture
def tiny_model(tiny_llama):
    return services.language_model_create(name="tiny-llama", source=str(tiny_llama), device="cpu")


def test_a_run_scores_every_item_once(study, tiny_model, tiny_llama):
    run = services.model_run_create(study=study, language_model=tiny_model, batch_size=3)
    assert (run.status, run.items_total, run.queue) == (RunStatus.QUEUED, 10, "cpu")
    assert run_model_task.apply(args=[run.pk]).get() == RunStatus.DONE
    run.refresh_from_db()
    assert run.items_done == 10 and run.started_at <= run.finished_at and run.error == ""
    assert run.versions["torch"] and run.versions["transformers"] and run.versions["files"]["model.safetensors"]
    assert run.configuration["source"] == str(tiny_llama) and run.configuration["prompt_format"] == "raw"
    assert not run.partial
    tiny_model.refresh_from_db()
    assert tiny_model.answer_token_ids["variants"]["yes"][0] == " Yes"
    score = ModelScore.objects.get(run=run, item=study.items.order_by("id").first())
    assert len(score.variants["yes"]) == len(score.variants["no"]) and " Yes" in score.variants["yes"]
    answer, nll, count = direct_scores(tiny_llama, score.item.prompt, list(score.token_ids))
    for text, value in answer.items():
        assert score.logprobs[text] == pytest.approx(value, abs=1e-5)
    assert score.prompt_tokens == count
    assert score.perplexity == pytest.approx(math.exp(nll / count), rel=1e-4)
    assert score.relative_p_yes == pytest.approx(score.p_yes / (score.p_yes + score.p_no))
    gold_share = score.relative_p_yes if score.item.gold_answer == "yes" else 1 - score.relative_p_yes
    assert score.soft_accuracy == pytest.approx(gold_share)
    assert score.answer_mass == pytest.approx(score.p_yes + score.p_no)
    assert score.decision_rule == "relative" and score.decision == score.decision_relative
    assert score.top_answer in ("yes", "no", "other") and score.top_token_id is not None

    before = list(ModelScore.objects.filter(run=run).values_list("id", "created_at"))
    assert run_model_task.apply(args=[run.pk]).get() == RunStatus.DONE  # redelivered: nothing changes
    assert list(ModelScore.objects.filter(run=run).values_list("id", "created_at")) == before


class SimulatedCrash(BaseException):
    """Stands for a worker killed mid-run: not an Exception, so nothing marks the run failed."""


def test_a_run_killed_mid_way_resumes_without_recomputing(study, tiny_model, scored_keys):
    run = services.model_run_create(study=study, language_model=tiny_model, batch_size=2)

    def crash_after_first_chunk(done, total):
        if done >= 4:
            raise SimulatedCrash

    with pytest.raises(SimulatedCrash):
        services.model_run_execute(run_id=run.pk, on_progress=crash_after_first_chunk)
    run.refresh_from_db()
    assert run.status == RunStatus.RUNNING and run.items_done == 4
    first = dict(ModelScore.objects.filter(run=run).values_list("item_id", "id"))

    scored = scored_keys("hf")
    assert run_model_task.apply(args=[run.pk]).get() == RunStatus.DONE
    run.refresh_from_db()
    assert run.items_done == 10 == ModelScore.objects.filter(run=run).count()
    assert sorted(scored) == sorted(set(study.items.values_list("id", flat=True)) - set(first))
    assert dict(ModelScore.objects.filter(run=run, item_id__in=first).values_list("item_id", "id")) == first


def test_item_limit_and_progress_callback(study, tiny_model):
    run = services.model_run_create(study=study, language_model=tiny_model, batch_size=2, item_limit=5)
    seen = []
    services.model_run_execute(run_id=run.pk, on_progress=lambda done, total: seen.append((done, total)))
    assert seen == [(0, 5), (4, 5), (5, 5)]
    run.refresh_from_db()
    assert run.partial  # 5 of the study's 10 items
    first_five = list(study.items.order_by("id").values_list("id", flat=True)[:5])
    assert sorted(ModelScore.objects.filter(run=run).values_list("item_id", flat=True)) == first_five


def test_a_model_that_does_not_fit_fails_its_run_with_a_clear_message(study, tiny_model):
    unload_all()
    run = services.model_run_create(study=study, language_model=tiny_model)
    with override_settings(DUET_WORKER_MAX_MEMORY_GB=1e-6):
        run_model_task.apply(args=[run.pk])
    run.refresh_from_db()
    assert run.status == RunStatus.FAILED and run.finished_at is not None
    assert "does not fit this worker" in run.error and "GiB" in run.error
    assert not run.scores.exists()


def test_status_machine_and_bad_input(study, tiny_model):
    run = services.model_run_create(study=study, language_model=tiny_model)
    services.model_run_cancel(run=run)
    assert run_model_task.apply(args=[run.pk]).get() == RunStatus.CANCELLED  # a cancelled run is left alone
    with pytest.raises(ValidationError, match="cannot go from cancelled to done"):
        services.model_run_transition(run=run, to=RunStatus.DONE)
    with pytest.raises(ValidationError, match="not a model run status"):
        services.model_run_transition(run=run, to="paused")
    with pytest.raises(ValidationError):
        services.model_run_create(study=study, language_model=tiny_model, batch_size=0)
    with pytest.raises(ValidationError, match="no yes/no items"):
        services.model_run_create(study=StudyFactory(), language_model=tiny_model)
    with pytest.raises(ValidationError):
        services.language_model_create(name="x", source="y", device="tpu")
    assert ModelRun.objects.count() == 1


def test_a_failed_run_retried_resumes(study, tiny_model, django_capture_on_commit_callbacks):
    run = services.model_run_create(study=study, language_model=tiny_model, batch_size=5)
    services.model_run_transition(run=run, to=RunStatus.RUNNING)
    services.model_run_transition(run=run, to=RunStatus.FAILED, error="RuntimeError: worker lost")
    with override_settings(DUET_TASK_MODE="eager"), django_capture_on_commit_callbacks(execute=True):
        services.model_run_retry(run=run)
    run.refresh_from_db()
    assert run.status == RunStatus.DONE and run.error == "" and run.items_done == 10


def test_chat_models_default_to_bare_answers():
    chat = services.language_model_create(name="c", source="s", prompt_format="chat", backend="fake")
    assert (chat.answer_yes, chat.answer_no) == ("Yes", "No")


def test_a_run_launched_while_the_broker_is_down_fails_clearly_and_can_be_retried(
    study, tiny_model, monkeypatch, django_capture_on_commit_callbacks
):
    from kombu.exceptions import OperationalError

    def broker_down(*args, **kwargs):  # what kombu raises when Redis refuses the connection
        raise OperationalError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")

    monkeypatch.setattr(run_model_task, "apply_async", broker_down)
    with override_settings(CELERY_BROKER_URL="redis://127.0.0.1:6379/0", DUET_TASK_MODE="celery"):
        with django_capture_on_commit_callbacks(execute=True):
            run = services.model_run_launch(study=study, language_model=tiny_model)
    run.refresh_from_db()
    assert run.status == RunStatus.FAILED
    assert "broker could not be reached" in run.error and "Connection refused" in run.error
    assert not ModelScore.objects.filter(run=run).exists()
    services.model_run_transition(run=run, to=RunStatus.QUEUED)  # what the admin's retry does
    run.refresh_from_db()
    assert run.status == RunStatus.QUEUED and run.error == ""
