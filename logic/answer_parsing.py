"""Reading a generated answer (issue 28, generation mode). Pure Python, no Django.

A model that generates text answers in words; a parser turns the text into an answer label ("yes",
"no", or an option letter "A" … "D") or OTHER when the text says none of them. Each design declares
its parser (designs/<family>/design.py):

| parser | reads | e.g. |
| --- | --- | --- |
| first_word | the first word (after an optional leading "Answer:") | "True. Because …" → yes |
| answer_line | the last line "Answer: X" (also "Final answer: X", "**Answer:** X") | "…\\nAnswer: No" → no |
| json | the last JSON object with an "answer" key | '{"answer": "yes"}' → yes |
| letter | the last "Answer: X" line, else a leading capital option letter "B", "(B)", "B." | "(C) because" → C |

A parser never guesses: a word outside the vocabulary (the item's answer words and their synonyms)
gives OTHER. Reasoning models' thinking (``<think>…</think>``) is split off first (`split_thinking`)
and never parsed. Over n samples of one item, `Tally` counts each answer; the share of yes is the
model's p(Yes) estimate, with its Wilson interval whose unit is one generated sample of that item.
"""
from __future__ import annotations

import json
import math
import re
import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

OTHER = "other"
FIRST_WORD, ANSWER_LINE, JSON, LETTER = "first_word", "answer_line", "json", "letter"
PARSERS = {
    FIRST_WORD: "the first word of the answer (after an optional leading 'Answer:')",
    ANSWER_LINE: "the last line of the form 'Answer: X'",
    JSON: "the last JSON object's \"answer\" value",
    LETTER: "an option letter: the last 'Answer: X' line, else a leading capital letter such as (B) or B.",
}
THINK_OPEN, THINK_CLOSE = "<think>", "</think>"

_STRIP = "*_`\"'“”‘’.,:;!?()[]{}<>«»-–—#" + string.whitespace
_ANSWER_LINE = re.compile(r"^[\s*_#>`-]*(?:final\s+)?answer[\s*_`]*[:：][\s*_`]*(?P<rest>.*)$", re.IGNORECASE)
_LEADING_LABEL = re.compile(r"^[\s*_#>`]*(?:final\s+)?answer[\s*_`]*[:：]", re.IGNORECASE)
_LETTER = re.compile(r"^[\s*_`]*[(\[]?(?P<letter>[A-Z])(?:[)\].:,*_`]|\s|$)")


def normalise(word: str) -> str:
    """A word as a vocabulary key: surrounding markdown and punctuation stripped, case folded."""
    return word.strip(_STRIP).casefold().strip(_STRIP)


def vocabulary(words: Mapping[str, Sequence[str]]) -> dict[str, str]:
    """{label: words meaning it} → {normalised word: label}; a word given for two labels raises."""
    out: dict[str, str] = {}
    for label, said in words.items():
        for word in said:
            key = normalise(word)
            if not key:
                continue
            if out.get(key, label) != label:
                raise ValueError(f"the word {word!r} is given for both {out[key]!r} and {label!r}")
            out[key] = label
    return out


def split_thinking(text: str) -> tuple[str, str]:
    """(thinking, answer): a reasoning model's ``<think>…</think>`` apart from what follows it.

    A text with a closing tag but no opening one (a chat template that opens the thinking in the
    prompt) thinks up to the closing tag. Thinking left unclosed (the model ran out of tokens) is all
    thinking: the answer is what came before it, usually nothing."""
    close = text.rfind(THINK_CLOSE)
    if close >= 0:
        before = text[:close]
        opened = before.find(THINK_OPEN)
        thinking = before[opened + len(THINK_OPEN):] if opened >= 0 else before
        answer = (before[:opened] if opened >= 0 else "") + text[close + len(THINK_CLOSE):]
        return thinking.strip(), answer.strip()
    opened = text.find(THINK_OPEN)
    if opened >= 0:
        return text[opened + len(THINK_OPEN):].strip(), text[:opened].strip()
    return "", text.strip()


def _word_label(candidate: str, words: Mapping[str, str]) -> str:
    parts = candidate.split()
    return words.get(normalise(parts[0]), OTHER) if parts else OTHER


def first_word(text: str, words: Mapping[str, str]) -> str:
    label = _LEADING_LABEL.match(text)
    return _word_label(text[label.end():] if label else text, words)


def _answer_lines(text: str) -> list[str]:
    return [m.group("rest") for line in text.splitlines() if (m := _ANSWER_LINE.match(line))]


def answer_line(text: str, words: Mapping[str, str]) -> str:
    found = _answer_lines(text)
    return _word_label(found[-1], words) if found else OTHER


def json_answer(text: str, words: Mapping[str, str]) -> str:
    decoder = json.JSONDecoder()
    found = OTHER
    at = text.find("{")
    while at >= 0:
        try:
            value, end = decoder.raw_decode(text, at)
        except ValueError:
            at = text.find("{", at + 1)
            continue
        if isinstance(value, dict):
            answer = next((v for k, v in value.items() if isinstance(k, str) and k.casefold() == "answer"), None)
            if isinstance(answer, str | bool):
                said = ("yes" if answer else "no") if isinstance(answer, bool) else answer
                found = words.get(normalise(said), OTHER)
        at = text.find("{", end)
    return found


def letter(text: str, words: Mapping[str, str]) -> str:
    found = _answer_lines(text)
    candidate = found[-1] if found else text
    match = _LETTER.match(candidate)
    if match is None:
        return OTHER
    return words.get(normalise(match.group("letter")), OTHER)


_FUNCTIONS = {FIRST_WORD: first_word, ANSWER_LINE: answer_line, JSON: json_answer, LETTER: letter}


def parse(parser: str, text: str, words: Mapping[str, str]) -> str:
    """The answer label `parser` reads in `text` (thinking already split off), else OTHER."""
    try:
        function = _FUNCTIONS[parser]
    except KeyError:
        raise ValueError(f"unknown answer parser {parser!r}; known: {', '.join(PARSERS)}") from None
    return function(text, words)


# ------------------------------------------------------------------------------------ samples
Z_95 = 1.959963984540054  # R: qnorm(0.975)


def wilson(k: int, n: int, z: float = Z_95) -> tuple[float, float]:
    """The Wilson score interval for k of n (R's prop.test(k, n, correct = FALSE)$conf.int)."""
    if n <= 0 or not 0 <= k <= n:
        raise ValueError(f"need 0 ≤ k ≤ n and n ≥ 1; got k={k}, n={n}")
    p = k / n
    centre = p + z * z / (2 * n)
    spread = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    scale = 1 + z * z / n
    low = 0.0 if k == 0 else (centre - spread) / scale
    high = 1.0 if k == n else (centre + spread) / scale
    return low, high


@dataclass(frozen=True)
class Tally:
    """The parsed answers of one item's n samples, in sample order."""

    answers: tuple[str, ...]

    def __post_init__(self):
        if not self.answers:
            raise ValueError("a tally needs at least one sample")

    @property
    def n(self) -> int:
        return len(self.answers)

    def count(self, label: str) -> int:
        return sum(answer == label for answer in self.answers)

    def share(self, label: str) -> float:
        """The share of samples answering `label`: for "yes", the model's p(Yes) estimate."""
        return self.count(label) / self.n

    def interval(self, label: str) -> tuple[float, float]:
        """Wilson 95 % interval of share(label); the unit is one sample of this item."""
        return wilson(self.count(label), self.n)

    @property
    def decision(self) -> str:
        """The most frequent answer; among equally frequent ones, the one sampled first."""
        best = max(self.count(a) for a in self.answers)
        return next(a for a in self.answers if self.count(a) == best)
