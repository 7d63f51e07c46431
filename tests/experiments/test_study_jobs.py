"""One study runs at most one pilot or power analysis at a time (issue 26 item 6: three clicks queued
12 pilots of 500 bots). A later request is refused with a message saying which job is under way;
another study is not held; a finished job, or one silent for longer than STALE_AFTER, holds nothing."""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse
from django.utils import timezone

from analysis.models import PowerAnalysis
from analysis.power_plan import PowerPlan
from analysis.power_services import power_request
from designs.modal.items import items_generate
from experiments.participation import services
from experiments.participation.pilot import Pilot, pilot_create, pilot_execute
from experiments.study_jobs import STALE_AFTER, StudyBusy
from tests.factories import StudyFactory

pytestmark = pytest.mark.django_db


def _study():
    study = StudyFactory(design="modal-syllogisms")
    items_generate(study=study, design="modal-syllogisms", interpretations=24, seed=0)
    arm = services.human_arm_ensure(study=study)
    arm.items_per_participant, arm.attention_checks, arm.practice = 3, [], []
    arm.save()
    return study


def test_a_study_runs_one_pilot_or_power_analysis_at_a_time():
    study, other = _study(), _study()
    first = pilot_create(study=study, participants=2, seed=1, run=False)
    with pytest.raises(StudyBusy, match=rf"already has a job under way: simulated pilot {first.pk} \(queued"):
        pilot_create(study=study, participants=500, seed=2, run=False)
    with pytest.raises(StudyBusy, match=f"simulated pilot {first.pk}"):
        power_request(study=study, plan=PowerPlan(sizes=(10,), nsim=10), run=False)
    assert Pilot.objects.filter(study=study).count() == 1 and not PowerAnalysis.objects.exists()
    pilot_create(study=other, participants=2, seed=3, run=False)  # another study is not held
    pilot_execute(pilot_id=first.pk)  # done: the study is free again
    power = power_request(study=study, plan=PowerPlan(sizes=(10,), nsim=10), run=False)
    with pytest.raises(StudyBusy, match=f"power analysis {power.pk}"):
        pilot_create(study=study, participants=2, seed=4, run=False)
    # a job that still writes its progress holds the study however long ago it was created ...
    long_ago = timezone.now() - STALE_AFTER - timedelta(minutes=1)
    PowerAnalysis.objects.filter(pk=power.pk).update(created_at=long_ago - STALE_AFTER, status="running",
                                                     progress_at=timezone.now() - timedelta(minutes=5))
    with pytest.raises(StudyBusy, match=f"power analysis {power.pk} \\(running"):
        pilot_create(study=study, participants=2, seed=4, run=False)
    # ... one silent for longer than STALE_AFTER (its worker died) no longer does
    PowerAnalysis.objects.filter(pk=power.pk).update(progress_at=long_ago)
    assert pilot_create(study=study, participants=2, seed=5, run=False).pk


def test_the_admin_refuses_a_second_pilot_with_a_message(client):
    study = _study()
    running = pilot_create(study=study, participants=2, seed=1, run=False)
    client.force_login(get_user_model().objects.create_superuser("owner", password="x-" * 8))
    page = client.post(reverse("admin:experiments_study_changelist"), {
        "action": "run_pilot", "_selected_action": [study.pk], "confirm": "yes", "participants": "500", "accuracy": "0.8",
        "attention_accuracy": "1", "rt_median_ms": "1800", "rt_log_sd": "0.4"}, follow=True)
    assert f"simulated pilot {running.pk}" in page.content.decode() and "already has a job under way" in page.content.decode()
    assert list(Pilot.objects.filter(study=study)) == [running]
