"""What the model configurations' admin edits and shows, so that it stores what it shows: the fields its
form edits, the answers' spaces kept and shown ('␣Yes'), stop strings one per line (inference/models.py),
and the "Check" and "Run on a study" actions' forms. The form itself: inference/admin.py."""
from __future__ import annotations

from django import forms
from django.contrib import admin
from django.utils.html import escape, format_html

from experiments.models import Study

from . import selectors, services
from .models import LanguageModel, RunKind, RunScope, stop_to_lines

# What the configuration's form edits; a configuration with runs shows its IDENTITY read-only.
FORM_FIELDS = ("name", *LanguageModel.IDENTITY, "device", "server_urls", "concurrency", "api_key_env")
KEEP_SPACES = ("answer_yes", "answer_no", "start_token")  # stored as typed: ' Yes' is another token than 'Yes'
SHOWN_VISIBLY = (*KEEP_SPACES, "stop")  # on a read-only page: '␣Yes', stop strings one per line


def visible(text: str | None) -> str:
    """' Yes' → '␣Yes': the leading and trailing spaces a list or a read-only page would swallow, shown."""
    text = text or ""
    core = text.strip(" ")
    if not core:
        return "␣" * len(text)
    lead, trail = len(text) - len(text.lstrip(" ")), len(text) - len(text.rstrip(" "))
    return "␣" * lead + core + "␣" * trail


class CheckForm(forms.Form):
    """The "Check" action's one setting: the study whose first item is scored."""

    study = forms.ModelChoiceField(
        queryset=Study.objects.filter(items__isnull=False).distinct().order_by("-pk"),
        help_text="The check scores this study's first item (a one-item run, partial: no report reads it). "
                  "Preselected: the newest study with items.")

    def __init__(self, *args, studies=None, **kwargs):
        """`studies`: those the user may check on (their teams' studies, experiments.team_scope)."""
        super().__init__(*args, **kwargs)
        if studies is not None:
            self.fields["study"].queryset = self.fields["study"].queryset.filter(pk__in=studies.values("pk"))
        default = services.check_study_default(studies=studies)
        if default is not None:
            self.fields["study"].initial = default.pk


class SweepForm(forms.Form):
    """The "Run on a study" action's settings: the study every selected configuration scores (a run each), and
    which of its items (the scope; each study says how many items its scopes hold, each configuration its
    measured rate)."""

    study = forms.ModelChoiceField(
        queryset=Study.objects.filter(items__isnull=False).distinct().order_by("-pk"),
        help_text="Each selected configuration scores this study's items in the scope below, in a run of its own "
                  "(beside each study: how many items each scope holds).")
    scope = forms.ChoiceField(
        choices=[("", "the default: what people could be shown, where that holds items of the run's kind; else "
                      "every item"), (RunScope.SHOWN, RunScope.SHOWN.label), (RunScope.ALL, RunScope.ALL.label)],
        required=False, widget=forms.RadioSelect)
    batch_size = forms.IntegerField(
        min_value=1, max_value=1024, initial=16,
        help_text="Items scored together in one pass of the model (each run's batch size).")

    def __init__(self, *args, studies=None, language_models=(), **kwargs):
        """`studies`: those the user may run on (their teams' studies, experiments.team_scope);
        `language_models`: the configurations selected (their measured rates are said)."""
        super().__init__(*args, **kwargs)
        if studies is not None:
            self.fields["study"].queryset = self.fields["study"].queryset.filter(pk__in=studies.values("pk"))
        default = services.check_study_default(studies=studies)
        if default is not None:
            self.fields["study"].initial = default.pk
        self.fields["study"].label_from_instance = study_with_counts
        rates = []
        for model in language_models:
            rate = selectors.language_model_rate(language_model=model, kind=RunKind.ITEMS)
            rates.append(f"{model.name}: {rate.words() if rate else 'no measured rate yet'}")
        if rates:  # (the admin shows a help text as it is: the names are escaped here)
            self.fields["scope"].help_text = escape("Yes/no items scored per second: " + "; ".join(rates) + ".")


SWEEP_COUNTS = {RunScope.SHOWN: "people could be shown", RunScope.ALL: "in all"}


def study_with_counts(study: Study) -> str:
    """'RB (rb) — yes/no items: 52 people could be shown, 520 in all': a study as the sweep's choice names it."""
    from . import scopes, strategies

    strategy = strategies.for_kind(strategies.default_kind(study))
    said = [f"{c.items} {SWEEP_COUNTS[c.scope]}" for c in scopes.counts(study=study, strategy=strategy)
            if c.scope in SWEEP_COUNTS]
    return f"{study} — {services.kind_words(strategy.kind)}: {', '.join(said)}"


def shown(name: str):
    """An admin display method showing the configuration's `name` as stored: '␣Yes', stop strings per line."""
    field = LanguageModel._meta.get_field(name)

    @admin.display(description=field.verbose_name)
    def show(self, obj):
        value = getattr(obj, name) if obj is not None else ""
        if name == "stop":
            return format_html('<pre class="stop-strings">{}</pre>', stop_to_lines(value)) if value != "[]" else "—"
        return visible(value) or "—"

    show.__name__ = f"{name}_shown"
    return show
