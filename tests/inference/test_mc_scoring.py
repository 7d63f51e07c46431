"""Per-request answer sets: option letters for multiple choice (001), a phrasing's own words for yes/no (000).

The numbers are checked against a direct torch computation on one unpadded sequence (tiny_models.direct_scores).
"""
from __future__ import annotations

import math

import pytest
from django.urls import reverse

from designs.multiple_choice import items as mc_items
from designs.multiple_choice import questions as mc
from inference import services
from inference.models import ModelScore, RunStatus
from inference.scorers.base import AnswerSet, Request, Result, plan_variants, summarise_options
from inference.scorers.hf import HFScorer
from inference.scorers.loading import LoadConfig, load
from tests.factories import ItemFactory, StudyFactory
from tests.inference.tiny_models import PROMPTS, build, direct_scores

# Tokenizer text in which the option letters and True/False become single tokens.
EXTRA = tuple([" A", " B", " C", " D", " True", " False", "True", "False"] * 40)


@pytest.fixture(scope="module")
def tiny_mc(tmp_path_factory):
    return build("llama", tmp_path_factory.mktemp("tiny-llama-mc"), extra_corpus=EXTRA)


def test_letters_and_words_take_the_models_leading_space():
    raw, chat = AnswerSet.yes_no(), AnswerSet.yes_no("Yes", "No")
    assert AnswerSet.letters(raw).answers == (("A", " A"), ("B", " B"), ("C", " C"), ("D", " D"))
    assert AnswerSet.letters(chat).answers == (("A", "A"), ("B", "B"), ("C", "C"), ("D", "D"))
    assert AnswerSet.words(raw, "True", "False").answers == (("yes", " True"), ("no", " False"))
    assert AnswerSet.words(chat, "True", "False").answers == (("yes", "True"), ("no", "False"))
    # yes/no words get 000's case and space variants, the same for both; letters only the spacing ('a' is a word)
    assert AnswerSet.words(raw, "True", "False").surface_forms() == [
        (" True", " False"), (" true", " false"), (" TRUE", " FALSE"), ("True", "False"), ("true", "false"),
        ("TRUE", "FALSE")]
    assert AnswerSet.letters(raw).surface_forms() == [(" A", " B", " C", " D"), ("A", "B", "C", "D")]
    assert AnswerSet.letters(AnswerSet.yes_no(forms="answers")).surface_forms() == [(" A", " B", " C", " D")]


def test_option_probabilities_are_relative_to_the_four_letters_with_variants_summed():
    vocab = {" A": 1, "A": 2, " B": 3, "B": 4, " C": 5, "C": 6, " D": 7, "D": 8}
    variants = plan_variants(AnswerSet.letters(AnswerSet.yes_no()), lambda t: (vocab[t],) if t in vocab else (0, 0))
    assert variants.by_label["A"] == {" A": (1,), "A": (2,)}
    p = {" A": 0.10, "A": 0.02, " B": 0.30, "B": 0.06, " C": 0.05, "C": 0.01, " D": 0.04, "D": 0.02}
    result = Result(key=1, variants=variants, logprobs={k: math.log(v) for k, v in p.items()}, nll_sum=6.0,
                    prompt_tokens=3, top_token_id=3, top_token=" B", top_logprob=math.log(0.30))
    summary = summarise_options(result, "A")
    mass = 0.60
    assert summary.answer_mass == pytest.approx(mass)
    assert summary.option_probs == pytest.approx({"A": 0.12 / mass, "B": 0.36 / mass, "C": 0.06 / mass, "D": 0.06 / mass})
    assert summary.soft_accuracy == pytest.approx(0.2) and summary.decision_relative == "B"
    assert summary.top_answer == "B" and summary.perplexity == pytest.approx(math.exp(2.0))
    tie = Result(key=1, variants=variants, logprobs={k: math.log(0.1) for k in p}, nll_sum=1.0, prompt_tokens=1,
                 top_token_id=99, top_token="x", top_logprob=-0.1)
    tied = summarise_options(tie, "C")
    assert tied.decision_relative == "A" and tied.top_answer == "other"  # ties go to the first letter


def test_one_batch_scores_each_request_on_its_own_answers_as_a_direct_computation_does(tiny_mc, tmp_path):
    scorer = HFScorer(load(LoadConfig(source=str(tiny_mc), device="cpu"), cache_dir=tmp_path),
                      answers=AnswerSet.yes_no(), batch_size=8)
    calls = []
    forward = scorer._forward
    scorer._forward = lambda *a, **k: (calls.append(a[0].shape[0]), forward(*a, **k))[1]
    letters, words = AnswerSet.letters(AnswerSet.yes_no()), AnswerSet.words(AnswerSet.yes_no(), "True", "False")
    question = mc.Question(row=2, question_id="q", context=PROMPTS[4], question="Which follows?",
                           options=("Yes No yes no", "yes or no", "Answer: Yes", "Answer: No"), gold_index=1)
    prompts = [m.prompt for m in mc.mutants(question)]
    requests = [Request(key=0, text=PROMPTS[0]), Request(key=1, text=PROMPTS[1], answers=words),
                *(Request(key=2 + k, text=p, answers=letters) for k, p in enumerate(prompts))]
    results = scorer.score(requests)
    assert calls[0] == 6  # one forward pass over the prompts, whatever the answer sets (then the longer variants)
    for request, result in zip(requests, results):
        answer, nll, count = direct_scores(tiny_mc, request.text, list(result.variants.token_ids()))
        assert set(result.logprobs) == set(answer)
        assert result.prompt_tokens == count and result.nll_sum == pytest.approx(nll, abs=1e-4 * count)
        for text, value in answer.items():
            assert result.logprobs[text] == pytest.approx(value, abs=1e-5)
    assert set(results[0].logprobs) >= {" Yes", " No"} and set(results[1].logprobs) >= {" True", " False"}
    assert set(results[2].logprobs) == {" A", "A", " B", "B", " C", "C", " D", "D"}


@pytest.mark.django_db
def test_a_run_scores_every_mutant_by_its_letters_and_yes_no_items_by_their_words(tiny_mc, tmp_path, admin_client):
    study = StudyFactory(design="multiple-choice")
    bank = "id,context,question,option_a,option_b,option_c,option_d,answer,type\n" + "\n".join(
        f'q{n},"{PROMPTS[n].splitlines()[0]}","Which follows?",Yes No yes no,yes or no,Answer: Yes,Answer: No,'
        f'{"ABCD"[n]},3e1c' for n in range(3))
    mc_items.items_import_multiple_choice(study=study, data=bank)
    worded = ItemFactory(study=study, prompt=PROMPTS[2], gold_answer="no", answer_words={"yes": "True", "no": "False"})
    plain = ItemFactory(study=study, prompt=PROMPTS[3], gold_answer="yes")
    model = services.language_model_create(name="tiny-mc", source=str(tiny_mc), device="cpu")
    run = services.model_run_create(study=study, language_model=model, kind="multiple_choice", batch_size=3)
    yes_no = services.model_run_create(study=study, language_model=model, batch_size=3)
    assert (run.items_total, yes_no.items_total, yes_no.kind) == (12, 2, "items")
    assert services.model_run_execute(run_id=run.pk).status == RunStatus.DONE
    assert services.model_run_execute(run_id=yes_no.pk).status == RunStatus.DONE
    scores = {s.item.code: s for s in ModelScore.objects.filter(run__in=[run, yes_no]).select_related("item")}
    assert len(scores) == 14 and {f"q{n}.rot{k}" for n in range(3) for k in range(4)} <= set(scores)
    for code, score in scores.items():
        item = score.item
        answer, nll, count = direct_scores(tiny_mc, item.prompt, list(score.token_ids))
        assert score.perplexity == pytest.approx(math.exp(nll / count), rel=1e-4)
        for text, value in answer.items():
            assert score.logprobs[text] == pytest.approx(value, abs=1e-5)
        if item.kind == "multiple_choice":  # 001's setting: the letters as written only
            assert score.answer_forms == "answers" and score.variants == {x: [f" {x}"] for x in "ABCD"}
            raw = {x: math.exp(answer[f" {x}"]) for x in "ABCD"}
            total = sum(raw.values())
            assert score.option_probs == pytest.approx({x: raw[x] / total for x in "ABCD"}, abs=1e-6)
            assert score.soft_accuracy == pytest.approx(raw[item.gold_answer] / total, abs=1e-6)
            assert score.decision == score.decision_relative == max("ABCD", key=lambda x: raw[x])
            assert score.p_yes is None and score.relative_p_yes is None
            assert score.answer_mass == pytest.approx(total, rel=1e-6)
    words = scores[worded.code]  # a yes/no bank's item: 003 §4.1's setting, the words as written only
    assert set(words.token_ids) == {" True", " False"} and words.answer_forms == "answers"
    p_true = sum(math.exp(v) for k, v in words.logprobs.items() if k.strip().lower() == "true")
    p_false = sum(math.exp(v) for k, v in words.logprobs.items() if k.strip().lower() == "false")
    assert words.p_yes == pytest.approx(p_true) and words.soft_accuracy == pytest.approx(p_false / (p_true + p_false))
    assert words.option_probs == {} and " Yes" in scores[plain.code].token_ids
    # researchers see the four letters' probabilities in the admin's score list
    page = admin_client.get(reverse("admin:inference_modelscore_changelist") + f"?run__id__exact={run.pk}")
    first = scores["q0.rot0"].option_probs
    assert page.status_code == 200 and f"A {first['A']:.3f} B {first['B']:.3f}" in page.content.decode()


@pytest.mark.django_db
def test_a_multiple_choice_run_killed_mid_way_resumes_with_the_mutants_not_yet_scored(tiny_mc):
    study = StudyFactory(design="multiple-choice")
    bank = "id,context,question,options,answer\n" + "\n".join(
        f'q{n},"{PROMPTS[n % 6].splitlines()[0]}",Which?,w{n} | x | y | z,A' for n in range(4))
    mc_items.items_import_multiple_choice(study=study, data=bank)
    model = services.language_model_create(name="tiny-mc-2", source=str(tiny_mc), device="cpu")
    run = services.model_run_create(study=study, language_model=model, batch_size=2)
    assert run.kind == "multiple_choice"  # every item of the study is

    class Crash(BaseException):
        pass

    def crash(done, total):
        if done >= 4:
            raise Crash

    with pytest.raises(Crash):
        services.model_run_execute(run_id=run.pk, on_progress=crash)
    first = set(ModelScore.objects.filter(run=run).values_list("id", flat=True))
    assert len(first) == 4
    assert services.model_run_execute(run_id=run.pk).status == RunStatus.DONE
    assert ModelScore.objects.filter(run=run).count() == 16
    assert first <= set(ModelScore.objects.filter(run=run).values_list("id", flat=True))
