"""The participant flow, declared as data: an ordered list of steps, each knowing if it applies.

The current step is the first that applies and is not done; a step's template renders it. The
views never decide the order themselves (oTree's page_sequence, as data).

This declaration is the one rule for "the pages before the trials are behind": the page the
participant sees (`current_step`), the services that mark a step done (`steps_behind`: the steps
that must be behind first), the locked save of an answer (`trials_open`) and the PostgreSQL
one-statement save (`trials_open_sql`, generated from the same steps) all read it. A step added
here is checked by every one of them.

Questionnaires (experiments/models/questionnaires.py) are steps too: one before the items (after the
consent) and one after them (before the completion code), each applying when the arm shows a questionnaire
of that placement, and done when the participant completed its pages (participation/questionnaires.py).
A study whose questionnaires come after the items records the end of the trials (`trials_done_at`, by the
finish) and completes at the end of the last page.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..models import HumanArm, Participant, ParticipantStatus, Placement, Question, Questionnaire
from ..models.questionnaires import SHOWS


@dataclass(frozen=True)
class Step:
    """A page of the flow. A step before the trials is done when the participant's timestamp
    `done_at` is set, and applies always or, with `needs`, when that arm field (a JSON list: the
    practice items) is not empty, or, with `questionnaire` (a placement), when the arm shows a
    questionnaire so placed. "ended" and "trials" are decided by the participation's status (the trials
    also by `trials_done_at`, set where questionnaires follow them)."""

    name: str
    template: str
    done_at: str | None = None
    needs: str | None = None
    questionnaire: str | None = None

    def applies(self, participant: Participant, arm: HumanArm) -> bool:
        if self.name == "ended":
            return not _in_progress(participant)
        if self.questionnaire is not None:
            return self.questionnaire in shown_placements(arm)
        return self.needs is None or bool(getattr(arm, self.needs))

    def done(self, participant: Participant) -> bool:
        if self.name == "ended":
            return False
        if self.name == "trials":
            return not _in_progress(participant) or participant.trials_done_at is not None
        return getattr(participant, self.done_at) is not None


def shown_placements(arm: HumanArm) -> frozenset[str]:
    """The placements ("before", "after") of the questionnaires the arm shows, read once per arm instance."""
    found = getattr(arm, "_questionnaire_placements", None)
    if found is None:
        annotated = {p: getattr(arm, SHOWS.format(p), None) for p in Placement.values}
        if None not in annotated.values():  # read with the arm (human_arm_ensure: shows_annotations)
            found = frozenset(p for p, shows in annotated.items() if shows)
        else:
            found = frozenset(Questionnaire.objects.filter(arm=arm).shown().values_list("placement", flat=True))
        arm._questionnaire_placements = found
    return found


def _in_progress(participant: Participant) -> bool:
    return participant.status == ParticipantStatus.STARTED


STEPS: tuple[Step, ...] = (
    Step("ended", "participant/ended.html"),
    Step("consent", "participant/consent.html", done_at="consented_at"),
    Step("questions_before", "participant/questionnaire.html", done_at="questions_before_done_at",
         questionnaire="before"),
    Step("instructions", "participant/instructions.html", done_at="instructions_done_at"),
    Step("practice", "participant/trials.html", done_at="practice_done_at", needs="practice"),
    Step("trials", "participant/trials.html"),
    Step("questions_after", "participant/questionnaire.html", done_at="questions_after_done_at",
         questionnaire="after"),
)
# The steps a participant goes through before the first trial, in order.
BEFORE_TRIALS: tuple[Step, ...] = tuple(
    step for step in STEPS[:[s.name for s in STEPS].index("trials")] if step.done_at is not None)
QUESTIONNAIRE_STEPS = {step.questionnaire: step for step in STEPS if step.questionnaire is not None}


def current_step(participant: Participant, arm: HumanArm) -> Step:
    for step in STEPS:
        if step.applies(participant, arm) and not step.done(participant):
            return step
    return STEPS[0]


def step_named(name: str) -> Step:
    return next(step for step in STEPS if step.name == name)


def steps_behind(participant: Participant, arm: HumanArm, name: str) -> bool:
    """Every step before the step `name` (before the trials) that applies to this participant is done."""
    at = BEFORE_TRIALS.index(step_named(name))
    return all(step.done(participant) or not step.applies(participant, arm) for step in BEFORE_TRIALS[:at])


def trials_open(participant: Participant, arm: HumanArm) -> bool:
    """Every step before the trials that applies to this participant is done."""
    return all(step.done(participant) or not step.applies(participant, arm) for step in BEFORE_TRIALS)


def trials_open_sql(participant_column: Callable[[str], str], arm_column: Callable[[str], str]) -> str:
    """`trials_open` as an SQL predicate over a participant row and its arm's row (column
    expressions by field name). An arm field a step `needs` is a JSON list, stored by Django as
    text on every backend: empty is '[]' (or null). A questionnaire step applies where the arm has a
    questionnaire of its placement switched on and holding a question (QuestionnaireQuerySet.shown)."""
    terms = []
    for step in BEFORE_TRIALS:
        done = f"{participant_column(step.done_at)} IS NOT NULL"
        if step.needs is not None:
            done = f"({done} OR COALESCE({arm_column(step.needs)}, 'null') IN ('[]', 'null'))"
        if step.questionnaire is not None:
            done = f"({done} OR NOT {_shown_sql(arm_column('id'), step.questionnaire)})"
        terms.append(done)
    return "(" + " AND ".join(terms) + ")"


def _shown_sql(arm_id: str, placement: str) -> str:
    """Whether the arm `arm_id` (a column expression) shows a questionnaire of `placement` (a constant of
    models.Placement), in SQL: QuestionnaireQuerySet.shown's rule."""
    from django.db import connection

    quote = connection.ops.quote_name
    column = lambda model, name: quote(model._meta.get_field(name).column)  # noqa: E731
    table = lambda model: quote(model._meta.db_table)  # noqa: E731
    assert placement.isalpha()
    return (f"EXISTS (SELECT 1 FROM {table(Questionnaire)} qn JOIN {table(Question)} qq "
            f"ON qq.{column(Question, 'questionnaire')} = qn.{column(Questionnaire, 'id')} "
            f"WHERE qn.{column(Questionnaire, 'arm')} = {arm_id} AND qn.{column(Questionnaire, 'placement')} = "
            f"'{placement}' AND qn.{column(Questionnaire, 'enabled')})")
