"""Real and simulated participants never meet (issue 26 item 1): a participant who entered with the
id a pilot's bot would use got the bots' answers and a completion code (the simulated start adopted
the existing row, and bots' ids were guessable, SIM<pilot>x<n>). Bots' ids are now random, in a
namespace the entry link refuses; a simulated start never adopts a row and a real entry never resumes
a bot's. Both orders of arrival are tested."""
from __future__ import annotations

import re

import pytest
from django.test import Client

from experiments.models import Participant, ParticipantStatus, Trial
from experiments.participation import services
from experiments.participation.pilot import PilotStatus, pilot_create, pilot_execute
from tests.experiments.participation.conftest import make_open_study

pytestmark = pytest.mark.django_db
DESKTOP = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36"


def _study():
    return make_open_study(interpretations=24, items_per_participant=3, attention_checks=[], practice=[])


def _enter(client, study, pid, session):
    return client.get(f"/s/{study.slug}/", {"PROLIFIC_PID": pid, "STUDY_ID": "st", "SESSION_ID": session})


def test_a_participant_who_arrived_first_is_never_answered_by_a_pilot():
    study = _study()
    pilot = pilot_create(study=study, participants=3, seed=4, run=False)
    person = Client(enforce_csrf_checks=True, HTTP_USER_AGENT=DESKTOP)
    guessed = f"SIM{pilot.pk}x0000"  # the id the pilot's first bot had before this fix
    session_url = _enter(person, study, guessed, guessed)["Location"]
    person.get(session_url)
    person.post(session_url + "consent", {"agree": "yes", "csrfmiddlewaretoken": person.cookies["csrftoken"].value})
    real = Participant.objects.get(prolific_pid=guessed)
    assert real.consented_at is not None and not real.is_simulated

    pilot = pilot_execute(pilot_id=pilot.pk)
    assert (pilot.status, pilot.completed) == (PilotStatus.DONE, 3)
    real.refresh_from_db()
    assert (real.status, real.is_simulated, real.trials.count()) == (ParticipantStatus.STARTED, False, 0)
    bots = Participant.objects.filter(study=study, is_simulated=True)
    assert bots.count() == 3 and not Trial.objects.filter(participant=real).exists()
    assert Trial.objects.filter(participant__in=bots).count() == pilot.trials == 9


def test_a_simulated_start_never_adopts_an_existing_row():
    study = _study()
    real, _ = services.participant_start(study=study, prolific_pid="5f1a2b3c4d5e6f7a8b9c0d1e", prolific_session_id="s1")
    with pytest.raises(ValueError, match="simulated_ids"):  # a bot cannot be given a participant's id
        services.participant_start(study=study, prolific_pid=real.prolific_pid, prolific_session_id="s1", simulated=True)
    # even a row that somehow holds an id of the namespace (written before it existed) is not adopted
    squatted = Participant.objects.create(study=study, prolific_pid="sim:0001", prolific_session_id="sim:0002",
                                          key_mapping="f_yes", token="t" * 43, plan=real.plan)
    with pytest.raises(services.FlowError) as refused:
        services.participant_start(study=study, prolific_pid="sim:0001", prolific_session_id="sim:0003", simulated=True)
    assert refused.value.reason == "duplicate"
    squatted.refresh_from_db()
    assert not squatted.is_simulated and Participant.objects.filter(study=study).count() == 2


def test_a_pilot_that_arrived_first_is_never_resumed_by_an_entry_link():
    study = _study()
    pilot_execute(pilot_id=pilot_create(study=study, participants=3, seed=2, run=False).pk)
    bots = list(Participant.objects.filter(study=study, is_simulated=True))
    assert len(bots) == 3
    for bot in bots:  # random, unguessable, outside the entry link's alphabet
        assert re.fullmatch(r"sim:[0-9a-f]{32}", bot.prolific_pid) and re.fullmatch(r"sim:[0-9a-f]{32}", bot.prolific_session_id)
    assert len({b.prolific_pid for b in bots} | {b.prolific_session_id for b in bots}) == 6
    stranger = Client(HTTP_USER_AGENT=DESKTOP)
    for bot in bots:
        response = _enter(stranger, study, bot.prolific_pid, bot.prolific_session_id)
        assert response.status_code == 400 and bot.token not in response.get("Location", "")
        with pytest.raises(services.FlowError) as refused:  # the service refuses the namespace too
            services.participant_start(study=study, prolific_pid=bot.prolific_pid, prolific_session_id="other")
        assert refused.value.status == 400
    # a bot written with the old guessable ids is not resumed by an entry link either
    legacy = Participant.objects.create(study=study, prolific_pid="SIM7x0000", prolific_session_id="SIM7x0000",
                                        key_mapping="f_yes", token="u" * 43, plan=bots[0].plan, is_simulated=True)
    response = _enter(stranger, study, "SIM7x0000", "SIM7x0000")
    assert response.status_code == 409 and legacy.token not in response.get("Location", "")
    assert b"cannot be used to take part" in response.content
    assert Participant.objects.filter(study=study, is_simulated=False).count() == 0
