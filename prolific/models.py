"""What Duet keeps of a study's life on Prolific (issue 38): the link to the Prolific study, every API
call made for it, the submissions as last synced, what review did, the bonus ledger and the imported
demographics. Nothing here holds the API token.

Rows that name a participant (synced submissions, bonuses, demographics) hang on the participant with
on_delete=CASCADE where Duet has a record, so `participant_erase` (experiments/participation/erasure.py)
removes them with the participant.
"""
from __future__ import annotations

from django.db import models

from experiments.models import Participant, Study


class PublishState(models.TextChoices):
    CREATING = "creating", "being created (outcome not yet known)"
    DRAFT = "draft", "created on Prolific, not published"
    PUBLISHED = "published", "published"


class BonusMedianOf(models.TextChoices):
    """Whose completion times the wage bonus's duration is the median of (docs/participants.md, bonuses)."""
    COMPLETED = "completed", "all participants who completed (003's rule)"
    APPROVED = "approved", "the approved submissions only"


def desktop_only() -> list[str]:
    return ["desktop"]


class ProlificStudy(models.Model):
    study = models.OneToOneField(Study, on_delete=models.CASCADE, related_name="prolific")
    prolific_id = models.CharField(max_length=64, blank=True, help_text="The study's id on Prolific.")
    internal_name = models.CharField(
        max_length=120, help_text="The internal name Duet gave the Prolific study: how a creation whose answer was "
        "lost is found again (never a second study).")
    state = models.CharField(max_length=12, choices=PublishState.choices, default=PublishState.CREATING)
    reward_cents = models.PositiveIntegerField()
    places = models.PositiveIntegerField()
    minutes = models.PositiveIntegerField()
    created_at = models.DateTimeField(auto_now_add=True)
    create_sent_at = models.DateTimeField(
        null=True, blank=True, help_text="When a run claimed the create call (one run at a time sends it).")
    published_at = models.DateTimeField(null=True, blank=True)
    synced_at = models.DateTimeField(null=True, blank=True,
                                     help_text="When a sync last read the list of submissions to its end.")
    sync_next = models.CharField(
        max_length=2000, blank=True, help_text="The page of Prolific's list of submissions the next sync starts at, "
        "where one stopped at its deadline ('' : the first page).")
    filters = models.JSONField(
        default=list, blank=True, verbose_name="eligibility filters",
        help_text="The filters sent with the study, checked against Prolific's list when it was created: each "
        "{\"sent\": the payload's entry, \"words\": in words, \"typed\": as typed} (prolific/filters.py).")
    devices = models.JSONField(default=desktop_only, blank=True, verbose_name="devices",
                               help_text="Prolific's device_compatibility: desktop, tablet, mobile.")
    bonus_median_of = models.CharField(
        max_length=12, choices=BonusMedianOf.choices, default=BonusMedianOf.COMPLETED,
        verbose_name="wage bonus: the median time of",
        help_text="003 pays by \"the median completion time among all participants\": all who completed, unless "
        "this says approved only. Fixed with the rest of the rule at the first bonus payment.")

    class Meta:
        verbose_name = "study on Prolific"
        verbose_name_plural = "studies on Prolific"

    def __str__(self) -> str:
        return f"{self.study.slug} on Prolific ({self.prolific_id or 'no id yet'})"

    def filters_sent(self) -> list[dict]:
        """The `filters` of the create-study payload, in Prolific's documented shape."""
        return [f["sent"] for f in self.filters or []]

    def filter_words(self) -> list[str]:
        return [f["words"] for f in self.filters or []]

    def filters_typed(self) -> list[str]:
        return [f["typed"] for f in self.filters or []]


class ApiCall(models.Model):
    """One request to Prolific's API made for a study: method, path, status (null: no answer), time."""
    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="prolific_calls")
    at = models.DateTimeField(auto_now_add=True)
    method = models.CharField(max_length=8)
    path = models.CharField(max_length=300)
    status = models.PositiveSmallIntegerField(null=True, blank=True)
    seconds = models.FloatField()
    error = models.CharField(max_length=300, blank=True, help_text="The failure's class in words (never Prolific's).")

    class Meta:
        ordering = ["-at", "-pk"]


class Submission(models.Model):
    """A Prolific submission as last synced, joined to Duet's participant by Prolific id and session id."""
    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="prolific_submissions")
    submission_id = models.CharField(max_length=64, help_text="Prolific's submission id (= SESSION_ID).")
    participant = models.ForeignKey(Participant, null=True, blank=True, on_delete=models.CASCADE,
                                    related_name="prolific_submissions")
    prolific_pid = models.CharField(max_length=64)
    status = models.CharField(max_length=24, help_text="Prolific's status, as Prolific spells it.")
    time_taken = models.PositiveIntegerField(null=True, blank=True, help_text="Seconds, as Prolific counts them.")
    study_code = models.CharField(max_length=64, blank=True, help_text="The completion code the participant gave.")
    synced_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["study", "submission_id"], name="prolific_submission_once")]


class ReviewDecision(models.TextChoices):
    APPROVE = "approve", "approve"
    REJECT = "reject", "reject"
    RETURN = "return", "request a return"
    LEAVE = "leave", "leave for the researcher"


class ReviewAction(models.Model):
    """A transition Duet sent for a submission: recorded before the call, marked done after. One per submission."""
    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="prolific_reviews")
    submission_id = models.CharField(max_length=64)
    participant = models.ForeignKey(Participant, null=True, blank=True, on_delete=models.CASCADE,
                                    related_name="prolific_reviews")
    decision = models.CharField(max_length=8, choices=ReviewDecision.choices)
    reason = models.CharField(max_length=300)
    recorded_at = models.DateTimeField(auto_now_add=True)
    done_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["study", "submission_id"], name="prolific_review_once")]


class BonusState(models.TextChoices):
    PLANNED = "planned", "recorded, not yet set up on Prolific"
    SET_UP = "set_up", "set up on Prolific, not paid"
    PAYING = "paying", "pay requested, answer not yet recorded"
    PAID = "paid", "paid"
    UNKNOWN = "unknown", "pay requested, outcome unknown: check Prolific's web app"


class Bonus(models.Model):
    """The ledger: one bonus per participant and study, recorded before the set-up call, paid at most once."""
    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="prolific_bonuses")
    participant = models.ForeignKey(Participant, null=True, blank=True, on_delete=models.CASCADE,
                                    related_name="prolific_bonuses")
    prolific_pid = models.CharField(max_length=64)
    submission_id = models.CharField(max_length=64)
    amount_cents = models.PositiveIntegerField()
    rule = models.CharField(max_length=200, help_text="How the amount was worked out, in words.")
    state = models.CharField(max_length=8, choices=BonusState.choices, default=BonusState.PLANNED)
    bulk_id = models.CharField(max_length=64, blank=True, help_text="Prolific's bulk bonus payment id.")
    bulk_lines = models.PositiveIntegerField(default=0, help_text="How many participants that bulk payment holds.")
    recorded_at = models.DateTimeField(auto_now_add=True)
    paid_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["study", "prolific_pid"], name="prolific_bonus_once")]
        # Paying is its own permission (issue 45 item 3): changing a study does not let anyone pay bonuses.
        permissions = [("pay_bonus", "Can pay bonuses to participants on Prolific")]


class BonusKind(models.TextChoices):
    WAGE = "wage", "003's hourly wage × the median completion time, minus the reward"
    FIXED = "fixed", "a fixed amount"


class BonusRule(models.Model):
    """The study's bonus rule as the first payment applied it (issue 44 item 8): written once, before the first
    ledger row, and never changed, so every participant of the study is paid by the same rule, duration and amount
    whatever completes or is approved later (prolific/bonuses.py)."""
    study = models.OneToOneField(Study, on_delete=models.CASCADE, related_name="prolific_bonus_rule")
    kind = models.CharField(max_length=8, choices=BonusKind.choices)
    median_of = models.CharField(max_length=12, choices=BonusMedianOf.choices, blank=True,
                                 help_text="Whose times the median is of ('' for a fixed amount).")
    median_seconds = models.DecimalField(max_digits=12, decimal_places=1, null=True, blank=True)
    counted = models.PositiveIntegerField(default=0, help_text="How many completion times the median is of.")
    hourly_wage = models.DecimalField(max_digits=10, decimal_places=2, null=True, blank=True)
    wage_from_arm = models.BooleanField(default=False, help_text="The wage was the human arm's minimum × multiplier.")
    reward_cents = models.PositiveIntegerField(default=0)
    each_cents = models.PositiveIntegerField(help_text="What each participant is paid.")
    words = models.CharField(max_length=300, help_text="The rule with its numbers, in words.")
    fixed_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"bonus rule of {self.study.slug}: {self.words}"

    @property
    def described(self) -> str:
        """The rule in words, saying when it was fixed once it has been (a rule not yet stored is what the first
        payment would fix)."""
        if self.pk is None:
            return f"{self.words} (fixed for the whole study at its first payment)"
        return (f"fixed at the first payment on {self.fixed_at:%Y-%m-%d %H:%M} UTC, reused for every payment: "
                f"{self.words}")


class Demographics(models.Model):
    """The columns of Prolific's demographic export that the consent text lists, for one participant."""
    participant = models.OneToOneField(Participant, on_delete=models.CASCADE, related_name="prolific_demographics")
    values = models.JSONField(default=dict)
    imported_at = models.DateTimeField(auto_now=True)
