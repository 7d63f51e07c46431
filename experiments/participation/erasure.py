"""Erasing one participant's data on request (data protection, issue 8).

`participant_erase` deletes the participant's trials and the participant row (whose Prolific ids
are the only link to a person) in one transaction, rewrites earlier admin log entries about the
participant so they no longer name the Prolific id, and records the erasure in the admin log
without it. Trials and participants are protected from ordinary deletes (on_delete=PROTECT), so
this service is the one way to remove them.
"""
from __future__ import annotations

from dataclasses import dataclass

from django.apps import apps
from django.contrib.admin.models import DELETION, LogEntry
from django.contrib.contenttypes.models import ContentType
from django.db import transaction

from ..models import Participant, Trial


@dataclass(frozen=True)
class Erasure:
    participant_id: int
    study_slug: str
    trials: int
    earlier_reports: int  # analysis reports of the study built before: they hold pseudonymous rows (P<id>)

    @property
    def label(self) -> str:
        """How the participant is named from now on: the pseudonymous label the analysis uses."""
        return f"P{self.participant_id}"


def _reports_of(study) -> int:
    if not apps.is_installed("analysis"):
        return 0
    return apps.get_model("analysis", "Report").objects.filter(study=study).count()


@transaction.atomic
def participant_erase(*, participant: Participant, by) -> Erasure:
    """Delete every trial of `participant` and the participant itself; log it under `by` (a user)."""
    participant = Participant.objects.select_for_update().select_related("study").get(pk=participant.pk)
    pk, study = participant.pk, participant.study
    label = f"participant P{pk} of {study.slug}"
    trials, _ = Trial.objects.filter(participant=participant).delete()
    content_type = ContentType.objects.get_for_model(Participant)
    LogEntry.objects.filter(content_type=content_type, object_id=str(pk)).update(object_repr=label)
    participant.delete()
    LogEntry.objects.create(
        user_id=by.pk, content_type=content_type, object_id=str(pk), object_repr=label, action_flag=DELETION,
        change_message=f"Erased on the participant's request: the participant and {trials} trial(s).",
    )
    return Erasure(participant_id=pk, study_slug=study.slug, trials=trials, earlier_reports=_reports_of(study))
