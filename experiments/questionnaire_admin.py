"""The admin of a study's questionnaires (issue 47 item 2): a questionnaire's own page with its questions as
an inline (ordered by position), listed on the study's page under its human arm (`questionnaires_html`).
A study's questionnaires are locked once it has responses: its data files and codebook describe one set."""
from __future__ import annotations

from django.contrib import admin
from django.urls import reverse
from django.utils.html import format_html, format_html_join

from . import team_scope
from .models import HumanArm, Question, Questionnaire, Study, responses_exist
from .team_admin import TeamScopedAdmin

team_scope.register(HumanArm, "study")  # the questionnaire's arm is chosen among the user's teams' studies' arms


def _locked(questionnaire) -> bool:
    """Whether the questionnaire's study has responses (its questionnaires are then fixed)."""
    if questionnaire is None or questionnaire.pk is None or questionnaire.arm_id is None:
        return False
    return responses_exist(Study.objects.filter(human_arm__id=questionnaire.arm_id).values("pk"))


class QuestionInline(admin.StackedInline):
    model = Question
    extra = 0
    fieldsets = (
        (None, {"fields": (("position", "key", "kind", "required"), "text")}),
        ("Multiple choice", {"fields": ("choices",)}),
        ("Likert scale", {"fields": (("scale_points", "scale_start"), ("scale_low_label", "scale_high_label"))}),
        ("Number", {"fields": (("number_min", "number_max", "whole_number"),)}),
        ("Text", {"fields": ("max_length",)}),
    )

    def has_add_permission(self, request, obj=None):
        return not _locked(obj) and super().has_add_permission(request, obj)

    def has_change_permission(self, request, obj=None):
        return not _locked(obj) and super().has_change_permission(request, obj)

    def has_delete_permission(self, request, obj=None):
        return not _locked(obj) and super().has_delete_permission(request, obj)


@admin.register(Questionnaire)
class QuestionnaireAdmin(TeamScopedAdmin, admin.ModelAdmin):
    study_path = "arm__study"
    list_display = ("title", "study", "placement", "position", "enabled", "question_count")
    list_filter = ("placement", "enabled")
    search_fields = ("title", "arm__study__slug")
    fields = ("arm", "title", "intro", "placement", "position", "enabled")
    inlines = [QuestionInline]
    raw_id_fields = ()

    def get_changeform_initial_data(self, request):
        initial = super().get_changeform_initial_data(request)
        if "study" in request.GET:  # "add a questionnaire" from a study's page
            arm = HumanArm.objects.filter(study_id=request.GET["study"]).first()
            if arm is not None:
                initial["arm"] = arm.pk
        return initial

    def get_readonly_fields(self, request, obj=None):
        return self.fields if _locked(obj) else ("arm",) if obj is not None else ()

    def has_delete_permission(self, request, obj=None):
        return not _locked(obj) and super().has_delete_permission(request, obj)

    @admin.display(description="study")
    def study(self, obj):
        return obj.arm.study.slug

    @admin.display(description="questions")
    def question_count(self, obj):
        return obj.questions.count()


def questionnaires_html(arm: HumanArm) -> str:
    """The arm's questionnaires as the study page lists them: each with where it comes, whether it is shown,
    its questions' keys and a link to edit it; and a link to add one."""
    rows = format_html_join(
        "", "<li><a href='{}'>{}</a> — {}, {}: {}</li>",
        ((reverse("admin:experiments_questionnaire_change", args=[q.pk]), q.title, q.get_placement_display(),
          "shown" if q.enabled else "off (not shown)", ", ".join(q.questions.values_list("key", flat=True)) or "no questions")
         for q in arm.questionnaires.all()))
    add = reverse("admin:experiments_questionnaire_add") + f"?study={arm.study_id}"
    answers = reverse("admin:experiments_study_questionnaire_csv", args=[arm.study_id])
    return format_html("<ul id='questionnaires'>{}</ul><p><a href='{}'>Add a questionnaire…</a> · "
                       "<a href='{}' id='questionnaire-csv'>Export the answers (CSV)</a> (one row per participant, as "
                       "P&lt;id&gt;). Each questionnaire is a page of its own before or after the items; switch one on "
                       "with “shown to participants”. The report's data/questionnaire.csv holds the same columns.</p>",
                       rows or "", add, answers)
