"""Data protection (issue 8): only pseudonymous ids are stored, one participant's data is erased
everywhere on request (admin action → participant_erase, logged without the Prolific id), and
exports leave the Prolific ids out unless the researcher asks for them."""
from __future__ import annotations

import csv
import io
import json

import pytest
from django.contrib.admin.models import DELETION, LogEntry
from django.contrib.auth import get_user_model
from django.db import connection
from django.test import Client
from django.urls import reverse

from experiments.models import Participant, Trial
from experiments.participation import trials
from experiments.participation import services
from experiments.participation.erasure import participant_erase
from experiments.participation.payload import parse_trial
from tests.experiments.participation.conftest import make_open_study, trial_data
from tests.factories import join_default_team

pytestmark = pytest.mark.django_db
PIDS = ("5f1a2b3c4d5e6f7a8b9c0d1e", "6a7b8c9d0e1f2a3b4c5d6e7f")
DESKTOP = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36"


@pytest.fixture
def study_with_two():
    study = make_open_study(interpretations=6, items_per_participant=3, attention_checks=[], practice=[])
    people = []
    for n, pid in enumerate(PIDS):
        participant, _ = services.participant_start(study=study, prolific_pid=pid, prolific_study_id="st",
                                                    prolific_session_id=f"sess-{n}")
        services.participant_consent(participant=participant, agree=True)
        services.participant_instructions_done(participant=participant)
        participant.refresh_from_db()
        for index in range(len(participant.plan)):
            trials.trial_record(participant=participant, payload=parse_trial(trial_data(participant, index)))
        people.append(participant)
    return study, people


@pytest.fixture
def researcher():
    return get_user_model().objects.create_superuser("researcher", password="pw-" * 6)


def _database_text() -> str:
    """Every text value of every table, as one string (what a database dump would show)."""
    chunks = []
    with connection.cursor() as cursor:
        for table in connection.introspection.table_names():
            cursor.execute(f"SELECT * FROM {connection.ops.quote_name(table)}")
            chunks.extend(str(row) for row in cursor.fetchall())
    return "\n".join(chunks)


def test_the_flow_stores_no_address_and_no_identifier_beyond_prolifics(settings):
    settings.DUET_RATELIMITS = {"entry": "off", "trial": "off", "session": "off"}
    study = make_open_study(interpretations=6, items_per_participant=3, attention_checks=[], practice=[])
    browser = Client(HTTP_USER_AGENT=DESKTOP, REMOTE_ADDR="203.0.113.77", HTTP_X_FORWARDED_FOR="198.51.100.23")
    session = browser.get(f"/s/{study.slug}/", {"PROLIFIC_PID": PIDS[0], "STUDY_ID": "st", "SESSION_ID": "se"})["Location"]
    browser.post(session + "consent", {"agree": "yes"})
    browser.post(session + "instructions")
    participant = Participant.objects.get()
    for index in range(len(participant.plan)):
        browser.post(session + "trial", json.dumps(trial_data(participant, index)), content_type="application/json")
    browser.post(session + "heartbeat")
    assert browser.post(session + "finish").status_code == 200
    dump = _database_text()
    assert PIDS[0] in dump  # the pseudonymous Prolific id, which the study needs
    assert "203.0.113.77" not in dump and "198.51.100.23" not in dump  # no IP address anywhere
    assert DESKTOP in dump  # the user agent is kept with each trial (docs/participants.md says so)


def test_erasure_deletes_the_participant_and_its_trials_and_logs_without_the_prolific_id(study_with_two, researcher):
    study, (gone, kept) = study_with_two
    kept_trials = list(Trial.objects.filter(participant=kept).values_list("pk", flat=True))
    done = participant_erase(participant=gone, by=researcher)
    assert (done.participant_id, done.study_slug, done.trials) == (gone.pk, study.slug, 3)
    assert not Participant.objects.filter(pk=gone.pk).exists()
    assert not Trial.objects.filter(participant_id=gone.pk).exists()
    assert list(Trial.objects.filter(participant=kept).values_list("pk", flat=True)) == kept_trials
    entry = LogEntry.objects.get(action_flag=DELETION)
    assert entry.user == researcher and entry.object_repr == f"participant P{gone.pk} of {study.slug}"
    assert "3 trial(s)" in entry.change_message
    assert PIDS[0] not in _database_text() and PIDS[1] in _database_text()


def test_the_admin_action_asks_then_erases(study_with_two, researcher, client):
    study, (gone, kept) = study_with_two
    client.force_login(researcher)
    changelist = reverse("admin:experiments_participant_changelist")
    ask = client.post(changelist, {"action": "erase_participants", "_selected_action": [gone.pk]})
    assert ask.status_code == 200 and b"Yes, erase their data" in ask.content and PIDS[0].encode() in ask.content
    # the page says what the code does: the study's reports are withdrawn in the same step
    assert b"those reports are withdrawn and their files deleted in the same step" in ask.content
    assert Participant.objects.filter(pk=gone.pk).exists()  # nothing happens before the confirmation
    done = client.post(changelist, {"action": "erase_participants", "_selected_action": [gone.pk], "confirm": "yes"},
                       follow=True)
    assert done.status_code == 200 and f"Erased P{gone.pk} of {study.slug} and 3 trial(s)".encode() in done.content
    assert not Participant.objects.filter(pk=gone.pk).exists() and Participant.objects.filter(pk=kept.pk).exists()
    assert PIDS[0] not in _database_text()


def test_only_researchers_allowed_to_delete_participants_may_erase(study_with_two, client):
    study, (gone, _) = study_with_two
    staff = get_user_model().objects.create_user("assistant", password="pw-" * 6, is_staff=True)
    from django.contrib.auth.models import Permission

    staff.user_permissions.add(Permission.objects.get(codename="view_participant"))
    join_default_team(staff)  # sees the study's participants (issue 34 item 6), may not erase them
    client.force_login(staff)
    changelist = reverse("admin:experiments_participant_changelist")
    assert b"erase_participants" not in client.get(changelist).content
    client.post(changelist, {"action": "erase_participants", "_selected_action": [gone.pk], "confirm": "yes"})
    assert Participant.objects.filter(pk=gone.pk).exists()


def _export(client, study, **params):
    response = client.get(reverse("admin:experiments_study_trials_csv", args=[study.pk]), params)
    assert response.status_code == 200
    return list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))


def test_the_trial_export_leaves_prolific_ids_out_unless_asked(study_with_two, researcher, client):
    study, people = study_with_two
    client.force_login(researcher)
    rows = _export(client, study)
    assert {r["participant"] for r in rows} == {f"P{p.pk}" for p in people}
    assert not any(pid in ",".join(r.values()) for r in rows for pid in PIDS)
    assert {r["participant"] for r in _export(client, study, prolific_ids="1")} == set(PIDS)
    page = client.get(reverse("admin:experiments_study_change", args=[study.pk])).content.decode()
    assert "with Prolific IDs" in page and "?prolific_ids=1" in page


def test_analysis_frames_carry_the_same_pseudonymous_labels(study_with_two):
    pytest.importorskip("pandas")  # the analysis group; its own tests fail under CI without it
    from analysis.frames import trials_frame

    study, people = study_with_two
    frame = trials_frame(study)
    assert set(frame["participant"]) == {f"P{p.pk}" for p in people}
    assert not any(pid in frame.to_csv() for pid in PIDS)
