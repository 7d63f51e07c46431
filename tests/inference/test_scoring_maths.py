"""The pure scoring maths: variants (000 Eq. 4), soft accuracy (003 §4.1), perplexity."""
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from inference.scorers.base import AnswerSet, Result, plan_variants, summarise

# a toy tokenizer: the continuation tokens of each variant text after the prompt
VOCAB = {" Yes": (1,), "Yes": (2,), " yes": (3,), "yes": (4,), " No": (5,), "No": (6,), " no": (7,), "no": (8,),
         " NO": (9,), " YES": (10, 11)}


def continuation(text):
    return VOCAB.get(text, (90, 91, len(text)))  # anything else: three tokens, distinct per length


def test_variant_sets_are_symmetric_and_multi_token_variants_are_kept():
    variants = plan_variants(AnswerSet.yes_no(), continuation)
    assert list(variants.yes) == [" Yes", " yes", " YES", "Yes", "yes", "YES"]
    assert list(variants.no) == [" No", " no", " NO", "No", "no", "NO"]
    assert variants.yes[" YES"] == (10, 11) and variants.dropped == ()


def test_a_form_is_dropped_for_every_answer_at_once():
    # "YES" and "NO" get the same tokens (length 3): the pair is dropped, not one side of it
    variants = plan_variants(AnswerSet.yes_no(), lambda t: VOCAB.get(t, (90, 91)))
    assert "YES" not in variants.yes and "NO" not in variants.no
    assert len(variants.yes) == len(variants.no) == 5
    assert variants.dropped == ((("YES", "NO"), "two answers have the same tokens"),)
    # a form repeating a kept variant's tokens is dropped too (the same string would count twice)
    shared = plan_variants(AnswerSet.yes_no(), lambda t: (1,) if t.strip().lower() == "yes" else
                           (5,) if t.strip().lower() == "no" else (0, len(t)))
    assert list(shared.yes) == [" Yes"] and list(shared.no) == [" No"]


def test_variants_can_be_switched_off_and_unscorable_answers_are_refused():
    assert list(plan_variants(AnswerSet.yes_no(forms="answers"), continuation).yes) == [" Yes"]
    with pytest.raises(ValueError, match="cannot be scored"):
        plan_variants(AnswerSet.yes_no(" Yes", " Yes"), continuation)
    with pytest.raises(ValueError, match="no tokens"):
        plan_variants(AnswerSet.yes_no(), lambda t: ())


def test_summary_sums_variants_scores_the_gold_answer_and_reads_the_top_token():
    variants = plan_variants(AnswerSet.yes_no(), continuation)
    lp = {" Yes": 0.3, " yes": 0.1, " YES": 0.01, "Yes": 0.05, "yes": 0.04,  "YES": 0.0,
          " No": 0.2, " no": 0.1, " NO": 0.01, "No": 0.04, "no": 0.05, "NO": 0.0}
    logprobs = {k: (math.log(v) if v else -1e9) for k, v in lp.items()}
    result = Result(key=1, variants=variants, logprobs=logprobs, nll_sum=12.0, prompt_tokens=4,
                    top_token_id=5, top_token=" No", top_logprob=math.log(0.2))
    yes = summarise(result, "yes")
    assert yes.p_yes == pytest.approx(0.5) and yes.p_no == pytest.approx(0.4)
    assert yes.relative_p_yes == pytest.approx(0.5 / 0.9)
    assert yes.soft_accuracy == pytest.approx(0.5 / 0.9) and yes.decision_relative == "yes"
    assert yes.top_answer == "no"  # the vocabulary's top token is " No" although p(Yes) > p(No)
    assert yes.answer_mass == pytest.approx(0.9)
    assert yes.perplexity == pytest.approx(math.exp(3.0))
    assert summarise(result, "no").soft_accuracy == pytest.approx(0.4 / 0.9)
    other = Result(key=1, variants=variants, logprobs=logprobs, nll_sum=1.0, prompt_tokens=1, top_token_id=10,
                   top_token=" Y", top_logprob=-1.0)
    assert summarise(other, "yes").top_answer == "other"  # the first token of " YES" alone is not an answer


def test_the_web_side_of_inference_never_imports_torch():
    code = (
        "import sys, django; django.setup(); "
        "import inference.admin, inference.services, inference.selectors, inference.tasks, demo.model_arm; "
        "import inference.management.commands.run_model; "
        "sys.exit('torch' in sys.modules or 'transformers' in sys.modules)"
    )
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "studyserver.settings"}
    assert subprocess.run([sys.executable, "-c", code], env=env, cwd=Path(__file__).parents[2]).returncode == 0
