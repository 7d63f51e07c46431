"""Questionnaires before and after the items (issue 47 item 2): a study's human arm has any number, each
placed before or after the items and shown on a page of its own; a questionnaire holds ordered questions of
five kinds (logic/questions.py: what each accepts); a participant's answers are saved one by one, at most one
per question (a re-send never doubles one), and a page's completion is recorded when its Continue is pressed.

A new study gets the defaults of logic/questions.py (a short demographics block and the aid-use question),
switched off until the researcher turns them on (`Questionnaire.objects.add_defaults`)."""
from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import models

from logic import questions as rules

from .human_arm import HumanArm
from .participants import Participant


class Placement(models.TextChoices):
    BEFORE = "before", "before the items (after the consent)"
    AFTER = "after", "after the items (before the completion code)"


class QuestionKind(models.TextChoices):
    CHOICE = rules.CHOICE, "multiple choice (one answer)"
    LIKERT = rules.LIKERT, "Likert scale"
    NUMBER = rules.NUMBER, "number"
    SHORT_TEXT = rules.SHORT_TEXT, "short text (one line)"
    LONG_TEXT = rules.LONG_TEXT, "long text (a paragraph)"


class QuestionnaireQuerySet(models.QuerySet):
    def shown(self) -> "QuestionnaireQuerySet":
        """The questionnaires participants see: switched on and holding at least one question, in page order."""
        return self.filter(enabled=True, questions__isnull=False).distinct().order_by("placement", "position", "id")

    def add_defaults(self, *, arm: HumanArm) -> list["Questionnaire"]:
        """A new arm's default questionnaires (logic/questions.py DEFAULT_QUESTIONNAIRES), switched off."""
        made = []
        for n, spec in enumerate(rules.DEFAULT_QUESTIONNAIRES):
            questionnaire = Questionnaire.objects.create(
                arm=arm, title=spec["title"], intro=spec["intro"], placement=spec["placement"], position=n,
                enabled=False)
            Question.objects.bulk_create(Question(questionnaire=questionnaire, position=i, **q)
                                         for i, q in enumerate(spec["questions"]))
            made.append(questionnaire)
        return made


SHOWS = "shows_questionnaires_{}"  # an arm's annotation: whether it shows a questionnaire of that placement


def shows_annotations() -> dict:
    """Annotations for a HumanArm query saying, per placement, whether the arm shows a questionnaire there
    (QuestionnaireQuerySet.shown's rule, in the same SELECT): flow.shown_placements reads them when present, so
    the entry reads its arm and this in one query."""
    shown = Questionnaire.objects.filter(arm=models.OuterRef("pk"), enabled=True, questions__isnull=False)
    return {SHOWS.format(p): models.Exists(shown.filter(placement=p)) for p in Placement.values}


class Questionnaire(models.Model):
    objects = QuestionnaireQuerySet.as_manager()

    arm = models.ForeignKey(HumanArm, on_delete=models.CASCADE, related_name="questionnaires",
                            help_text="The study's human arm it belongs to.")
    title = models.CharField(max_length=200, help_text="The page's heading, as participants see it.")
    intro = models.TextField(blank=True, help_text="A short text above the questions (optional).")
    placement = models.CharField(max_length=6, choices=Placement.choices, default=Placement.AFTER,
                                 help_text="Before the items (after the consent) or after them (before the code).")
    position = models.PositiveSmallIntegerField(
        default=0, help_text="Its order among the questionnaires of the same placement (lowest first).")
    enabled = models.BooleanField(
        default=False, verbose_name="shown to participants",
        help_text="Off: participants do not see it (a new study's default questionnaires start off).")

    class Meta:
        app_label = "experiments"
        ordering = ("placement", "position", "id")

    def __str__(self) -> str:
        return f"{self.title} ({self.get_placement_display()})"


class Question(models.Model):
    questionnaire = models.ForeignKey(Questionnaire, on_delete=models.CASCADE, related_name="questions")
    position = models.PositiveSmallIntegerField(default=0, help_text="Its order on the page (lowest first).")
    key = models.SlugField(
        max_length=40,
        help_text="The column name in the data files (letters, digits, _ and -), unique within the study, "
        "e.g. age_band. A participant factor of the report is named by it.")
    text = models.TextField(verbose_name="wording", help_text="The question as participants read it.")
    kind = models.CharField(max_length=12, choices=QuestionKind.choices, default=QuestionKind.CHOICE,
                            help_text="What kind of answer it takes; fill in that kind's fields below.")
    required = models.BooleanField(default=False, help_text="Participants cannot go on without answering it.")
    choices = models.TextField(blank=True, help_text="Multiple choice: one choice per line (the data hold its text).")
    scale_points = models.PositiveSmallIntegerField(
        null=True, blank=True, help_text=f"Likert: how many points ({rules.MIN_POINTS}–{rules.MAX_POINTS}), e.g. 5 or 7.")
    scale_start = models.SmallIntegerField(default=1, help_text="Likert: the lowest point's number (1, or 0).")
    scale_low_label = models.CharField(max_length=80, blank=True, help_text="Likert: the label of the lowest point, "
                                       "e.g. Strongly disagree.")
    scale_high_label = models.CharField(max_length=80, blank=True, help_text="Likert: the label of the highest point, "
                                        "e.g. Strongly agree.")
    number_min = models.FloatField(null=True, blank=True, verbose_name="smallest number",
                                   help_text="Number: the smallest allowed (empty: none).")
    number_max = models.FloatField(null=True, blank=True, verbose_name="largest number",
                                   help_text="Number: the largest allowed (empty: none).")
    whole_number = models.BooleanField(default=True, help_text="Number: whole numbers only.")
    max_length = models.PositiveIntegerField(
        null=True, blank=True, verbose_name="length cap (characters)",
        help_text=f"Short and long text: the most characters an answer may have (empty: "
        f"{rules.DEFAULT_MAX_LENGTH[rules.SHORT_TEXT]} short, {rules.DEFAULT_MAX_LENGTH[rules.LONG_TEXT]} long).")

    class Meta:
        app_label = "experiments"
        ordering = ("questionnaire", "position", "id")
        constraints = [models.UniqueConstraint(fields=["questionnaire", "key"], name="question_unique_key")]

    def __str__(self) -> str:
        return self.key

    def rule(self) -> rules.QuestionRule:
        return rules.QuestionRule(
            kind=self.kind, required=self.required, choices=rules.parse_choices(self.choices),
            points=self.scale_points, start=self.scale_start, minimum=self.number_min, maximum=self.number_max,
            whole=self.whole_number, max_length=self.max_length)

    def clean(self) -> None:
        problems = self.rule().problems()
        if problems:
            raise ValidationError(f"Question {self.key or '(new)'}: {'; '.join(problems)}.")
        arm_id = self.questionnaire.arm_id if self.questionnaire_id else None
        if arm_id is not None and self.key and Question.objects.filter(
                questionnaire__arm_id=arm_id, key=self.key).exclude(pk=self.pk).exclude(
                questionnaire_id=self.questionnaire_id).exists():
            raise ValidationError({"key": f"Another questionnaire of this study has a question {self.key!r}; the data "
                                          "files need each key once."})


class QuestionnaireAnswer(models.Model):
    """One participant's answer to one question: at most one (a re-send or a change updates it, until the
    page is completed)."""

    participant = models.ForeignKey(Participant, on_delete=models.PROTECT, related_name="questionnaire_answers",
                                    db_index=False)
    question = models.ForeignKey(Question, on_delete=models.PROTECT, related_name="answers")
    value = models.TextField(blank=True, help_text="The answer as stored (logic/questions.py answer_value).")
    idempotency_key = models.CharField(max_length=64, blank=True, verbose_name="resend key",
                                       help_text="The browser's key for the last save of this answer.")
    answered_at = models.DateTimeField(auto_now=True, help_text="When the answer was last saved (UTC).")

    class Meta:
        app_label = "experiments"
        constraints = [
            models.UniqueConstraint(fields=["participant", "question"], name="questionnaire_answer_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.question.key} of {self.participant}"


class QuestionnaireCompletion(models.Model):
    """A questionnaire page a participant completed (pressed Continue with every required question answered)."""

    participant = models.ForeignKey(Participant, on_delete=models.PROTECT, related_name="questionnaires_done",
                                    db_index=False)
    questionnaire = models.ForeignKey(Questionnaire, on_delete=models.PROTECT, related_name="completions")
    completed_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        app_label = "experiments"
        constraints = [
            models.UniqueConstraint(fields=["participant", "questionnaire"], name="questionnaire_completion_unique"),
        ]
