"""The admin of a study's questionnaires (issue 47 item 2): a questionnaire's own page with its questions as
an inline (ordered by position), listed on the study's page under its human arm (`questionnaires_html`).
A study's questionnaires are locked once it has responses: its data files and codebook describe one set."""
from __future__ import annotations

from django.contrib import admin
from django.core.exceptions import PermissionDenied
from django.http import Http404
from django.urls import path, reverse
from django.utils.html import format_html, format_html_join

from . import team_scope
from .models import HumanArm, Question, Questionnaire, Study
from .participation.questionnaire_export import questionnaire_csv_response
from .team_admin import TeamScopedAdmin


def _locked(questionnaire) -> bool:
    return questionnaire is not None and questionnaire.pk is not None and questionnaire.arm.study.has_responses()


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

    def get_urls(self):
        return [path("answers/<int:study_pk>.csv", self.admin_site.admin_view(self.answers_csv),
                     name="experiments_questionnaire_answers_csv"), *super().get_urls()]

    def answers_csv(self, request, study_pk):
        """The study's questionnaire answers (questionnaire_export.py): one row per participant, P<id>."""
        if not self.has_view_permission(request):
            raise PermissionDenied
        study = team_scope.scope(Study.objects.all(), user=request.user, path="").filter(pk=study_pk).first()
        if study is None:  # another team's study, or none
            raise Http404("No such study.")
        return questionnaire_csv_response(study=study)

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
    answers = reverse("admin:experiments_questionnaire_answers_csv", args=[arm.study_id])
    return format_html("<ul id='questionnaires'>{}</ul><p><a href='{}'>Add a questionnaire…</a> · "
                       "<a href='{}' id='questionnaire-csv'>Export the answers (CSV)</a> (one row per participant, as "
                       "P&lt;id&gt;). Each questionnaire is a page of its own before or after the items; switch one on "
                       "with “shown to participants”. The report's data/questionnaire.csv holds the same columns.</p>",
                       rows or "", add, answers)
