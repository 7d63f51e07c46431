"""A pilot report reads the simulated pilots' bots and says so; an ordinary report never does."""
from __future__ import annotations

import pytest
from django.core.management import call_command

from designs.modal.items import items_generate
from experiments.participation import services
from experiments.participation.pilot import BotProfile, pilot_create, pilot_execute
from tests.factories import StudyFactory

pytestmark = pytest.mark.django_db


def test_only_a_pilot_report_reads_the_bots(r_stack, tmp_path):
    study = StudyFactory(design="modal-syllogisms")
    items_generate(study=study, design="modal-syllogisms", interpretations=24, seed=0)
    arm = services.human_arm_ensure(study=study)
    arm.items_per_participant, arm.completion_code = 24, "C0MPLETE"
    arm.save()
    pilot_execute(pilot_id=pilot_create(study=study, participants=6, profile=BotProfile(accuracy=0.75), seed=11,
                                        run=False).pk)
    call_command("analyze", study.slug, "--out", str(tmp_path / "pilot"), "--pilot")
    html = (tmp_path / "pilot" / "report.html").read_text(encoding="utf-8")
    assert "PILOT report (simulated participants included, not data)" in html
    assert "Participants kept (6)" in html and "Eq. (6)" in html
    assert (tmp_path / "pilot" / "tables" / "eq6_coefficients.csv").exists()  # the bots' answers were fitted
    call_command("analyze", study.slug, "--out", str(tmp_path / "real"))
    html = (tmp_path / "real" / "report.html").read_text(encoding="utf-8")
    assert "PILOT" not in html and "Participants kept (0)" in html


def test_the_admin_builds_a_pilot_report_only_when_there_are_bots(r_stack, admin_client, settings, tmp_path,
                                                                   monkeypatch, django_capture_on_commit_callbacks):
    from analysis.models import Report, ReportStatus

    settings.DUET_TASK_MODE = "eager"
    monkeypatch.setattr("analysis.services.VAR_DIR", tmp_path)
    study = StudyFactory(design="modal-syllogisms")
    items_generate(study=study, design="modal-syllogisms", interpretations=24, seed=0)
    refused = admin_client.post("/admin/experiments/study/", {"action": "build_pilot_report",
                                                              "_selected_action": [study.pk]}, follow=True)
    assert b"no simulated participants yet" in refused.content and not Report.objects.exists()
    arm = services.human_arm_ensure(study=study)
    arm.items_per_participant, arm.completion_code = 24, "C0MPLETE"
    arm.save()
    pilot_execute(pilot_id=pilot_create(study=study, participants=4, seed=2, run=False).pk)
    with django_capture_on_commit_callbacks(execute=True):
        admin_client.post("/admin/experiments/study/", {"action": "build_pilot_report", "_selected_action": [study.pk]})
    report = Report.objects.get(study=study)
    assert report.pilot and report.status == ReportStatus.DONE, report.message
    assert report.n_trials == 4 * 26


def test_a_pilot_then_perturbed_copies_then_a_pilot_report_on_one_study(r_stack, tmp_path):
    """Issue 37: a simulated pilot is never data, so it does not lock the study against perturbed copies;
    the pilot report still reads the bots. Answers from a real participant do lock it."""
    from django.core.management.base import CommandError

    from experiments.models import Item, Trial

    study = StudyFactory(design="modal-syllogisms")
    items_generate(study=study, design="modal-syllogisms", interpretations=24, seed=0)
    arm = services.human_arm_ensure(study=study)
    arm.items_per_participant, arm.completion_code = 24, "C0MPLETE"
    arm.save()
    pilot_execute(pilot_id=pilot_create(study=study, participants=4, profile=BotProfile(accuracy=0.75), seed=5,
                                        run=False).pk)
    assert study.has_responses()  # the bots' answers
    real = study.items.filter(condition="real", design="modal-syllogisms").count()
    call_command("perturb_items", study.slug, "names", "--seed", "3")
    names = study.items.filter(condition="names")
    assert names.count() == real and not names.filter(original__isnull=True).exists()
    call_command("analyze", study.slug, "--out", str(tmp_path / "pilot"), "--pilot")
    html = (tmp_path / "pilot" / "report.html").read_text(encoding="utf-8")
    assert "PILOT report (simulated participants included, not data)" in html
    assert "Participants kept (4)" in html and (tmp_path / "pilot" / "tables" / "eq6_coefficients.csv").exists()
    # one answer from a real participant: the item set is fixed from then on
    from tests.factories import ParticipantFactory, TrialFactory

    TrialFactory(participant=ParticipantFactory(study=study), item=study.items.filter(condition="real").first())
    assert Trial.objects.filter(participant__is_simulated=False).count() == 1
    before = Item.objects.filter(study=study).count()
    with pytest.raises(CommandError, match="already has answers from real participants"):
        call_command("perturb_items", study.slug, "names", "--seed", "4", "--label", "names2")
    assert Item.objects.filter(study=study).count() == before
