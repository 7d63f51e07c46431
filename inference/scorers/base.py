"""The scorer interface and the scoring maths of paper 003 §4.1 and 000 Eq. (4). Pure Python.

A scorer turns prompts into log-probabilities: for each request, the log p of every answer-token
variant at the position after the prompt, and the summed negative log-likelihood of the prompt's
own tokens. Everything a ModelScore stores is derived from that here, without torch.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Protocol


@dataclass(frozen=True)
class LoadConfig:
    """What identifies loaded weights: the key of a worker's model cache."""

    source: str
    gguf_file: str = ""
    revision: str = ""
    dtype: str = "float32"
    device: str = "auto"


@dataclass(frozen=True)
class AnswerSpec:
    """The two answers and the variant strings tried for each (000 Eq. 4: case variants summed)."""

    yes: str = " Yes"
    no: str = " No"
    sum_variants: bool = True

    def candidates(self, answer: str) -> tuple[str, ...]:
        if not self.sum_variants:
            return (answer,)
        word = answer.strip()
        spaces = (" ", "") if answer.startswith(" ") else ("", " ")
        out: list[str] = []
        for space in spaces:
            for form in (word, word.lower(), word.upper(), word.capitalize()):
                if space + form not in out:
                    out.append(space + form)
        return tuple(out)


@dataclass(frozen=True)
class Variants:
    """Variant text → token id, only variants that are a single token, ids distinct."""

    yes: dict[str, int]
    no: dict[str, int]
    rejected: dict[str, list[int]] = field(default_factory=dict)

    def as_json(self) -> dict:
        return {"yes": dict(self.yes), "no": dict(self.no), "rejected": {k: list(v) for k, v in self.rejected.items()}}


def pick_variants(spec: AnswerSpec, encode) -> Variants:
    """Keep the candidates that `encode` (text → token ids) maps to exactly one token.

    The configured answer itself must be a single token, else the model cannot be scored this way.
    A token id already taken by an earlier variant is not counted twice.
    """
    chosen: dict[str, dict[str, int]] = {"yes": {}, "no": {}}
    rejected: dict[str, list[int]] = {}
    seen: set[int] = set()
    for label, answer in (("yes", spec.yes), ("no", spec.no)):
        for text in spec.candidates(answer):
            ids = list(encode(text))
            if len(ids) == 1 and ids[0] not in seen:
                chosen[label][text] = ids[0]
                seen.add(ids[0])
            elif len(ids) != 1:
                rejected[text] = ids
        if answer not in chosen[label]:
            raise ValueError(
                f"The answer {answer!r} is not a single token for this tokenizer (ids {list(encode(answer))}); "
                "choose answer tokens that are, e.g. ' Yes'/' No' for raw prompts or 'Yes'/'No' after a chat template."
            )
    return Variants(yes=chosen["yes"], no=chosen["no"], rejected=rejected)


@dataclass(frozen=True)
class Request:
    key: int
    text: str


@dataclass(frozen=True)
class Result:
    key: int
    logprobs: dict[str, float]  # variant text → log p(variant | prompt)
    nll_sum: float  # summed NLL of the prompt tokens (each given the tokens before it)
    prompt_tokens: int


class Scorer(Protocol):
    variants: Variants

    def score(self, requests: list[Request]) -> list[Result]: ...


@dataclass(frozen=True)
class Summary:
    p_yes: float
    p_no: float
    relative_p_yes: float
    soft_accuracy: float
    decision: str
    perplexity: float
    answer_mass: float


def summarise(result: Result, variants: Variants, gold_answer: str) -> Summary:
    """003 §4.1 soft accuracy from p(Yes|s), p(No|s), each summed over its variants (000 Eq. 4)."""
    p_yes = math.fsum(math.exp(result.logprobs[v]) for v in variants.yes)
    p_no = math.fsum(math.exp(result.logprobs[v]) for v in variants.no)
    mass = p_yes + p_no
    relative = p_yes / mass if mass > 0 else 0.5
    soft = relative if gold_answer == "yes" else 1.0 - relative
    perplexity = math.exp(result.nll_sum / result.prompt_tokens) if result.prompt_tokens else float("nan")
    return Summary(
        p_yes=p_yes, p_no=p_no, relative_p_yes=relative, soft_accuracy=soft,
        decision="yes" if p_yes >= p_no else "no", perplexity=perplexity, answer_mass=mass,
    )
