"""The scorer interface and the scoring maths of paper 003 §4.1 and 000 Eq. (4). Pure Python.

A scorer turns prompts into log-probabilities. For each request it returns:

* for every answer variant (" Yes", "yes", " No", …) the log-probability of the variant as a
  continuation of the prompt: the sum of its tokens' log-probabilities, teacher-forced (what
  lm-evaluation-harness's ``loglikelihood`` computes). The variant's tokens are those of
  prompt + variant after the prompt's own tokens (lm-evaluation-harness's rule), so a
  SentencePiece tokenizer that writes " Yes" alone as two tokens writes it as one after "Answer:";
* the summed negative log-likelihood of the prompt's counted tokens (every token of a raw prompt;
  only the item's own text inside a chat template) and how many were counted;
* the most probable next token over the whole vocabulary.

Everything a ModelScore stores is derived from that here, without torch.
"""
from __future__ import annotations

import math
from collections.abc import Callable
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


OPTION_LETTERS = ("A", "B", "C", "D")


CASES: tuple[Callable[[str], str], ...] = (str, str.lower, str.capitalize, str.upper)  # as written first

# Which surface forms of the answers are scored (the values of inference.models.AnswerForms but
# 'paper', which a run resolves per design from the designs registry):
ANSWERS_ONLY = "answers"  # the answers as given (003 §4.1: the tokens Yes and No)
IN_CASES = "cases"  # as given, lower, Capitalised, UPPER, with the given spacing (000 Eq. 4: Yes/yes/YES)
ALL_FORMS = "all"  # every case, with and without a leading space
FORMS = (ANSWERS_ONLY, IN_CASES, ALL_FORMS)


@dataclass(frozen=True)
class AnswerSet:
    """The answers one request is scored on: (label, answer text) pairs.

    Yes/no items use the configuration's answers (' Yes'/' No' raw, 'Yes'/'No' after a chat
    template) or the words of their phrasing (' True'/' False', 000); multiple-choice items the
    option letters (' A' … ' D', 001). `forms` says which other surface forms are also scored and
    summed: none (ANSWERS_ONLY), the same spacing in other cases (IN_CASES) or every spacing and case
    (ALL_FORMS). Each form is one transformation applied to all answers at once, so the variant
    sets are symmetric by construction. `case_variants` off keeps only the two spacings (option
    letters: lower-case 'a' is an English word).
    """

    answers: tuple[tuple[str, str], ...]
    forms: str = ALL_FORMS  # a run passes each item's forms (strategies.py: its design's paper's by default)
    case_variants: bool = True

    def __post_init__(self):
        if self.forms not in FORMS:
            raise ValueError(f"unknown answer forms {self.forms!r}; known: {', '.join(FORMS)}")

    @property
    def labels(self) -> tuple[str, ...]:
        return tuple(label for label, _ in self.answers)

    def surface_forms(self) -> list[tuple[str, ...]]:
        """Tuples of one text per answer (in `answers` order), the configured answers first."""
        configured = tuple(text for _, text in self.answers)
        if self.forms == ANSWERS_ONLY:
            return [configured]
        spaced = configured[0].startswith(" ")
        words = [text.strip() for text in configured]
        forms: list[tuple[str, ...]] = [configured]
        spacings = ((" ", "") if spaced else ("", " ")) if self.forms == ALL_FORMS else ((" " if spaced else ""),)
        for space in spacings:
            for case in (CASES if self.case_variants else CASES[:1]):
                # one transformation for every answer at once: all lower, all UPPER, …
                form = tuple(space + case(w) for w in words)
                if form not in forms and len(set(form)) == len(form):
                    forms.append(form)
        return forms

    @classmethod
    def yes_no(cls, yes: str = " Yes", no: str = " No", *, forms: str = ALL_FORMS) -> AnswerSet:
        return cls(answers=(("yes", yes), ("no", no)), forms=forms)

    @classmethod
    def words(cls, model: AnswerSet, yes: str, no: str) -> AnswerSet:
        """A phrasing's own words replace the configuration's answers, keeping their leading space:
        ' Yes' (raw prompts) → ' True', 'Yes' (after a chat template) → 'True'."""
        space = " " if model.answers[0][1].startswith(" ") else ""
        return cls(answers=(("yes", space + yes.strip()), ("no", space + no.strip())), forms=model.forms)

    @classmethod
    def letters(cls, model: AnswerSet, letters: tuple[str, ...] = OPTION_LETTERS) -> AnswerSet:
        """The option letters, with the leading space of the configuration's answers (' A' raw, 'A' chat)."""
        space = " " if model.answers[0][1].startswith(" ") else ""
        return cls(answers=tuple((x, space + x) for x in letters), forms=model.forms, case_variants=False)


@dataclass(frozen=True)
class Variants:
    """The variants scored for one request: label → {variant text → its continuation tokens}.

    `dropped` lists the surface forms left out, each with why: a form is kept or dropped for all
    answers at once, so every label has the same number of variants in the same forms."""

    by_label: dict[str, dict[str, tuple[int, ...]]]
    dropped: tuple[tuple[tuple[str, ...], str], ...] = ()

    @property
    def yes(self) -> dict[str, tuple[int, ...]]:
        return self.by_label.get("yes", {})

    @property
    def no(self) -> dict[str, tuple[int, ...]]:
        return self.by_label.get("no", {})

    def token_ids(self) -> dict[str, list[int]]:
        """Every variant text → its token ids (what a ModelScore stores)."""
        return {text: list(tokens) for variants in self.by_label.values() for text, tokens in variants.items()}

    def texts(self) -> dict[str, list[str]]:
        """Label → the variant texts summed for it (what a ModelScore stores as `variants`)."""
        return {label: list(v) for label, v in self.by_label.items()}

    def single_token(self) -> dict[int, str]:
        """Token id → label, for the variants that are one token (the top-token decision reads these)."""
        return {tokens[0]: label for label, v in self.by_label.items() for tokens in v.values() if len(tokens) == 1}

    def as_json(self) -> dict:
        return {"variants": self.texts(), "token_ids": self.token_ids(),
                "dropped": [{"forms": list(forms), "why": why} for forms, why in self.dropped]}


def plan_variants(answer_set: AnswerSet, continuation: Callable[[str], tuple[int, ...]]) -> Variants:
    """Choose the variants to sum: `continuation(text)` gives the tokens of `text` after the prompt.

    A surface form is dropped, for every answer at once, when one of its texts has no tokens, when
    two of its answers get the same tokens, or when one of its texts repeats the tokens of a variant
    already kept (the same string would be counted twice). The configured answers must be kept."""
    chosen: dict[str, dict[str, tuple[int, ...]]] = {label: {} for label in answer_set.labels}
    taken: set[tuple[int, ...]] = set()
    dropped: list[tuple[tuple[str, ...], str]] = []
    for n, form in enumerate(answer_set.surface_forms()):
        tokens = [tuple(continuation(text)) for text in form]
        why = ""
        if any(not t for t in tokens):
            why = "a text has no tokens after the prompt"
        elif len(set(tokens)) < len(tokens):
            why = "two answers have the same tokens"
        elif any(t in taken for t in tokens):
            why = "repeats the tokens of a variant already summed"
        if why:
            if n == 0:
                raise ValueError(
                    f"The configured answers {list(form)} cannot be scored with this tokenizer ({why}: "
                    f"{[list(t) for t in tokens]}); configure other answers."
                )
            dropped.append((form, why))
            continue
        for label, text, t in zip(answer_set.labels, form, tokens, strict=True):
            chosen[label][text] = t
            taken.add(t)
    return Variants(by_label=chosen, dropped=tuple(dropped))


@dataclass(frozen=True)
class Request:
    key: int | str
    text: str
    answers: AnswerSet | None = None  # None: the scorer's default (the configuration's yes/no answers)


@dataclass(frozen=True)
class Result:
    key: int | str
    variants: Variants  # what was scored for this request
    logprobs: dict[str, float]  # variant text → log p(variant's tokens | prompt), summed
    nll_sum: float  # summed NLL of the prompt's counted tokens (each given every token before it)
    prompt_tokens: int  # how many tokens the perplexity counts
    top_token_id: int  # the most probable next token over the whole vocabulary
    top_token: str
    top_logprob: float
    first_token_logprobs: dict[int, float] = field(default_factory=dict)  # a variant's first token → its log p
    generations: tuple[Generated, ...] = ()  # generation mode: the request's samples (GenerationRequest)
    prompt_sent: str = ""  # generation mode: the prompt the samples answer (rendered turns)
    outside_top_k: float | None = None  # chat scorer: 1 − Σ p over the first token's top k (p(Yes), p(No) lower bounds)
    prompt_logprobs: tuple[float, ...] = ()  # server scorer: the counted prompt tokens' log p as echoed (checked)
    top_k_logprobs: dict[str, float] = field(default_factory=dict)  # chat scorer: the first token's top k (checked)


# ------------------------------------------------------------------------------ generation mode
@dataclass(frozen=True)
class SamplingSpec:
    """How answers are generated (a configuration's generation settings)."""

    greedy: bool = True
    samples: int = 1
    temperature: float = 1.0
    max_new_tokens: int = 128
    stop: tuple[str, ...] = ()
    seed: int = 0

    def __post_init__(self):
        if self.samples < 1 or (self.greedy and self.samples != 1):
            raise ValueError("greedy decoding gives one sample; sampled decoding needs n ≥ 1")
        if self.max_new_tokens < 1:
            raise ValueError("max_new_tokens must be at least 1")


@dataclass(frozen=True)
class GenerationRequest:
    key: int | str
    turns: tuple[tuple[str, str], ...]  # (role, text): demonstrations, then the item's question (a user turn)
    sampling: SamplingSpec = SamplingSpec()


@dataclass(frozen=True)
class Generated:
    text: str  # as written, cut before the first stop string
    tokens: int
    finish_reason: str  # "stop" (a stop string or the end of text) or "length"


def cut_at_stop(text: str, stop: tuple[str, ...]) -> tuple[str, bool]:
    """The text before the first stop string (as OpenAI-compatible servers return it), and whether one was found."""
    at = min((i for i in (text.find(s) for s in stop) if i >= 0), default=-1)
    return (text[:at], True) if at >= 0 else (text, False)


def item_seed(seed: int, key: int | str) -> int:
    """The seed of one item's samples: the same for the item whatever else is in its batch or run."""
    import hashlib

    return int.from_bytes(hashlib.sha256(f"{seed}:{key}".encode()).digest()[:4], "big")


def raw_prompt(turns: tuple[tuple[str, str], ...]) -> str:
    from logic.prompting import Turn, render_raw

    return render_raw(tuple(Turn(role, text) for role, text in turns))


Done = Callable[[int | str], None]  # called with a request's key as soon as that request is finished
Stop = Callable[[], None]  # raises when the work is no longer wanted (the run loop's checkpoint: a cancelled run)


class Scorer(Protocol):
    """`on_done(key)`, where given, is called as each request is finished (a server or chat scorer:
    each one, while the others are in flight; a local model: each batch's), from the caller's thread
    with no event loop running, so it may write to the database (the run's progress, per item).
    `stop()`, where given, is called between steps (a local model: between batches; a server or chat
    scorer: every second or so while its requests are in flight, paced.py), in the same way; what it
    raises stops the work, closing whatever requests are open, and is raised (issue 43: a cancelled
    run stops within seconds)."""

    name: str

    def score(self, requests: list[Request], on_done: Done | None = None, stop: Stop | None = None) -> list[Result]: ...

    def generate(self, requests: list[GenerationRequest], on_done: Done | None = None,
                 stop: Stop | None = None) -> list[tuple[str, tuple[Generated, ...]]]:
        """Each request's prompt as sent and its samples, in request order."""
        ...

    def describe(self) -> dict: ...


@dataclass(frozen=True)
class Summary:
    p_yes: float
    p_no: float
    relative_p_yes: float
    soft_accuracy: float
    decision_relative: str  # "yes" / "no": the likelier of the two answers (ties: yes)
    top_answer: str  # "yes" / "no" when the vocabulary's top token is a one-token variant of it, else "other"
    perplexity: float
    answer_mass: float


def perplexity(result: Result) -> float:
    return math.exp(result.nll_sum / result.prompt_tokens) if result.prompt_tokens else float("nan")


def _probability(result: Result, texts) -> float:
    return math.fsum(math.exp(result.logprobs[v]) for v in texts)


def top_answer(result: Result) -> str:
    """The label whose one-token variant is the most probable token over the vocabulary, else 'other'."""
    return result.variants.single_token().get(result.top_token_id, "other")


def summarise(result: Result, gold_answer: str) -> Summary:
    """003 §4.1 soft accuracy from p(Yes|s), p(No|s), each summed over its variants (000 Eq. 4)."""
    p_yes, p_no = _probability(result, result.variants.yes), _probability(result, result.variants.no)
    mass = p_yes + p_no
    relative = p_yes / mass if mass > 0 else 0.5
    soft = relative if gold_answer == "yes" else 1.0 - relative
    return Summary(
        p_yes=p_yes, p_no=p_no, relative_p_yes=relative, soft_accuracy=soft,
        decision_relative="yes" if p_yes >= p_no else "no", top_answer=top_answer(result),
        perplexity=perplexity(result), answer_mass=mass,
    )


@dataclass(frozen=True)
class OptionSummary:
    option_probs: dict[str, float]  # letter → p(letter) / Σ p(letters)
    soft_accuracy: float
    decision_relative: str
    top_answer: str
    perplexity: float
    answer_mass: float  # Σ p(letters): the share of the next-token distribution they take


def summarise_options(result: Result, gold_letter: str) -> OptionSummary:
    """001 with 003 §4.1's scoring: each letter's probability (its variants summed) relative to the
    four; soft accuracy = the gold letter's share, decision = the likeliest letter (first on ties)."""
    raw = {label: _probability(result, texts) for label, texts in result.variants.by_label.items()}
    mass = math.fsum(raw.values())
    probs = {label: (p / mass if mass > 0 else 1.0 / len(raw)) for label, p in raw.items()}
    decision = max(probs, key=lambda label: (probs[label], -list(probs).index(label)))
    return OptionSummary(option_probs=probs, soft_accuracy=probs.get(gold_letter, 0.0), decision_relative=decision,
                         top_answer=top_answer(result), perplexity=perplexity(result), answer_mass=mass)
