"""The participant flow, declared as data: an ordered list of steps, each knowing if it applies.

The current step is the first that applies and is not done; a step's template renders it. The
views never decide the order themselves (oTree's page_sequence, as data).

This declaration is the one rule for "the pages before the trials are behind": the page the
participant sees (`current_step`), the services that mark a step done (`step_done_after`: which
step must be behind first), the locked save of an answer (`trials_open`) and the PostgreSQL
one-statement save (`trials_open_sql`, generated from the same steps) all read it. A step added
here is checked by every one of them.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..models import HumanArm, Participant, ParticipantStatus


@dataclass(frozen=True)
class Step:
    """A page of the flow. A step before the trials is done when the participant's timestamp
    `done_at` is set, and applies always or, with `needs`, when that arm field (a JSON list: the
    practice items) is not empty. "ended" and "trials" are decided by the participation's status."""

    name: str
    template: str
    done_at: str | None = None
    needs: str | None = None

    def applies(self, participant: Participant, arm: HumanArm) -> bool:
        if self.name == "ended":
            return not _in_progress(participant)
        return self.needs is None or bool(getattr(arm, self.needs))

    def done(self, participant: Participant) -> bool:
        if self.name == "ended":
            return False
        if self.name == "trials":
            return not _in_progress(participant)
        return getattr(participant, self.done_at) is not None


def _in_progress(participant: Participant) -> bool:
    return participant.status == ParticipantStatus.STARTED


STEPS: tuple[Step, ...] = (
    Step("ended", "participant/ended.html"),
    Step("consent", "participant/consent.html", done_at="consented_at"),
    Step("instructions", "participant/instructions.html", done_at="instructions_done_at"),
    Step("practice", "participant/trials.html", done_at="practice_done_at", needs="practice"),
    Step("trials", "participant/trials.html"),
)
# The steps a participant goes through before the first trial, in order.
BEFORE_TRIALS: tuple[Step, ...] = tuple(step for step in STEPS if step.done_at is not None)


def current_step(participant: Participant, arm: HumanArm) -> Step:
    for step in STEPS:
        if step.applies(participant, arm) and not step.done(participant):
            return step
    return STEPS[0]


def step_named(name: str) -> Step:
    return next(step for step in STEPS if step.name == name)


def step_done_after(name: str) -> str | None:
    """The timestamp that must be set before step `name` can be marked done (that of the step
    before it; None for the first)."""
    at = BEFORE_TRIALS.index(step_named(name))
    return BEFORE_TRIALS[at - 1].done_at if at else None


def trials_open(participant: Participant, arm: HumanArm) -> bool:
    """Every step before the trials that applies to this participant is done."""
    return all(step.done(participant) or not step.applies(participant, arm) for step in BEFORE_TRIALS)


def trials_open_sql(participant_column: Callable[[str], str], arm_column: Callable[[str], str]) -> str:
    """`trials_open` as an SQL predicate over a participant row and its arm's row (column
    expressions by field name). An arm field a step `needs` is a JSON list, stored by Django as
    text on every backend: empty is '[]' (or null)."""
    terms = []
    for step in BEFORE_TRIALS:
        done = f"{participant_column(step.done_at)} IS NOT NULL"
        if step.needs is not None:
            done = f"({done} OR COALESCE({arm_column(step.needs)}, 'null') IN ('[]', 'null'))"
        terms.append(done)
    return "(" + " AND ".join(terms) + ")"
