"""Each admin action that changes data, and every view of Prolific ids, needs its own permission
(issue 17 hole 1): a staff user with only view_study closed a study for good, excluded a participant
and started analyses. Now view_study shows; the named permissions act."""
from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.urls import reverse

from analysis.models import Report, ReportStatus
from experiments.models import Participant, ParticipantStatus, StudyStatus
from experiments.participation import trials
from experiments.participation import services
from tests.experiments.participation.conftest import make_open_study
from tests.factories import join_default_team

pytestmark = pytest.mark.django_db
PID = "5f1a2b3c4d5e6f7a8b9c0d1e"


def staff(client, *codenames):
    user = get_user_model().objects.create_user(f"staff-{len(codenames)}-{'-'.join(codenames)}"[:150],
                                                password="x-" * 8, is_staff=True)
    user.user_permissions.set(Permission.objects.filter(codename__in=("view_study", "view_participant",
                                                                       "view_report", *codenames)))
    join_default_team(user)  # the studies' team (issue 34 item 6)
    client.force_login(user)
    return user


@pytest.fixture
def study():
    study = make_open_study(interpretations=24, items_per_participant=3, attention_checks=[], practice=[])
    services.participant_start(study=study, prolific_pid=PID, prolific_session_id="s1")
    return study


def _action(client, url, action, pk, **extra):
    return client.post(url, {"action": action, "_selected_action": [pk], **extra}, follow=True)


def test_view_study_alone_changes_nothing_and_sees_no_prolific_id(client, study):
    staff(client)
    studies = reverse("admin:experiments_study_changelist")
    page = client.get(studies).content.decode()
    for action in ("open_studies", "pause_studies", "close_studies", "expire_silent_sessions", "run_analysis",
                   "build_pilot_report", "estimate_sample_size"):
        assert f'value="{action}"' not in page, action  # not offered
        _action(client, studies, action, study.pk, confirm="yes")  # and refused when posted anyway
    study.refresh_from_db()
    assert study.status == StudyStatus.OPEN and not Report.objects.exists()
    person = Participant.objects.get()
    participants = reverse("admin:experiments_participant_changelist")
    _action(client, participants, "exclude_participants", person.pk)
    assert Participant.objects.get().status == ParticipantStatus.STARTED
    listing = client.get(participants).content.decode()
    assert PID not in listing and f"P{person.pk}" in listing
    assert PID not in client.get(reverse("admin:experiments_participant_change", args=[person.pk])).content.decode()
    assert PID not in client.get(reverse("admin:experiments_study_change", args=[study.pk])).content.decode()
    csv = reverse("admin:experiments_study_trials_csv", args=[study.pk])
    assert client.get(csv + "?prolific_ids=1").status_code == 403
    assert client.get(csv).status_code == 200


def test_each_permission_allows_its_own_action(client, study, settings):
    staff(client, "change_study_status", "exclude_participant", "view_prolific_ids")
    studies = reverse("admin:experiments_study_changelist")
    _action(client, studies, "pause_studies", study.pk)
    study.refresh_from_db()
    assert study.status == StudyStatus.PAUSED
    person = Participant.objects.get()
    _action(client, reverse("admin:experiments_participant_changelist"), "exclude_participants", person.pk)
    assert Participant.objects.get().status == ParticipantStatus.EXCLUDED
    assert PID in client.get(reverse("admin:experiments_participant_changelist")).content.decode()
    csv = reverse("admin:experiments_study_trials_csv", args=[study.pk])
    assert client.get(csv + "?prolific_ids=1").status_code == 200
    page = client.get(studies).content.decode()
    assert 'value="run_analysis"' not in page  # analyses need their own permission


def test_run_analysis_permission_offers_the_analyses_and_the_retry(client, study):
    staff(client, "run_analysis")
    page = client.get(reverse("admin:experiments_study_changelist")).content.decode()
    assert 'value="run_analysis"' in page and 'value="estimate_sample_size"' in page
    report = Report.objects.create(study=study, status=ReportStatus.FAILED)
    reports = client.get(reverse("admin:analysis_report_changelist")).content.decode()
    assert 'value="retry_jobs"' in reports and report.pk


def test_the_trials_list_names_participants_by_pseudonym(client, study):
    from experiments.models import Item
    from experiments.participation.payload import parse_trial
    from tests.experiments.participation.conftest import code_for, trial_data

    person = Participant.objects.get()
    services.participant_consent(participant=person, agree=True)
    services.participant_instructions_done(participant=person)
    services.participant_practice_done(participant=person)
    person.refresh_from_db()
    gold = Item.objects.get(pk=person.plan[0]).gold_answer
    trials.trial_record(participant=person, payload=parse_trial(trial_data(person, 0, code=code_for(person, gold))))
    staff(client, "view_trial")
    page = client.get(reverse("admin:experiments_trial_changelist")).content.decode()
    assert f"P{person.pk} in {study.slug}" in page and PID not in page
