"""Questionnaire questions, pure: what each kind accepts, the one check of an answer, and a new study's
default questionnaires (issue 47 item 2). No Django: experiments/models/questionnaires.py stores questions
and reads these rules; the participant flow's saves and the page's own form both check answers here.

A question is one of five kinds (Gorilla's questionnaire builder, jsPsych's survey plugins):

    choice      one of its choices (text, one per line); the answer is the choice's text
    likert      a whole number on a labelled scale of `points` steps from `start` (1–5, 1–7, 0–10 …)
    number      a number between `minimum` and `maximum` (whole numbers only when `whole`)
    short_text  a line of text, at most `max_length` characters
    long_text   a paragraph, at most `max_length` characters

An answer is checked by `answer_value(rule, raw)`: it returns the answer as stored (the canonical text:
a choice as written, a scale step or a number without spaces or trailing zeros, text stripped) or raises
AnswerError with a message for the participant; "" is no answer, refused for a required question.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

CHOICE, LIKERT, NUMBER, SHORT_TEXT, LONG_TEXT = "choice", "likert", "number", "short_text", "long_text"
KINDS = (CHOICE, LIKERT, NUMBER, SHORT_TEXT, LONG_TEXT)
TEXT_KINDS = (SHORT_TEXT, LONG_TEXT)
DEFAULT_MAX_LENGTH = {SHORT_TEXT: 200, LONG_TEXT: 2000}  # a text question's cap when none is set
HARD_MAX_LENGTH = 10000  # the most any text answer may hold, whatever a question says
MIN_POINTS, MAX_POINTS = 2, 11  # a Likert scale's steps
MAX_CHOICES = 50
MAX_NUMBER_TEXT = 40  # characters of a number answer


class AnswerError(ValueError):
    """An answer a question does not accept; the message is for the participant."""


class QuestionError(ValueError):
    """A question set up wrongly; the message is for the researcher."""


def parse_choices(text: str) -> tuple[str, ...]:
    """A choice question's choices: one per line, stripped, empty lines and repeats dropped."""
    return tuple(dict.fromkeys(line.strip() for line in (text or "").splitlines() if line.strip()))


@dataclass(frozen=True)
class QuestionRule:
    """What a question accepts (the fields of its kind; the others are ignored)."""

    kind: str
    required: bool = False
    choices: tuple[str, ...] = ()
    points: int | None = None
    start: int = 1
    minimum: float | None = None
    maximum: float | None = None
    whole: bool = True
    max_length: int | None = None

    def problems(self) -> list[str]:
        """What is wrong with the question's set-up (empty: nothing)."""
        found = []
        if self.kind not in KINDS:
            found.append(f"the kind must be one of {', '.join(KINDS)}")
        if self.kind == CHOICE and len(self.choices) < 2:
            found.append("a multiple-choice question needs at least two choices (one per line)")
        if self.kind == CHOICE and len(self.choices) > MAX_CHOICES:
            found.append(f"a multiple-choice question has at most {MAX_CHOICES} choices")
        if self.kind == LIKERT and not (self.points is not None and MIN_POINTS <= self.points <= MAX_POINTS):
            found.append(f"a Likert question needs a number of scale points from {MIN_POINTS} to {MAX_POINTS}")
        if self.kind == NUMBER and self.minimum is not None and self.maximum is not None and self.minimum > self.maximum:
            found.append("the smallest number allowed is above the largest")
        if self.kind in TEXT_KINDS and self.max_length is not None and not 1 <= self.max_length <= HARD_MAX_LENGTH:
            found.append(f"a text question's length cap must be from 1 to {HARD_MAX_LENGTH} characters")
        return found

    def scale(self) -> tuple[int, ...]:
        """A Likert question's steps, lowest first."""
        return tuple(range(self.start, self.start + (self.points or 0)))

    def cap(self) -> int:
        """A text question's length cap."""
        return self.max_length or DEFAULT_MAX_LENGTH.get(self.kind, HARD_MAX_LENGTH)

    def allowed(self) -> str:
        """The values the data files can hold, in words (the codebook's allowed_values)."""
        if self.kind == CHOICE:
            return " | ".join(self.choices)
        if self.kind == LIKERT:
            return " | ".join(map(str, self.scale()))
        if self.kind == NUMBER:
            low = "" if self.minimum is None else _number_text(self.minimum)
            high = "" if self.maximum is None else _number_text(self.maximum)
            return f"{'whole numbers' if self.whole else 'numbers'} {low}..{high}".strip()
        return f"text of at most {self.cap()} characters"


def answer_value(rule: QuestionRule, raw) -> str:
    """The answer `raw` (text as a browser sends it; a number for scales and numbers is accepted too) as stored,
    or AnswerError saying why it is refused. "" (or None, or only spaces): no answer."""
    if raw is None:
        raw = ""
    if isinstance(raw, bool) or not isinstance(raw, (str, int, float)):
        raise AnswerError("The answer must be text or a number.")
    text = raw.strip() if isinstance(raw, str) else _number_text(raw)
    if rule.kind not in TEXT_KINDS:
        text = " ".join(text.split())
    if not text:
        if rule.required:
            raise AnswerError("This question needs an answer.")
        return ""
    if rule.kind == CHOICE:
        if text not in rule.choices:
            raise AnswerError("Please choose one of the answers offered.")
        return text
    if rule.kind == LIKERT:
        step = _whole(text)
        if step is None or step not in rule.scale():
            scale = rule.scale()
            raise AnswerError(f"Please choose a point of the scale ({scale[0]} to {scale[-1]}).")
        return str(step)
    if rule.kind == NUMBER:
        return _number(rule, text)
    if "\x00" in text or any(ord(ch) < 32 and ch not in "\n\r\t" for ch in text):
        raise AnswerError("The answer holds characters that cannot be stored.")
    if rule.kind == SHORT_TEXT and ("\n" in text or "\r" in text):
        text = " ".join(text.split())
    if len(text) > rule.cap():
        raise AnswerError(f"Please keep the answer to at most {rule.cap()} characters (it has {len(text)}).")
    return text


def _whole(text: str) -> int | None:
    body = text[1:] if text[:1] in "+-" else text
    return int(text) if body.isdigit() and body.isascii() and len(body) <= 6 else None


def _number_text(value: float) -> str:
    if isinstance(value, int):
        return str(value)
    if not math.isfinite(value):
        return str(value)
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def _number(rule: QuestionRule, text: str) -> str:
    if len(text) > MAX_NUMBER_TEXT:
        raise AnswerError("Please enter a number.")
    cleaned = text.replace(",", ".") if text.count(",") == 1 and "." not in text else text
    try:
        value = float(cleaned)
    except ValueError:
        raise AnswerError("Please enter a number.") from None
    if not math.isfinite(value):
        raise AnswerError("Please enter a number.")
    if rule.whole and not value.is_integer():
        raise AnswerError("Please enter a whole number.")
    low, high = rule.minimum, rule.maximum
    if (low is not None and value < low) or (high is not None and value > high):
        between = (f"from {_number_text(low)} to {_number_text(high)}" if low is not None and high is not None
                   else f"at least {_number_text(low)}" if low is not None else f"at most {_number_text(high)}")
        raise AnswerError(f"Please enter a number {between}.")
    return _number_text(int(value) if value.is_integer() else value)


# A new study's questionnaires, off until the researcher turns them on (issue 47 item 2): a short
# demographics block before the items (every question optional, with "Prefer not to say"), and the aid-use
# question after them. Each: (title, placement, intro, questions); a question: its fields as the model names them.
PREFER_NOT = "Prefer not to say"
AID_USE_KEY = "aid_use"
DEFAULT_QUESTIONNAIRES: tuple[dict, ...] = (
    {
        "title": "About you", "placement": "before",
        "intro": "A few questions about you. Every question is optional; choose “Prefer not to say” or leave a "
                 "question blank if you would rather not answer.",
        "questions": (
            {"key": "age_band", "kind": CHOICE, "required": False, "text": "What is your age?",
             "choices": "\n".join(("18–24", "25–34", "35–44", "45–54", "55–64", "65 or older", PREFER_NOT))},
            {"key": "first_language", "kind": CHOICE, "required": False,
             "text": "Is English your first language (the language you learned first as a child)?",
             "choices": "\n".join(("Yes", "No", "I grew up with English and another language equally", PREFER_NOT))},
        ),
    },
    {
        "title": "One last question", "placement": "after",
        "intro": "Please answer honestly: your answer does not change your pay or your approval.",
        "questions": (
            {"key": AID_USE_KEY, "kind": CHOICE, "required": True,
             "text": "Did you use any aid or AI tool (for example ChatGPT) while answering these questions?",
             "choices": "\n".join(("Yes", "No", PREFER_NOT))},
        ),
    },
)
