"""Simulated pilots (issue 18): bots take the study through the participant pages and are never data."""
from __future__ import annotations

from collections import Counter

import pytest
from django.core.management import CommandError, call_command

from designs.modal.items import items_generate
from experiments import services as study_services
from experiments.models import Participant, ParticipantStatus, StudyStatus, Trial
from experiments.participation import selectors, services
from experiments.participation.pilot import BotProfile, Pilot, PilotStatus, pilot_create, pilot_execute
from tests.factories import StudyFactory

pytestmark = pytest.mark.django_db


def draft_study(**arm_settings):
    study = StudyFactory(design="modal-syllogisms")
    items_generate(study=study, design="modal-syllogisms", interpretations=24, seed=0)
    arm = services.human_arm_ensure(study=study)
    for name, value in {"items_per_participant": 24, "completion_code": "C0MPLETE", **arm_settings}.items():
        setattr(arm, name, value)
    arm.save()
    return study


def test_a_pilot_walks_bots_through_the_pages_of_a_draft_study_and_keeps_them_out_of_the_data(capsys):
    study = draft_study()
    call_command("simulate_participants", study.slug, "--n", "8", "--accuracy", "1", "--seed", "3")
    assert "8 simulated participants, 8 completed, 208 answers saved" in capsys.readouterr().out
    study.refresh_from_db()
    assert study.status == StudyStatus.DRAFT  # a pilot comes before opening
    bots = list(Participant.objects.filter(study=study))
    assert len(bots) == 8 and all(b.is_simulated and b.status == ParticipantStatus.COMPLETED for b in bots)
    for bot in bots:  # every page was passed, every trial saved through the trial endpoint
        assert bot.consented_at and bot.instructions_done_at and bot.practice_done_at and bot.finished_at
        assert sorted(bot.trials.values_list("index", flat=True)) == list(range(len(bot.plan))) == list(range(26))
    assert not Trial.objects.filter(participant__study=study, correct=False).exists()  # accuracy 1
    assert Counter(b.key_mapping for b in bots) == {"f_yes": 4, "j_yes": 4}  # balanced among the bots
    assert len({b.list_number for b in bots}) == 8
    progress = selectors.study_progress(study=study)
    assert (progress.started, progress.completed, progress.simulated) == (0, 0, 8)
    assert not selectors.trials_for_export(study=study).exists()
    from analysis import frames

    assert frames.trials_frame(study).empty
    pilot_frame = frames.trials_frame(study, include_simulated=True)
    assert len(pilot_frame) == 208 and pilot_frame["is_simulated"].all()
    pilot = Pilot.objects.get(study=study)
    assert (pilot.status, pilot.completed, pilot.trials, pilot.seed) == (PilotStatus.DONE, 8, 208, 3)


def test_bots_hold_no_place_of_the_real_sample():
    study = draft_study(target_sample_size=1)
    pilot_execute(pilot_id=pilot_create(study=study, participants=3, seed=1, run=False).pk)
    from tests.factories import review_consent

    review_consent(study)
    study_services.study_transition(study=study, to=StudyStatus.OPEN)
    person, created = services.participant_start(study=study, prolific_pid="p" * 24, prolific_session_id="s1")
    assert created and not person.is_simulated and person.list_number == 0


def test_bots_that_fail_the_attention_checks_end_as_a_participant_would():
    study = draft_study(attention_fail_after=1, attention_end_session=True)
    pilot = pilot_execute(pilot_id=pilot_create(
        study=study, participants=2, profile=BotProfile(attention_accuracy=0.0), seed=5, run=False).pk)
    assert pilot.completed == 0 and pilot.status == PilotStatus.DONE
    assert set(Participant.objects.filter(study=study).values_list("status", flat=True)) == {"failed_attention"}


def test_a_bad_profile_is_refused_with_a_clear_message_and_changes_nothing():
    study = draft_study()
    with pytest.raises(CommandError, match="accuracy must be a probability between 0 and 1"):
        call_command("simulate_participants", study.slug, "--accuracy", "1.5")
    with pytest.raises(CommandError, match="1 to 500 simulated participants"):
        call_command("simulate_participants", study.slug, "--n", "0")
    assert not Pilot.objects.exists() and not Participant.objects.exists()


def test_a_study_whose_lists_cannot_be_drawn_fails_its_pilot_with_the_reason():
    study = draft_study(items_per_participant=25)
    with pytest.raises(CommandError, match="exceeds the 24 interpretations"):
        call_command("simulate_participants", study.slug, "--n", "2")
    assert Pilot.objects.get(study=study).status == PilotStatus.FAILED


def test_a_researcher_runs_a_pilot_from_the_admin(client, settings, django_capture_on_commit_callbacks):
    from django.contrib.auth import get_user_model
    from django.urls import reverse

    study = draft_study()
    client.force_login(get_user_model().objects.create_superuser("owner", password="x-" * 8))
    url = reverse("admin:experiments_study_changelist")
    page = client.post(url, {"action": "run_pilot", "_selected_action": [study.pk]})
    assert page.status_code == 200 and b"Run the pilot" in page.content  # the form first
    bad = client.post(url, {"action": "run_pilot", "_selected_action": [study.pk], "confirm": "yes", "participants": "4",
                            "accuracy": "2", "attention_accuracy": "1", "rt_median_ms": "1800", "rt_log_sd": "0.4"})
    assert bad.status_code == 200 and b"less than or equal to 1" in bad.content and not Pilot.objects.exists()
    settings.DUET_TASK_MODE = "eager"
    with django_capture_on_commit_callbacks(execute=True):
        done = client.post(url, {"action": "run_pilot", "_selected_action": [study.pk], "confirm": "yes", "participants": "4",
                                 "accuracy": "0.9", "attention_accuracy": "1", "rt_median_ms": "1500",
                                 "rt_log_sd": "0.3", "seed": "7"}, follow=True)
    assert b"queued" in done.content
    pilot = Pilot.objects.get(study=study)  # eager task mode: run once the transaction commits
    assert (pilot.status, pilot.completed, pilot.profile["accuracy"]) == (PilotStatus.DONE, 4, 0.9)
    assert Participant.objects.filter(study=study, is_simulated=True).count() == 4
    listing = client.get(reverse("admin:experiments_pilot_changelist"))
    assert listing.status_code == 200 and b"accuracy 0.9" in listing.content


def test_a_pilot_runs_when_the_site_is_served_over_https(settings):
    """Issue 26 item 9: with DUET_HTTPS=true every bot got a 301 to https:// (the test client took
    `secure` in its constructor, where it means nothing). The settings below are what env.https() sets."""
    settings.HTTPS = settings.SECURE_SSL_REDIRECT = True
    settings.SESSION_COOKIE_SECURE = settings.CSRF_COOKIE_SECURE = True
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    study = draft_study()
    from django.test import Client

    assert Client().get(f"/s/{study.slug}/").status_code == 301  # plain HTTP is redirected
    pilot = pilot_execute(pilot_id=pilot_create(study=study, participants=2, seed=9, run=False).pk)
    assert (pilot.status, pilot.completed, pilot.trials) == (PilotStatus.DONE, 2, 52)


def test_a_pilot_cancelled_half_way_stops_and_its_retry_walks_only_the_bots_left(monkeypatch, settings,
                                                                                django_capture_on_commit_callbacks):
    """Cancel and retry (common/jobs.py): the worker stops before its next bot; a retry walks the
    bots not walked yet, so the pilot ends with exactly the participants asked for."""
    from experiments.participation import pilot as pilots
    from common import jobs

    study = draft_study()
    pilot = pilot_create(study=study, participants=4, seed=2, run=False)
    walk = pilots._walk

    def walk_then_cancel(pilot_row, n, profile, rng):  # the researcher cancels while bot 2 is walked
        outcome = walk(pilot_row, n, profile, rng)
        if n == 1:
            jobs.job_cancel(Pilot.objects.get(pk=pilot_row.pk))
        return outcome

    monkeypatch.setattr(pilots, "_walk", walk_then_cancel)
    pilot = pilot_execute(pilot_id=pilot.pk)
    assert (pilot.status, pilot.done, pilot.total, pilot.completed) == (PilotStatus.CANCELLED, 2, 4, 2)
    assert Participant.objects.filter(study=study, is_simulated=True).count() == 2
    monkeypatch.setattr(pilots, "_walk", walk)
    settings.DUET_TASK_MODE = "eager"
    with django_capture_on_commit_callbacks(execute=True):
        pilots.pilot_retry(pilot=pilot)
    pilot.refresh_from_db()
    assert (pilot.status, pilot.done, pilot.completed, pilot.trials) == (PilotStatus.DONE, 4, 4, 4 * 26)
    assert Participant.objects.filter(study=study, is_simulated=True).count() == 4
    assert pilot.error == "" and "4 simulated participants, 4 completed" in pilot.message


def test_a_step_added_to_the_flow_that_bots_cannot_take_fails_the_pilot_naming_it(monkeypatch):
    """Issue 36 item 5: the bots walk the flow's declared steps, not a script. A made-up step in the flow that no
    bot action takes fails the pilot, naming the step, before any simulated participant is started."""
    from experiments.participation import flow
    from experiments.participation.pilot import BotError

    study = draft_study()
    debrief = flow.Step("debrief", "participant/instructions.html", done_at="instructions_done_at")
    monkeypatch.setattr(flow, "STEPS", (*flow.STEPS[:-1], debrief, flow.STEPS[-1]))  # before the trials
    pilot = pilot_create(study=study, participants=2, seed=1, run=False)
    with pytest.raises(BotError, match=r"has step\(s\) 'debrief' that the simulated participants do not know"):
        pilot_execute(pilot_id=pilot.pk)
    pilot.refresh_from_db()
    assert pilot.status == PilotStatus.FAILED and "'debrief'" in pilot.error and "BOT_STEPS" in pilot.error
    assert not Participant.objects.filter(study=study).exists()


def test_a_bot_checks_the_page_it_is_on_at_each_step_of_the_flow(monkeypatch):
    """The bot reads the step the session page shows (its data-step mark) at every step and stops when it is not
    the flow's next one: here the page stays on the consent after the consent was given."""
    from experiments.participation import flow
    from experiments.participation.pilot import BotError

    study = draft_study()
    pilot = pilot_execute(pilot_id=pilot_create(study=study, participants=1, seed=2, run=False).pk)
    assert (pilot.status, pilot.completed) == (PilotStatus.DONE, 1)  # the real flow: every page as declared
    real = flow.current_step

    def stuck_on_consent(participant, arm):
        step = real(participant, arm)
        return flow.step_named("consent") if step.name == "instructions" else step

    monkeypatch.setattr(flow, "current_step", stuck_on_consent)  # what the session view shows
    pilot = pilot_create(study=study, participants=1, seed=3, run=False)
    with pytest.raises(BotError, match="showed the step 'consent' where the flow .* has the step 'instructions' next"):
        pilot_execute(pilot_id=pilot.pk)
    assert Pilot.objects.get(pk=pilot.pk).status == PilotStatus.FAILED
