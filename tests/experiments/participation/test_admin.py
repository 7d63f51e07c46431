"""Researchers' view of the human arm: progress counts, pay, statuses, the CSV export (staff only)."""
from __future__ import annotations

import csv
import io
from datetime import timedelta
from decimal import Decimal

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse
from django.utils import timezone

from experiments.models import Participant, ParticipantStatus
from experiments.participation import trials
from experiments.participation import services
from experiments.participation.selectors import EXPORT_COLUMNS, study_progress
from experiments.participation.payload import parse_trial

from .conftest import trial_data

pytestmark = pytest.mark.django_db


def finished_participant(study, n, minutes):
    participant, _ = services.participant_start(study=study, prolific_pid=f"pid-{n}", prolific_session_id=f"s{n}")
    services.participant_consent(participant=participant, agree=True)
    services.participant_instructions_done(participant=participant)
    participant.refresh_from_db()
    for index in range(len(participant.plan)):
        trials.trial_record(participant=participant, payload=parse_trial(trial_data(participant, index)))
    services.participant_finish(participant=participant)
    start = timezone.now() - timedelta(minutes=minutes)
    Participant.objects.filter(pk=participant.pk).update(started_at=start, finished_at=start + timedelta(minutes=minutes))
    return participant


@pytest.fixture
def study_with_data(open_study):
    study = open_study(interpretations=24, items_per_participant=3, attention_checks=[], practice=[])
    for n, minutes in enumerate((10, 14, 30)):
        finished_participant(study, n, minutes)
    services.participant_start(study=study, prolific_pid="busy", prolific_session_id="sb")
    declined, _ = services.participant_start(study=study, prolific_pid="no", prolific_session_id="sn")
    services.participant_consent(participant=declined, agree=False)
    services.participant_start(study=study, prolific_pid="preview-1", preview=True)
    return study


def test_progress_counts_median_time_and_suggested_pay(study_with_data):
    services.participant_exclude(participant=Participant.objects.get(prolific_pid="pid-2"))
    progress = study_progress(study=study_with_data)
    assert (progress.started, progress.in_progress, progress.completed, progress.excluded, progress.no_consent) == (5, 1, 2, 1, 1)
    assert progress.median_minutes == pytest.approx(12.0)  # completed: 10 and 14 minutes
    assert progress.hourly_rate == Decimal("9.00")  # 1.5 × a £6 minimum
    assert progress.suggested_pay == Decimal("1.80")  # 12 minutes at £9/hour
    busy = Participant.objects.get(prolific_pid="busy")
    assert [label for label, _ in progress.last_seen] == [f"P{busy.pk}"]  # pseudonyms only on the study page


def test_the_csv_export_is_staff_only_and_tidy(client, study_with_data):
    url = reverse("admin:experiments_study_trials_csv", args=[study_with_data.pk])
    assert client.get(url).status_code == 302
    client.force_login(get_user_model().objects.create_user("someone", password="y-" * 8))
    assert client.get(url).status_code == 302
    client.force_login(get_user_model().objects.create_user("researcher", password="x-" * 8, is_staff=True, is_superuser=True))
    response = client.get(url, {"prolific_ids": "1"})  # the opt-in (by default: P<id>, tests/security)
    assert response.status_code == 200 and response["Content-Type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert tuple(rows[0]) == EXPORT_COLUMNS
    assert len(rows) == 9 and {r["participant"] for r in rows} == {"pid-0", "pid-1", "pid-2"}
    assert all(float(r["rt_ms"]) == pytest.approx(850.0) and r["key_code"] == "KeyF" for r in rows)
    assert {r["form_id"] for r in rows} and all(r["correct"] in ("0", "1") for r in rows)


def test_the_study_page_shows_progress_and_the_participant_list_shows_status(client, study_with_data):
    client.force_login(get_user_model().objects.create_user("researcher", password="x-" * 8, is_staff=True, is_superuser=True))
    page = client.get(reverse("admin:experiments_study_change", args=[study_with_data.pk])).content.decode()
    assert "median completion time" in page and "suggested pay per participant" in page
    assert "Export trials (CSV)" in page and "Items per participant" in page
    listing = client.get(reverse("admin:experiments_participant_changelist"), {"study__id__exact": study_with_data.pk})
    assert listing.status_code == 200
    shown = {p.prolific_pid: p for p in listing.context["cl"].result_list}
    assert shown["pid-0"]._answered == 3 and shown["no"].status == ParticipantStatus.NO_CONSENT
    response = client.post(reverse("admin:experiments_participant_changelist"),
                           {"action": "exclude_participants", "_selected_action": [shown["pid-1"].pk]})
    assert response.status_code == 302
    assert Participant.objects.get(prolific_pid="pid-1").status == ParticipantStatus.EXCLUDED


def test_the_admin_export_and_the_reports_trials_file_hold_the_same_columns_and_rows(study_with_data, tmp_path):
    """Issue 19 item 1: one schema (experiments/schema.py); booleans TRUE/FALSE, ASCII codes beside labels.
    The admin view's response itself (its permissions are tested above and in tests/security)."""
    import pandas as pd

    from analysis.frames import trials_frame
    from analysis.report import _write_data
    from experiments.participation.admin_views import trials_csv_response

    body = b"".join(part.encode() if isinstance(part, str) else part
                    for part in trials_csv_response(study=study_with_data).streaming_content)
    (tmp_path / "admin.csv").write_bytes(body)
    _write_data(trials_frame(study_with_data), tmp_path, "trials")
    admin = pd.read_csv(tmp_path / "admin.csv", keep_default_na=False, na_values=[""])
    report = pd.read_csv(tmp_path / "trials.csv", keep_default_na=False, na_values=[""])
    assert list(admin.columns) == list(report.columns) == list(EXPORT_COLUMNS)
    report = report[~report["is_preview"]].reset_index(drop=True)  # the admin export leaves previews out
    for frame in (admin, report):
        frame["received_at"] = pd.to_datetime(frame["received_at"], utc=True, format="ISO8601")
    pd.testing.assert_frame_equal(admin, report, check_dtype=False)
    assert len(admin) == 9 and admin["timed_out"].dtype == bool and admin["focus_lost"].dtype == bool
    assert set(admin["argform_code"]) <= {"DS", "MP", "MT", "AD", "AC", "DA"} and set(admin["modality_code"]) <= {
        "none", "box", "dia"}
    assert admin["key_code"].eq("KeyF").all() and admin["rt_ms"].dtype == float
    assert "TRUE" in body.decode() or "FALSE" in body.decode()
