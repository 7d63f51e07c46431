"""Django admin for researchers: studies, interpretations and items (staff only)."""
from __future__ import annotations

from django import forms
from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.core.exceptions import PermissionDenied, ValidationError
from django.db.models import BooleanField, Count, ExpressionWrapper
from django.template.loader import render_to_string
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html, format_html_join

from . import item_list, services, settings_editor
from .models import (
    HumanArm, Interpretation, Item, ItemsLocked, MappingPreset, Participant, Study, StudyStatus, Trial,
)
from .items.presets import preset_check
from .participation import admin_views as participation_admin
from .models import attention
from .participation import consent, launch, texts
from .participation import erasure, questionnaire_export
from .participation import services as participation
from .item_list import StudyValuesFilter
from .participation.item_summary import item_summary, with_catch_items
from .participation.question_editor import QuestionListField
from common.admin_display import ReadOnlyAdmin, rounded, structured
from .team_admin import TeamAdmin, TeamScopedAdmin  # noqa: F401  (TeamAdmin: registered there)
from . import questionnaire_admin  # (QuestionnaireAdmin: registered there)
from .team_scope import teams_of
from . import design_registry
from .items import admin_upload
from .items import admin_views as items_views
from .items import import_progress


def _design_choices() -> list[tuple[str, str]]:
    return [("", "— choose a design —"), *design_registry.choices()]


class StudyForm(settings_editor.StudySettingsFields, forms.ModelForm):
    # The design is one of the registry's (designs/<family>/design.py), not free text; the settings
    # are fields (settings_editor.py), not JSON.
    design = forms.ChoiceField(choices=_design_choices, help_text="What the study's items are made from: a design "
                               "generated with its options or an item bank imported from CSV (seed paper in brackets).")

    class Meta:
        model = Study
        fields = ["slug", "title", "team", "participant_title", "description", "design", "logic_system", "consequence"]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.settings_initial(self.instance)

    def clean(self):
        cleaned = super().clean()
        settings = self.settings_clean(self.instance, cleaned)
        if settings is not None:
            self.instance.settings = settings
        return cleaned


class HumanArmForm(forms.ModelForm):
    mark_consent_reviewed = forms.BooleanField(
        required=False, label="Consent reviewed",
        help_text="Tick after reading the consent page as participants see it (below, or “Preview the participant "
        "flow”) and checking that it is true for this study. Your name and the time are recorded; a later change "
        "to the text, institution, contact, instructions, debrief, end page or answer input needs a new review before the study opens or takes new participants.",
    )

    practice = QuestionListField(
        with_form=True, required=False, label="Practice questions",
        help_text="Warm-up questions with feedback, not recorded; none = no practice. A new study gets its design's "
                  "default set. Leave a new block blank to add nothing.")
    attention_checks = QuestionListField(
        required=False, label="Attention checks",
        help_text="Catch items with an obvious answer, mixed into every participant's list.")

    class Meta:
        model = HumanArm
        fields = "__all__"

    def clean(self):
        cleaned = super().clean()
        if cleaned.get("mark_consent_reviewed") and not (cleaned.get("contact") or "").strip():
            self.add_error("contact", "Enter a contact (a name and an e-mail address) before marking the consent reviewed.")
        for field, problem in texts.text_problems(cleaned).items():  # the checks item wording passes (texts.py)
            if field in self.fields and field not in self.errors:
                self.add_error(field, problem)
        return cleaned


class HumanArmInline(admin.StackedInline):
    """The human arm's settings: lists, practice, attention checks, consent, Prolific codes, pay."""

    model = HumanArm
    form = HumanArmForm
    can_delete = False
    extra = 1
    max_num = 1
    readonly_fields = ("consent_review_state", "consent_preview", "texts_preview", "questionnaires_panel")
    fieldsets = (
        ("Lists", {"fields": ("items_per_participant", "target_sample_size", "include_nonsense", "paired_presentation",
                              "paired_min_gap")}),
        ("Trials", {"fields": ("practice", "attention_checks", "attention_fail_after", "attention_end_session", "blank_ms", "time_limit_ms")}),
        ("Consent", {"fields": ("institution", "contact", "consent_text", "seconds_per_question", "consent_preview",
                                "consent_review_state", "mark_consent_reviewed")}),
        ("Instructions, debrief and end page", {"fields": ("instructions_text", "debrief_text", "end_text",
                                                           "texts_preview")}),
        ("Answering", {"fields": ("answer_input",)}),
        ("Prolific", {"fields": ("pid_param", "study_param", "session_param", "completion_code", "no_consent_code",
                                 "failed_attention_code", "incompatible_device_code", "completion_url")}),
        ("Pay and housekeeping", {"fields": ("prolific_min_hourly", "pay_multiplier", "currency", "abandon_after_minutes")}),
        ("Questionnaires", {"fields": ("questionnaires_panel",)}),
    )

    @admin.display(description="questionnaires (before and after the items)")
    def questionnaires_panel(self, obj):
        return questionnaire_admin.questionnaires_html(obj) if obj is not None and obj.pk else "—"

    @admin.display(description="review")
    def consent_review_state(self, obj):
        if obj is None or obj.pk is None:
            return "—"
        problem = consent.consent_problem(obj)
        if problem is not None:
            return format_html("<strong>Not reviewed as it stands.</strong> {}", problem)
        return f"Reviewed by {consent.reviewer(obj)} on {obj.consent_reviewed_at:%Y-%m-%d %H:%M} UTC."

    @admin.display(description="as participants read them (as saved; F = Yes, a two-statement question)")
    def texts_preview(self, obj):
        if obj is None or obj.pk is None:
            return "—"
        return render_to_string("admin/experiments/texts_preview.html", texts.preview(obj))

    @admin.display(description="consent page as participants see it (as saved)")
    def consent_preview(self, obj):
        if obj is None or obj.pk is None:
            return "—"
        return render_to_string("participant/_consent_body.html", {"consent": consent.consent_page(obj)})


@admin.register(Study)
class StudyAdmin(TeamScopedAdmin, admin.ModelAdmin):
    study_path = ""  # a study is its own
    form = StudyForm
    list_display = ("slug", "title", "team", "design", "status", "system_shown", "consequence_shown", "item_count",
                    "created_at")
    list_filter = ("status", "team", "design", "logic_system", "consequence")
    search_fields = ("slug", "title")
    readonly_fields = ("status", "items_panel", "launch_panel", "participant_progress", "stored_settings",
                       "created_at", "updated_at")
    prepopulated_fields = {"slug": ("title",)}
    fieldsets = (
        (None, {"fields": ("slug", "title", "team", "participant_title", "description", "design", "logic_system",
                           "consequence", "status",
                           "items_panel", "launch_panel", "participant_progress")}),
        *settings_editor.FIELDSETS,
        ("Settings as stored", {"classes": ("collapse",), "fields": ("stored_settings", "created_at", "updated_at")}),
    )

    def get_fieldsets(self, request, obj=None):
        """A study's page shows the modal-logic fields its design keys items under (the registry's
        modal_fields): a Rulebreakers study shows neither logic system nor consequence relation. The add
        page, before a design is chosen, shows both."""
        fieldsets = super().get_fieldsets(request, obj)
        if obj is None:
            return fieldsets
        hidden = set(design_registry.MODAL_FIELDS) - set(design_registry.modal_fields_for(obj.design))
        return [(title, {**options, "fields": tuple(f for f in options["fields"] if f not in hidden)})
                for title, options in fieldsets]

    def _modal_value(self, obj, name: str) -> str:
        return getattr(obj, f"get_{name}_display")() if name in design_registry.modal_fields_for(obj.design) else "—"

    @admin.display(description="logic system", ordering="logic_system")
    def system_shown(self, obj):
        return self._modal_value(obj, design_registry.LOGIC_SYSTEM)

    @admin.display(description="consequence relation", ordering="consequence")
    def consequence_shown(self, obj):
        return self._modal_value(obj, design_registry.CONSEQUENCE)

    @admin.display(description="settings as stored")
    def stored_settings(self, obj):
        return settings_editor.stored_settings_html(obj) if obj and obj.pk else "—"

    def render_change_form(self, request, context, add=False, change=False, form_url="", obj=None):
        form = context["adminform"].form if "adminform" in context else None
        for problem in getattr(form, "settings_problems", ()):
            self.message_user(request, f"Settings: {problem}. Saving stores what the form shows.", messages.WARNING)
        return super().render_change_form(request, context, add, change, form_url, obj)

    class Media:
        js = ("experiments/launch.js",)

    @admin.display(description="items")
    def items_panel(self, obj):
        if obj is None or obj.pk is None:
            return ("Save the study first; then generate its items or upload a CSV bank here. Its human arm (lists, practice, "
                    "attention checks, consent) is set up from its design when it is saved, and edited here then.")
        count = with_catch_items(item_summary(study=obj), study=obj).items  # kept figures (item_summary.py)
        locked = obj.has_responses()
        links = "" if locked else format_html(
            ' — <a href="{}">Generate items…</a> · <a href="{}">Upload a bank (CSV, JSON, Parquet)…</a>',
            reverse("admin:experiments_study_generate", args=[obj.pk]),
            reverse("admin:experiments_study_upload", args=[obj.pk]))
        return format_html('{} item{}{}{}', count, "" if count == 1 else "s",
                           " (locked: the study has responses)" if locked else "", links)

    @admin.display(description="launch")
    def launch_panel(self, obj):
        return launch.launch_html(obj) if obj and obj.pk else "—"
    actions = ["open_studies", "pause_studies", "close_studies", "export_trials", "expire_silent_sessions"]
    inlines = [HumanArmInline]

    def get_changeform_initial_data(self, request):
        initial = super().get_changeform_initial_data(request)
        if "team" not in initial:  # a new study goes to the user's team (the first of theirs; they may choose)
            first = teams_of(request.user).first()
            if first is not None:
                initial["team"] = first.pk
        return initial

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        field = super().formfield_for_foreignkey(db_field, request, **kwargs)
        if db_field.name == "team" and field is not None:
            field.empty_label = None
            if not field.queryset.exists():
                field.help_text = ("You are in no team yet, so you cannot make a study: a superuser adds you to "
                                   "your lab's team (Studies and items → Teams).")
        return field

    def get_inline_instances(self, request, obj=None):
        # The human arm is edited once the study exists: it is then made from the study's design
        # (participation.human_arm_ensure: its practice set and catch items), exactly as a study
        # made by a command gets it; the add page cannot know the design before it is chosen.
        return [] if obj is None else super().get_inline_instances(request, obj)

    def save_model(self, request, obj, form, change):
        super().save_model(request, obj, form, change)
        if not change:
            participation.human_arm_ensure(study=obj)

    def save_formset(self, request, form, formset, change):
        super().save_formset(request, form, formset, change)
        if formset.model is not HumanArm:
            return
        for arm_form in formset.forms:
            if arm_form.cleaned_data.get("mark_consent_reviewed") and arm_form.instance.pk:
                consent.consent_review(arm=arm_form.instance, by=request.user)
                self.message_user(request, f"{arm_form.instance.study.slug}: consent marked reviewed by "
                                           f"{request.user.get_username()}.")

    def get_object(self, request, object_id, from_field=None):
        study = super().get_object(request, object_id, from_field)
        if study is not None:
            participation.human_arm_ensure(study=study)  # so the inline always edits the one row
        return study

    @admin.display(description="participants")
    def participant_progress(self, obj):
        return participation_admin.progress_html(obj) if obj.pk else "—"

    def get_urls(self):
        extra = [path("<int:pk>/trials.csv", self.admin_site.admin_view(self.trials_csv),
                      name="experiments_study_trials_csv"),
                 path("<int:pk>/questionnaire.csv", self.admin_site.admin_view(self.questionnaire_csv),
                      name="experiments_study_questionnaire_csv"),
                 path("<int:pk>/items/generate/", self.admin_site.admin_view(
                     lambda request, pk: items_views.generate_view(self, request, pk)), name="experiments_study_generate"),
                 path("<int:pk>/items/upload/", self.admin_site.admin_view(
                     lambda request, pk: admin_upload.upload_view(self, request, pk)), name="experiments_study_upload"),
                 path("<int:pk>/items/upload/progress/", self.admin_site.admin_view(
                     lambda request, pk: import_progress.progress_view(self, request, pk)),
                     name="experiments_study_upload_progress"),
                 path("bank-template/<str:name>.csv", self.admin_site.admin_view(
                     lambda request, name: admin_upload.template_view(self, request, name)),
                     name="experiments_study_template")]
        return extra + super().get_urls()

    def trials_csv(self, request, pk):
        if not self.has_view_permission(request):
            raise PermissionDenied
        prolific_ids = request.GET.get("prolific_ids") == "1"
        if prolific_ids and not request.user.has_perm("experiments.view_prolific_ids"):
            raise PermissionDenied("Seeing Prolific ids needs the permission 'Can see participants' Prolific ids'.")
        study = self.scoped_object_or_404(request, pk)  # another team's study: 404
        return participation_admin.trials_csv_response(study=study, prolific_ids=prolific_ids)

    def questionnaire_csv(self, request, pk):
        """The study's questionnaire answers, a row per participant as P<id> (participation/questionnaire_export.py)."""
        if not self.has_view_permission(request):
            raise PermissionDenied
        study = self.scoped_object_or_404(request, pk)  # another team's study: 404
        return questionnaire_export.questionnaire_csv_response(study=study)

    def has_change_status_permission(self, request):
        return request.user.has_perm("experiments.change_study_status")

    def has_run_analysis_permission(self, request):
        return request.user.has_perm("analysis.run_analysis")

    @admin.action(description="Export trials as CSV (first selected study; participants as P<id>)")
    def export_trials(self, request, queryset):
        study = queryset.first()  # of the user's teams' studies (get_queryset): none when all were another's
        if study is None:
            self.message_user(request, "No study of your teams was selected.", level=messages.ERROR)
            return None
        return participation_admin.trials_csv_response(study=study)

    @admin.action(description="Mark silent in-progress sessions as returned", permissions=["change_status"])
    def expire_silent_sessions(self, request, queryset):
        for study in queryset:
            count = participation.participants_expire(study=study)
            self.message_user(request, f"{study.slug}: {count} silent session(s) marked returned.")

    def get_queryset(self, request):
        queryset = super().get_queryset(request)
        if request.resolver_match is None or request.resolver_match.url_name != "experiments_study_changelist":
            return queryset  # one study's page reads its item summary, not a count of its items
        return queryset.annotate(_items=Count("items"))

    @admin.display(description="items", ordering="_items")
    def item_count(self, obj):
        return obj._items

    def _move(self, request, queryset, to):
        for study in queryset:
            try:
                services.study_transition(study=study, to=to)
            except ValidationError as exc:
                self.message_user(request, " ".join(exc.messages), level=messages.ERROR)
            else:
                self.message_user(request, f"{study.slug}: now {to}.")

    @admin.action(description="Open for participants", permissions=["change_status"])
    def open_studies(self, request, queryset):
        self._move(request, queryset, StudyStatus.OPEN)

    @admin.action(description="Pause", permissions=["change_status"])
    def pause_studies(self, request, queryset):
        self._move(request, queryset, StudyStatus.PAUSED)

    @admin.action(description="Close", permissions=["change_status"])
    def close_studies(self, request, queryset):
        self._move(request, queryset, StudyStatus.CLOSED)


@admin.register(Interpretation)
class InterpretationAdmin(TeamScopedAdmin, admin.ModelAdmin):
    list_display = ("study", "index", "condition", "p_subject", "p_predicate", "q_subject", "q_predicate")
    list_filter = ("study", "condition")
    search_fields = ("p_subject", "p_predicate", "q_subject", "q_predicate")
    list_select_related = ("study",)

    def has_change_permission(self, request, obj=None):
        return False  # generated data: inspect, never edit


@admin.register(Item)
class ItemAdmin(TeamScopedAdmin, admin.ModelAdmin):
    """Items are read-only here: premises, question and prompt are written together by a design's
    generator or importer, so a correction is a re-generation or re-import (while the study has no
    responses), never a hand edit that lets them drift apart."""

    list_display = (
        "code", "item_text", "gold_answer", "study", "design", "kind", "form_id", "modality_symbol", "argument_form",
        "consequence", "gold_other", "pair_id", "pair_role", "variant", "template_valid", "checker_disagrees",
        "condition",
    )
    list_filter = (
        "study", ("design", StudyValuesFilter), "kind", "modality", ("argument_form", StudyValuesFilter),
        "gold_answer", ("pair_role", StudyValuesFilter), ("variant", StudyValuesFilter), "checker_disagrees",
        "template_valid", ("condition", StudyValuesFilter), "logic_system", "consequence",
    )
    search_fields = ("code", "pair_id", "question", "prompt", "logical_form")
    list_select_related = ("study",)
    list_per_page = 50
    show_full_result_count = False
    ordering = ("-study_id", "id")  # newest study first, by the (study, id) index: a page, never a sort of all

    def get_paginator(self, request, queryset, per_page, orphans=0, allow_empty_first_page=True):
        return item_list.paginator_for(request, queryset, per_page, orphans, allow_empty_first_page)
    readonly_fields = (
        "study", "code", "design", "modality", "logical_form", "template_valid", "gold_answer",
        "logic_system", "consequence", "gold_other", "checker_disagrees", "condition", "interpretation", "original",
        "premise_list", "kind", "options_table", "pair_id", "pair_role", "variant", "answer_words_table",
        "attributes_table", "created_at",
    )
    exclude = ("premises", "attributes", "answer_words", "options")  # shown as premise_list and the tables
    options_table = structured(Item, "options")
    answer_words_table = structured(Item, "answer_words")
    attributes_table = structured(Item, "attributes")

    @admin.display(description="modality", ordering="modality")
    def modality_symbol(self, obj):
        return obj.get_modality_display() if obj.modality else "—"

    @admin.display(description="text (premises, question)")
    def item_text(self, obj):
        """What a participant reads: the premises, one a line, then the question (and a four-option
        item's options)."""
        lines = [*obj.premises, obj.question or obj.prompt]
        lines += [f"{letter}. {option}" for letter, option in zip("ABCD", obj.options or [])]
        return format_html_join("", "<div>{}</div>", ((line,) for line in lines if line))

    @admin.display(description="premises")
    def premise_list(self, obj):
        return format_html_join("", "<div>{}</div>", ((p,) for p in obj.premises))

    def has_add_permission(self, request):
        return False  # items come from generate_items or a CSV import

    def has_change_permission(self, request, obj=None):
        return False  # read-only: see the class's docstring

    def delete_model(self, request, obj):
        try:
            obj.delete()
        except ItemsLocked as exc:
            self.message_user(request, " ".join(exc.messages), level=messages.ERROR)

    def delete_queryset(self, request, queryset):
        try:
            queryset.delete()
        except ItemsLocked as exc:
            self.message_user(request, " ".join(exc.messages), level=messages.ERROR)


class FailedAttentionFilter(admin.SimpleListFilter):
    """Failed or passed by the study's attention rule (models/attention.py), as counted on the
    study page and left out of the report."""

    title = "attention checks"
    parameter_name = "attention"

    def lookups(self, request, model_admin):
        return (("failed", "failed"), ("passed", "passed"))

    def queryset(self, request, queryset):
        if self.value() == "failed":
            return queryset.filter(attention.failed_q())
        if self.value() == "passed":
            return queryset.exclude(attention.failed_q())
        return queryset


@admin.register(Participant)
class ParticipantAdmin(TeamScopedAdmin, admin.ModelAdmin):
    list_display = (
        "prolific_pid", "study", "key_mapping", "status", "answered", "attention", "list_number", "last_seen_at",
        "is_preview", "is_simulated", "started_at", "finished_at",
    )
    list_filter = ("study", "status", FailedAttentionFilter, "key_mapping", "is_preview", "is_simulated")
    search_fields = ("prolific_pid",)
    list_select_related = ("study",)
    exclude = ("token", "plan")
    readonly_fields = ("plan_table",)
    plan_table = structured(Participant, "plan")
    actions = ["exclude_participants", "erase_participants"]
    PROLIFIC_FIELDS = ("prolific_pid", "prolific_study_id", "prolific_session_id")
    # The filters the list accepts, as its list_filter writes them in its links (issue 26 item 2: any
    # other lookup, e.g. prolific_pid__regex=^x… guessed one character at a time, or token__startswith,
    # was accepted, and the result count told the answer). Anything else is a 400; lookups on the
    # Prolific fields only for users with view_prolific_ids. Search, ordering and paging (q, o, p, all,
    # _facets, _popup, _to_field, e) are read by the changelist itself, never as lookups.
    FILTER_PARAMETERS = frozenset({
        "study__id__exact", "study__isnull", "status__exact", "status__isnull", FailedAttentionFilter.parameter_name,
        "key_mapping__exact", "key_mapping__isnull", "is_preview__exact", "is_preview__isnull",
        "is_simulated__exact", "is_simulated__isnull",
    })

    # Prolific ids only for users with view_prolific_ids; everyone else sees the pseudonym P<id>.
    def _sees_ids(self, request) -> bool:
        return request.user.has_perm("experiments.view_prolific_ids")

    def lookup_allowed(self, lookup, value, request=None):
        if lookup in self.FILTER_PARAMETERS:
            return True
        parts = lookup.split("__")
        # __range: the admin passes its value as one text, which the database reads character by character
        if request is not None and self._sees_ids(request) and parts[0] in self.PROLIFIC_FIELDS and parts[-1] != "range":
            return super().lookup_allowed(lookup, value, request)
        return False

    def get_list_display(self, request):
        shown = super().get_list_display(request)
        return shown if self._sees_ids(request) else tuple("pseudonym" if f == "prolific_pid" else f for f in shown)

    def get_search_fields(self, request):
        return super().get_search_fields(request) if self._sees_ids(request) else ()

    def get_exclude(self, request, obj=None):
        hidden = tuple(super().get_exclude(request, obj) or ())
        return hidden if self._sees_ids(request) else hidden + self.PROLIFIC_FIELDS

    def get_fields(self, request, obj=None):
        fields = super().get_fields(request, obj)
        return fields if self._sees_ids(request) else [f for f in fields if f not in self.PROLIFIC_FIELDS]

    @admin.display(description="participant")
    def pseudonym(self, obj):
        return f"P{obj.pk}"

    def has_exclude_permission(self, request):
        return request.user.has_perm("experiments.exclude_participant")

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(
            _answered=Count("trials"), _failed=ExpressionWrapper(attention.failed_q(), output_field=BooleanField()),
        )

    @admin.display(description="attention checks", ordering="attention_failures")
    def attention(self, obj):
        wrong = f"{obj.attention_failures} wrong"
        return f"failed ({wrong})" if obj._failed else ("passed" if not obj.attention_failures else f"passed ({wrong})")

    @admin.display(description="trials saved", ordering="_answered")
    def answered(self, obj):
        return f"{obj._answered} / {len(obj.plan)}"

    def has_change_permission(self, request, obj=None):
        return False

    def has_add_permission(self, request):
        return False  # participants come through the study link

    def has_delete_permission(self, request, obj=None):
        return False  # trials protect their participant: "Erase" below is the one way to delete

    def has_erase_permission(self, request):
        return request.user.has_perm("experiments.delete_participant")

    @admin.action(description="Erase all data of the selected participants (on their request)", permissions=["erase"])
    def erase_participants(self, request, queryset):
        if request.POST.get("confirm") != "yes":
            context = {
                **self.admin_site.each_context(request), "title": "Erase participant data", "opts": self.model._meta,
                "participants": [(p, p.trials.count()) for p in queryset.select_related("study")],
                "action_checkbox_name": helpers.ACTION_CHECKBOX_NAME,
            }
            return TemplateResponse(request, "admin/experiments/participant/erase_confirmation.html", context)
        for participant in queryset:
            done = erasure.participant_erase(participant=participant, by=request.user)
            reports = (f" {done.withdrawn_reports} report(s) of {done.study_slug} held this participant's pseudonymous "
                       f"rows ({done.label}): withdrawn and their files deleted; run the analysis again for a new one."
                       if done.withdrawn_reports else "")
            self.message_user(request, f"Erased {done.label} of {done.study_slug} and {done.trials} trial(s).{reports}")

    @admin.action(description="Exclude from the analysis", permissions=["exclude"])
    def exclude_participants(self, request, queryset):
        for participant in queryset:
            try:
                participation.participant_exclude(participant=participant)
            except participation.FlowError as exc:
                # the pseudonym, never the Prolific id: messages are seen by users without view_prolific_ids
                self.message_user(request, f"{participant}: {exc.message}", level=messages.ERROR)


@admin.register(Trial)
class TrialAdmin(TeamScopedAdmin, ReadOnlyAdmin):
    """Trials come from participants' answers only: the admin never invents, edits or deletes one."""

    study_path = "participant__study"

    list_display = (
        "participant", "index", "item", "key", "key_code", "answer", "correct", "rt_ms_rounded", "timed_out",
        "is_attention_check", "focus_lost", "visibility_lost", "received_at",
    )
    list_filter = ("participant__study", "correct", "answer", "is_attention_check", "timed_out")
    list_select_related = ("participant", "participant__study", "item")
    raw_id_fields = ("participant", "item")  # never a select of every participant or item
    rt_ms_rounded = rounded(Trial, "rt_ms")
    show_full_result_count = False


from .participation import pilot_admin  # noqa: E402,F401  (the pilot action and the pilots list)


class MappingPresetForm(forms.ModelForm):
    """A preset's design and mapping obey the rule every saved preset obeys (designs/presets.py)."""

    class Meta:
        model = MappingPreset
        fields = ("name", "design", "mapping", "note")

    def clean(self):
        cleaned = super().clean()
        if "design" in cleaned and "mapping" in cleaned:
            cleaned["mapping"] = preset_check(design_name=cleaned["design"], mapping=cleaned["mapping"])
        return cleaned


@admin.register(MappingPreset)
class MappingPresetAdmin(admin.ModelAdmin):
    """Named mappings of a file's columns onto a design's fields (saved from the upload page)."""

    form = MappingPresetForm

    list_display = ("name", "design", "updated_at")
    list_filter = ("design",)
    search_fields = ("name", "note")
    fields = ("name", "design", "mapping", "note")
