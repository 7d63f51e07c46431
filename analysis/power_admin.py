"""The admin side of power analyses: the study action "Estimate the sample size" (a form, then a
background task) and the list of analyses with a progress bar, the power curve and the numbers needed."""
from __future__ import annotations

import base64
from functools import partial

from django import forms
from django.contrib import admin, messages
from django.utils.html import format_html, format_html_join

from experiments.models import Study
from experiments.team_admin import TeamScopedAdmin
from common import dispatch
from common.admin_display import ReadOnlyAdmin, add_action, structured
from common.admin_forms import form_or_page
from common.job_admin import JobAdminMixin

from .models import PowerAnalysis, ReportStatus


class PowerForm(forms.Form):
    sizes = forms.CharField(initial="10 20 40 80 160", max_length=500,
                            help_text="Numbers of participants to try, e.g. 10 20 40 80. Simulated studies per size × the "
                                      "sizes' sum × (1 + the study's declared factors, each a set of people's "
                                      "studies) may be at most DUET_POWER_MAX_SIMULATED (default 200,000).")
    nsim = forms.IntegerField(min_value=10, max_value=10_000, initial=100, label="Simulated studies per size",
                              help_text="More gives a narrower Monte-Carlo interval and takes longer.")
    alpha = forms.FloatField(min_value=0.001, max_value=0.2, initial=0.05, label="Significance level (α)",
                             help_text="Each simulated study's test counts as a detection below this p-value.")
    target = forms.FloatField(min_value=0.05, max_value=0.99, initial=0.8, label="Target power",
                              help_text="The share of simulated studies that should detect the difference.")
    seed = forms.IntegerField(min_value=0, initial=0, help_text="The random seed (the same seed gives the same estimate).")
    stated = forms.CharField(
        required=False, widget=forms.Textarea(attrs={"rows": 3, "cols": 50}), label="People's effect (stated)",
        help_text="Empty: the people's effects are simulated from the pilot's fit. Else one line FACTOR=LEVEL:ACCURACY "
                  "per level of a declared factor (every level of it, by its value or its code), e.g. "
                  "FACTOR=LEVEL:0.35 and FACTOR=OTHER_LEVEL:0.95: the accuracy a typical person would have on each.")
    models_only = forms.BooleanField(
        required=False, initial=False, label="The model − human contrasts alone",
        help_text="Leave the people's own effects by each declared factor out (each is a set of simulated studies "
                  "as long as the model − human one): for a study that asks only how the models differ from people.")
    pilot = forms.BooleanField(required=False, initial=True,
                               label="Use the simulated pilots' bots as the pilot (with any real participants)")

    def __init__(self, *args, studies=None, **kwargs):
        """`studies`: the studies the action was asked for; one that cannot be estimated (no finished model run,
        no pilot answers) is refused here with the reason, before anything is queued."""
        super().__init__(*args, **kwargs)
        self.studies = list(studies or ())
        if not self.is_bound and self.studies:
            self.fields["nsim"].initial = default_nsim(self.studies)

    def clean(self):
        from experiments.factors import declared_factors
        from experiments.participation import pilot_effects

        from .power_plan import PowerPlan, check_budget, sizes_from_text
        from .power_services import power_problem

        data = super().clean()
        if self.errors:
            return data
        try:
            data["plan"] = PowerPlan(sizes=tuple(sizes_from_text(data["sizes"])), nsim=data["nsim"], alpha=data["alpha"],
                                     target=data["target"], seed=data["seed"], people=not data.get("models_only"),
                                     stated=pilot_effects.parse(data.get("stated", ""), pilot_effects.ACCURACY,
                                                         flag=pilot_effects.STATED))
            check_budget(data["plan"])
        except ValueError as error:
            raise forms.ValidationError(str(error)) from error
        over = []  # with the people's studies of each study's declared factors (the service's check)
        for study in self.studies:
            try:
                check_budget(data["plan"], people_factors=len(declared_factors(study)))
            except ValueError as error:
                over.append(f"{study.slug}: {error}")
        if over:
            raise forms.ValidationError(over)
        stated = []  # the command's check: each factor declared, each level one of the study's items have
        for study in self.studies:
            try:
                pilot_effects.for_study(study, data["plan"].stated, pilot_effects.ACCURACY,
                                        flag=pilot_effects.STATED, every_level=True)
            except ValueError as error:
                stated.append(f"{study.slug}: {error}")
        if stated:
            raise forms.ValidationError(stated)
        problems = [f"{study.slug} cannot be estimated yet: {problem}." for study in self.studies
                    if (problem := power_problem(study=study, pilot=data.get("pilot", False)))]
        if problems:
            raise forms.ValidationError(problems)
        return data


def default_nsim(studies) -> int:
    """The form's first offer of simulated studies per size: 100, or fewer (a multiple of 10, at least 10) where
    the default sizes would ask more of DUET_POWER_MAX_SIMULATED than it allows for the study declaring the most
    factors (each a set of people's studies beside the model − human one): a default plan is never refused."""
    from common import env
    from experiments.factors import declared_factors

    from .power_plan import PowerPlan

    plan = PowerPlan()
    factors = max(len(declared_factors(study)) for study in studies)
    fits = env.power_max_simulated() * plan.nsim // plan.participants(factors)  # participants grow with nsim
    return max(10, min(plan.nsim, fits // 10 * 10))


@admin.action(description="Estimate the sample size (power by simulation from the pilot)", permissions=["run_analysis"])
def estimate_sample_size(modeladmin, request, queryset):
    from .power_services import power_request

    form, page = form_or_page(modeladmin, request, queryset, partial(PowerForm, studies=queryset),
                              title="Estimate the sample size",
                              template="admin/analysis/estimate_sample_size.html", action="estimate_sample_size",
                              submit="Start the estimate")
    if page is not None:
        return page
    for study in queryset:
        try:
            analysis = power_request(study=study, plan=form.cleaned_data["plan"], pilot=form.cleaned_data["pilot"])
        except ValueError as busy:  # StudyBusy: one pilot or power analysis per study at a time
            modeladmin.message_user(request, str(busy), level=messages.ERROR)
            continue
        modeladmin.message_user(request, f"Power analysis {analysis.pk} for {study.slug} queued ({dispatch.mode()}); "
                                         "see Analyses and reports → Power analyses.", level=messages.SUCCESS)


add_action(Study, estimate_sample_size)


@admin.register(PowerAnalysis)
class PowerAnalysisAdmin(TeamScopedAdmin, JobAdminMixin, ReadOnlyAdmin):
    deletable = True
    job_permission = "analysis.run_analysis"
    list_display = ("id", "study", "status", "progress", "pilot", "created_at", "finished_at")
    list_filter = ("status", "study")
    actions = ["cancel_jobs", "retry_jobs"]
    readonly_fields = ("study", "status", "progress", "error", "plan_table", "pilot", "pilot_summary_table", "message",
                       "needed_table", "curve_plot", "created_at", "finished_at")
    plan_table = structured(PowerAnalysis, "plan", labels={"nsim": "simulated studies per size", "alpha": "α",
                                                           "target": "target power"})
    pilot_summary_table = structured(PowerAnalysis, "pilot_summary")
    exclude = ("curve", "needed", "done", "total", "curve_png", "progress_at", "progress_from", "progress_since")

    @admin.display(description="participants needed")
    def needed_table(self, obj):
        if obj.status != ReportStatus.DONE:
            return "—"
        target = obj.plan.get("target", 0.8)
        rows = format_html_join("", "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>", (
            (r["factor"], r["level"], r["contrast"],
             r["needed"] if r["needed"] is not None else f"more than {r['max_n']}", f"{r['power_at_max']:.2f}")
            for r in obj.needed))
        return format_html("<table><tr><th>factor</th><th>level</th><th>contrast</th><th>needed for power {} (lower "
                           "95% Monte-Carlo bound)</th><th>power at the largest size</th></tr>{}</table>", target, rows)

    @admin.display(description="power curve")
    def curve_plot(self, obj):
        if obj.status != ReportStatus.DONE or not obj.curve_png:
            return "—"
        png = bytes(obj.curve_png)
        return format_html('<img src="data:image/png;base64,{}" alt="Power against the number of participants, per '
                           'level of the study\'s factors" style="max-width:100%">', base64.b64encode(png).decode())
