"""Admin for researchers: register models, launch runs, watch their progress, read the scores."""
from __future__ import annotations

import logging
from functools import partial
from types import SimpleNamespace
from urllib.parse import urlencode

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.utils import unquote
from django.core.exceptions import ValidationError
from django.shortcuts import redirect
from django.urls import reverse
from django.utils.html import format_html, format_html_join

from experiments import team_scope
from experiments.team_admin import TeamOwnedAdmin, TeamScopedAdmin
from experiments.team_scope import visible_studies
from common import workers
from common.admin_display import ReadOnlyAdmin, rounded, structured
from common.admin_forms import RefusedActionsMixin, form_or_page
from common.job_admin import JobAdminMixin

from . import checks, scopes, selectors, services, strategies
from .config_forms import FORM_FIELDS, KEEP_SPACES, SHOWN_VISIBLY, CheckForm, SweepForm, shown, visible
from .models import (
    GENERATION_DEFAULTS, RUN_KINDS, GeneratedAnswer, LanguageModel, ModelRun, ModelScore, ProbeScore, RunKind,
    RunScope, RunStatus, stop_from_lines, stop_to_lines,
)

log = logging.getLogger(__name__)


OWNERSHIP = ("team", "shared_with")  # who owns a configuration and who may read it (issue 45)


class LanguageModelForm(forms.ModelForm):
    class Meta:
        model = LanguageModel
        fields = [*FORM_FIELDS, *OWNERSHIP]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for name in KEEP_SPACES:  # a Django form field strips by default: ' Yes' would be stored as 'Yes'
            if name in self.fields:
                self.fields[name].strip = False
        if "concurrency" in self.fields:
            self.fields["concurrency"].required = False  # empty: the default (4 per server)
        for name in GENERATION_DEFAULTS:  # left empty: the default (they only apply to generated answers)
            if name in self.fields:
                self.fields[name].required = False
        if "stop" in self.fields:  # one per line, as the help says; stored as a JSON list
            field = self.fields["stop"]
            self.fields["stop"] = forms.CharField(required=False, strip=False, label=field.label,
                                                  help_text=field.help_text,
                                                  widget=forms.Textarea(attrs={"rows": 3, "cols": 40}))
            self.initial["stop"] = stop_to_lines(self.initial.get("stop") or "[]")

    def _clean_answer(self, name: str) -> str:
        value = self.cleaned_data.get(name) or ""
        if not value.strip():
            raise forms.ValidationError("An answer needs at least one character besides spaces, e.g. ' Yes'.")
        return value

    def clean_answer_yes(self):
        return self._clean_answer("answer_yes")

    def clean_answer_no(self):
        return self._clean_answer("answer_no")

    def clean_stop(self):
        try:
            return stop_from_lines(self.cleaned_data.get("stop") or "")
        except ValueError as exc:
            raise forms.ValidationError(str(exc)) from None

    def clean_concurrency(self):
        value = self.cleaned_data.get("concurrency")
        return LanguageModel._meta.get_field("concurrency").default if value in (None, "") else value

    def changes(self) -> dict:
        """The configuration as saved: the form's fields and its team, and the read-only ones (a
        configuration with runs) as they are."""
        cleaned = self.cleaned_data
        return {name: cleaned[name] if name in cleaned else getattr(self.instance, name)
                for name in (*FORM_FIELDS, "team")}

    def clean(self):
        for name, default in GENERATION_DEFAULTS.items():
            if name in self.fields and self.cleaned_data.get(name) in (None, ""):
                self.cleaned_data[name] = default
        cleaned = super().clean()
        if self.errors:
            return cleaned
        changes = self.changes()
        target = self.instance if self.instance.pk else LanguageModel()
        changed = [n for n in (*LanguageModel.IDENTITY, "server_urls", "api_key_env")
                   if getattr(self.instance, n) != changes[n]]
        # is it usable here? (hub id cached, package installed, server answering): checked in _post_clean,
        # after the model's own validation, so no request goes to a URL the model refuses
        self._candidate = LanguageModel(**changes) if not self.instance.pk or changed else None
        try:  # the service's checks, on a copy: nothing is written before save_model
            fixed = [n for n in LanguageModel.IDENTITY if self.instance.pk and getattr(self.instance, n) != changes[n]]
            if fixed and self.instance.runs.exists():
                services.language_model_update(model=LanguageModel.objects.get(pk=self.instance.pk), **changes)
            twin = services.language_model_matching(identity={n: changes[n] for n in LanguageModel.IDENTITY},
                                                    team=getattr(changes["team"], "pk", None))
            if twin is not None and twin.pk != target.pk:
                raise ValidationError(f"Configuration '{twin.name}' already has exactly these options; use it.")
        except ValidationError as exc:
            raise forms.ValidationError(exc.messages) from None
        return cleaned

    def _post_clean(self):
        super()._post_clean()  # the model's own validation (http(s) URLs, …) first: no request for a bad one
        candidate = getattr(self, "_candidate", None)
        if candidate is not None and not self.errors:
            for field, message in checks.problems(candidate):
                self.add_error(field if field in self.fields else None, message)


@admin.register(LanguageModel)
class LanguageModelAdmin(TeamOwnedAdmin, RefusedActionsMixin, admin.ModelAdmin):
    """Model configurations, each a team's own (issue 45): its members change it; teams it is shared
    with see and run it, read-only; other teams never see it. One with runs keeps the options that
    decide its numbers ('Save as new' makes another); its name, device and concurrency may change, and
    new servers or another key's name make a new version (its runs keep what they were created with)."""

    form = LanguageModelForm
    save_as = True
    list_display = ("name", "team", "backend", "source", "gguf_file", "dtype", "prompt_format", "answers",
                    "decision_rule", "run_count")
    list_filter = ("team", "prompt_format", "dtype", "decision_rule", "backend")
    search_fields = ("name", "source")
    readonly_fields = ("token_ids_used", "versions_shown", "created_at")
    filter_horizontal = ("shared_with",)
    actions = ["check_configurations", "run_sweep"]
    fieldsets = (
        (None, {"fields": ("name", "backend", "source", "gguf_file", "revision", "dtype", "device", "prompt_format",
                           "answer_yes", "answer_no", "answer_forms", "decision_rule")}),
        ("Server and chat backends", {"fields": LanguageModel.SERVER_FIELDS}),
        ("Generation mode (decision rule 'generated')", {"fields": tuple(GENERATION_DEFAULTS), "description": (
            "The model writes its answer: n samples per item (greedy: one), cut at a stop string or max tokens; "
            "the design's parser reads each (unparseable: 'other'); the share of yes is p(Yes).")}),
        ("Who owns it", {"fields": OWNERSHIP, "description": (
            "Only the owning team's members change it; the teams it is shared with see it and run it on their "
            "studies, read-only; no other team sees it. Of no team: only superusers see it.")}),
        ("Recorded", {"fields": ("token_ids_used", "versions_shown", "created_at")}),
    )
    answer_yes_shown, answer_no_shown = shown("answer_yes"), shown("answer_no")
    start_token_shown, stop_shown = shown("start_token"), shown("stop")

    def has_check_permission(self, request) -> bool:
        return request.user.has_perm("inference.check_languagemodel")

    @admin.action(description="Check: score one item of a study and show the answer", permissions=["check"])
    def check_configurations(self, request, queryset):
        """A one-item check run per configuration on the study chosen (default: the newest with items);
        the answer is shown here when the run is done at once (eager), else on the run's page. Whatever
        goes wrong is a message."""
        choose = partial(CheckForm, studies=visible_studies(request.user))
        form, page = form_or_page(self, request, queryset, choose, title="Check model configurations",
                                  template="admin/inference/check_configurations.html",
                                  action="check_configurations", submit="Check")
        if page is not None:
            return page
        for model in queryset:
            self._check_one(request, model, form.cleaned_data["study"])

    def has_run_permission(self, request) -> bool:
        return request.user.has_perm("inference.add_modelrun")

    @admin.action(description="Run on a study: a run per selected configuration (a sweep)", permissions=["run"])
    def run_sweep(self, request, queryset):
        """One normal run per selected configuration over every item of the study chosen (inference/sweeps.py);
        each refused one is a message saying why, the others run."""
        from .sweeps import model_runs_sweep

        choose = partial(SweepForm, studies=visible_studies(request.user), language_models=list(queryset.order_by("name")))
        form, page = form_or_page(self, request, queryset, choose, title="Run model configurations on a study",
                                  template="admin/inference/run_sweep.html", action="run_sweep", submit="Run")
        if page is not None:
            return page
        try:
            sweep = model_runs_sweep(study=form.cleaned_data["study"], language_models=list(queryset.order_by("name")),
                                     batch_size=form.cleaned_data["batch_size"], scope=form.cleaned_data["scope"] or None)
        except ValidationError as exc:
            self.message_user(request, " ".join(exc.messages), level=messages.ERROR)
            return None
        for model, why in sweep.refused:
            self.message_user(request, f"{model.name}: not run: {why}", level=messages.ERROR)
        if sweep.runs:
            url = reverse("admin:inference_modelrun_changelist") + "?" + urlencode(
                {"study__id__exact": form.cleaned_data["study"].pk})
            self.message_user(request, format_html(
                '{} run{} of {} queued ({} items each, {}): <a href="{}">follow them</a>.', len(sweep.runs),
                "s" if len(sweep.runs) != 1 else "", form.cleaned_data["study"].slug, sweep.runs[0].items_total,
                sweep.runs[0].scope_detail.get("rule", ""), url))
        return None

    def _check_one(self, request, model, study) -> None:
        try:
            run = services.language_model_check(model=model, study=study, studies=visible_studies(request.user))
        except ValidationError as exc:
            self.message_user(request, f"{model.name}: " + " ".join(exc.messages), level=messages.ERROR)
            return
        except Exception as exc:  # never a 500: said in words, the details in the log
            log.exception("check of configuration %s failed", model.pk)
            self.message_user(request, f"{model.name}: the check could not run ({type(exc).__name__}; the details "
                                       "are in the server's log).", level=messages.ERROR)
            return
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
        return f"{visible(obj.answer_yes)} / {visible(obj.answer_no)} (forms: {obj.answer_forms})"

    def changeform_view(self, request, object_id=None, form_url="", extra_context=None):
        """A refusal the service makes at save (a server that answered the form's check and not the
        save's) is a message on the form's page, with nothing saved; never an error page."""
        try:
            return super().changeform_view(request, object_id, form_url, extra_context)
        except ValidationError as exc:  # raised inside the admin's transaction: nothing was written
            self.message_user(request, "Not saved: " + " ".join(exc.messages), level=messages.ERROR)
            return redirect(request.get_full_path())

    def change_view(self, request, object_id, form_url="", extra_context=None):
        """'Save as new' on a configuration with runs (whose options are read-only, so not posted): the add
        form prefilled with its options and what was typed, to change what the new one needs."""
        if request.method == "POST" and "_saveasnew" in request.POST and self.has_add_permission(request):
            obj = self.get_object(request, unquote(object_id))
            if self._fixed(obj):
                initial = {name: getattr(obj, name) for name in FORM_FIELDS}
                initial.update({name: request.POST[name] for name in FORM_FIELDS if name in request.POST})
                if initial["name"] == obj.name:
                    initial["name"] = f"{obj.name} (new options)"[:120]
                self.message_user(request, f"'{obj.name}' has runs, so its options stay as they are. Here they are "
                                           "in a new configuration: change what the new one needs, then save.")
                return redirect(reverse("admin:inference_languagemodel_add") + "?" + urlencode(initial))
        return super().change_view(request, object_id, form_url, extra_context)

    def _fixed(self, obj) -> bool:
        return obj is not None and obj.pk is not None and obj.runs.exists()

    def has_change_permission(self, request, obj=None):
        """A version replaced when its servers changed stays as its runs used it: read-only."""
        if obj is not None and obj.pk is not None and obj.newer_version() is not None:
            return False
        return super().has_change_permission(request, obj)

    @admin.display(description="versions")
    def versions_shown(self, obj):
        """The earlier version it replaced and the newer one that replaced it (of its own team only)."""
        if obj is None or obj.pk is None:
            return "—"
        parts = []
        for label, other in (("replaces", obj.replaces), ("replaced by", obj.newer_version())):
            if other is not None and other.team_id == obj.team_id:
                url = reverse("admin:inference_languagemodel_change", args=[other.pk])
                parts.append(format_html('{} <a href="{}">{}</a>', label, url, other.name))
        return format_html_join(" · ", "{}", ((part,) for part in parts)) if parts else "— (the only version)"

    def get_readonly_fields(self, request, obj=None):
        keyless = () if request.user.has_perm("inference.name_api_key") else ("api_key_env",)  # issue 34
        if self._fixed(obj):
            return (*LanguageModel.IDENTITY, *(f"{n}_shown" for n in SHOWN_VISIBLY), *self.readonly_fields, *keyless)
        return (*self.readonly_fields, *keyless)

    def get_fieldsets(self, request, obj=None):
        """A configuration with runs: its answers, start token and stop strings shown as stored ('␣Yes')."""
        fieldsets = super().get_fieldsets(request, obj)
        if not self._fixed(obj):
            return fieldsets
        swap = {name: f"{name}_shown" for name in SHOWN_VISIBLY}
        return [(title, {**options, "fields": tuple(swap.get(n, n) for n in options["fields"])})
                for title, options in fieldsets]

    @admin.display(description="variants of the latest run (first item)")
    def token_ids_used(self, obj):
        found = obj.answer_token_ids or {}
        if not found.get("token_ids"):
            return "— (filled by the configuration's first run; every score keeps its own)"
        parts = [f"{visible(text)}={ids}" for text, ids in found["token_ids"].items()]
        dropped = [f"{forms} ({why})" for forms, why in ((d["forms"], d["why"]) for d in found.get("dropped", []))]
        return " · ".join(parts) + (" · dropped: " + "; ".join(dropped) if dropped else "")

    def save_model(self, request, obj, form, change):
        fields = form.changes()
        shared = self._shared_with(request, form, obj if change else None)
        if not change:
            obj.pk = services.language_model_create(by=request.user, shared_with=shared, **fields).pk
            return
        before = LanguageModel.objects.get(pk=obj.pk)
        saved = services.language_model_update(model=before, by=request.user, shared_with=shared, **fields)
        if saved.pk != before.pk:  # new servers on a configuration with runs: a new version
            obj.__dict__.update({k: v for k, v in saved.__dict__.items() if not k.startswith("_")})
            self.message_user(request, f"'{before.name}' has runs, so its new servers make a new version, "
                                       f"'{saved.name}'; its runs keep the servers they were created with.",
                              level=messages.WARNING)

    def _shared_with(self, request, form, obj) -> list | None:
        """The teams it is shared with as the form says, keeping those the user cannot see (a superuser's
        sharing with a team the editor is not in is not undone by their save); None: not on the form."""
        if "shared_with" not in form.cleaned_data:
            return None
        chosen = list(form.cleaned_data["shared_with"])
        if obj is None or obj.pk is None:
            return chosen
        seen = set(team_scope.teams_of(request.user).values_list("pk", flat=True))
        return chosen + [team for team in obj.shared_with.all() if team.pk not in seen]

    def save_related(self, request, form, formsets, change):
        """The teams it is shared with are saved by the service (save_model), on the version saved."""
        for formset in formsets:
            self.save_formset(request, form, formset, change=change)


class ModelRunForm(forms.ModelForm):
    """A run to launch. Nothing is launched before the form has shown, for the study, configuration and kind
    posted, how many items each scope holds and about how long each takes at the configuration's measured
    rate (a first save shows them when the page was opened without them; the next save launches)."""

    kind = forms.ChoiceField(choices=[("", "by the study's items"), *RunKind.choices], required=False,
                             label=ModelRun._meta.get_field("kind").verbose_name,
                             help_text=ModelRun._meta.get_field("kind").help_text)
    scope = forms.ChoiceField(choices=RunScope.choices, required=False, widget=forms.RadioSelect,
                              label=ModelRun._meta.get_field("scope").verbose_name,
                              help_text=ModelRun._meta.get_field("scope").help_text)
    stated_subset = forms.CharField(
        required=False, strip=False, label="stated subset", widget=forms.Textarea(attrs={"rows": 2, "cols": 60}),
        help_text="Scope 'subset': a factor per line, 'name = value, value' — e.g. 'variant = follow/yes-no, "
                  "follow/true-false' (the phrasings) or 'condition = real'; an item is scored when each factor's "
                  "value is one of those listed.")
    counted_for = forms.CharField(
        required=False, widget=forms.HiddenInput, label="counts shown for",
        help_text="The study, configuration, kind and subset whose counts and times the form has shown (it fills "
                  "this itself; a save for others shows theirs first).")

    class Meta:
        model = ModelRun
        fields = ["study", "language_model", "kind", "scope", "batch_size", "device", "item_limit"]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.counted = None
        if self.instance.pk or "study" not in self.fields:  # a run's own page: its settings are fixed
            return
        source = self.data if self.is_bound else self.initial
        study, model = self._picked("study", source), self._picked("language_model", source)
        kind = source.get("kind") or (strategies.default_kind(study) if study is not None else "")
        if study is None or kind not in RUN_KINDS:
            self.fields["scope"].help_text += (" Choose the study and the configuration, then save: the form shows how "
                                               "many items each scope holds and about how long each takes before "
                                               "anything is launched.")
            return
        strategy = strategies.for_kind(kind)
        try:
            subset = scopes.subset_check(study, scopes.subset_parse(source.get("stated_subset") or ""))
        except ValidationError:
            subset = None
        counts = scopes.counts(study=study, strategy=strategy, subset=subset)
        rate = selectors.language_model_rate(language_model=model, kind=kind) if model is not None else None
        field = self.fields["scope"]
        unit = "probes" if kind == RunKind.KNOWLEDGE_PROBE else "items"
        field.choices = [(c.scope, self._label(c, rate, model, unit)) for c in counts]
        if not self.is_bound:
            field.initial = next((c.scope for c in counts if c.default), None)
        said = (f" and about how long each takes at {rate.words()}" if rate is not None else
                f" (no measured rate yet: configuration '{model.name}' has no finished run of "
                f"{services.kind_words(kind)})" if model is not None else " (choose a configuration for the times)")
        field.help_text = format_html(  # (the admin shows a help text as it is: the names are escaped here)
            "Study '{}', {}: the items each scope holds{}. An item limit takes the first N of the scope chosen.",
            study.slug, services.kind_words(kind), said)
        posted = source.get("scope") or next((c.scope for c in counts if c.default), "")
        self.counted = self._key(study, model, kind, posted, subset)
        if not self.is_bound:
            self.initial["counted_for"] = self.counted

    def _picked(self, name: str, source):
        value = source.get(name)
        value = getattr(value, "pk", value)
        try:
            return self.fields[name].queryset.filter(pk=int(value)).first()  # the user's own choices only
        except (TypeError, ValueError):
            return None

    @staticmethod
    def _label(count, rate, model, unit: str) -> str:
        if count.items is None:
            return f"{RunScope(count.scope).label}: {count.words}"
        time = f", {selectors.run_time_words(rate, count.items)}" if model is not None else ""
        return f"{count.words} — {count.items} {unit}{time}{' (the default)' if count.default else ''}"

    @staticmethod
    def _key(study, model, kind, scope, subset) -> str:
        """What the counts shown were counted for: the study, configuration and kind (each scope's count and
        time is shown for them), and a stated subset (its count is shown once it is stated)."""
        stated = f"subset: {scopes.subset_text(subset or {})}" if scope == RunScope.SUBSET else ""
        return f"{study.pk}/{getattr(model, 'pk', '')}/{kind}/{stated}"

    def clean(self):
        cleaned = super().clean()
        study = cleaned.get("study")
        if study is None:
            return cleaned
        kind = cleaned.get("kind") or strategies.default_kind(study)
        cleaned["kind"] = kind
        strategy = strategies.for_kind(kind)
        if cleaned.get("language_model") is not None:
            try:  # another team's configuration, shared with the user's but not with the study's team
                services.language_model_usable(model=cleaned["language_model"], study=study)
            except ValidationError as exc:
                self.add_error("language_model", exc.messages)
                return cleaned
        try:
            scope = scopes.asked(study=study, strategy=strategy, scope=cleaned.get("scope") or None,
                                 subset=cleaned.get("stated_subset") or None)
        except ValidationError as exc:
            raise forms.ValidationError(exc.messages) from None
        cleaned["scope"], cleaned["subset"] = scope.name, scope.subset_dict()
        if not strategy.count(study, scope):
            raise forms.ValidationError(scopes.nothing(study=study, strategy=strategy, scope=scope,
                                                       kind_words=services.kind_words(kind)))
        key = self._key(study, cleaned.get("language_model"), kind, scope.name, scope.subset_dict())
        if self.data.get("counted_for") != key:  # the counts and times shown were not these (or none were)
            self.data = self.data.copy()
            self.data["counted_for"] = key
            raise forms.ValidationError(
                f"Not launched yet: how many items each scope of study '{study.slug}' holds and about how long "
                "each takes are now shown under Scope. Check them, then save again to launch.")
        return cleaned


@admin.register(ModelRun)
class ModelRunAdmin(TeamScopedAdmin, RefusedActionsMixin, JobAdminMixin, admin.ModelAdmin):
    form = ModelRunForm
    # cancelling and retrying change a run (a retry asks its servers again): not for whoever may only view runs
    job_permission = "inference.change_modelrun"
    # status and progress first: on screen at 1366 px whatever the names beside them (job_lists.css wraps those)
    list_display = ("id", "status", "progress", "study", "language_model", "kind", "partial", "queue", "started_at",
                    "finished_at")
    list_filter = ("status", "kind", "scope", "partial", "language_model", "study")
    list_select_related = ("study", "language_model")
    actions = ["cancel_jobs", "retry_jobs"]
    readonly_fields = ("status", "progress", "partial", "scores_link", "answer", "queue", "started_at", "finished_at",
                       "configuration_table", "versions_table", "error", "created_at")
    # a configuration's keys are LanguageModel's fields: shown with their labels ("GGUF file", not gguf_file)
    _configuration_table = structured(ModelRun, "configuration", labels={
        f.name: str(f.verbose_name) for f in LanguageModel._meta.fields})
    versions_table = structured(ModelRun, "versions", labels={
        f.name: str(f.verbose_name) for f in LanguageModel._meta.fields if f.name in ("dtype", "prompt_format")})

    @admin.display(description=ModelRun._meta.get_field("configuration").verbose_name)
    def configuration_table(self, obj):
        """The configuration's tables, its answers and start token with their spaces shown ('␣Yes')."""
        shown = dict(obj.configuration or {})
        for name in KEEP_SPACES:
            if isinstance(shown.get(name), str):
                shown[name] = visible(shown[name])
        return type(self)._configuration_table(self, SimpleNamespace(configuration=shown))

    @admin.display(description="answer (first item)")
    def answer(self, obj):
        return services.check_answer(run=obj) if obj.pk else "—"

    def get_readonly_fields(self, request, obj=None):
        if obj is None:
            return ()
        return ("study", "language_model", "kind", "scope_shown", "batch_size", "device", "item_limit",
                *self.readonly_fields)

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        """The configuration menu: the current versions the user's teams own or are shared (issue 45)."""
        if db_field.name == "language_model" and "queryset" not in kwargs:
            kwargs["queryset"] = LanguageModel.objects.filter(
                team_scope.owned_condition(LanguageModel, request.user), replaced_by__isnull=True)
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def get_fields(self, request, obj=None):
        if obj is None:
            return ["study", "language_model", "kind", "scope", "stated_subset", "batch_size", "device", "item_limit",
                    "counted_for"]
        return [name for name in ("study", "language_model", "kind", "scope_shown", "status", "progress", "partial",
                                  "scores_link", "answer", "batch_size", "device", "item_limit", "queue", "started_at",
                                  "finished_at", "error", "configuration_table", "versions_table")
                if name != "queue" or workers.queues_shown()]

    @admin.display(description=ModelRun._meta.get_field("scope").verbose_name)
    def scope_shown(self, obj):
        """'what people could be shown: the phrasing 'follow/yes-no'; … — 52 of the study's 520 items'."""
        detail = obj.scope_detail or {}
        if not detail:
            return RunScope(obj.scope).label
        return f"{detail.get('rule')} — {detail.get('items')} of the study's {detail.get('study_items')} items"

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
            scope=form.cleaned_data["scope"], subset=form.cleaned_data["subset"],
        )
        obj.pk = run.pk
        obj.__dict__.update({k: v for k, v in run.__dict__.items() if not k.startswith("_")})
        from common import dispatch

        partial = " — partial: reports leave it out unless asked" if run.partial else ""
        self.message_user(request, f"Run {run.pk} queued ({dispatch.mode()}): {run.items_total} items, "
                                   f"{run.scope_detail.get('rule', RunScope(run.scope).label)}{partial}.")

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
                    "top_token_shown", "perplexity_rounded", "prompt_tokens", "answer_mass_rounded")
    p_yes_rounded, p_no_rounded = rounded(ModelScore, "p_yes"), rounded(ModelScore, "p_no")
    relative_p_yes_rounded = rounded(ModelScore, "relative_p_yes")
    soft_accuracy_rounded = rounded(ModelScore, "soft_accuracy")
    perplexity_rounded, answer_mass_rounded = rounded(ModelScore, "perplexity"), rounded(ModelScore, "answer_mass")
    list_filter = ("run", "decision", "decision_rule", "answer_forms", "top_answer")
    raw_id_fields = ("run", "item")
    list_select_related = ("item", "run")
    search_fields = ("item__code",)
    exclude = ("logprobs", "token_ids", "variants", "option_probs")  # shown as tables below
    readonly_fields = ("logprobs_table", "token_ids_table", "variants_table", "option_probs_table", "top_token_shown")
    logprobs_table = structured(ModelScore, "logprobs")
    token_ids_table = structured(ModelScore, "token_ids")
    variants_table = structured(ModelScore, "variants")
    option_probs_table = structured(ModelScore, "option_probs")

    @admin.display(description=ModelScore._meta.get_field("top_token").verbose_name, ordering="top_token")
    def top_token_shown(self, obj):
        """' No' as '␣No': the top token with its spaces visible (a list swallows them)."""
        return visible(obj.top_token) or "—"

    def get_fields(self, request, obj=None):
        return [("top_token_shown" if name == "top_token" else name) for name in super().get_fields(request, obj)]

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
