"""The study action "Build a pilot report": a report that also reads the simulated pilots' bots
(experiments/participation/pilot.py), titled as a pilot; ordinary reports never read them."""
from __future__ import annotations

from django.contrib import admin, messages

from experiments.models import Study
from common import dispatch
from common.admin_display import add_action

from . import services


@admin.action(description="Build a pilot report (simulated participants included, titled PILOT)",
              permissions=["run_analysis"])
def build_pilot_report(modeladmin, request, queryset):
    for study in queryset:
        if not study.participants.simulated().exists():
            modeladmin.message_user(request, f"{study.slug}: no simulated participants yet; run a simulated pilot first.",
                                    level=messages.ERROR)
            continue
        try:
            report = services.report_request(study=study, pilot=True)
        except ValueError as error:
            modeladmin.message_user(request, f"{study.slug}: {error}", level=messages.ERROR)
            continue
        modeladmin.message_user(request, f"Pilot report {report.pk} for {study.slug} queued ({dispatch.mode()}); "
                                         "see Analyses and reports → Reports.")


add_action(Study, build_pilot_report)
