"""Writes to studies (and an item's text). Every function takes keyword-only arguments and checks
its rules. Items are made by their design (designs/<family>/, through the registry; experiments/items/ is what they share).

Views, admin actions and management commands call these; nothing else writes these tables.
"""
from __future__ import annotations

from django.core.exceptions import ValidationError

from .items.storage import refuse_if_locked
from .models import Item, Study, StudyStatus
from .participation.readiness import open_problems  # the human arm's rules (consent, practice)
from .participation.services import human_arm_ensure, lists_prepare


def study_create(
    *, slug: str, title: str, design: str, logic_system: str = "S5", settings: dict | None = None,
    description: str = "", participant_title: str = "", team=None,
) -> Study:
    """A new study, in `team` (a teams.Team; None: the default team)."""
    study = Study(
        slug=slug, title=title, design=design, logic_system=logic_system,
        settings=settings or {}, description=description, participant_title=participant_title,
    )
    if team is not None:
        study.team = team
    study.full_clean()
    study.save()
    return study


def study_transition(*, study: Study, to: str) -> Study:
    """Move a study along its state machine (draft → open ⇄ paused → closed)."""
    if to not in StudyStatus.values:
        raise ValidationError(f"'{to}' is not a study status; choose one of {', '.join(StudyStatus.values)}")
    if not StudyStatus.can_move(study.status, to):
        allowed = StudyStatus.allowed_from(study.status)
        raise ValidationError(
            f"Study '{study.slug}' cannot go from {study.status} to {to} (allowed: {allowed})."
        )
    if to == StudyStatus.OPEN and not study.items.exists():
        raise ValidationError(f"Study '{study.slug}' has no items yet; generate or import some first.")
    if to == StudyStatus.OPEN:
        problems = open_problems(study, fresh=True)  # the items themselves, not a kept summary
        if problems:
            raise ValidationError([f"Study '{study.slug}' cannot open. {problem}" for problem in problems])
        lists_prepare(study=study, arm=human_arm_ensure(study=study))
    Study.objects.filter(pk=study.pk).update(status=to)
    study.status = to
    return study


def item_update(*, item: Item, **fields) -> Item:
    """Edit an item's text fields; refused with a clear message once its study has responses."""
    editable = {"premises", "question", "prompt", "argument_form", "form_id", "attributes"}
    unknown = set(fields) - editable
    if unknown:
        raise ValidationError(f"Cannot edit {', '.join(sorted(unknown))}; editable: {', '.join(sorted(editable))}.")
    refuse_if_locked(item.study)
    for name, value in fields.items():
        setattr(item, name, value)
    item.full_clean()
    item.save()
    return item
