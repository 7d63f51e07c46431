"""The admin side of simulated pilots: the study action "Run a simulated pilot" (a form for the
number of bots and their profile, then a background task) and the list of pilots."""
from __future__ import annotations

from dataclasses import asdict
from functools import partial

from django import forms
from django.contrib import admin, messages
from common import dispatch
from common.admin_display import ReadOnlyAdmin, add_action, seconds, structured
from common.structured import number
from common.admin_forms import form_or_page
from common.job_admin import JobAdminMixin

from ..models import Study
from ..team_admin import TeamScopedAdmin
from . import pilot_effects
from .pilot import MAX_PARTICIPANTS, BotProfile, Pilot, pilot_create


# The bots' profile in the words of the pilot form below (BotProfile's fields)
PROFILE_LABELS = {"accuracy": "accuracy", "attention_accuracy": "accuracy on the catch items",
                  "rt_median_ms": "median response time (ms)", "rt_log_sd": "SD of log response time",
                  "accuracy_by": "accuracy by level", "rt_shift_by": "response-time shift (ms) by level"}


class PilotForm(forms.Form):
    participants = forms.IntegerField(min_value=1, max_value=MAX_PARTICIPANTS, initial=40,
                                      help_text="How many simulated participants take each study.")
    accuracy = forms.FloatField(min_value=0, max_value=1, initial=BotProfile.accuracy,
                                help_text="Probability of a right answer on the items.")
    attention_accuracy = forms.FloatField(min_value=0, max_value=1, initial=BotProfile.attention_accuracy,
                                          help_text="Probability of a right answer on the catch items.")
    rt_median_ms = forms.FloatField(min_value=250, max_value=60_000, initial=BotProfile.rt_median_ms,
                                    label="Median response time (ms)",
                                    help_text="Half the bots' answers come faster than this, half slower.")
    rt_log_sd = forms.FloatField(min_value=0, max_value=2, initial=BotProfile.rt_log_sd,
                                 label="SD of log response time",
                                 help_text="How much the response times spread (0.4: most within ×0.45 to ×2.2 of the median).")
    accuracy_by = forms.CharField(
        required=False, widget=forms.Textarea(attrs={"rows": 3, "cols": 50}), label="Accuracy by level",
        help_text="A built-in effect: one line FACTOR=LEVEL:ACCURACY per level of a declared factor, e.g. "
                  "pair_role=rulebreaker:0.35 and pair_role=non-rulebreaker:0.95. Levels not named keep the accuracy "
                  "above.")
    rt_shift_by = forms.CharField(
        required=False, widget=forms.Textarea(attrs={"rows": 2, "cols": 50}), label="Response-time shift by level",
        help_text="One line FACTOR=LEVEL:MS per level, e.g. pair_role=rulebreaker:300 (added to the drawn response "
                  "time).")
    seed = forms.IntegerField(required=False, min_value=0, help_text="Empty: a fresh seed, recorded on the pilot.")

    def __init__(self, *args, studies=None, **kwargs):
        """`studies`: the studies the action was asked for; a built-in effect naming a factor or level one of them
        lacks is refused here, before anything is created."""
        super().__init__(*args, **kwargs)
        self.studies = list(studies or ())

    def clean(self):
        data = super().clean()
        if self.errors:
            return data
        try:  # the command's parser (pilot_effects.parse), then the study's factors and levels
            data["profile"] = BotProfile(
                accuracy=data["accuracy"], attention_accuracy=data["attention_accuracy"],
                rt_median_ms=data["rt_median_ms"], rt_log_sd=data["rt_log_sd"],
                accuracy_by=pilot_effects.parse(data.get("accuracy_by", ""), pilot_effects.ACCURACY),
                rt_shift_by=pilot_effects.parse(data.get("rt_shift_by", ""), pilot_effects.RT_SHIFT))
        except ValueError as error:
            raise forms.ValidationError(str(error)) from error
        problems = []
        for study in self.studies:
            try:
                data["profile"].for_study(study)
            except ValueError as error:
                problems.append(f"{study.slug}: {error}")
        if problems:
            raise forms.ValidationError(problems)
        return data

    def profile(self) -> BotProfile:
        return self.cleaned_data["profile"]


@admin.action(description="Run a simulated pilot (bots take the study through its pages; never data)",
              permissions=["add_pilot"])
def run_pilot(modeladmin, request, queryset):
    form, page = form_or_page(modeladmin, request, queryset, partial(PilotForm, studies=queryset),
                              title="Run a simulated pilot",
                              template="admin/experiments/run_pilot.html", action="run_pilot", submit="Run the pilot")
    if page is not None:
        return page
    for study in queryset:
        try:
            pilot = pilot_create(study=study, participants=form.cleaned_data["participants"], profile=form.profile(),
                                 seed=form.cleaned_data["seed"])
        except ValueError as busy:  # StudyBusy: one pilot or power analysis per study at a time
            modeladmin.message_user(request, f"{study.slug}: {busy}", level=messages.ERROR)
            continue
        modeladmin.message_user(request, f"Pilot {pilot.pk} of {study.slug} queued ({dispatch.mode()}): "
                                         f"{pilot.participants} simulated participants; see Studies and items → Pilots.",
                                level=messages.SUCCESS)


def _add_pilot_permission(modeladmin, request) -> bool:
    return request.user.has_perm("experiments.add_pilot")


_study_admin = add_action(Study, run_pilot)
if _study_admin is not None:
    type(_study_admin).has_add_pilot_permission = _add_pilot_permission


@admin.register(Pilot)
class PilotAdmin(TeamScopedAdmin, JobAdminMixin, ReadOnlyAdmin):
    deletable = True  # pilots start from the study list's action
    job_permission = "experiments.add_pilot"
    actions = ["cancel_jobs", "retry_jobs"]
    list_display = ("id", "study", "participants", "status", "progress", "completed", "trials", "seconds_rounded",
                    "created_at", "profile_text")
    list_filter = ("status", "study")
    readonly_fields = ("study", "participants", "profile_table", "seed", "status", "progress", "error", "completed",
                       "trials", "seconds_rounded", "message", "created_at", "finished_at")
    profile_table = structured(Pilot, "profile", labels=PROFILE_LABELS)
    exclude = ("profile",)  # shown as profile_table
    seconds_rounded = seconds(Pilot, "seconds")

    @admin.display(description="profile")
    def profile_text(self, obj):
        known = asdict(BotProfile())
        effects = {"accuracy_by": pilot_effects.ACCURACY, "rt_shift_by": pilot_effects.RT_SHIFT}
        return ", ".join(
            f"{PROFILE_LABELS.get(k, k)} {pilot_effects.describe(obj.profile.get(k) or {}, effects[k])}" if k in effects
            else f"{PROFILE_LABELS.get(k, k)} {number(obj.profile.get(k, v))}"
            for k, v in known.items() if k not in effects or obj.profile.get(k))
