"""The one check every scorer's numbers pass before a run stores them (issue 34 item 3). Pure Python.

A scorer's numbers come from outside Duet as often as not (an inference server, a hosted chat API),
and a bad one must not become a stored score: on SQLite a NaN is written as NULL (and an INSERT OR
IGNORE then drops the row), on PostgreSQL JSON refuses it, and a log-probability of +50 is a p(Yes) of
5e21. So, per result (services.model_run_execute calls `check_results` on every chunk, for every
scorer and run kind):

* every log-probability (each variant's, each first token's, the top token's, each prompt token's a
  server echoed, each of a chat API's top k) is a finite number ≤ 0 within LOGP_TOLERANCE (float
  error: a server that computes in float32 and rounds may answer +1e-7);
* the prompt's summed negative log-likelihood is finite and ≥ 0 within the tolerance (per token),
  and its perplexity exp(NLL / tokens) is a finite number;
* counts (the prompt's tokens, each sample's tokens) are integers in [0, 2³¹ − 1] (a database integer);
* the share the top k leave uncovered (`outside_top_k`) is a probability in [0, 1] (within the
  tolerance, then clamped); for scorers whose numbers are a model's distribution (all but the
  test-only fake scorer, whose numbers are hashes: `distribution = False`) the probabilities of the
  distinct first tokens of the answers sum to at most 1 (one position's tokens are disjoint), and no
  answer is likelier than its own first token (the chain rule);
* lists have their expected length: one result per request, in the requests' order, a log-probability
  for exactly the variants scored, as many prompt-token values as counted tokens, as many samples as
  asked for.

A bad number raises BadNumber naming the request's key and the value, e.g.
"log p(' Yes') = +50.0 is not a log-probability (must be ≤ 0)"; the run loop names the item.
"""
from __future__ import annotations

import math
from dataclasses import replace

from .base import Result

LOGP_TOLERANCE = 1e-4  # how far above 0 a log-probability (below 0 an NLL, outside [0, 1] a share) may be
COUNT_MAX = 2**31 - 1  # the largest count a database integer column holds
PERPLEXITY_LOG_MAX = 709.0  # exp() of more than this overflows a float


class BadAnswer(ValueError):
    """One request's answer cannot be used: `key` is the request's, `problem` says why (the run loop
    names the item)."""

    def __init__(self, key, problem: str):
        self.key, self.problem = key, problem
        super().__init__(f"request {key!r}: {problem}")


class BadNumber(BadAnswer):
    """A number a scorer returned that cannot be stored."""


def shown(value) -> str:
    """A number as the message shows it: '+50.0', '-inf', 'nan'; anything else as repr (capped)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        text = repr(value)
        return text if len(text) <= 60 else text[:60] + "…"
    if isinstance(value, float) and math.isnan(value):
        return "nan"
    return f"{value:+}" if isinstance(value, float) else str(value)


def _number(key, what: str, value) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise BadNumber(key, f"{what} = {shown(value)} is not a number")
    if not math.isfinite(value):
        raise BadNumber(key, f"{what} = {shown(value)} is not a finite number")
    return float(value)


def check_logp(key, what: str, value) -> float:
    value = _number(key, what, value)
    if value > LOGP_TOLERANCE:
        raise BadNumber(key, f"{what} = {shown(value)} is not a log-probability (must be ≤ 0)")
    return value


def check_count(key, what: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise BadNumber(key, f"{what} = {shown(value)} is not a whole number")
    if not 0 <= value <= COUNT_MAX:
        raise BadNumber(key, f"{what} = {value} is not a count (must be between 0 and {COUNT_MAX})")
    return value


def check_share(key, what: str, value) -> float:
    value = _number(key, what, value)
    if not -LOGP_TOLERANCE <= value <= 1 + LOGP_TOLERANCE:
        raise BadNumber(key, f"{what} = {shown(value)} is not a probability (must be between 0 and 1)")
    return min(1.0, max(0.0, value))


def check_result(result: Result, *, samples: int = 0, distribution: bool = True) -> Result:
    """`result` with its numbers checked (BadNumber otherwise); `outside_top_k` clamped into [0, 1]."""
    key = result.key
    texts = [text for variants in result.variants.by_label.values() for text in variants]
    if set(result.logprobs) != set(texts):
        extra, lacking = sorted(set(result.logprobs) - set(texts)), sorted(set(texts) - set(result.logprobs))
        raise BadNumber(key, f"log-probabilities for {len(result.logprobs)} answers where {len(texts)} were scored "
                             f"(missing {lacking[:5]}, unasked {extra[:5]})")
    for text in texts:
        check_logp(key, f"log p({text!r})", result.logprobs[text])
    for token, value in result.first_token_logprobs.items():
        check_logp(key, f"log p(first token {token!r})", value)
    if not (isinstance(result.top_logprob, float) and math.isnan(result.top_logprob) and not result.top_token):
        check_logp(key, f"log p(top token {result.top_token!r})", result.top_logprob)  # NaN: no top entry seen
    check_count(key, "the prompt's token count", result.prompt_tokens)
    if result.prompt_logprobs and len(result.prompt_logprobs) != result.prompt_tokens:
        raise BadNumber(key, f"{len(result.prompt_logprobs)} prompt-token log-probabilities for "
                             f"{result.prompt_tokens} counted tokens")
    for n, value in enumerate(result.prompt_logprobs):
        check_logp(key, f"log p(prompt token {n + 1})", value)
    for text, value in result.top_k_logprobs.items():
        check_logp(key, f"log p({text!r}) among the top k", value)
    nll = _number(key, "the prompt's summed NLL", result.nll_sum)
    if nll < -LOGP_TOLERANCE * max(1, result.prompt_tokens):
        raise BadNumber(key, f"the prompt's summed NLL = {shown(nll)} is not a negative log-likelihood (must be ≥ 0)")
    if result.prompt_tokens and nll / result.prompt_tokens > PERPLEXITY_LOG_MAX:
        raise BadNumber(key, f"the prompt's mean NLL = {shown(nll / result.prompt_tokens)} gives no finite perplexity")
    outside = result.outside_top_k
    if outside is not None:
        outside = check_share(key, "the share outside the top k", outside)
    if distribution:
        mass = math.fsum(math.exp(value) for value in result.first_token_logprobs.values())
        if mass > 1 + LOGP_TOLERANCE:
            raise BadNumber(key, f"the answers' first tokens' probabilities sum to {mass:.6g}, more than 1 (distinct "
                                 "tokens at one position cannot take more than all of the probability)")
        for label, variants in result.variants.by_label.items():
            for text, tokens in variants.items():
                first = result.first_token_logprobs.get(tokens[0]) if tokens else None
                if first is not None and result.logprobs[text] > first + LOGP_TOLERANCE:
                    raise BadNumber(key, f"log p({text!r}) = {shown(result.logprobs[text])} is more than the log p "
                                         f"of its first token ({shown(first)}): a continuation cannot be likelier "
                                         "than its start")
    if samples and len(result.generations) != samples:
        raise BadNumber(key, f"{len(result.generations)} samples where {samples} were asked for")
    for n, sample in enumerate(result.generations):
        check_count(key, f"sample {n}'s token count", sample.tokens)
        if not isinstance(sample.text, str):
            raise BadNumber(key, f"sample {n}'s text is {shown(sample.text)}, not text")
    return result if outside == result.outside_top_k else replace(result, outside_top_k=outside)


def check_results(results: list[Result], keys: list, *, samples: int = 0, distribution: bool = True) -> list[Result]:
    """Every result checked (check_result), one per request key, in the keys' order."""
    got = [result.key for result in results]
    if got != list(keys):
        raise ValueError(f"The scorer returned {len(results)} results for {len(keys)} requests"
                         + ("" if len(results) != len(keys) else " in another order or with other keys") + ".")
    return [check_result(result, samples=samples, distribution=distribution) for result in results]
