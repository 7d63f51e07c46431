"""Admin: reports with their status, the report page, a zip of its files; the Study action."""
from __future__ import annotations

import io
import zipfile
from pathlib import Path

from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.core.exceptions import PermissionDenied
from django.http import FileResponse, Http404, HttpResponse
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html

from experiments.models import Study
from experiments.team_admin import TeamScopedAdmin
from common import dispatch
from common.admin_display import ReadOnlyAdmin, add_action, structured
from common.job_admin import JobAdminMixin

from . import runs, services
from .models import Report, ReportStatus


@admin.action(description="Run the analysis report (background task; choose the model runs)",
              permissions=["run_analysis"])
def run_analysis(modeladmin, request, queryset):
    """First a page listing each study's model runs, the default rule's runs checked (analysis.runs);
    then one report per study over the runs checked. Checking exactly the default rule's runs records
    the default rule (runs_requested empty); anything else, exactly the runs checked."""
    if request.POST.get("confirm") != "yes":
        context = {
            **modeladmin.admin_site.each_context(request), "title": "Run the analysis report: choose the model runs",
            "opts": modeladmin.model._meta, "action_checkbox_name": helpers.ACTION_CHECKBOX_NAME,
            "studies": [(study, runs.select_runs(study)) for study in queryset], "scoring": runs.SCORING,
            "rule": runs.RULE,
        }
        return TemplateResponse(request, "admin/analysis/choose_runs.html", context)
    checked = {int(value) for value in request.POST.getlist("runs") if value.isdigit()}
    for study in queryset:
        try:
            default = runs.select_runs(study)
            mine = {r.run_id for r in default if r.kind in runs.SCORING}
            chosen = sorted(checked & mine)
            if not chosen and mine:
                raise ValueError("no model run checked; check the runs to analyse (the default rule's are checked)")
            report = services.report_request(study=study, run_ids=None if chosen == runs.used_ids(default) else chosen)
        except ValueError as error:
            modeladmin.message_user(request, f"{study.slug}: {error}", level=messages.ERROR)
            continue
        asked = report.runs_requested
        which = f"runs {', '.join(map(str, asked))}" if asked else "the default rule's runs"
        modeladmin.message_user(request, f"Report {report.pk} for {study.slug} queued ({dispatch.mode()}) over "
                                         f"{which}; see Analyses and reports → Reports.")


# The Study admin lives in experiments/; the analysis adds its action to it (apps load in order).
add_action(Study, run_analysis)


@admin.register(Report)
class ReportAdmin(TeamScopedAdmin, JobAdminMixin, ReadOnlyAdmin):
    deletable = True  # a report's row and files; the data it read stays
    job_permission = "analysis.run_analysis"
    # status, progress and the report's links first, so they stay on screen at 1366 px; the list fits its frame
    # (job_lists.css wraps long cells; the finish time is on the report's page; tests/e2e/test_admin_study.py,
    # tests/e2e/test_admin_model_config.py)
    list_display = ["id", "status", "progress", "files", "study", "pilot", "created_at", "model_runs", "read"]
    list_filter = ["status", "pilot", "study"]
    readonly_fields = ["study", "status", "progress", "error", "pilot", "out_dir", "message", "runs_requested_table",
                       "runs_used_table", "n_scores", "n_trials", "warnings_table", "created_at", "started_at", "finished_at",
                       "files"]
    runs_requested_table = structured(Report, "runs_requested")
    runs_used_table = structured(Report, "runs_used")
    warnings_table = structured(Report, "warnings")
    actions = ["cancel_jobs", "retry_jobs"]

    @admin.display(description="read")
    def read(self, obj):
        """What the analyses read: '40 scores, 120 trials' (the report's page has each with its help)."""
        return f"{obj.n_scores} scores, {obj.n_trials} trials"

    @admin.display(description="model runs")
    def model_runs(self, obj):
        asked = "asked: " + " ".join(map(str, obj.runs_requested)) if obj.runs_requested else "default rule"
        used = f"; used: {' '.join(map(str, obj.runs_used))}" if obj.runs_used else ""
        return asked + used

    @admin.display(description="files")
    def files(self, obj):
        if obj.status != ReportStatus.DONE:
            return "—"
        return format_html("<a href='{}'>report.html</a> · <a href='{}'>zip</a>",
                           reverse("admin:analysis_report_html", args=[obj.pk]),
                           reverse("admin:analysis_report_zip", args=[obj.pk]))

    def get_urls(self):
        view = self.admin_site.admin_view
        return [
            path("<int:pk>/report.html", view(self.report_html), name="analysis_report_html"),
            path("<int:pk>/files.zip", view(self.report_zip), name="analysis_report_zip"),
            *super().get_urls(),
        ]

    def _done(self, request, pk) -> Report:
        if not self.has_view_permission(request):
            raise PermissionDenied
        report = self.scoped_object_or_404(request, pk)  # another team's report: 404
        if report.status != ReportStatus.DONE or not (Path(report.out_dir) / "report.html").exists():
            raise Http404("This report has no files (yet).")
        return report

    def report_html(self, request, pk):
        report = self._done(request, pk)
        return FileResponse(open(Path(report.out_dir) / "report.html", "rb"), content_type="text/html")

    def report_zip(self, request, pk):
        report = self._done(request, pk)
        root = Path(report.out_dir)
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
            for file in sorted(root.rglob("*")):
                if file.is_file():
                    archive.write(file, file.relative_to(root))
        response = HttpResponse(buffer.getvalue(), content_type="application/zip")
        response["Content-Disposition"] = f"attachment; filename=report-{report.study.slug}-{report.pk}.zip"
        return response
from . import pilot_admin  # noqa: E402,F401  (the study action that builds a pilot report)
from . import power_admin  # noqa: E402,F401  (the sample-size action and the power analyses list)
