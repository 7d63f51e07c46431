"""Participants (one pseudonymous Prolific session each) and their trials (one answer each)."""
from __future__ import annotations

from django.db import models

from common.choices import StateChoices

from .choices import ANSWERS, AnswerChannel, Device
from .items import Item
from .studies import Study


class KeyMapping(models.TextChoices):
    F_YES = "f_yes", "F = Yes, J = No"
    J_YES = "j_yes", "F = No, J = Yes"


class ParticipantStatus(StateChoices):
    STARTED = "started", "in progress"
    COMPLETED = "completed", "completed"
    NO_CONSENT = "no_consent", "declined consent"
    FAILED_ATTENTION = "failed_attention", "failed attention check"
    RETURNED = "returned", "returned / timed out"
    EXCLUDED = "excluded", "excluded by the researcher"

    @classmethod
    def transitions(cls) -> dict[str, frozenset[str]]:
        ended = frozenset({cls.EXCLUDED})
        return {
            cls.STARTED: frozenset(
                {cls.COMPLETED, cls.NO_CONSENT, cls.FAILED_ATTENTION, cls.RETURNED, cls.EXCLUDED}
            ),
            cls.COMPLETED: ended,
            cls.NO_CONSENT: frozenset(),
            cls.FAILED_ATTENTION: ended,
            cls.RETURNED: ended,
            cls.EXCLUDED: frozenset(),
        }

    @classmethod
    def holding(cls) -> tuple[str, ...]:
        """Statuses that hold a place in the sample (and count for list and key balance)."""
        return (cls.STARTED, cls.COMPLETED)


def audience_q(prefix: str = "", *, include_preview: bool = False, include_simulated: bool = False) -> models.Q:
    """Who a count or a read is about, as a filter on participants (`prefix` "participant__" from a trial): real
    participants — neither a staff preview nor a simulated pilot's bot — with previews and bots added only when
    asked. The one spelling of these populations (DESIGN.md rule 22; tests/experiments/test_populations.py holds
    the tree to it): everything else reads Participant.objects.real() / Trial.objects.by_real() or this."""
    q = models.Q()
    if not include_preview:
        q &= models.Q(**{f"{prefix}is_preview": False})
    if not include_simulated:
        q &= models.Q(**{f"{prefix}is_simulated": False})
    return q


class ParticipantQuerySet(models.QuerySet):
    """The populations a count needs, each defined here once."""

    def real(self, *, include_simulated: bool = False) -> "ParticipantQuerySet":
        """People: not a staff preview, not a simulated pilot's bot (bots too with `include_simulated`: a pilot)."""
        return self.filter(audience_q(include_simulated=include_simulated))

    def audience(self, *, include_preview: bool = False, include_simulated: bool = False) -> "ParticipantQuerySet":
        return self.filter(audience_q(include_preview=include_preview, include_simulated=include_simulated))

    def previews(self) -> "ParticipantQuerySet":
        """Staff previews of the participant pages (never data)."""
        return self.filter(is_preview=True)

    def simulated(self) -> "ParticipantQuerySet":
        """A simulated pilot's bots (participation/pilot.py)."""
        return self.filter(is_simulated=True)

    def completed(self) -> "ParticipantQuerySet":
        """Sessions that reached the end (ParticipantStatus.COMPLETED: the one meaning of "completed")."""
        return self.filter(status=ParticipantStatus.COMPLETED)

    def holding(self) -> "ParticipantQuerySet":
        """Sessions holding a place in the sample (ParticipantStatus.holding())."""
        return self.filter(status__in=ParticipantStatus.holding())


class TrialQuerySet(models.QuerySet):
    def by_real(self, *, include_simulated: bool = False) -> "TrialQuerySet":
        """Answers of real participants (Participant.objects.real's population)."""
        return self.filter(audience_q("participant__", include_simulated=include_simulated))

    def by_audience(self, *, include_preview: bool = False, include_simulated: bool = False) -> "TrialQuerySet":
        return self.filter(audience_q("participant__", include_preview=include_preview,
                                      include_simulated=include_simulated))


class Participant(models.Model):
    """One pseudonymous Prolific session. Nothing beyond Prolific's IDs is stored."""

    objects = ParticipantQuerySet.as_manager()

    study = models.ForeignKey(
        Study, on_delete=models.PROTECT, related_name="participants", help_text="The study taken.",
    )
    prolific_pid = models.CharField(
        max_length=64,
        verbose_name="Prolific participant ID",
        help_text="The participant's pseudonymous Prolific ID (only users allowed to see Prolific IDs see it).",
    )
    prolific_study_id = models.CharField(
        max_length=64, blank=True,
        verbose_name="Prolific study ID",
        help_text="The study's ID on Prolific, as the link gave it.",
    )
    prolific_session_id = models.CharField(
        max_length=64, blank=True,
        verbose_name="Prolific session ID",
        help_text="The session's ID on Prolific, as the link gave it.",
    )
    key_mapping = models.CharField(
        max_length=8, choices=KeyMapping.choices,
        help_text="Which key means yes (F or J), counterbalanced across participants.",
    )
    status = models.CharField(
        max_length=20, choices=ParticipantStatus.choices, default=ParticipantStatus.STARTED
    )
    is_preview = models.BooleanField(
        default=False,
        verbose_name="staff preview",
        help_text="A researcher's preview session: never data.",
    )
    is_simulated = models.BooleanField(
        default=False, editable=False,
        help_text="A simulated pilot's bot (participation/pilot.py): never counted as data, left out of exports and "
        "of every report but a pilot report.",
        verbose_name="simulated (pilot bot)",
    )
    started_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # The participant flow (experiments/participation/): an unguessable token names the session in
    # its URLs; the list is fixed at the start (Latin-square list number, shuffle seed, item ids).
    token = models.CharField(max_length=64, unique=True, null=True, blank=True, editable=False)
    list_number = models.PositiveIntegerField(
        null=True, blank=True, help_text="Which of the study's lists the participant got.",
    )
    list_seed = models.BigIntegerField(
        null=True, blank=True, help_text="The random seed the participant's list order was drawn with.",
    )
    plan = models.JSONField(
        default=list, blank=True, help_text="Item ids in presentation order.", verbose_name="list (item ids)",
    )
    consented_at = models.DateTimeField(
        null=True, blank=True,
        verbose_name="consented",
        help_text="When the participant gave consent (UTC).",
    )
    instructions_done_at = models.DateTimeField(
        null=True, blank=True,
        verbose_name="instructions read",
        help_text="When the participant finished the instructions (UTC).",
    )
    practice_done_at = models.DateTimeField(
        null=True, blank=True,
        verbose_name="practice done",
        help_text="When the participant finished the practice questions (UTC).",
    )
    # The questionnaires' steps (experiments/models/questionnaires.py; participation/questionnaires.py)
    questions_before_done_at = models.DateTimeField(
        null=True, blank=True, verbose_name="questionnaires before the items done",
        help_text="When the participant completed the questionnaires shown before the items (UTC).",
    )
    trials_done_at = models.DateTimeField(
        null=True, blank=True, verbose_name="items answered",
        help_text="When every item was answered, where questionnaires follow the items (UTC).",
    )
    questions_after_done_at = models.DateTimeField(
        null=True, blank=True, verbose_name="questionnaires after the items done",
        help_text="When the participant completed the questionnaires shown after the items (UTC).",
    )
    last_seen_at = models.DateTimeField(
        null=True, blank=True, help_text="The last heartbeat from the trial page (UTC).", verbose_name="last seen",
    )
    attention_failures = models.PositiveSmallIntegerField(
        default=0,
        verbose_name="wrong attention-check answers",
        help_text="How many catch items the participant answered wrongly.",
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["study", "prolific_pid"],
                condition=models.Q(is_preview=False),
                name="participant_unique_pid",
            ),
            models.UniqueConstraint(
                fields=["study", "prolific_session_id"],
                condition=models.Q(is_preview=False) & ~models.Q(prolific_session_id=""),
                name="participant_unique_session",
            ),
        ]

    def __str__(self) -> str:
        # the pseudonym, never the Prolific id: this text shows wherever a participant is named (titles,
        # the trials list, log lines), and Prolific ids need their own permission
        return f"P{self.pk} in {self.study.slug}"


class Trial(models.Model):
    """One answer. (participant, index) is unique so a retried save never doubles an answer."""

    objects = TrialQuerySet.as_manager()

    # No index of its own: the unique (participant, index) constraint's index serves every lookup by
    # participant, and each answer saved would maintain a second one.
    participant = models.ForeignKey(
        Participant, on_delete=models.PROTECT, related_name="trials", db_index=False, help_text="Whose answer it is.",
    )
    item = models.ForeignKey(Item, on_delete=models.PROTECT, related_name="trials", help_text="The item answered.")
    index = models.PositiveIntegerField(
        verbose_name="position",
        help_text="The trial's position in the participant's list (0-based).",
    )
    key = models.CharField(max_length=16, blank=True, help_text="The keydown event's e.key.")
    answer = models.CharField(
        max_length=3, choices=ANSWERS, blank=True,
        help_text="yes/no, or the option letter for multiple choice; blank when the time limit ran out."
    )
    correct = models.BooleanField(help_text="The answer equals the item's gold answer.")
    rt_ms = models.FloatField(
        help_text="Response time from stimulus onset, in milliseconds.", verbose_name="response time (ms)",
    )
    received_at = models.DateTimeField(
        auto_now_add=True,
        verbose_name="received",
        help_text="When the server stored the answer (UTC).",
    )
    # What the browser sent besides the answer (experiments/participation/).
    idempotency_key = models.CharField(
        max_length=64, blank=True,
        verbose_name="resend key",
        help_text="The browser's key for this answer, so an answer sent twice is stored once.",
    )
    key_code = models.CharField(max_length=16, blank=True, help_text="The keydown event's e.code.")
    timed_out = models.BooleanField(default=False, help_text="The time limit ran out before an answer.")
    is_attention_check = models.BooleanField(
        default=False,
        verbose_name="attention check",
        help_text="The item was a catch item, not one of the study's items.",
    )
    client_onset_ms = models.FloatField(
        null=True, blank=True, help_text="Epoch ms, browser clock.", verbose_name="shown at (browser clock, ms)",
    )
    client_response_ms = models.FloatField(
        null=True, blank=True, help_text="Epoch ms, browser clock.", verbose_name="answered at (browser clock, ms)",
    )
    user_agent = models.CharField(
        max_length=400, blank=True,
        verbose_name="browser",
        help_text="The browser's user-agent text.",
    )
    viewport_width = models.PositiveIntegerField(
        null=True, blank=True,
        verbose_name="window width (px)",
        help_text="The browser window's width when answering.",
    )
    viewport_height = models.PositiveIntegerField(
        null=True, blank=True,
        verbose_name="window height (px)",
        help_text="The browser window's height when answering.",
    )
    answer_channel = models.CharField(
        max_length=8, choices=AnswerChannel.choices, blank=True,
        help_text="How the answer was given: a key press, a click or a tap on an on-screen button (the arm's answer "
        "input says which a study accepts); blank when the time ran out.",
    )
    device = models.CharField(
        max_length=8, choices=Device.choices, blank=True,
        help_text="The kind of device, as the page judged it from its pointer, touch support and window size; "
        "blank when not reported.",
    )
    focus_lost = models.BooleanField(default=False, help_text="The window lost focus during the trial.")
    visibility_lost = models.BooleanField(
        default=False, help_text="The page was hidden (another tab, minimised) during the trial.",
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["participant", "index"], name="trial_unique_index"),
            models.UniqueConstraint(fields=["participant", "item"], name="trial_unique_item"),
            models.UniqueConstraint(
                fields=["participant", "idempotency_key"],
                condition=~models.Q(idempotency_key=""),
                name="trial_unique_idempotency_key",
            ),
        ]

    def __str__(self) -> str:
        return f"trial {self.index} of {self.participant}"
