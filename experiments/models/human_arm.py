"""Per-study settings of the human arm (one row per study, created with defaults when first needed), with
the defaults and checks its fields name and the default consent text."""
from __future__ import annotations

import re
from decimal import ROUND_UP, Decimal

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MinValueValidator
from django.db import models

from logic import human_defaults
from logic.sequent_forms import normal_form

from .attention import AttentionRule
from .choices import AnswerInput

DEFAULT_INSTITUTION = "the Anonymous Institution"

PROLIFIC_COMPLETION_URL = "https://app.prolific.com/submissions/complete?cc={code}"

# The default text, true for what this platform stores; {institution} is replaced. 003's A.2 wording
# is kept as PAPER_CONSENT for reference (docs/participants.md says why it is not the default).
DEFAULT_CONSENT = (
    "This study is part of a scientific research project at {institution}. Taking part is voluntary: you "
    "may stop at any time by closing this page and returning the study on Prolific. We do not learn your "
    "name or contact details, and we never store your IP address. What we store about this session is "
    "listed below; the researchers can also see, on Prolific, the demographic information you provided to "
    "Prolific. The results of the research may be presented at scientific meetings or published in "
    "scientific journals, without your Prolific ID. Clicking on the button below indicates that you are at "
    "least 18 years of age and agree to complete this study voluntarily."
)

PAPER_CONSENT = (
    "This study is part of a scientific research project at {institution}. Your decision to complete "
    "this study is voluntary. There is no way for us to identify you. The only information we will "
    "have, in addition to your responses, is the demographic information you provided to Prolific and "
    "the time at which you completed the survey. The results of the research may be presented at "
    "scientific meetings or published in scientific journals. Clicking on the button below indicates "
    "that you are at least 18 years of age and agree to complete this study voluntarily. Press the "
    "button below to start the experiment."
)


# The researcher's other texts (issue 47 item 1): blank = these defaults, the pages' wording before the texts
# were editable. Their {placeholders} are filled by the flow (experiments/participation/texts.py), each text
# taking those named in TEXT_PLACEHOLDERS; a text naming another is refused when saved.
DEFAULT_INSTRUCTIONS = (
    "In this study, you will be presented with {statements} followed by a question. Your task is to answer either "
    "Yes or No to the question, based on the information provided in the {statement_word}. Please respond quickly "
    "and accurately {answer_how}."
)
DEFAULT_END = "You have completed this study. Thank you!"
DEFAULT_DEBRIEF = ""  # none: the end page says only DEFAULT_END, the code and the way back to Prolific

INSTRUCTION_PLACEHOLDERS = {
    "statements": "how many statements precede the question (\"two statements\", \"a statement\")",
    "statement_word": "\"statement\" or \"statements\", as many as there are",
    "answer_how": "how to answer in this study's answer input and the participant's key mapping (e.g. "
                  "'by pressing \"F\" for Yes, and \"J\" for No')",
    "yes_key": "the key that means Yes for this participant (F or J)",
    "no_key": "the key that means No for this participant (F or J)",
    "questions": "the number of questions in the participant's list",
    "minutes": "the expected duration in minutes",
    "attention": "the attention rule's sentence (empty without check questions)",
}
TEXT_PLACEHOLDERS = {
    "consent_text": {"institution": "the institution named below"},
    "instructions_text": INSTRUCTION_PLACEHOLDERS,
    "debrief_text": {},
    "end_text": {},
}
_PLACEHOLDER = re.compile(r"\{([^{}]*)\}")


def placeholders_problem(field: str, value: str) -> str | None:
    """Why `value` cannot be the arm's `field` (a {name} the flow does not fill), or None."""
    known = TEXT_PLACEHOLDERS[field]
    unknown = [name for name in dict.fromkeys(_PLACEHOLDER.findall(value or "")) if name not in known]
    if not unknown:
        return None
    listed = ", ".join("{" + k + "}" for k in known) or "none"
    return (f"Unknown placeholder{'s' if len(unknown) > 1 else ''} {', '.join('{' + u + '}' for u in unknown)}; "
            f"this text takes: {listed}.")


def _placeholders(field: str, value: str) -> None:
    problem = placeholders_problem(field, value)
    if problem:
        raise ValidationError(problem)


def validate_consent_placeholders(value: str) -> None:
    _placeholders("consent_text", value)


def validate_instructions_placeholders(value: str) -> None:
    _placeholders("instructions_text", value)


def validate_debrief_placeholders(value: str) -> None:
    _placeholders("debrief_text", value)


def validate_end_placeholders(value: str) -> None:
    _placeholders("end_text", value)


class PairedPresentation(models.TextChoices):
    ACROSS = "across", "across participants (one member of each pair per person)"
    WITHIN = "within", "within participants (both members, spaced, order counterbalanced)"


def default_practice() -> list[dict]:
    """Two warm-up questions with feedback, not recorded as trials: a new study's human arm takes its
    design's own set (its registry entry); this is the set of a study without a design yet."""
    return human_defaults.two_statement_practice()


def default_attention_checks() -> list[dict]:
    """Catch items with an obvious answer (the answer is stated in a premise): a new study's human arm
    takes its design's own (its registry entry); these are a study's without a design yet."""
    return human_defaults.two_statement_checks()


def _check_questions(value, label: str) -> None:
    if not isinstance(value, list):
        raise ValidationError(f"{label} must be a list of {{premises, question, answer}} objects.")
    for n, entry in enumerate(value, 1):
        ok = (
            isinstance(entry, dict)
            and isinstance(entry.get("premises"), list)
            and all(isinstance(p, str) and p.strip() for p in entry["premises"])
            and isinstance(entry.get("question"), str) and entry["question"].strip()
        )
        if ok and "options" in entry:  # a four-option question (seed 001): the answer is its letter
            options = entry["options"]
            if not (isinstance(options, list) and len(options) == 4
                    and all(isinstance(o, str) and o.strip() for o in options) and entry.get("answer") in MC_LETTERS):
                raise ValidationError(
                    f"{label} #{n} needs 'options' (four option texts) and 'answer' (the letter A, B, C or D)."
                )
            continue
        if not ok or entry.get("answer") not in ("yes", "no"):
            raise ValidationError(
                f"{label} #{n} needs 'premises' (a list of sentences), 'question' (text) and "
                "'answer' ('yes' or 'no'), or 'options' (four texts) and 'answer' (A–D)."
            )


MC_LETTERS = ("A", "B", "C", "D")
def validate_practice(value) -> None:
    _check_questions(value, "Practice question")
    for n, entry in enumerate(value, 1):
        form = entry.get("logical_form")
        if form is None:
            continue
        if not isinstance(form, str):
            raise ValidationError(f"Practice question #{n}: 'logical_form' must be a sequent such as \"p ∧ q ⊢ q\".")
        try:
            normal_form(form)
        except ValueError as exc:
            raise ValidationError(f"Practice question #{n}: its 'logical_form' cannot be parsed ({exc}).") from exc


def validate_attention_checks(value) -> None:
    _check_questions(value, "Attention check")


def validate_url_template(value: str) -> None:
    if value and "{code}" not in value:
        raise ValidationError("The completion URL must contain {code} where the code goes.")
    if value and not value.startswith(("https://", "http://")):
        raise ValidationError("The completion URL must start with https:// (or http://).")


class HumanArm(models.Model):
    study = models.OneToOneField("experiments.Study", on_delete=models.CASCADE, related_name="human_arm")
    # Lists
    items_per_participant = models.PositiveSmallIntegerField(
        default=24, help_text="How many of the study's items each participant answers (catch items come on top).",
    )
    target_sample_size = models.PositiveIntegerField(
        default=100,
        help_text="How many participants the study aims for (the launch panel and the pay estimate use it).",
    )
    include_nonsense = models.BooleanField(
        default=False, help_text="Also draw nonsense-mirror items (as separate interpretations)."
    )
    paired_presentation = models.CharField(
        max_length=10, choices=PairedPresentation.choices, default=PairedPresentation.ACROSS,
        help_text="Paired designs (rulebreakers, dual-sided rules, perturbations): 'across' shows a participant "
        "one member of each pair (the report compares the members with a participant-clustered model); "
        "'within' shows both members, at least the gap below apart, order counterbalanced (the report pairs "
        "each person's own two answers). Ignored by unpaired designs.",
    )
    paired_min_gap = models.PositiveSmallIntegerField(
        default=4, help_text="Within-participant pairs: the least number of trials between a pair's two members.",
        verbose_name="least gap between a pair's members (trials)",
    )
    # Trials
    practice = models.JSONField(
        default=default_practice, blank=True, validators=[validate_practice],
        help_text="Warm-up questions with feedback, not recorded; empty = no practice. A new study gets its design's "
        "default set (forms no design tests). A question may state its 'logical_form' (a sequent): a study cannot "
        "open while one shares a form with its items.",
    )
    attention_checks = models.JSONField(
        default=default_attention_checks, blank=True, validators=[validate_attention_checks],
        help_text="Catch items; each participant sees all of them, spread through the list.",
    )
    attention_fail_after = models.PositiveSmallIntegerField(
        default=1, validators=[MinValueValidator(1)],
        help_text="A participant has failed the attention checks after this many wrong answers to them. "
        "The study page's count, the participants list and the report's exclusions all use this number.",
        verbose_name="failed after this many wrong catch answers",
    )
    attention_end_session = models.BooleanField(
        default=False,
        help_text="End the session as soon as the participant has failed (status 'failed attention check', "
        "the failed-attention code). Unticked, they go on to the end, get the completion code, and are "
        "still counted as failed and left out of the report.",
        verbose_name="end the session when failed",
    )
    blank_ms = models.PositiveIntegerField(
        default=500, help_text="The blank screen between two questions, in milliseconds.",
        verbose_name="blank between questions (ms)",
    )
    time_limit_ms = models.PositiveIntegerField(
        null=True, blank=True, help_text="A question's time limit in milliseconds; empty = none.",
        verbose_name="time limit per question (ms)",
    )
    # Texts
    institution = models.CharField(
        max_length=200, default=DEFAULT_INSTITUTION, help_text="The institution named in the consent text.",
    )
    consent_text = models.TextField(
        blank=True, validators=[validate_consent_placeholders],
        help_text="Empty = the default wording (docs/participants.md); {institution} is replaced. "
        "The list of stored data, the expected duration and the contact are shown below it whatever it says.",
    )
    instructions_text = models.TextField(
        blank=True, validators=[validate_instructions_placeholders], verbose_name="instructions",
        help_text="What the instructions page says about the task. Empty = the default wording (docs/participants.md). "
        "Placeholders the page fills: {statements}, {statement_word}, {answer_how}, {yes_key}, {no_key}, {questions}, "
        "{minutes}, {attention}. How to answer, the number of questions, the duration and the attention rule are "
        "shown below it whatever it says. Part of what the consent review covers.",
    )
    debrief_text = models.TextField(
        blank=True, validators=[validate_debrief_placeholders], verbose_name="debrief",
        help_text="Shown at the end, under 'About this study', to participants who took part (completed, or ended "
        "by the attention checks); empty = no debrief. Part of what the consent review covers.",
    )
    end_text = models.TextField(
        blank=True, validators=[validate_end_placeholders], verbose_name="end page",
        help_text="The end page's message on completion. Empty = \"You have completed this study. Thank you!\". "
        "The completion code and the way back to Prolific follow it. Part of what the consent review covers.",
    )
    answer_input = models.CharField(
        max_length=16, choices=AnswerInput.choices, default=AnswerInput.KEYS,
        help_text="How participants answer: the F and J keys only (paper 003's protocol, the default; phones and "
        "tablets are turned away), also by clicking the Yes and No buttons shown in the participant's key order, or "
        "also by tapping them on a phone or tablet. Every trial records the channel and the device. Part of what the "
        "consent review covers.",
    )
    contact = models.CharField(
        max_length=300, blank=True,
        help_text="Whom participants can ask about the study (a name and an e-mail address); shown on the consent "
        "page. Required before the consent can be marked reviewed.",
    )
    seconds_per_question = models.PositiveSmallIntegerField(
        default=12, help_text="Estimated time per question (reading, answering, the blank between questions), "
        "for the duration the consent page and the instructions state.",
        verbose_name="seconds per question (estimate)",
    )
    consent_reviewed_at = models.DateTimeField(null=True, blank=True, editable=False)
    consent_reviewed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, editable=False, on_delete=models.SET_NULL, related_name="+",
    )
    consent_reviewed_digest = models.CharField(
        max_length=64, blank=True, editable=False,
        help_text="Fingerprint of the consent as reviewed (participation/consent.py: consent_digest).",
    )
    # Prolific
    pid_param = models.CharField(
        max_length=40, default="PROLIFIC_PID",
        verbose_name="Prolific ID URL parameter",
        help_text="The name of the study link's parameter that carries the participant's Prolific ID (Prolific's default: PROLIFIC_PID).",
    )
    study_param = models.CharField(
        max_length=40, default="STUDY_ID",
        verbose_name="study ID URL parameter",
        help_text="The name of the study link's parameter that carries Prolific's study ID (default: STUDY_ID).",
    )
    session_param = models.CharField(
        max_length=40, default="SESSION_ID",
        verbose_name="session ID URL parameter",
        help_text="The name of the study link's parameter that carries Prolific's session ID (default: SESSION_ID).",
    )
    completion_code = models.CharField(
        max_length=40, blank=True,
        help_text="The code Prolific gives for a completed study; shown at the end and sent back with the return link.",
    )
    no_consent_code = models.CharField(
        max_length=40, blank=True,
        verbose_name="code when consent is declined",
        help_text="The Prolific code for a participant who declines consent; empty: they return the study without one.",
    )
    failed_attention_code = models.CharField(
        max_length=40, blank=True,
        verbose_name="code when the attention checks are failed",
        help_text="The Prolific code for a participant whose session ends on failed attention checks.",
    )
    incompatible_device_code = models.CharField(
        max_length=40, blank=True,
        verbose_name="code for a phone or tablet",
        help_text="The Prolific code for a participant who opens the study on a phone or tablet (no keyboard) "
        "while the answer input is keys or clicks only.",
    )
    completion_url = models.CharField(
        max_length=300, default=PROLIFIC_COMPLETION_URL, validators=[validate_url_template],
        verbose_name="return-to-Prolific URL",
        help_text="Where participants are sent at the end; {code} is replaced by their code.",
    )
    # Pay and housekeeping
    prolific_min_hourly = models.DecimalField(
        max_digits=6, decimal_places=2, default=Decimal("6.00"),
        verbose_name="Prolific's minimum hourly pay",
        help_text="Prolific's minimum pay per hour, in the currency below.",
    )
    pay_multiplier = models.DecimalField(
        max_digits=4, decimal_places=2, default=Decimal("1.50"),
        help_text="The hourly pay offered as a multiple of Prolific's minimum (1.5 = 50 % above it).",
    )
    currency = models.CharField(
        max_length=3, default="GBP", help_text="The pay's three-letter currency code, e.g. GBP.",
    )
    abandon_after_minutes = models.PositiveIntegerField(
        default=90, help_text="In-progress sessions silent this long count as returned.",
        verbose_name="silent sessions count as returned after (minutes)",
    )

    class Meta:
        app_label = "experiments"
        verbose_name = "human arm"
        constraints = [
            models.CheckConstraint(condition=models.Q(attention_fail_after__gte=1), name="human_arm_attention_fail_after_min_1"),
        ]

    def __str__(self) -> str:
        return f"human arm of {self.study.slug}"

    def consent(self) -> str:
        return (self.consent_text or DEFAULT_CONSENT).replace("{institution}", self.institution)

    def input_mode(self) -> AnswerInput:
        return AnswerInput(self.answer_input)

    def attention_rule(self) -> AttentionRule:
        return AttentionRule(fail_after=self.attention_fail_after, end_session=self.attention_end_session)

    def pay_for(self, minutes: float) -> Decimal:
        """What `minutes` of a participant's time earn at the hourly rate, rounded up to a penny."""
        return (self.hourly_rate() * Decimal(str(minutes)) / 60).quantize(Decimal("0.01"), rounding=ROUND_UP)

    def hourly_rate(self) -> Decimal:
        return (self.prolific_min_hourly * self.pay_multiplier).quantize(Decimal("0.01"))
