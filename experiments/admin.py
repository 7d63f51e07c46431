"""Django admin for researchers: studies, interpretations and items (staff only)."""
from __future__ import annotations

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import ValidationError
from django.db.models import Count
from django.utils.html import format_html_join

from . import services
from .models import Interpretation, Item, ItemsLocked, Participant, Study, StudyStatus, Trial


class StudyForm(forms.ModelForm):
    class Meta:
        model = Study
        fields = ["slug", "title", "description", "design", "logic_system", "settings"]


@admin.register(Study)
class StudyAdmin(admin.ModelAdmin):
    form = StudyForm
    list_display = ("slug", "title", "design", "status", "logic_system", "item_count", "created_at")
    list_filter = ("status", "design", "logic_system")
    search_fields = ("slug", "title")
    readonly_fields = ("status", "created_at", "updated_at")
    prepopulated_fields = {"slug": ("title",)}
    actions = ["open_studies", "pause_studies", "close_studies"]

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(_items=Count("items"))

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

    @admin.action(description="Open for participants")
    def open_studies(self, request, queryset):
        self._move(request, queryset, StudyStatus.OPEN)

    @admin.action(description="Pause")
    def pause_studies(self, request, queryset):
        self._move(request, queryset, StudyStatus.PAUSED)

    @admin.action(description="Close")
    def close_studies(self, request, queryset):
        self._move(request, queryset, StudyStatus.CLOSED)


@admin.register(Interpretation)
class InterpretationAdmin(admin.ModelAdmin):
    list_display = ("study", "index", "condition", "p_subject", "p_predicate", "q_subject", "q_predicate")
    list_filter = ("study", "condition")
    search_fields = ("p_subject", "p_predicate", "q_subject", "q_predicate")
    list_select_related = ("study",)

    def has_change_permission(self, request, obj=None):
        return False  # generated data: inspect, never edit


class ItemForm(forms.ModelForm):
    class Meta:
        model = Item
        fields = ["premises", "question", "prompt", "argument_form", "form_id", "attributes"]

    def clean(self):
        cleaned = super().clean()
        if self.instance.pk and self.instance.study.has_responses():
            raise forms.ValidationError(
                "This item's study already has participant responses; items are immutable now."
            )
        return cleaned


@admin.register(Item)
class ItemAdmin(admin.ModelAdmin):
    form = ItemForm
    list_display = (
        "code", "study", "design", "form_id", "modality_symbol", "argument_form", "gold_answer",
        "template_valid", "checker_disagrees", "condition",
    )
    list_filter = (
        "study", "design", "modality", "argument_form", "gold_answer", "checker_disagrees",
        "template_valid", "condition", "logic_system",
    )
    search_fields = ("code", "question", "prompt", "logical_form")
    list_select_related = ("study",)
    list_per_page = 50
    show_full_result_count = False
    readonly_fields = (
        "study", "code", "design", "modality", "logical_form", "template_valid", "gold_answer",
        "logic_system", "checker_disagrees", "condition", "interpretation", "original",
        "premise_list", "created_at",
    )

    @admin.display(description="modality", ordering="modality")
    def modality_symbol(self, obj):
        return obj.get_modality_display() if obj.modality else "—"

    @admin.display(description="premises")
    def premise_list(self, obj):
        return format_html_join("", "<div>{}</div>", ((p,) for p in obj.premises))

    def has_add_permission(self, request):
        return False  # items come from generate_items or a CSV import

    def get_readonly_fields(self, request, obj=None):
        if obj is not None and obj.study.has_responses():
            return [f.name for f in Item._meta.fields] + ["premise_list"]
        return self.readonly_fields

    def save_model(self, request, obj, form, change):
        try:
            fields = {name: form.cleaned_data[name] for name in form.changed_data}
            services.item_update(item=obj, **fields)
        except (ItemsLocked, ValidationError) as exc:
            self.message_user(request, " ".join(exc.messages), level=messages.ERROR)

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


@admin.register(Participant)
class ParticipantAdmin(admin.ModelAdmin):
    list_display = ("prolific_pid", "study", "key_mapping", "status", "is_preview", "started_at", "finished_at")
    list_filter = ("study", "status", "key_mapping", "is_preview")
    search_fields = ("prolific_pid",)

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(Trial)
class TrialAdmin(admin.ModelAdmin):
    list_display = ("participant", "index", "item", "key", "answer", "correct", "rt_ms", "received_at")
    list_filter = ("participant__study", "correct", "answer")
    list_select_related = ("participant", "participant__study", "item")

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
