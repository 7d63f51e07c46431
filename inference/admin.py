"""Admin for researchers: register models, launch runs, watch their progress, read the scores."""
from __future__ import annotations

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import ValidationError
from django.urls import reverse
from django.utils.html import format_html

from . import services
from .models import LanguageModel, ModelRun, ModelScore, ProbeScore, RunKind, RunStatus


@admin.register(LanguageModel)
class LanguageModelAdmin(admin.ModelAdmin):
    list_display = ("name", "source", "gguf_file", "dtype", "device", "prompt_format", "token_ids_used")
    search_fields = ("name", "source")
    readonly_fields = ("token_ids_used", "created_at")

    @admin.display(description="answer token ids used")
    def token_ids_used(self, obj):
        ids = obj.answer_token_ids or {}
        if not ids:
            return "— (filled when the model is first loaded)"
        parts = [
            f"{label}: " + ", ".join(f"{text!r}={token}" for text, token in ids.get(label, {}).items())
            for label in ("yes", "no")
        ]
        if ids.get("rejected"):
            parts.append("not single tokens: " + ", ".join(repr(t) for t in ids["rejected"]))
        return " · ".join(parts)


class ModelRunForm(forms.ModelForm):
    kind = forms.ChoiceField(choices=RunKind.choices, required=False, initial=RunKind.ITEMS)

    class Meta:
        model = ModelRun
        fields = ["study", "language_model", "kind", "batch_size", "device", "item_limit"]

    def clean_kind(self):
        return self.cleaned_data.get("kind") or RunKind.ITEMS

    def clean(self):
        cleaned = super().clean()
        study = cleaned.get("study")
        if study is not None and cleaned.get("kind") == RunKind.KNOWLEDGE_PROBE:
            from .probes import study_probes

            if not study_probes(study):
                raise forms.ValidationError(
                    f"Study '{study.slug}' has no rulebreakers items: the knowledge probe asks about their "
                    "cities and instances, so there is nothing to probe."
                )
        elif study is not None and not study.items.exists():
            raise forms.ValidationError(f"Study '{study.slug}' has no items to score; generate or import some first.")
        return cleaned


@admin.register(ModelRun)
class ModelRunAdmin(admin.ModelAdmin):
    form = ModelRunForm
    list_display = ("id", "study", "language_model", "kind", "status", "progress", "queue", "started_at", "finished_at")
    list_filter = ("status", "kind", "language_model", "study")
    list_select_related = ("study", "language_model")
    actions = ["cancel_runs", "retry_runs"]
    readonly_fields = ("status", "progress", "scores_link", "queue", "started_at", "finished_at", "versions", "error", "created_at")

    def get_readonly_fields(self, request, obj=None):
        if obj is None:
            return ()
        return ("study", "language_model", "kind", "batch_size", "device", "item_limit", *self.readonly_fields)

    def get_fields(self, request, obj=None):
        if obj is None:
            return ["study", "language_model", "kind", "batch_size", "device", "item_limit"]
        return ["study", "language_model", "kind", "status", "progress", "scores_link", "batch_size", "device",
                "item_limit", "queue", "started_at", "finished_at", "error", "versions"]

    @admin.display(description="progress")
    def progress(self, obj):
        total = obj.items_total or 0
        share = 100 * obj.items_done / total if total else 0
        return format_html(
            '<progress value="{}" max="{}"></progress> {} / {} ({}%)', obj.items_done, total or 1,
            obj.items_done, total, f"{share:.0f}",
        )

    @admin.display(description="scores")
    def scores_link(self, obj):
        url = reverse("admin:inference_modelscore_changelist") + f"?run__id__exact={obj.pk}"
        return format_html('<a href="{}">{} scores</a>', url, obj.items_done)

    def save_model(self, request, obj, form, change):
        if change:
            return  # a run's settings are fixed once launched
        from .probes import probe_run_launch

        launch = probe_run_launch if obj.kind == RunKind.KNOWLEDGE_PROBE else services.model_run_launch
        run = launch(  # the form has checked what the run's create service would refuse
            study=obj.study, language_model=obj.language_model, batch_size=obj.batch_size,
            device=obj.device, item_limit=obj.item_limit,
        )
        obj.pk = run.pk
        obj.__dict__.update({k: v for k, v in run.__dict__.items() if not k.startswith("_")})
        self.message_user(request, f"Run {run.pk} queued ({services.dispatch_mode()}): {run.items_total} items.")

    def has_change_permission(self, request, obj=None):
        # the list (and its cancel/retry actions) for whoever may view runs; never for staff without
        # permissions (issue 8: this once returned True for any staff user when obj was None)
        if obj is None and self.has_view_permission(request):
            return True
        return super().has_change_permission(request, obj)

    def change_view(self, request, object_id, form_url="", extra_context=None):
        run = ModelRun.objects.filter(pk=object_id).first()
        extra = {"auto_refresh": run is not None and run.status in (RunStatus.QUEUED, RunStatus.RUNNING)}
        return super().change_view(request, object_id, form_url, {**(extra_context or {}), **extra})

    def _each(self, request, queryset, action, verb):
        for run in queryset:
            try:
                action(run=run)
            except ValidationError as exc:
                self.message_user(request, " ".join(exc.messages), level=messages.ERROR)
            else:
                self.message_user(request, f"Run {run.pk} {verb}.")

    @admin.action(description="Cancel selected runs")
    def cancel_runs(self, request, queryset):
        self._each(request, queryset, services.model_run_cancel, "cancelled")

    @admin.action(description="Retry (resume) selected failed or cancelled runs")
    def retry_runs(self, request, queryset):
        self._each(request, queryset, services.model_run_retry, "queued again")


@admin.register(ModelScore)
class ModelScoreAdmin(admin.ModelAdmin):
    list_display = ("item", "run", "gold", "p_yes", "p_no", "relative_p_yes", "options", "soft_accuracy",
                    "decision", "perplexity", "prompt_tokens", "answer_mass")
    list_filter = ("run", "decision")
    list_select_related = ("item", "run")
    search_fields = ("item__code",)

    @admin.display(description="gold")
    def gold(self, obj):
        return obj.item.gold_answer

    @admin.display(description="p(A) p(B) p(C) p(D)")
    def options(self, obj):
        """Multiple choice: each letter's probability relative to the four (empty for yes/no)."""
        probs = obj.option_probs or {}
        return " ".join(f"{letter} {probs[letter]:.3f}" for letter in sorted(probs)) or "–"

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(ProbeScore)
class ProbeScoreAdmin(admin.ModelAdmin):
    """Knowledge-probe answers (000 §4.1): read-only, filterable by run and by whether the model knows."""

    list_display = ("probe_key", "run", "target", "p_target", "top_token", "known")
    list_filter = ("known", "run")
    list_select_related = ("run",)
    search_fields = ("probe_key", "target")

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
