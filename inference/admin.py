"""Admin for researchers: register models, launch runs, watch their progress, read the scores."""
from __future__ import annotations

from django import forms
from django.contrib import admin
from django.core.exceptions import ValidationError
from django.urls import reverse
from django.utils.html import format_html

from experiments.team_admin import TeamScopedAdmin
from experiments.team_scope import visible_studies
from studyserver import workers
from studyserver.admin_display import ReadOnlyAdmin, rounded, structured
from studyserver.job_admin import JobAdminMixin

from . import checks, services
from .models import GENERATION_DEFAULTS, GeneratedAnswer, LanguageModel, ModelRun, ModelScore, ProbeScore, RunKind, RunStatus


class LanguageModelForm(forms.ModelForm):
    class Meta:
        model = LanguageModel
        fields = ["name", *LanguageModel.IDENTITY, "device", "server_urls", "concurrency", "api_key_env"]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if "concurrency" in self.fields:
            self.fields["concurrency"].required = False  # empty: the default (4 per server)
        for name in GENERATION_DEFAULTS:  # left empty: the default (they only apply to generated answers)
            if name in self.fields:
                self.fields[name].required = False

    def clean_concurrency(self):
        value = self.cleaned_data.get("concurrency")
        return LanguageModel._meta.get_field("concurrency").default if value in (None, "") else value

    def clean(self):
        for name, default in GENERATION_DEFAULTS.items():
            if name in self.fields and self.cleaned_data.get(name) in (None, ""):
                self.cleaned_data[name] = default
        cleaned = super().clean()
        if self.errors:
            return cleaned
        changes = {name: cleaned[name] for name in self.Meta.fields if name in cleaned}
        target = self.instance if self.instance.pk else LanguageModel()
        changed = [n for n in LanguageModel.IDENTITY if getattr(self.instance, n) != changes.get(n)]
        if not self.instance.pk or changed:  # is it usable here? (hub id cached, package installed, …)
            candidate = LanguageModel(**changes)
            for field, message in checks.problems(candidate):
                self.add_error(field if field in self.fields else None, message)
            if self.errors:
                return cleaned
        try:  # the service's checks, on a copy: nothing is written before save_model
            fixed = [n for n in LanguageModel.IDENTITY if self.instance.pk and getattr(self.instance, n) != changes.get(n)]
            if fixed and self.instance.runs.exists():
                services.language_model_update(model=LanguageModel.objects.get(pk=self.instance.pk), **changes)
            twin = services.language_model_matching(identity={n: changes[n] for n in LanguageModel.IDENTITY})
            if twin is not None and twin.pk != target.pk:
                raise ValidationError(f"Configuration '{twin.name}' already has exactly these options; use it.")
        except ValidationError as exc:
            raise forms.ValidationError(exc.messages) from None
        return cleaned


@admin.register(LanguageModel)
class LanguageModelAdmin(admin.ModelAdmin):
    """Model configurations. One with runs keeps its options ('Save as new' makes another)."""

    form = LanguageModelForm
    save_as = True
    list_display = ("name", "backend", "source", "gguf_file", "dtype", "prompt_format", "answers", "decision_rule",
                    "run_count")
    list_filter = ("prompt_format", "dtype", "decision_rule", "backend")
    search_fields = ("name", "source")
    readonly_fields = ("token_ids_used", "created_at")
    actions = ["check_configurations"]
    fieldsets = (
        (None, {"fields": ("name", "backend", "source", "gguf_file", "revision", "dtype", "device", "prompt_format",
                           "answer_yes", "answer_no", "answer_forms", "decision_rule")}),
        ("Server and chat backends", {"fields": LanguageModel.SERVER_FIELDS}),
        ("Generation mode (decision rule 'generated')", {"fields": tuple(GENERATION_DEFAULTS), "description": (
            "The model writes its answer: n samples per item (greedy: one), cut at a stop string or max tokens; "
            "the design's parser reads each (unparseable: 'other'); the share of yes is p(Yes).")}),
        ("Recorded", {"fields": ("token_ids_used", "created_at")}),
    )

    @admin.action(description="Check: score one item and show the answer")
    def check_configurations(self, request, queryset):
        """A one-item check run per configuration, on the newest study with items it can score; the
        answer is shown here when the run is done at once (eager), else on the run's page."""
        for model in queryset:
            try:
                run = services.language_model_check(model=model, studies=visible_studies(request.user))
            except ValidationError as exc:
                self.message_user(request, f"{model.name}: " + " ".join(exc.messages), level=messages.ERROR)
                continue
            url = reverse("admin:inference_modelrun_change", args=[run.pk])
            if run.status == RunStatus.DONE:
                self.message_user(request, format_html('{}: <a href="{}">check run {}</a> answered: {}', model.name,
                                                       url, run.pk, services.check_answer(run=run)))
            elif run.status == RunStatus.FAILED:
                self.message_user(request, format_html('{}: <a href="{}">check run {}</a> failed: {}', model.name,
                                                       url, run.pk, run.error), level=messages.ERROR)
            else:
                self.message_user(request, format_html('{}: <a href="{}">check run {}</a> queued; its answer shows on '
                                                       "its page.", model.name, url, run.pk))

    def get_queryset(self, request):
        from django.db.models import Count

        from experiments.team_scope import condition

        mine = condition(request.user, "runs__study")  # configurations are shared; a team counts its own runs
        return super().get_queryset(request).annotate(n_runs=Count("runs", filter=mine))

    @admin.display(description="runs", ordering="n_runs")
    def run_count(self, obj):
        return getattr(obj, "n_runs", None)

    @admin.display(description="answers")
    def answers(self, obj):
        return f"{obj.answer_yes!r} / {obj.answer_no!r} (forms: {obj.answer_forms})"

    def get_readonly_fields(self, request, obj=None):
        if obj is not None and obj.runs.exists():
            return (*LanguageModel.IDENTITY, *self.readonly_fields)
        return self.readonly_fields

    @admin.display(description="variants of the latest run (first item)")
    def token_ids_used(self, obj):
        found = obj.answer_token_ids or {}
        if not found.get("token_ids"):
            return "— (filled by the configuration's first run; every score keeps its own)"
        parts = [f"{text!r}={ids}" for text, ids in found["token_ids"].items()]
        dropped = [f"{forms} ({why})" for forms, why in ((d["forms"], d["why"]) for d in found.get("dropped", []))]
        return " · ".join(parts) + (" · dropped: " + "; ".join(dropped) if dropped else "")

    def save_model(self, request, obj, form, change):
        fields = {name: form.cleaned_data[name] for name in form.Meta.fields if name in form.cleaned_data}
        if change:
            services.language_model_update(model=LanguageModel.objects.get(pk=obj.pk), **fields)
        else:
            obj.pk = services.language_model_create(**fields).pk


class ModelRunForm(forms.ModelForm):
    kind = forms.ChoiceField(choices=[("", "by the study's items"), *RunKind.choices], required=False,
                             label=ModelRun._meta.get_field("kind").verbose_name,
                             help_text=ModelRun._meta.get_field("kind").help_text)

    class Meta:
        model = ModelRun
        fields = ["study", "language_model", "kind", "batch_size", "device", "item_limit"]

    def clean(self):
        cleaned = super().clean()
        study = cleaned.get("study")
        if study is not None:
            from . import strategies

            kind = cleaned.get("kind") or strategies.default_kind(study)
            cleaned["kind"] = kind
            strategy = strategies.for_kind(kind)
            if not strategy.units(study):
                raise forms.ValidationError(strategy.nothing(study))
        return cleaned


@admin.register(ModelRun)
class ModelRunAdmin(TeamScopedAdmin, JobAdminMixin, admin.ModelAdmin):
    form = ModelRunForm
    job_permission = "inference.view_modelrun"  # as before: whoever may see runs may cancel and retry them
    list_display = ("id", "study", "language_model", "kind", "status", "progress", "partial", "queue", "started_at",
                    "finished_at")
    list_filter = ("status", "kind", "partial", "language_model", "study")
    list_select_related = ("study", "language_model")
    actions = ["cancel_jobs", "retry_jobs"]
    readonly_fields = ("status", "progress", "partial", "scores_link", "answer", "queue", "started_at", "finished_at",
                       "configuration_table", "versions_table", "error", "created_at")
    # a configuration's keys are LanguageModel's fields: shown with their labels ("GGUF file", not gguf_file)
    configuration_table = structured(ModelRun, "configuration", labels={
        f.name: str(f.verbose_name) for f in LanguageModel._meta.fields})
    versions_table = structured(ModelRun, "versions", labels={
        f.name: str(f.verbose_name) for f in LanguageModel._meta.fields if f.name in ("dtype", "prompt_format")})

    @admin.display(description="answer (first item)")
    def answer(self, obj):
        return services.check_answer(run=obj) if obj.pk else "—"

    def get_readonly_fields(self, request, obj=None):
        if obj is None:
            return ()
        return ("study", "language_model", "kind", "batch_size", "device", "item_limit", *self.readonly_fields)

    def get_fields(self, request, obj=None):
        if obj is None:
            return ["study", "language_model", "kind", "batch_size", "device", "item_limit"]
        return [name for name in ("study", "language_model", "kind", "status", "progress", "partial", "scores_link", "answer",
                                  "batch_size", "device", "item_limit", "queue", "started_at", "finished_at", "error",
                                  "configuration_table", "versions_table") if name != "queue" or workers.queues_shown()]

    def get_list_display(self, request):  # the queue only where Celery workers take work from it
        shown = super().get_list_display(request)
        return shown if workers.queues_shown() else tuple(name for name in shown if name != "queue")

    @admin.display(description="scores")
    def scores_link(self, obj):
        url = reverse("admin:inference_modelscore_changelist") + f"?run__id__exact={obj.pk}"
        return format_html('<a href="{}">{} scores</a>', url, obj.items_done)

    def save_model(self, request, obj, form, change):
        if change:
            return  # a run's settings are fixed once launched
        run = services.model_run_launch(  # the form has checked what the run's create service would refuse
            study=obj.study, language_model=obj.language_model, kind=form.cleaned_data["kind"],
            batch_size=obj.batch_size, device=obj.device, item_limit=obj.item_limit,
        )
        obj.pk = run.pk
        obj.__dict__.update({k: v for k, v in run.__dict__.items() if not k.startswith("_")})
        from studyserver import dispatch

        partial = " — partial: reports leave it out unless asked" if run.partial else ""
        self.message_user(request, f"Run {run.pk} queued ({dispatch.mode()}): {run.items_total} items{partial}.")

    def has_change_permission(self, request, obj=None):
        # the list (and its cancel/retry actions) for whoever may view runs; never for staff without
        # permissions (issue 8: this once returned True for any staff user when obj was None)
        if obj is None and self.has_view_permission(request):
            return True
        return super().has_change_permission(request, obj)


class GeneratedAnswerInline(admin.TabularInline):
    """The samples of a score in generation mode: raw text, thinking apart, the parsed answer."""

    model = GeneratedAnswer
    fields = ("sample", "parsed", "answer_text", "thinking", "tokens", "finish_reason", "text")
    readonly_fields = fields
    extra = 0
    can_delete = False

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(ModelScore)
class ModelScoreAdmin(TeamScopedAdmin, ReadOnlyAdmin):
    study_path = "run__study"
    inlines = [GeneratedAnswerInline]
    list_display = ("item", "run", "gold", "p_yes_rounded", "p_yes_interval", "p_no_rounded", "relative_p_yes_rounded",
                    "options", "soft_accuracy_rounded", "decision", "decision_rule", "decision_relative", "top_answer",
                    "top_token", "perplexity_rounded", "prompt_tokens", "answer_mass_rounded")
    p_yes_rounded, p_no_rounded = rounded(ModelScore, "p_yes"), rounded(ModelScore, "p_no")
    relative_p_yes_rounded = rounded(ModelScore, "relative_p_yes")
    soft_accuracy_rounded = rounded(ModelScore, "soft_accuracy")
    perplexity_rounded, answer_mass_rounded = rounded(ModelScore, "perplexity"), rounded(ModelScore, "answer_mass")
    list_filter = ("run", "decision", "decision_rule", "answer_forms", "top_answer")
    raw_id_fields = ("run", "item")
    list_select_related = ("item", "run")
    search_fields = ("item__code",)
    exclude = ("logprobs", "token_ids", "variants", "option_probs")  # shown as tables below
    readonly_fields = ("logprobs_table", "token_ids_table", "variants_table", "option_probs_table")
    logprobs_table = structured(ModelScore, "logprobs")
    token_ids_table = structured(ModelScore, "token_ids")
    variants_table = structured(ModelScore, "variants")
    option_probs_table = structured(ModelScore, "option_probs")

    @admin.display(description="gold")
    def gold(self, obj):
        return obj.item.gold_answer

    @admin.display(description="p(Yes) 95% interval")
    def p_yes_interval(self, obj):
        """Generated answers: Wilson over the item's n samples (unit: one sample of this item)."""
        record = obj.generation or {}
        if not record.get("n") or obj.p_yes is None:
            return "–"
        from logic.answer_parsing import wilson

        low, high = wilson(record.get("counts", {}).get("yes", 0), record["n"])
        return f"{low:.2f}–{high:.2f} (n={record['n']} samples, {record.get('unparsed', 0)} unparseable)"

    @admin.display(description="p(A) p(B) p(C) p(D)")
    def options(self, obj):
        """Multiple choice: each letter's probability relative to the four (empty for yes/no)."""
        probs = obj.option_probs or {}
        return " ".join(f"{letter} {probs[letter]:.3f}" for letter in sorted(probs)) or "–"


@admin.register(ProbeScore)
class ProbeScoreAdmin(TeamScopedAdmin, ReadOnlyAdmin):
    """Knowledge-probe answers (000 §4.1): read-only, filterable by run and by whether the model knows."""

    study_path = "run__study"

    list_display = ("probe_key", "run", "target", "p_target_rounded", "top_token", "known")
    p_target_rounded = rounded(ProbeScore, "p_target")
    exclude = ("target_token_ids",)
    readonly_fields = ("target_token_ids_table",)
    target_token_ids_table = structured(ProbeScore, "target_token_ids")
    list_filter = ("known", "run")
    list_select_related = ("run",)
    search_fields = ("probe_key", "target")
