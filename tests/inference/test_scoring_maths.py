"""The pure scoring maths: variants (000 Eq. 4), soft accuracy (003 §4.1), perplexity."""
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from inference.scorers.base import AnswerSpec, Result, pick_variants, summarise

VOCAB = {" Yes": 1, "Yes": 2, " yes": 3, "yes": 4, " No": 5, "No": 6, " no": 7, "no": 8, " NO": 9}


def encode(text):
    return [VOCAB[text]] if text in VOCAB else [90, 91]  # anything else: two tokens


def test_variants_keep_only_single_tokens():
    variants = pick_variants(AnswerSpec(), encode)
    assert variants.yes == {" Yes": 1, " yes": 3, "Yes": 2, "yes": 4}
    assert variants.no == {" No": 5, " no": 7, " NO": 9, "No": 6, "no": 8}
    assert set(variants.rejected) == {" YES", "YES", "NO"}


def test_variants_can_be_switched_off_and_multi_token_answer_is_refused():
    assert pick_variants(AnswerSpec(sum_variants=False), encode).yes == {" Yes": 1}
    with pytest.raises(ValueError, match="not a single token"):
        pick_variants(AnswerSpec(yes=" Certainly"), encode)


def test_a_token_shared_by_two_variants_is_counted_once():
    variants = pick_variants(AnswerSpec(), lambda text: [1] if text.strip().lower() == "yes" else [5] if text.strip().lower() == "no" else [0, 0])
    assert variants.yes == {" Yes": 1} and variants.no == {" No": 5}


def test_summary_sums_variants_and_scores_the_gold_answer():
    variants = pick_variants(AnswerSpec(), encode)
    lp = {" Yes": math.log(0.3), " yes": math.log(0.1), "Yes": math.log(0.05), "yes": math.log(0.05),
          " No": math.log(0.2), " no": math.log(0.1), " NO": math.log(0.01), "No": math.log(0.04), "no": math.log(0.05)}
    result = Result(key=1, logprobs=lp, nll_sum=12.0, prompt_tokens=4)
    yes = summarise(result, variants, "yes")
    assert yes.p_yes == pytest.approx(0.5) and yes.p_no == pytest.approx(0.4)
    assert yes.relative_p_yes == pytest.approx(0.5 / 0.9)
    assert yes.soft_accuracy == pytest.approx(0.5 / 0.9) and yes.decision == "yes"
    assert yes.answer_mass == pytest.approx(0.9)
    assert yes.perplexity == pytest.approx(math.exp(3.0))
    no = summarise(result, variants, "no")
    assert no.soft_accuracy == pytest.approx(0.4 / 0.9)


def test_the_web_side_of_inference_never_imports_torch():
    code = (
        "import sys, django; django.setup(); "
        "import inference.admin, inference.services, inference.selectors, inference.tasks, inference.demo; "
        "import inference.management.commands.run_model; "
        "sys.exit('torch' in sys.modules or 'transformers' in sys.modules)"
    )
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "studyserver.settings"}
    assert subprocess.run([sys.executable, "-c", code], env=env, cwd=Path(__file__).parents[2]).returncode == 0
