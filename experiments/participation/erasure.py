"""Erasing one participant's data on request (data protection, issue 8).

`participant_erase` deletes the participant's trials, questionnaire answers and the participant row (whose Prolific ids
are the only link to a person) in one transaction, rewrites earlier admin log entries about the
participant so they no longer name the Prolific id, records the erasure in the admin log without
it, and tells the rest of the project (participant_erased) so that copies elsewhere go too: the
analysis withdraws every report of the study, whose files hold the participant's pseudonymous rows.
Trials and participants are protected from ordinary deletes (on_delete=PROTECT), so this service is
the one way to remove them.
"""
from __future__ import annotations

from dataclasses import dataclass

from django.contrib.admin.models import DELETION, LogEntry
from django.contrib.contenttypes.models import ContentType
from django.db import transaction
from django.dispatch import Signal

from ..models import Participant, QuestionnaireAnswer, QuestionnaireCompletion, Trial
from .selectors import pseudonym


# Sent inside the erasure's transaction with `study` and `label` (P<id>): whatever holds a copy of
# the participant's data outside these tables removes it (the analysis withdraws the study's reports)
# and answers how many copies it removed.
participant_erased = Signal()


@dataclass(frozen=True)
class Erasure:
    participant_id: int
    study_slug: str
    trials: int
    withdrawn_reports: int  # analysis reports of the study that held its pseudonymous rows (P<id>): withdrawn

    @property
    def label(self) -> str:
        """How the participant is named from now on: the pseudonymous label the analysis uses."""
        return pseudonym(self.participant_id)


@transaction.atomic
def participant_erase(*, participant: Participant, by) -> Erasure:
    """Delete every trial of `participant` and the participant itself; log it under `by` (a user)."""
    participant = Participant.objects.select_for_update().select_related("study").get(pk=participant.pk)
    pk, study = participant.pk, participant.study
    label = f"participant {pseudonym(pk)} of {study.slug}"
    trials, _ = Trial.objects.filter(participant=participant).delete()
    answers, _ = QuestionnaireAnswer.objects.filter(participant=participant).delete()  # the questionnaires' too
    QuestionnaireCompletion.objects.filter(participant=participant).delete()
    content_type = ContentType.objects.get_for_model(Participant)
    LogEntry.objects.filter(content_type=content_type, object_id=str(pk)).update(object_repr=label)
    participant.delete()
    LogEntry.objects.create(
        user_id=by.pk, content_type=content_type, object_id=str(pk), object_repr=label, action_flag=DELETION,
        change_message=f"Erased on the participant's request: the participant, {trials} trial(s) and {answers} "
                       "questionnaire answer(s).",
    )
    copies = participant_erased.send(sender=Participant, study=study, label=pseudonym(pk))
    return Erasure(participant_id=pk, study_slug=study.slug, trials=trials,
                   withdrawn_reports=sum(n for _, n in copies if isinstance(n, int)))
