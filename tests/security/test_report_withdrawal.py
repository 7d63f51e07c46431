"""Erasure reaches the analysis reports (issue 8, data protection): every report of the study held the
erased participant's pseudonymous rows, so each is withdrawn and its files deleted — done, failed,
queued, and one being built while the erasure happens (its worker deletes what it wrote)."""
from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest
from django.db import transaction
from django.urls import reverse

from analysis import services as reports
from analysis.models import Report, ReportStatus
from experiments.participation.erasure import participant_erase
from tests.experiments.participation.conftest import make_open_study

from .test_data_protection import researcher, study_with_two  # noqa: F401  (fixtures)

pytestmark = pytest.mark.django_db


def _report(study, status, folder: Path) -> Report:
    report = Report.objects.create(study=study, status=status, out_dir=str(folder))
    (folder / "data").mkdir(parents=True)
    (folder / "data" / "trials.csv").write_text("participant,item\nP1,3\n")
    (folder / "report.html").write_text("<p>P1</p>")
    return report


def test_an_erasure_withdraws_every_report_of_the_study_and_deletes_their_files(
        study_with_two, researcher, tmp_path, admin_client, django_capture_on_commit_callbacks):  # noqa: F811
    study, (gone, kept) = study_with_two
    other = make_open_study(interpretations=6, items_per_participant=3, attention_checks=[], practice=[])
    mine = [_report(study, status, tmp_path / status) for status in ("done", "failed", "queued")]
    theirs = _report(other, ReportStatus.DONE, tmp_path / "other")
    assert admin_client.get(reverse("admin:analysis_report_html", args=[mine[0].pk])).status_code == 200
    with django_capture_on_commit_callbacks(execute=True):
        done = participant_erase(participant=gone, by=researcher)
    assert done.withdrawn_reports == 3
    for report in mine:
        report.refresh_from_db()
        assert report.status == ReportStatus.WITHDRAWN and f"participant P{gone.pk}" in report.message
        assert not Path(report.out_dir).exists()  # files deleted once the erasure committed
        assert admin_client.get(reverse("admin:analysis_report_html", args=[report.pk])).status_code == 404
    theirs.refresh_from_db()
    assert theirs.status == ReportStatus.DONE and Path(theirs.out_dir, "report.html").exists()  # another study
    with django_capture_on_commit_callbacks(execute=True):  # nothing left to withdraw: a second erasure says 0
        assert participant_erase(participant=kept, by=researcher).withdrawn_reports == 0
    with pytest.raises(ValueError, match="cannot go from withdrawn"):
        reports.report_retry(report=mine[1])  # withdrawn is final


@pytest.mark.parametrize("outcome", ["built", "failed"])
def test_a_report_withdrawn_while_it_is_built_keeps_no_files(study_with_two, tmp_path, monkeypatch, outcome):  # noqa: F811
    study, _ = study_with_two
    report = Report.objects.create(study=study, out_dir=str(tmp_path / "building"))

    def build(*, study, out_dir, run_ids=None, pilot=False, on_step=None):  # the worker writes its files; meanwhile an erasure withdraws the report
        Path(out_dir).mkdir(parents=True)
        (Path(out_dir) / "report.html").write_text("<p>P1</p>")
        with transaction.atomic():
            reports.reports_withdraw(study=study, reason="erased meanwhile")
        if outcome == "failed":
            raise RuntimeError("R stopped")
        return SimpleNamespace(sections=[], warnings=[], n_scores=0, n_trials=6)

    monkeypatch.setattr(reports, "report_build", build)
    if outcome == "failed":
        with pytest.raises(RuntimeError):
            reports.report_execute(report_id=report.pk)
    else:
        reports.report_execute(report_id=report.pk)
    report.refresh_from_db()
    assert report.status == ReportStatus.WITHDRAWN and report.message == "erased meanwhile"
    assert not Path(report.out_dir).exists()
