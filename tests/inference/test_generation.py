"""Generation mode (issue 28 part 3): configurations, runs that store the raw text and a parsed answer
of every sample, the 'generated' decision rule, and the embedded SmolLM2 writing real answers."""
from __future__ import annotations

import json

import pytest
from django.core.exceptions import ValidationError
from django.core.management import call_command

from designs.paired import dual_sided as ds_rules
from designs.paired import prompting as ds_prompting
from logic import prompting
from experiments.models import Study
from inference import services
from inference.models import GeneratedAnswer, LanguageModel, ModelScore, RunStatus
from inference.tasks import run_model_task
from tests.factories import ItemFactory, StudyFactory
from tests.inference.tiny_models import PROMPTS

pytestmark = pytest.mark.django_db

RULES = ("premise,conclusion,flipped_conclusion\n"
         "Metal bar X is heated,Metal bar X expands,Metal bar X does not expand\n"
         "Person X has a key to Room Y,Person X can open Room Y,Person X cannot open Room Y\n")


@pytest.fixture
def dual_sided(tmp_path) -> Study:
    bank = tmp_path / "rules.csv"
    bank.write_text(RULES, encoding="utf-8")
    call_command("import_items", "dual-sided", str(bank), "gen-ds", "--templates", "1", "4")
    return Study.objects.get(slug="gen-ds")


@pytest.fixture
def modal() -> Study:
    study = StudyFactory()
    for i in range(4):
        ItemFactory(study=study, prompt=PROMPTS[i % len(PROMPTS)], gold_answer="yes" if i % 2 else "no")
    return study


def _fake(name="fake-gen", **options) -> LanguageModel:
    return services.language_model_create(name=name, source="/fake/gen", backend="fake", device="cpu",
                                          decision_rule="generated", **options)


# ------------------------------------------------------------------------------ configurations
@pytest.mark.parametrize("options,field,says", [
    ({"samples": 5}, "samples", "Greedy decoding writes the same answer every time"),
    ({"sampling": "sampled", "samples": 3, "temperature": 0.0}, "temperature", "temperature above 0"),
    ({"stop": '["\\n", ""]'}, "stop", "non-empty strings"),
    ({"stop": "not json"}, "stop", "JSON list"),
    ({"stop": json.dumps(list("abcde"))}, "stop", "At most 4"),
    ({"max_new_tokens": 0}, "max_new_tokens", "from 1 to 8192"),
])
def test_bad_generation_settings_are_refused_with_what_to_do(options, field, says):
    with pytest.raises(ValidationError) as caught:
        _fake(**options)
    assert says in " ".join(caught.value.message_dict[field])
    assert not LanguageModel.objects.exists()


def test_generation_settings_need_the_generated_rule():
    with pytest.raises(ValidationError, match="only apply when the decision rule is 'generated'"):
        services.language_model_create(name="x", source="/fake/gen", backend="fake", samples=3, sampling="sampled")


def test_two_configurations_differing_only_in_samples_are_two_configurations():
    a = _fake("a", sampling="sampled", samples=3)
    b = _fake("b", sampling="sampled", samples=5)
    assert a.identity() != b.identity()
    with pytest.raises(ValidationError, match="already has exactly these options"):
        _fake("c", sampling="sampled", samples=3)


# ------------------------------------------------------------------------------ runs (fake scorer)
def test_a_generated_run_stores_every_sample_its_parse_and_the_share_of_yes(dual_sided, modal):
    lm = _fake(sampling="sampled", samples=5, seed=7, max_new_tokens=60)
    for study in (dual_sided, modal):
        run = services.model_run_create(study=study, language_model=lm, batch_size=3, scope="all")  # every phrasing
        assert run_model_task.apply(args=[run.pk]).get() == RunStatus.DONE
        run.refresh_from_db()
        scores = list(ModelScore.objects.filter(run=run).select_related("item"))
        assert len(scores) == study.items.count() == run.items_done
        for score in scores:
            answers = list(score.generated_answers.order_by("sample"))
            assert [a.sample for a in answers] == [0, 1, 2, 3, 4]
            parsed = [a.parsed for a in answers]
            assert score.decision_rule == "generated"
            assert score.p_yes == parsed.count("yes") / 5 and score.p_no == parsed.count("no") / 5
            assert score.soft_accuracy == parsed.count(score.item.gold_answer) / 5
            assert score.generation["n"] == 5 and score.generation["unparsed"] == parsed.count("other")
            assert score.generation["counts"] == {x: parsed.count(x) for x in set(parsed)}
            assert score.decision in parsed and parsed.count(score.decision) == max(map(parsed.count, parsed))
            for a in answers:
                assert a.text and a.parsed in ("yes", "no", "other")
                if a.text.startswith("<think>"):  # thinking apart, never parsed
                    assert a.thinking == "Both premises hold, so" and a.answer_text == "Yes" and a.parsed == "yes"
                if a.text.startswith("It depends"):
                    assert a.parsed == "other"
            assert score.perplexity > 0 and score.prompt_tokens > 0  # the item's own prompt, by log-probabilities
        if study == dual_sided:
            prompt = scores[0].generation["prompt"]
            assert scores[0].generation["setting"] == "two-shot-cot"
            assert prompt.count(", and also explain why.") == 3 and "Person X is allergic to Substance Z" in prompt
        else:
            assert scores[0].generation["setting"] == "zero-shot" and scores[0].generation["prompt"] == \
                scores[0].item.prompt.rstrip()
    assert GeneratedAnswer.objects.filter(parsed="other").exists()  # the fake writes an unparseable answer


def test_a_generated_run_resumes_without_doubling_an_answer(modal):
    lm = _fake(sampling="sampled", samples=3)
    run = services.model_run_create(study=modal, language_model=lm, batch_size=1)
    assert run_model_task.apply(args=[run.pk]).get() == RunStatus.DONE
    first = list(GeneratedAnswer.objects.filter(score__run=run).values_list("score__item_id", "sample", "text"))
    ModelScore.objects.filter(run=run, item=modal.items.order_by("id").last()).delete()  # as if killed before it
    run.refresh_from_db()
    run.status = RunStatus.RUNNING
    run.save(update_fields=["status"])
    assert run_model_task.apply(args=[run.pk]).get() == RunStatus.DONE
    again = list(GeneratedAnswer.objects.filter(score__run=run).values_list("score__item_id", "sample", "text"))
    assert sorted(again) == sorted(first) and len(again) == 3 * modal.items.count()


def test_a_zero_shot_configuration_asks_the_dual_sided_item_alone(dual_sided):
    lm = _fake(generation_prompt="zero-shot", answer_parser="answer_line")
    run = services.model_run_create(study=dual_sided, language_model=lm)
    run_model_task.apply(args=[run.pk])
    score = ModelScore.objects.filter(run=run).first()
    assert score.generation["setting"] == "zero-shot" and score.generation["parser"] == "answer_line"
    assert "explain why" not in score.generation["prompt"]


# ------------------------------------------------------------------------------ SmolLM2 (hf)
@pytest.fixture
def smollm2_generating():
    base = services.language_model_embedded_default()
    lm, _ = services.language_model_resolve(name_or_path=base.name, decision_rule="generated", max_new_tokens=8,
                                            device="cpu")
    return lm


def test_smollm2_writes_and_stores_an_answer_for_every_item(dual_sided, modal, smollm2_generating):
    for study in (modal, dual_sided):
        run = services.model_run_create(study=study, language_model=smollm2_generating, batch_size=2, device="cpu",
                                        item_limit=2)  # CPU generation is slow on a shared machine: two items each
        assert run_model_task.apply(args=[run.pk]).get() == RunStatus.DONE, run.error
        scores = ModelScore.objects.filter(run=run)
        assert scores.count() == 2
        for score in scores:
            (answer,) = score.generated_answers.all()
            assert answer.text.strip() and 0 < answer.tokens <= 8 and answer.parsed in ("yes", "no", "other")
            assert answer.finish_reason in ("stop", "length")
            assert score.decision == answer.parsed and score.generation["n"] == 1
    ds = ModelScore.objects.filter(run__study=dual_sided).first()
    assert ds.generation["prompt"].startswith(ds_prompting.with_cot_request(ds_prompting._without_cue(
        ds_rules._variant(1, *ds_prompting.DEMONSTRATIONS[0][:2]).text), 1)) or \
        ds.generation["prompt"].startswith("Premise: Person X is allergic")


def test_smollm2_greedy_answers_are_the_same_batched_and_alone(modal, smollm2_generating):
    from inference.scorers import build
    from inference.scorers.base import GenerationRequest, LoadConfig, SamplingSpec
    from common.env import VAR_DIR

    scorer = build("hf", LoadConfig(source=services.EMBEDDED_SOURCE, gguf_file=services.EMBEDDED_GGUF, device="cpu"),
                   answers=None, prompt_format="raw", batch_size=4, cache_dir=VAR_DIR / "models")
    asked = [GenerationRequest(key=i, turns=(("user", p),), sampling=SamplingSpec(max_new_tokens=6))
             for i, p in enumerate(PROMPTS[:2])]
    together = scorer.generate(asked)
    alone = [scorer.generate([request])[0] for request in asked]
    assert [s[0].text for _, s in together] == [s[0].text for _, s in alone]
    sampled = SamplingSpec(greedy=False, samples=2, temperature=1.0, max_new_tokens=6, seed=3)
    once = scorer.generate([GenerationRequest(key=9, turns=(("user", PROMPTS[0]),), sampling=sampled)])
    twice = scorer.generate([GenerationRequest(key=9, turns=(("user", PROMPTS[0]),), sampling=sampled)])
    assert once == twice and len(once[0][1]) == 2  # seeded by the configuration's seed and the item
    stopped = SamplingSpec(max_new_tokens=6, stop=(",",))
    (_, (cut,)), = scorer.generate([GenerationRequest(key=0, turns=(("user", PROMPTS[0]),), sampling=stopped)])
    free = together[0][1][0].text  # the same prompt without the stop string
    assert "," in free, free  # SmolLM2 answers " No, …" here
    assert cut.text == free[: free.index(",")] and cut.finish_reason == "stop"


def test_a_generated_multiple_choice_run_reads_letters_and_shares_them():
    from designs.multiple_choice import items as mc_items

    study = StudyFactory(design="multiple-choice")
    bank = "id,context,question,option_a,option_b,option_c,option_d,answer,type\n" + "\n".join(
        f'q{n},"{PROMPTS[n].splitlines()[0]}","Which follows?",one,two,three,four,{"ABCD"[n]},3e1c' for n in range(2))
    mc_items.items_import_multiple_choice(study=study, data=bank)
    lm = _fake(sampling="sampled", samples=6, seed=2)
    run = services.model_run_create(study=study, language_model=lm, kind="multiple_choice")
    assert run_model_task.apply(args=[run.pk]).get() == RunStatus.DONE
    for score in ModelScore.objects.filter(run=run).select_related("item"):
        parsed = list(score.generated_answers.order_by("sample").values_list("parsed", flat=True))
        assert set(parsed) <= {"A", "B", "C", "D", "other"} and score.generation["parser"] == "letter"
        assert score.option_probs == {x: parsed.count(x) / 6 for x in "ABCD"}
        assert score.soft_accuracy == parsed.count(score.item.gold_answer) / 6
        assert score.answer_mass == sum(x != "other" for x in parsed) / 6
    # the fake writes "B) is the one." among its answers: the letter parser reads it; its yes/no texts are 'other'
    assert GeneratedAnswer.objects.filter(score__run=run, parsed="B").exists()
    assert GeneratedAnswer.objects.filter(score__run=run, parsed="other").exists()


def test_run_model_takes_the_generation_options_and_names_the_new_configuration(modal):
    from io import StringIO

    base = services.language_model_create(name="fake-base", source="/fake/base", backend="fake", device="cpu")
    out = StringIO()
    call_command("run_model", modal.slug, "--model", base.name, "--decision-rule", "generated", "--sampling",
                 "sampled", "--samples", "3", "--seed", "4", "--stop", "\n\n", "--max-new-tokens", "40",
                 "--no-progress", stdout=out)
    made = LanguageModel.objects.exclude(pk=base.pk).get()
    assert "New model configuration" in out.getvalue() and made.name.startswith("fake-base [decision generated")
    assert (made.sampling, made.samples, made.seed, made.max_new_tokens, json.loads(made.stop)) == \
        ("sampled", 3, 4, 40, ["\n\n"])
    assert GeneratedAnswer.objects.filter(score__run__language_model=made).count() == 3 * modal.items.count()


def test_smollm2_in_chat_format_reads_the_demonstrations_as_turns_of_its_chat_template():
    from inference.scorers import build
    from inference.scorers.base import GenerationRequest, LoadConfig, SamplingSpec
    from common.env import VAR_DIR

    scorer = build("hf", LoadConfig(source=services.EMBEDDED_SOURCE, gguf_file=services.EMBEDDED_GGUF, device="cpu"),
                   answers=None, prompt_format="chat", batch_size=2, cache_dir=VAR_DIR / "models")
    item = prompting.ItemText(prompt=ds_rules._variant(1, "Tool Y is sharp", "Person X can cut with Tool "
                                                                   "Y").text, variant="template-1")
    turns = tuple((t.role, t.text) for t in ds_prompting.DUAL_SIDED_TWO_SHOT_COT.turns(item))
    ((prompt, (answer,)),) = scorer.generate([GenerationRequest(key=0, turns=turns,
                                                                sampling=SamplingSpec(max_new_tokens=6))])
    assert prompt.count("<|im_start|>user\n") == 3 and prompt.count("<|im_start|>assistant\n") == 3
    assert "<|im_start|>assistant\nTrue. Food Y contains" in prompt and prompt.endswith("<|im_start|>assistant\n")
    assert answer.text.strip() and answer.tokens <= 6


def test_the_admin_shows_a_scores_samples_and_its_interval(modal, admin_client):
    from django.urls import reverse

    lm = _fake(sampling="sampled", samples=4, seed=9)
    run = services.model_run_create(study=modal, language_model=lm)
    run_model_task.apply(args=[run.pk])
    score = ModelScore.objects.filter(run=run).first()
    page = admin_client.get(reverse("admin:inference_modelscore_change", args=[score.pk])).content.decode()
    for answer in score.generated_answers.all():
        assert answer.answer_text.replace("\n", " ").split()[0] in page
    listing = admin_client.get(reverse("admin:inference_modelscore_changelist") + f"?run__id__exact={run.pk}")
    assert "(n=4 samples, " in listing.content.decode()
