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
from .teams import Team, default_team_id  # noqa: F401  (a study's team: teams.py)


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


class LinkKind(models.TextChoices):
    """What an item's link to other items means (issue 35): each report section reads only its own kind.
    `original` holds the item linked to for a nonsense mirror, a perturbation and an option order; the
    members of a pair share `pair_id` instead."""

    NONE = "", "none"
    NONSENSE_MIRROR = "nonsense_mirror", "nonsense mirror (003): the real item's logic in nonsense words"
    PERTURBATION = "perturbation", "perturbation (002): a copy of its original with other tokens"
    OPTION_ORDER = "option_order", "option order (001): its original question's options in another order"
    PAIR_MEMBER = "pair_member", "pair member (000, 004): one member of its pair (pair id and role)"

    @classmethod
    def of(cls, *, original: bool, condition: str, kind: str, pair_id: str) -> str:
        """The kind of an item's link, from what it is: the rule the data migration and every writer apply."""
        if original:
            if kind == "multiple_choice":
                return cls.OPTION_ORDER
            return cls.NONSENSE_MIRROR if condition == "nonsense" else cls.PERTURBATION
        return cls.PAIR_MEMBER if pair_id else cls.NONE


class LogicSystem(models.TextChoices):
    K = "K", "K"
    T = "T", "T"
    S4 = "S4", "S4"
    S5 = "S5", "S5"


class ConsequenceKey(models.TextChoices):
    """Which consequence relation decides a generated item's gold answer (logic/checker.py)."""

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
    slug = models.SlugField(
        max_length=80, unique=True,
        verbose_name="short name",
        help_text="Letters, digits and hyphens; it is the study's link (/s/<short name>/) and its files' names.",
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
        help_text="The modal logic whose checker decides every generated item's gold answer.",
    )
    consequence = models.CharField(
        max_length=6, choices=ConsequenceKey.choices, default=ConsequenceKey.PAPER,
        help_text="The consequence relation that keys generated items; each item also stores the other's answer.",
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
    from django.apps import apps

    if Trial.objects.filter(participant__study__in=studies).exists():
        return True
    if apps.is_installed("inference"):
        scores = apps.get_model("inference", "ModelScore")
        return scores.objects.filter(run__study__in=studies).exists()
    return False


class Interpretation(models.Model):
    """What p and q mean in one row of items: a subject and a verb phrase for each variable."""

    study = models.ForeignKey(
        Study, on_delete=models.CASCADE, related_name="interpretations",
        help_text="The study the interpretation belongs to.",
    )
    index = models.PositiveIntegerField(help_text="Position in the generated list (0-based).")
    condition = models.CharField(
        max_length=12, choices=Condition.choices, default=Condition.REAL,
        help_text="Real words, or the nonsense mirror of a real interpretation.",
    )
    p_subject = models.CharField(
        max_length=60,
        verbose_name="p: subject",
        help_text="Who or what the first variable (p) is about.",
    )
    p_predicate = models.CharField(
        max_length=120,
        verbose_name="p: verb phrase",
        help_text="What the first variable (p) says of its subject.",
    )
    q_subject = models.CharField(
        max_length=60, blank=True,
        verbose_name="q: subject",
        help_text="Who or what the second variable (q) is about; empty when the form has no q.",
    )
    q_predicate = models.CharField(
        max_length=120, blank=True,
        verbose_name="q: verb phrase",
        help_text="What the second variable (q) says of its subject.",
    )
    original = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.CASCADE, related_name="mirrors",
        verbose_name="mirrors",
        help_text="For a nonsense interpretation, the real one it mirrors.",
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

    def bulk_create(self, objs, *args, **kwargs):
        objs = list(objs)
        for item in objs:  # every writer's items get their link's kind by one rule (LinkKind.of)
            item.fill_link_kind()
        return super().bulk_create(objs, *args, **kwargs)


class Item(models.Model):
    study = models.ForeignKey(
        Study, on_delete=models.CASCADE, related_name="items", help_text="The study the item belongs to.",
    )
    code = models.CharField(
        max_length=160, help_text="Stable identifier within the study (design, condition, row, form)."
    )
    design = models.CharField(max_length=40, help_text="The design that made the item (or csv-import).")
    form_id = models.CharField(
        max_length=60, blank=True,
        verbose_name="form",
        help_text="The logical form's identifier within its design (e.g. the row of 003's Table A1).",
    )
    modality = models.CharField(
        max_length=4, choices=Modality.choices, blank=True,
        help_text="The modal operator of the premises: none, necessarily (□) or possibly (◇).",
    )
    argument_form = models.CharField(
        max_length=30, blank=True,
        help_text="The argument form (e.g. disjunctive syllogism, modus ponens) or the bank's own label.",
    )
    logical_form = models.CharField(
        max_length=300, blank=True, help_text="The sequent the checker reads, e.g. □(p ∨ q), ¬□p ⊢ □q.",
    )
    template_valid = models.BooleanField(
        null=True, blank=True, help_text="The validity the template or CSV states (None when it states none)."
    )
    kind = models.CharField(
        max_length=16, choices=ItemKind.choices, default=ItemKind.YES_NO,
        verbose_name="question kind",
        help_text="A yes/no question or a multiple-choice question (options A–D).",
    )
    gold_answer = models.CharField(
        max_length=3, choices=ANSWERS, help_text="yes/no for yes/no items; the option letter A–D for multiple choice."
    )
    logic_system = models.CharField(
        max_length=2, choices=LogicSystem.choices, blank=True,
        help_text="The modal logic the gold answer was decided in.",
    )
    consequence = models.CharField(
        max_length=6, blank=True, choices=ConsequenceKey.choices[1:],
        help_text="The consequence relation the gold answer was decided under (generated items).",
    )
    gold_other = models.CharField(
        max_length=3, blank=True, help_text="The checker's answer under the other consequence relation.",
        verbose_name="gold answer under the other relation",
    )
    checker_disagrees = models.BooleanField(
        default=False,
        help_text="The model checker's answer differs from the template's stated validity; "
        "the gold answer is the checker's.",
    )
    premises = models.JSONField(default=list, help_text="The statements shown above the question, in order.")
    question = models.TextField(help_text="The question participants answer.")
    prompt = models.TextField(
        verbose_name="model prompt",
        help_text="The exact text a language model reads for this item.",
    )
    interpretation = models.ForeignKey(
        Interpretation, null=True, blank=True, on_delete=models.PROTECT, related_name="items",
        help_text="What p and q mean in this item.",
    )
    condition = models.CharField(max_length=12, default=Condition.REAL, help_text="Real words or nonsense words.")
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
    pair_id = models.CharField(
        max_length=120, blank=True, db_index=True,
        verbose_name="pair",
        help_text="Paired designs: the pair this item is a member of.",
    )
    pair_role = models.CharField(
        max_length=30, blank=True,
        help_text="Paired designs: which member of the pair it is (e.g. original or flipped).",
    )
    link_kind = models.CharField(
        max_length=16, blank=True, default=LinkKind.NONE, choices=LinkKind.choices,
        verbose_name="link",
        help_text="What the item's link means: a nonsense mirror, a perturbation or an option order of its "
        "original, or a member of its pair; set from the item when it is saved.",
    )
    variant = models.CharField(
        max_length=40, blank=True,
        help_text="The prompt variant (phrasing) this item is written in; models are scored on every "
        "variant, a participant sees one.",
    )
    answer_words = models.JSONField(
        default=dict, blank=True,
        help_text="The words that mean yes and no in this phrasing, e.g. True and False; empty for Yes and No.",
    )
    options = models.JSONField(
        default=list, blank=True, help_text="Multiple choice: the four option texts, in this item's order (A–D)."
    )
    attributes = models.JSONField(
        default=dict, blank=True,
        verbose_name="other attributes",
        help_text="The bank's or design's other columns for this item.",
    )
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

    def fill_link_kind(self) -> None:
        self.link_kind = LinkKind.of(original=self.original_id is not None, condition=self.condition,
                                     kind=self.kind, pair_id=self.pair_id)

    def save(self, *args, **kwargs):
        self.fill_link_kind()
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
