"""The admin side of background jobs (common/jobs.py): one progress column and field, one
cancel and one retry action, and a change page that refreshes itself while the job is queued or
running. ModelRun, Report, PowerAnalysis and Pilot admins take `JobAdminMixin`."""
from __future__ import annotations

from django.contrib import admin, messages
from django.core.exceptions import ValidationError
from django.utils.html import format_html

from . import jobs


def progress_html(job: jobs.Job) -> str:
    """A <progress> bar with '120 / 384 items (31 %), 3.2 items/s, about 1 min 23 s left' beside it; a
    failed job's error in words under it."""
    progress = job.progress()
    bar = format_html(
        '<progress class="job-progress" value="{}" max="{}" title="{}">{} %</progress> '
        '<span class="job-progress-text">{}</span>',
        progress.done, max(progress.total, 1), progress.text(), f"{100 * progress.share:.0f}", progress.text())
    if job.status == jobs.JobStatus.FAILED and job.error:
        words = job.error if len(job.error) <= 200 else job.error[:199] + "…"
        return format_html('{}<br><span class="job-error">{}</span>', bar, words)
    return bar


class JobAdminMixin:
    """Add "progress" to list_display and readonly_fields where it should show; set
    `job_permission` ("app.codename") to the permission that may cancel and retry."""

    change_form_template = "admin/job_change_form.html"
    job_permission = ""

    @property
    def media(self):
        """The admin's media and the job lists' CSS: long cells wrap, the list fits its box at 1366 px."""
        from django import forms

        return super().media + forms.Media(css={"all": ["studyserver/job_lists.css"]})

    @admin.display(description="progress")
    def progress(self, obj):
        return progress_html(obj)

    def has_job_control_permission(self, request) -> bool:
        return bool(self.job_permission) and request.user.has_perm(self.job_permission)

    def change_view(self, request, object_id, form_url="", extra_context=None):
        status = self.model.objects.filter(pk=object_id).values_list("status", flat=True).first()
        extra = {"auto_refresh": status in jobs.ACTIVE}
        return super().change_view(request, object_id, form_url, {**(extra_context or {}), **extra})

    def _each_job(self, request, queryset, action, verb: str) -> None:
        noun = self.model.KIND.noun
        for job in queryset:
            try:
                action(job)
            except ValidationError as error:
                self.message_user(request, " ".join(error.messages), level=messages.ERROR)
            else:
                self.message_user(request, f"{noun.capitalize()} {job.pk} {verb}.")

    @admin.action(description="Cancel the selected jobs (queued or running; what is done is kept)",
                  permissions=["job_control"])
    def cancel_jobs(self, request, queryset):
        self._each_job(request, queryset, jobs.job_cancel, "cancelled")

    @admin.action(description="Retry the selected failed or cancelled jobs (each goes on where it stopped)",
                  permissions=["job_control"])
    def retry_jobs(self, request, queryset):
        self._each_job(request, queryset, jobs.job_retry, "queued again")
