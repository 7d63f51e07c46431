"""Items phrased with True/False (000 §4.2, 004's templates) are scored on those words, not on the
model's default Yes/No: the public path (a run on a study with such items, the tiny local model).

The per-item answer words are the scorer's business (issue 7 generalises it to per-request answer
sets); these tests pin down what the paired designs need from it."""
from __future__ import annotations

import math

import pytest
from django.core.management import call_command

from experiments.models import Study
from inference import services
from inference.models import ModelScore, RunStatus
from inference.tasks import run_model_task
from tests.inference.paired_tiny import build_llama
from tests.inference.tiny_models import direct_scores

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="session")
def tiny_words(tmp_path_factory):
    return build_llama(tmp_path_factory.mktemp("tiny-llama-tf"))


def test_true_false_items_are_scored_on_true_and_false(tiny_words):
    call_command("generate_items", "rulebreakers", "rbtf", "--pairs", "3", "--variants", "follow/yes-no",
                 "follow/true-false")
    study = Study.objects.get(slug="rbtf")
    model = services.language_model_create(name="tiny-words", source=str(tiny_words), device="cpu")
    run = services.model_run_create(study=study, language_model=model, batch_size=4, scope="all")  # both phrasings
    assert run_model_task.apply(args=[run.pk]).get() == RunStatus.DONE
    scores = list(ModelScore.objects.filter(run=run).select_related("item"))
    assert len(scores) == 12
    for score in scores:
        words = score.item.answer_words or {"yes": "Yes", "no": "No"}
        yes = [t for t in score.logprobs if t.strip().lower() == words["yes"].lower()]
        no = [t for t in score.logprobs if t.strip().lower() == words["no"].lower()]
        assert " " + words["yes"] in yes and " " + words["no"] in no, (score.item.variant, sorted(score.logprobs))
        assert set(yes) | set(no) == set(score.logprobs)  # no other answer words are mixed in
        wanted = {t: score.token_ids[t] for t in (*yes, *no)}
        reference, _, _ = direct_scores(tiny_words, score.item.prompt, wanted)
        for text, value in reference.items():
            assert score.logprobs[text] == pytest.approx(value, abs=1e-5)
        p_yes = math.fsum(math.exp(reference[t]) for t in yes)
        p_no = math.fsum(math.exp(reference[t]) for t in no)
        assert score.p_yes == pytest.approx(p_yes, rel=1e-4) and score.p_no == pytest.approx(p_no, rel=1e-4)
        gold_share = p_yes / (p_yes + p_no) if score.item.gold_answer == "yes" else p_no / (p_yes + p_no)
        assert score.soft_accuracy == pytest.approx(gold_share, rel=1e-4)
        assert score.decision_relative == ("yes" if p_yes >= p_no else "no")
        # 000 §4.2: the model's answer is its most probable token over the whole vocabulary
        assert score.decision_rule == "top_token" and score.decision == score.top_answer
        single = {tuple(ids)[0]: t for t, ids in score.token_ids.items() if len(ids) == 1}
        expected = ("yes" if single[score.top_token_id] in yes else "no") if score.top_token_id in single else "other"
        assert score.top_answer == expected


def test_a_nul_character_a_model_writes_is_stored_visibly_not_refused():
    """PostgreSQL text fields refuse NUL; a byte-level tokenizer can decode a token to one (the tiny test
    model did, failing its whole run on PostgreSQL)."""
    from inference.strategies import NUL_SHOWN, storable

    assert storable("a\x00b\x00") == f"a{NUL_SHOWN}b{NUL_SHOWN}" and storable(" Yes") == " Yes"
