"""The one check of a scorer's numbers (inference/scorers/numbers.py) and the caps of what a server
says about itself (inference/scorers/metadata.py), on hand-made results: each rule, its tolerance and
its message."""
from __future__ import annotations

import json
import math
from dataclasses import replace

import pytest

from inference.scorers.base import AnswerSet, Generated, Result, plan_variants
from inference.scorers.metadata import PROPS_KEYS, capped, chosen, fitted
from inference.scorers.numbers import LOGP_TOLERANCE, BadNumber, check_result, check_results

pytestmark = pytest.mark.db_independent

VARIANTS = plan_variants(AnswerSet.yes_no(forms="answers"), lambda text: {" Yes": (5,), " No": (6,)}[text])


def honest(**changes) -> Result:
    result = Result(key=7, variants=VARIANTS, logprobs={" Yes": math.log(0.6), " No": math.log(0.3)}, nll_sum=4.0,
                    prompt_tokens=2, top_token_id=5, top_token=" Yes", top_logprob=math.log(0.6),
                    first_token_logprobs={5: math.log(0.6), 6: math.log(0.3)}, prompt_logprobs=(-1.5, -2.5))
    return replace(result, **changes)


def test_an_honest_result_passes_unchanged_and_float_error_is_tolerated():
    assert check_result(honest()) == honest()
    tiny = honest(logprobs={" Yes": LOGP_TOLERANCE / 2, " No": -40.0},
                  first_token_logprobs={5: LOGP_TOLERANCE / 2, 6: -40.0})
    assert check_result(tiny) == tiny
    assert check_result(honest(outside_top_k=-1e-9)).outside_top_k == 0.0  # clamped into [0, 1]


@pytest.mark.parametrize("changes, said", [
    ({"logprobs": {" Yes": 50.0, " No": -1.0}}, "log p(' Yes') = +50.0 is not a log-probability (must be ≤ 0)"),
    ({"logprobs": {" Yes": math.nan, " No": -1.0}}, "log p(' Yes') = nan is not a finite number"),
    ({"logprobs": {" Yes": -math.inf, " No": -1.0}}, "log p(' Yes') = -inf is not a finite number"),
    ({"logprobs": {" Yes": "-1", " No": -1.0}}, "log p(' Yes') = '-1' is not a number"),
    ({"logprobs": {" Yes": -1.0}}, "log-probabilities for 1 answers where 2 were scored"),
    ({"first_token_logprobs": {5: 2 * LOGP_TOLERANCE, 6: -1.0}}, "log p(first token 5) = +0.0002"),
    ({"top_logprob": 3.0}, "log p(top token ' Yes') = +3.0"),
    ({"prompt_logprobs": (-1.0, 1.0)}, "log p(prompt token 2) = +1.0"),
    ({"prompt_logprobs": (-1.0,)}, "1 prompt-token log-probabilities for 2 counted tokens"),
    ({"prompt_tokens": -1}, "the prompt's token count = -1 is not a count"),
    ({"nll_sum": -3.0}, "the prompt's summed NLL = -3.0 is not a negative log-likelihood"),
    ({"nll_sum": 2000.0}, "gives no finite perplexity"),
    ({"outside_top_k": 1.5}, "the share outside the top k = +1.5 is not a probability"),
    ({"logprobs": {" Yes": -0.01, " No": -0.01}, "first_token_logprobs": {5: -0.01, 6: -0.01}},
     "the answers' first tokens' probabilities sum to 1.9801, more than 1"),
    ({"logprobs": {" Yes": -0.1, " No": -1.2}, "first_token_logprobs": {5: -2.0, 6: -1.2}},
     "log p(' Yes') = -0.1 is more than the log p of its first token (-2.0)"),
    ({"top_k_logprobs": {"Maybe": 0.5}}, "log p('Maybe') among the top k = +0.5"),
    ({"generations": (Generated(text="Yes", tokens=-4, finish_reason="stop"),)}, "sample 0's token count = -4"),
])
def test_each_bad_number_is_refused_naming_it(changes, said):
    with pytest.raises(BadNumber, match=None) as caught:
        check_result(honest(**changes))
    assert caught.value.key == 7 and said in caught.value.problem, caught.value.problem


def test_lists_of_the_wrong_length_are_refused():
    with pytest.raises(ValueError, match="returned 1 results for 2 requests"):
        check_results([honest()], [7, 8])
    with pytest.raises(ValueError, match="in another order or with other keys"):
        check_results([honest(key=8), honest()], [7, 8])
    sample = Generated(text="Yes", tokens=1, finish_reason="stop")
    with pytest.raises(BadNumber, match="1 samples where 3 were asked for"):
        check_result(honest(generations=(sample,)), samples=3)


def test_a_test_scorer_that_models_no_distribution_is_not_held_to_one():
    loose = honest(logprobs={" Yes": -0.01, " No": -0.01}, first_token_logprobs={5: -0.01, 6: -0.01})
    assert check_result(loose, distribution=False) == loose


def test_server_metadata_keeps_chosen_keys_each_capped():
    props = {"model_path": "m" * 5000, "junk": "x" * 100_000, "total_slots": 4, "n_ctx": math.inf,
             "default_generation_settings": {"list": list(range(500)), "deep": {"a": {"b": {"c": {"d": 1}}}}}}
    kept = chosen(props, PROPS_KEYS)
    assert set(kept) == {"model_path", "total_slots", "n_ctx", "default_generation_settings"}
    assert kept["model_path"] == "m" * 200 + "… (5000 characters)" and kept["n_ctx"] == "inf"
    settings = kept["default_generation_settings"]
    assert settings["list"] == list(range(20)) + ["… 480 more"]
    assert settings["deep"] == {"a": "(dict nested deeper than 3 levels, not kept)"}
    assert len(json.dumps(capped({str(k): "v" * 1000 for k in range(1000)}))) < 50_000
    record = fitted({"small": "s", "big": ["b" * 150] * 200})
    assert record["small"] == "s" and record["big"].startswith("(not kept: ")
    assert chosen("not a mapping", PROPS_KEYS) == {}
