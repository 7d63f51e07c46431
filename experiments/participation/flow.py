"""The participant flow, declared as data: an ordered list of steps, each knowing if it applies.

The current step is the first that applies and is not done; a step's template renders it. The
views never decide the order themselves (oTree's page_sequence, as data).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..models import HumanArm, Participant, ParticipantStatus


@dataclass(frozen=True)
class Step:
    name: str
    template: str
    applies: Callable[[Participant, HumanArm], bool]
    done: Callable[[Participant], bool]


def _always(participant: Participant, arm: HumanArm) -> bool:
    return True


def _in_progress(participant: Participant) -> bool:
    return participant.status == ParticipantStatus.STARTED


STEPS: tuple[Step, ...] = (
    Step(
        "ended", "participant/ended.html",
        applies=lambda p, arm: not _in_progress(p), done=lambda p: False,
    ),
    Step("consent", "participant/consent.html", applies=_always, done=lambda p: p.consented_at is not None),
    Step(
        "instructions", "participant/instructions.html",
        applies=_always, done=lambda p: p.instructions_done_at is not None,
    ),
    Step(
        "practice", "participant/trials.html",
        applies=lambda p, arm: bool(arm.practice), done=lambda p: p.practice_done_at is not None,
    ),
    Step("trials", "participant/trials.html", applies=_always, done=lambda p: not _in_progress(p)),
)


def current_step(participant: Participant, arm: HumanArm) -> Step:
    for step in STEPS:
        if step.applies(participant, arm) and not step.done(participant):
            return step
    return STEPS[0]


def step_named(name: str) -> Step:
    return next(step for step in STEPS if step.name == name)
