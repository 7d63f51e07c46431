"""Studies, interpretations, items, participants and trials.

Writes go through experiments/services.py; these classes hold fields, constraints and the two
guards that must hold whatever code path is used: a study's status only moves along its state
machine, and items are immutable once the study has any response.
"""
from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import models

from studyserver.choices import StateChoices

# The human arm's settings of a study, a model beside the rules it holds (it imports nothing from here).
# The simulated pilot's model (participation/pilot.py) imports this module, so it is loaded by
# ExperimentsConfig.import_models (apps.py) rather than from here: no import runs in a circle.
from .participation.arm import HumanArm  # noqa: F401


class Modality(models.TextChoices):
    NONE = "none", "∅"
    BOX = "box", "□"
    DIA = "dia", "◇"


class Answer(models.TextChoices):
    YES = "yes", "Yes"
    NO = "no", "No"


class OptionLetter(models.TextChoices):
    """The answer of a multiple-choice item: the position of the chosen option (seed 001)."""

    A = "A", "A"
    B = "B", "B"
    C = "C", "C"
    D = "D", "D"


ANSWERS = [*Answer.choices, *OptionLetter.choices]


class ItemKind(models.TextChoices):
    YES_NO = "yes_no", "yes / no"
    MULTIPLE_CHOICE = "multiple_choice", "multiple choice (four options)"


class Condition(models.TextChoices):
    REAL = "real", "real"
    NONSENSE = "nonsense", "nonsense"


class LogicSystem(models.TextChoices):
    K = "K", "K"
    T = "T", "T"
    S4 = "S4", "S4"
    S5 = "S5", "S5"


class ConsequenceKey(models.TextChoices):
    """Which consequence relation decides a generated item's gold answer (experiments/logic/checker.py)."""

    PAPER = "paper", "the paper's key for each form (global for Appendix C.1's necessitation, else local)"
    LOCAL = "local", "local: premises true at a world ⇒ conclusion true there"
    GLOBAL = "global", "global: premises true at every world ⇒ conclusion true at every world (with necessitation)"


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
    slug = models.SlugField(max_length=80, unique=True)
    title = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    design = models.CharField(
        max_length=40, help_text="The design its items come from (modal-syllogisms, csv-import, …)."
    )
    status = models.CharField(
        max_length=12, choices=StudyStatus.choices, default=StudyStatus.DRAFT, editable=False
    )
    logic_system = models.CharField(
        max_length=2,
        choices=LogicSystem.choices,
        default=LogicSystem.S5,
        help_text="The modal logic whose checker decides every generated item's gold answer.",
    )
    consequence = models.CharField(
        max_length=6, choices=ConsequenceKey.choices, default=ConsequenceKey.PAPER,
        help_text="The consequence relation that keys generated items; each item also stores the other's answer.",
    )
    settings = models.JSONField(default=dict, blank=True)
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

    def __str__(self) -> str:
        return f"{self.title} ({self.slug})"

    def has_responses(self) -> bool:
        """Any participant answer or model score: from then on the study's items are immutable."""
        return responses_exist(Study.objects.filter(pk=self.pk).values("pk"))


def responses_exist(studies) -> bool:
    """Whether any of the studies (a queryset of study ids) has a trial or a model score."""
    from django.apps import apps

    if Trial.objects.filter(participant__study__in=studies).exists():
        return True
    if apps.is_installed("inference"):
        scores = apps.get_model("inference", "ModelScore")
        return scores.objects.filter(run__study__in=studies).exists()
    return False


class Interpretation(models.Model):
    """What p and q mean in one row of items: a subject and a verb phrase for each variable."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="interpretations")
    index = models.PositiveIntegerField(help_text="Position in the generated list (0-based).")
    condition = models.CharField(max_length=12, choices=Condition.choices, default=Condition.REAL)
    p_subject = models.CharField(max_length=60)
    p_predicate = models.CharField(max_length=120)
    q_subject = models.CharField(max_length=60, blank=True)
    q_predicate = models.CharField(max_length=120, blank=True)
    original = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.CASCADE, related_name="mirrors"
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["study", "condition", "index"], name="interpretation_unique_index"
            )
        ]
        ordering = ["study", "condition", "index"]

    def __str__(self) -> str:
        q = f"; q = {self.q_subject} is {self.q_predicate}" if self.q_subject else ""
        return f"p = {self.p_subject} is {self.p_predicate}{q}"


class ItemQuerySet(models.QuerySet):
    """Bulk updates and deletes are refused, like single saves, once a study has responses."""

    def _refuse_if_locked(self, action: str) -> None:
        if responses_exist(self.values("study")):
            raise ItemsLocked(
                f"Cannot {action} items: their study already has responses (participant answers "
                "or model scores), and items are immutable once a study has any response."
            )

    def update(self, **kwargs):
        self._refuse_if_locked("update")
        return super().update(**kwargs)

    def delete(self):
        self._refuse_if_locked("delete")
        return super().delete()


class Item(models.Model):
    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="items")
    code = models.CharField(
        max_length=160, help_text="Stable identifier within the study (design, condition, row, form)."
    )
    design = models.CharField(max_length=40)
    form_id = models.CharField(max_length=60, blank=True)
    modality = models.CharField(max_length=4, choices=Modality.choices, blank=True)
    argument_form = models.CharField(max_length=30, blank=True)
    logical_form = models.CharField(max_length=300, blank=True)
    template_valid = models.BooleanField(
        null=True, blank=True, help_text="The validity the template or CSV states (None when it states none)."
    )
    kind = models.CharField(max_length=16, choices=ItemKind.choices, default=ItemKind.YES_NO)
    gold_answer = models.CharField(
        max_length=3, choices=ANSWERS, help_text="yes/no for yes/no items; the option letter A–D for multiple choice."
    )
    logic_system = models.CharField(max_length=2, choices=LogicSystem.choices, blank=True)
    consequence = models.CharField(
        max_length=6, blank=True, choices=ConsequenceKey.choices[1:],
        help_text="The consequence relation the gold answer was decided under (generated items).",
    )
    gold_other = models.CharField(
        max_length=3, blank=True, help_text="The checker's answer under the other consequence relation.",
    )
    checker_disagrees = models.BooleanField(
        default=False,
        help_text="The model checker's answer differs from the template's stated validity; "
        "the gold answer is the checker's.",
    )
    premises = models.JSONField(default=list)
    question = models.TextField()
    prompt = models.TextField()
    interpretation = models.ForeignKey(
        Interpretation, null=True, blank=True, on_delete=models.PROTECT, related_name="items"
    )
    condition = models.CharField(max_length=12, default=Condition.REAL)
    original = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="perturbations",
        help_text="For a perturbed item (e.g. the nonsense mirror), the item it mirrors.",
    )
    # Linked items (issues 6 and 7): items sharing a pair id are judged together, each in its role —
    # rulebreaker / non-rulebreaker (000), original / flipped rule (004), original / perturbed (002),
    # the circular mutants of one multiple-choice question (001).
    pair_id = models.CharField(max_length=120, blank=True, db_index=True)
    pair_role = models.CharField(max_length=30, blank=True)
    variant = models.CharField(
        max_length=40, blank=True,
        help_text="The prompt variant (phrasing) this item is written in; models are scored on every "
        "variant, a participant sees one.",
    )
    answer_words = models.JSONField(
        default=dict, blank=True,
        help_text='The words that mean yes and no in this phrasing, e.g. {"yes": "True", "no": "False"}; '
        "empty for Yes/No.",
    )
    options = models.JSONField(
        default=list, blank=True, help_text="Multiple choice: the four option texts, in this item's order (A–D)."
    )
    attributes = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    objects = ItemQuerySet.as_manager()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["study", "code"], name="item_unique_code"),
            models.CheckConstraint(
                condition=(models.Q(kind="yes_no") & models.Q(gold_answer__in=["yes", "no"]))
                | (models.Q(kind="multiple_choice") & models.Q(gold_answer__in=["A", "B", "C", "D"])),
                name="item_gold_matches_kind",
            ),
            models.UniqueConstraint(
                fields=["study", "pair_id", "pair_role", "variant"],
                condition=~models.Q(pair_id=""),
                name="item_unique_pair_role",
            ),
        ]
        indexes = [
            models.Index(fields=["study", "design", "form_id"]),
            models.Index(fields=["study", "modality", "argument_form"]),
            models.Index(fields=["study", "kind"]),
        ]
        ordering = ["study", "id"]

    def __str__(self) -> str:
        return self.code

    def save(self, *args, **kwargs):
        if self.pk is not None and Study.objects.get(pk=self.study_id).has_responses():
            raise ItemsLocked(
                f"Item {self.code} cannot be edited: study '{self.study.slug}' already has "
                "responses (participant answers or model scores), and items are immutable once a "
                "study has any response."
            )
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        if self.study.has_responses():
            raise ItemsLocked(
                f"Item {self.code} cannot be deleted: study '{self.study.slug}' already has "
                "responses (participant answers or model scores)."
            )
        return super().delete(*args, **kwargs)


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


class Participant(models.Model):
    """One pseudonymous Prolific session. Nothing beyond Prolific's IDs is stored."""

    study = models.ForeignKey(Study, on_delete=models.PROTECT, related_name="participants")
    prolific_pid = models.CharField(max_length=64)
    prolific_study_id = models.CharField(max_length=64, blank=True)
    prolific_session_id = models.CharField(max_length=64, blank=True)
    key_mapping = models.CharField(max_length=8, choices=KeyMapping.choices)
    status = models.CharField(
        max_length=20, choices=ParticipantStatus.choices, default=ParticipantStatus.STARTED
    )
    is_preview = models.BooleanField(default=False)
    is_simulated = models.BooleanField(
        default=False, editable=False,
        help_text="A simulated pilot's bot (participation/pilot.py): never counted as data, left out of exports and "
        "of every report but a pilot report.",
    )
    started_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # The participant flow (experiments/participation/): an unguessable token names the session in
    # its URLs; the list is fixed at the start (Latin-square list number, shuffle seed, item ids).
    token = models.CharField(max_length=64, unique=True, null=True, blank=True, editable=False)
    list_number = models.PositiveIntegerField(null=True, blank=True)
    list_seed = models.BigIntegerField(null=True, blank=True)
    plan = models.JSONField(default=list, blank=True, help_text="Item ids in presentation order.")
    consented_at = models.DateTimeField(null=True, blank=True)
    instructions_done_at = models.DateTimeField(null=True, blank=True)
    practice_done_at = models.DateTimeField(null=True, blank=True)
    last_seen_at = models.DateTimeField(null=True, blank=True, help_text="Heartbeat from the trial page.")
    attention_failures = models.PositiveSmallIntegerField(default=0)

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

    # No index of its own: the unique (participant, index) constraint's index serves every lookup by
    # participant, and each answer saved would maintain a second one.
    participant = models.ForeignKey(Participant, on_delete=models.PROTECT, related_name="trials", db_index=False)
    item = models.ForeignKey(Item, on_delete=models.PROTECT, related_name="trials")
    index = models.PositiveIntegerField()
    key = models.CharField(max_length=16, blank=True, help_text="The keydown event's e.key.")
    answer = models.CharField(
        max_length=3, choices=ANSWERS, blank=True,
        help_text="yes/no, or the option letter for multiple choice; blank when the time limit ran out."
    )
    correct = models.BooleanField()
    rt_ms = models.FloatField(help_text="Response time from stimulus onset, in milliseconds.")
    received_at = models.DateTimeField(auto_now_add=True)
    # What the browser sent besides the answer (experiments/participation/).
    idempotency_key = models.CharField(max_length=64, blank=True)
    key_code = models.CharField(max_length=16, blank=True, help_text="The keydown event's e.code.")
    timed_out = models.BooleanField(default=False)
    is_attention_check = models.BooleanField(default=False)
    client_onset_ms = models.FloatField(null=True, blank=True, help_text="Epoch ms, browser clock.")
    client_response_ms = models.FloatField(null=True, blank=True, help_text="Epoch ms, browser clock.")
    user_agent = models.CharField(max_length=400, blank=True)
    viewport_width = models.PositiveIntegerField(null=True, blank=True)
    viewport_height = models.PositiveIntegerField(null=True, blank=True)
    focus_lost = models.BooleanField(default=False)
    visibility_lost = models.BooleanField(default=False)

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
