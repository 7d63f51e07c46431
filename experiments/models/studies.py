"""Studies: a study's row and its state machine (a status only moves along it), and the check that
a study has responses, from which on its items are immutable."""
from __future__ import annotations

from django.apps import apps
from django.core.exceptions import ValidationError
from django.db import models

from common.choices import StateChoices

from .choices import ConsequenceKey, LogicSystem
from .teams import Team, default_team_id


class StudyStatus(StateChoices):
    DRAFT = "draft", "draft"
    OPEN = "open", "open for participants"
    PAUSED = "paused", "paused"
    CLOSED = "closed", "closed"

    @classmethod
    def transitions(cls) -> dict[str, frozenset[str]]:
        return {
            cls.DRAFT: frozenset({cls.OPEN, cls.CLOSED}),
            cls.OPEN: frozenset({cls.PAUSED, cls.CLOSED}),
            cls.PAUSED: frozenset({cls.OPEN, cls.CLOSED}),
            cls.CLOSED: frozenset(),
        }


class ItemsLocked(ValidationError):
    """Raised when something tries to change the items of a study that already has responses."""


class Study(models.Model):
    slug = models.SlugField(
        max_length=80, unique=True,
        verbose_name="short name",
        help_text="Letters, digits and hyphens; it is the study's link (/s/ then the short name: /s/my-study/) and "
                  "its files' names.",
    )
    title = models.CharField(
        max_length=200,
        verbose_name="internal title",
        help_text="The study's name in the admin and the reports; participants see the participant-facing title.",
    )
    participant_title = models.CharField(
        max_length=200, blank=True, verbose_name="participant-facing title",
        help_text="The title participants see on the study's pages; empty: “A short reasoning study”. The internal "
        "title is never shown to them.",
    )
    description = models.TextField(blank=True, help_text="Notes for the researchers; participants never see it.")
    team = models.ForeignKey(
        Team, on_delete=models.PROTECT, related_name="studies", default=default_team_id,
        help_text="The lab the study belongs to: only its members (and superusers) see the study and everything "
                  "under it — items, participants, trials, runs, reports.")
    design = models.CharField(
        max_length=40, help_text="What the study's items are made from: a design generated with its options or an item bank imported from CSV."
    )
    status = models.CharField(
        max_length=12, choices=StudyStatus.choices, default=StudyStatus.DRAFT, editable=False
    )
    logic_system = models.CharField(
        max_length=2,
        choices=LogicSystem.choices,
        default=LogicSystem.S5,
        help_text="The modal logic whose checker decides the gold answers of a modal-logic design's items (a "
                  "design without modal logic, such as Rulebreakers, does not use it).",
    )
    consequence = models.CharField(
        max_length=6, choices=ConsequenceKey.choices, default=ConsequenceKey.PAPER,
        help_text="The consequence relation that keys a modal-logic design's generated items; each item also "
                  "stores the other's answer.",
        verbose_name="consequence relation",
    )
    settings = models.JSONField(
        default=dict, blank=True,
        verbose_name="analysis settings",
        help_text="The analysis settings as stored (edited in the fields above).",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name_plural = "studies"
        ordering = ["-created_at"]
        # Each action that changes data or reveals Prolific ids has its own permission (view_study
        # alone shows a study, its progress and pseudonymous exports; issue 17 hole 1).
        permissions = [
            ("change_study_status", "Can open, pause and close studies and expire silent sessions"),
            ("exclude_participant", "Can exclude participants from a study"),
            ("view_prolific_ids", "Can see participants' Prolific ids"),
        ]

    NEUTRAL_TITLE = "A short reasoning study"

    @property
    def shown_title(self) -> str:
        """The title participants see: the participant-facing title, else a neutral one (never the
        internal title, which may name the hypothesis)."""
        return self.participant_title.strip() or self.NEUTRAL_TITLE

    def __str__(self) -> str:
        return f"{self.title} ({self.slug})"

    def has_responses(self) -> bool:
        """Any participant answer or model score: from then on the study's items are immutable."""
        return responses_exist(Study.objects.filter(pk=self.pk).values("pk"))


def responses_exist(studies) -> bool:
    """Whether any of the studies (a queryset of study ids) has a trial or a model score."""
    trials = apps.get_model("experiments", "Trial")  # participants.py (which imports this module)
    if trials.objects.filter(participant__study__in=studies).exists():
        return True
    if apps.is_installed("inference"):
        scores = apps.get_model("inference", "ModelScore")
        return scores.objects.filter(run__study__in=studies).exists()
    return False
