"""Staff-only pieces of the admin for the human arm: the progress summary and the tidy CSV export."""
from __future__ import annotations

import csv

from django.http import StreamingHttpResponse
from django.urls import reverse
from django.utils.html import format_html, format_html_join

from ..models import Study
from common import csvsafe

from . import dashboard
from .selectors import EXPORT_COLUMNS, study_progress, trial_records, trials_for_export


class _Echo:
    def write(self, value):
        return value


def trials_csv_response(*, study: Study, prolific_ids: bool = False) -> StreamingHttpResponse:
    """One row per trial (preview sessions left out), the columns of experiments/schema.py's TRIAL
    (the report's data/trials.csv has the same columns; booleans TRUE/FALSE; times in ms).

    By default the participant column holds the pseudonymous label P<id> the analysis uses, not the
    Prolific id; `prolific_ids=True` (the "with Prolific IDs" link) is the researcher's opt-in."""
    writer = csv.writer(_Echo())

    def rows():
        yield writer.writerow(EXPORT_COLUMNS)
        for record in trial_records(trials_for_export(study=study), prolific_ids=prolific_ids):
            yield writer.writerow(csvsafe.values(record))

    response = StreamingHttpResponse(rows(), content_type="text/csv; charset=utf-8")
    suffix = "-with-prolific-ids" if prolific_ids else ""
    response["Content-Disposition"] = f'attachment; filename="{study.slug}-trials{suffix}.csv"'
    return response


def progress_html(study: Study) -> str:
    p = study_progress(study=study)
    median = "—" if p.median_minutes is None else f"{p.median_minutes:.1f} min"
    pay = "—" if p.suggested_pay is None else f"{p.suggested_pay} {p.currency}"
    table = format_html_join(
        "", "<tr><th>{}</th><td>{}</td></tr>",
        [
            ("started", p.started), ("in progress", p.in_progress), ("completed", p.completed),
            ("returned / timed out", p.returned), ("excluded", p.excluded),
            ("declined consent", p.no_consent),
            ("failed attention check", format_html("{} ({} ended there; rule: {})", p.failed_attention,
                                                    p.failed_attention_ended, p.attention_rule)),
            ("usable (analysed by the report)", format_html(
                "{} (the report leaves out: {})", "—" if p.usable is None else p.usable, p.usable_rule)),
            ("simulated pilot participants (not data; pilot reports only)", p.simulated),
            ("median completion time", median),
            ("suggested pay per participant", format_html("{} (at {} {}/hour)", pay, p.hourly_rate, p.currency)),
        ],
    )
    seen = format_html_join(", ", "{} ({})", ((label, when.strftime("%Y-%m-%d %H:%M:%S UTC") if when else "never")
                                              for label, when in p.last_seen)) or "—"
    csv_url = reverse("admin:experiments_study_trials_csv", args=[study.pk])
    links = format_html(
        '<a href="{}">Export trials (CSV)</a> (participants as P&lt;id&gt;; <a href="{}">with Prolific IDs</a>)'
        ' · <a href="{}" target="_blank">Preview the participant flow</a>'
        ' · <a href="{}" id="prolific-refresh">Prolific: sync / refresh, review, bonuses</a>',
        csv_url, csv_url + "?prolific_ids=1", reverse("participant:preview", kwargs={"slug": study.slug}),
        reverse("prolific:page", args=[study.pk]),  # the prolific app's page (a URL name, not an import)
    )
    return format_html("<table>{}</table>{}<p>Last seen (in progress): {}</p><p>{}</p>", table,
                       dashboard.completions_svg(study), seen, links)
