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


    def answer_set(self) -> AnswerSet:
        return AnswerSet(answers=(("yes", self.yes), ("no", self.no)), sum_variants=self.sum_variants)


OPTION_LETTERS = ("A", "B", "C", "D")


@dataclass(frozen=True)
class AnswerSet:
    """The answers one request is scored on: (label, answer text) pairs, each answer's variants summed.

    Yes/no items use the model's answers (' Yes'/' No') or the words of their phrasing (' True'/
    ' False', 000); multiple-choice items the option letters (' A' … ' D', 001). `case_variants` off
    keeps only the leading-space variants (option letters: lower-case 'a' is an English word).
    """

    answers: tuple[tuple[str, str], ...]
    sum_variants: bool = True
    case_variants: bool = True

    @property
    def labels(self) -> tuple[str, ...]:
        return tuple(label for label, _ in self.answers)

    def candidates(self, answer: str) -> tuple[str, ...]:
        if not self.sum_variants:
            return (answer,)
        if self.case_variants:
            return AnswerSpec().candidates(answer)
        word = answer.strip()
        return (answer, word if answer.startswith(" ") else " " + word)

    @classmethod
    def words(cls, model: AnswerSpec, yes: str, no: str) -> AnswerSet:
        """A phrasing's own words replace the model's answers, keeping their leading space:
        ' Yes' (raw prompts) → ' True', 'Yes' (after a chat template) → 'True'."""
        space = " " if model.yes.startswith(" ") else ""
        return cls(answers=(("yes", space + yes.strip()), ("no", space + no.strip())), sum_variants=model.sum_variants)

    @classmethod
    def letters(cls, model: AnswerSpec, letters: tuple[str, ...] = OPTION_LETTERS) -> AnswerSet:
        """The option letters, with the leading space of the model's answers (' A' raw, 'A' chat)."""
        space = " " if model.yes.startswith(" ") else ""
        return cls(answers=tuple((x, space + x) for x in letters), sum_variants=model.sum_variants, case_variants=False)


@dataclass(frozen=True)
class Variants:
    """Label → {variant text → token id}: only variants that are a single token, ids distinct.

    `yes` and `no` are the two labels of a yes/no answer set (the model's default)."""

    by_label: dict[str, dict[str, int]]
    rejected: dict[str, list[int]] = field(default_factory=dict)

    @property
    def yes(self) -> dict[str, int]:
        return self.by_label.get("yes", {})

    @property
    def no(self) -> dict[str, int]:
        return self.by_label.get("no", {})

    def token_ids(self) -> dict[str, int]:
        """Every variant text → its token id (what a ModelScore stores)."""
        return {text: token for variants in self.by_label.values() for text, token in variants.items()}

    def as_json(self) -> dict:
        return {**{label: dict(v) for label, v in self.by_label.items()},
                "rejected": {k: list(v) for k, v in self.rejected.items()}}


def pick_variants(spec: AnswerSpec | AnswerSet, encode) -> Variants:
    """Keep the candidates that `encode` (text → token ids) maps to exactly one token.

    The configured answer itself must be a single token, else the model cannot be scored this way.
    A token id already taken by an earlier variant is not counted twice.
    """
    answer_set = spec.answer_set() if isinstance(spec, AnswerSpec) else spec
    chosen: dict[str, dict[str, int]] = {label: {} for label in answer_set.labels}
    rejected: dict[str, list[int]] = {}
    seen: set[int] = set()
    for label, answer in answer_set.answers:
        for text in answer_set.candidates(answer):
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
    return Variants(by_label=chosen, rejected=rejected)


@dataclass(frozen=True)
class Request:
    key: int
    text: str
    answers: AnswerSet | None = None  # None: the scorer's default (the model's yes/no answers)


@dataclass(frozen=True)
class Result:
    key: int
    logprobs: dict[str, float]  # variant text → log p(variant | prompt)
    nll_sum: float  # summed NLL of the prompt tokens (each given the tokens before it)
    prompt_tokens: int


class Scorer(Protocol):
    variants: Variants  # of the default answer set

    def variants_for(self, answers: AnswerSet | None) -> Variants: ...

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


@dataclass(frozen=True)
class OptionSummary:
    option_probs: dict[str, float]  # letter → p(letter) / Σ p(letters)
    soft_accuracy: float
    decision: str
    perplexity: float
    answer_mass: float  # Σ p(letters): the share of the next-token distribution they take


def summarise_options(result: Result, variants: Variants, gold_letter: str) -> OptionSummary:
    """001 with 003 §4.1's scoring: each letter's probability (its variants summed) relative to the
    four; soft accuracy = the gold letter's share, decision = the likeliest letter (first on ties)."""
    raw = {label: math.fsum(math.exp(result.logprobs[v]) for v in texts) for label, texts in variants.by_label.items()}
    mass = math.fsum(raw.values())
    probs = {label: (p / mass if mass > 0 else 1.0 / len(raw)) for label, p in raw.items()}
    decision = max(probs, key=lambda label: (probs[label], -list(probs).index(label)))
    perplexity = math.exp(result.nll_sum / result.prompt_tokens) if result.prompt_tokens else float("nan")
    return OptionSummary(option_probs=probs, soft_accuracy=probs.get(gold_letter, 0.0), decision=decision,
                         perplexity=perplexity, answer_mass=mass)
