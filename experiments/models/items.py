"""Items and the interpretations they are worded with: once a study has any response its items are
immutable, whatever code path tries to change them (a save, a delete, a bulk update or delete). Every
such path also drops the study's item summary (item_summary.py), which is then rebuilt when next read,
and raises the study's items version (items_version.py), as every creation does."""
from __future__ import annotations

from django.db import models

from logic.human_defaults import CATCH_ITEMS

from .choices import ANSWERS, Condition, ConsequenceKey, ItemKind, LinkKind, LogicSystem, Modality
from .item_summary import StudyItemSummary, items_created
from .items_version import items_version_raise
from .studies import ItemsLocked, Study, responses_exist


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
        _summaries_drop(self)  # bulk updates send no signal
        studies = _pool_studies(self)
        updated = super().update(**kwargs)
        items_version_raise(studies)
        return updated

    def delete(self):
        self._refuse_if_locked("delete")
        _summaries_drop(self)
        studies = _pool_studies(self)  # read before: the items are gone after
        deleted = super().delete()
        items_version_raise(studies)
        return deleted

    def bulk_create(self, objs, *args, **kwargs):
        objs = list(objs)
        for item in objs:  # every writer's items get their link's kind by one rule (LinkKind.of)
            item.fill_link_kind()
        created = super().bulk_create(objs, *args, **kwargs)
        studies = {item.study_id for item in objs if item.design != CATCH_ITEMS}
        items_version_raise(studies)
        items_created.send(sender=Item, study_ids=studies)
        return created


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
            # a study's items in the table's default order (study, id), read without sorting them
            models.Index(fields=["study", "id"], name="item_study_newest"),
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
        if self.design != CATCH_ITEMS:
            _summary_drop(self.study_id)
            items_version_raise([self.study_id])

    def delete(self, *args, **kwargs):
        if self.study.has_responses():
            raise ItemsLocked(
                f"Item {self.code} cannot be deleted: study '{self.study.slug}' already has "
                "responses (participant answers or model scores)."
            )
        if self.design != CATCH_ITEMS:
            _summary_drop(self.study_id)
        deleted = super().delete(*args, **kwargs)
        if self.design != CATCH_ITEMS:
            items_version_raise([self.study_id])
        return deleted


def _summary_drop(study_id: int) -> None:
    """The study's item summary is rebuilt at its next read (a new item raises the items version it was
    built at; an edit or a delete, one or a queryset's, drops it here and in ItemQuerySet). The flow's
    own catch items are not in it (their few rows are read apart)."""
    StudyItemSummary.objects.filter(study_id=study_id).delete()


def _pool_studies(items) -> list[int]:
    """The studies of the items, catch items aside (the studies whose items version a bulk write raises)."""
    return list(items.exclude(design=CATCH_ITEMS).order_by().values_list("study", flat=True).distinct())


def _summaries_drop(items) -> None:
    StudyItemSummary.objects.filter(study__in=items.exclude(design=CATCH_ITEMS).values("study")).delete()
