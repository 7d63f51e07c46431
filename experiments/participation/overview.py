"""What a participant is told about the session ahead: how many statements a question comes with,
how many questions there are, how many practice questions, and about how long it all takes.

The counts come from the participant's own list (Participant.plan, catch items included: the
participant sees them as questions like the others) and the arm's practice, so the instructions fit
the design — necessitation items have one statement, not "two" — and the duration is the one the
consent page states (consent.expected_minutes). The attention rule is restated in the consent page's own
words (consent.attention_told).
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ..models import Item
from .consent import attention_told, expected_minutes

_NUMBERS = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five", 6: "six"}


def statements_phrase(counts: Iterable[int]) -> str:
    """ "two statements", "a statement", "one or two statements", "one to three statements"."""
    found = sorted({n for n in counts if n > 0}) or [1]
    low, high = found[0], found[-1]
    if low == high:
        return "a statement" if low == 1 else f"{_NUMBERS.get(low, low)} statements"
    joiner = " or " if len(found) == 2 and high == low + 1 else " to "
    return f"{_NUMBERS.get(low, low)}{joiner}{_NUMBERS.get(high, high)} statements"


@dataclass(frozen=True)
class Overview:
    statements: str  # "two statements"
    single_statement: bool  # every question comes with one statement ("the statement" in the instructions)
    questions: int
    practice: int
    minutes: int
    attention: str  # the attention rule as the consent page states it ('' without check questions)


def session_overview(*, participant, arm) -> Overview:
    premises = Item.objects.filter(pk__in=participant.plan).values_list("premises", flat=True)
    counts = [len(p) for p in premises] + [len(q.get("premises", [])) for q in arm.practice or []]
    practice = len(arm.practice or [])
    questions = len(participant.plan)
    return Overview(
        statements=statements_phrase(counts), single_statement=set(counts) <= {1}, questions=questions,
        practice=practice,
        minutes=expected_minutes(questions=questions, practice=practice, seconds_per_question=arm.seconds_per_question),
        attention=attention_told(arm),
    )
