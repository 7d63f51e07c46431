"""Studies for the participant-flow tests: real items from paper 003's design, opened for participants."""
from __future__ import annotations

import pytest

from designs.modal.items import items_generate

from experiments import services
from experiments.models import StudyStatus
from experiments.participation.services import human_arm_ensure
from tests.factories import StudyFactory, review_consent


def make_open_study(*, interpretations: int = 24, **arm_settings):
    study = StudyFactory(design="modal-syllogisms")
    items_generate(study=study, design="modal-syllogisms", interpretations=interpretations, seed=0)
    arm = human_arm_ensure(study=study)
    defaults = {"items_per_participant": 24, "completion_code": "C0MPLETE", "no_consent_code": "NOCONSENT",
                "failed_attention_code": "FAILEDAC", "incompatible_device_code": "NODEVICE"}
    for name, value in {**defaults, **arm_settings}.items():
        setattr(arm, name, value)
    arm.full_clean()
    arm.save()
    review_consent(study)
    services.study_transition(study=study, to=StudyStatus.OPEN)
    study.refresh_from_db()
    return study


@pytest.fixture
def open_study():
    return make_open_study


_counter = iter(range(10**9))


def trial_data(participant, index: int, *, code: str = "KeyF", rt: float = 850.0, key_id: str | None = None, **extra):
    """The JSON body a browser sends for `participant`'s trial `index`."""
    onset = 1_700_000_000_000.0 + index * 10_000
    return {
        "index": index, "item": participant.plan[index], "code": code, "key": code[-1].lower() if code else "",
        "idempotency_key": key_id or f"test-key-{next(_counter):08d}-abcdef", "onset_ms": onset,
        "response_ms": onset + rt, "timed_out": False, "viewport_width": 1280, "viewport_height": 800,
        "focus_lost": False, "visibility_lost": False, **extra,
    }


def code_for(participant, answer: str) -> str:
    """The key code that gives `answer` under the participant's key mapping."""
    yes = "KeyF" if participant.key_mapping == "f_yes" else "KeyJ"
    return yes if answer == "yes" else ("KeyJ" if yes == "KeyF" else "KeyF")
