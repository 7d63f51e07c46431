"""The human arm's practice questions and attention checks are edited in structured blocks in the
admin (not raw JSON); a bad question is refused with its number named and nothing is saved."""
from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from experiments.models import HumanArm
from experiments.participation.services import human_arm_ensure
from tests.admin_form import change_form
from tests.factories import StudyFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def researcher(client):
    user = get_user_model().objects.create_user("editor", password="x-" * 8, is_staff=True, is_superuser=True)
    client.force_login(user)
    return client


def _form(client, study) -> tuple[str, str, dict]:
    return change_form(client, reverse("admin:experiments_study_change", args=[study.pk]))


def test_practice_and_attention_checks_are_edited_as_questions_not_json(researcher):
    study = StudyFactory(design="modal-syllogisms")
    arm = human_arm_ensure(study=study)
    first = arm.practice[0]
    url, page, data = _form(researcher, study)
    assert "Premises, one per line" in page and 'name="human_arm-0-practice-0-question"' in page
    assert first["question"] in page and 'name="human_arm-0-practice"' not in page  # no JSON text box
    # edit the first practice question, remove the second, add one; remove every attention check but one
    data["human_arm-0-practice-0-question"] = "Can we infer that Leo is washing a car today?"
    data["human_arm-0-practice-1-delete"] = "on"
    blank = int(data["human_arm-0-practice-count"]) - 2
    data[f"human_arm-0-practice-{blank}-premises"] = "Ann is reading.\nBo is cooking."
    data[f"human_arm-0-practice-{blank}-question"] = "Can we infer that Bo is cooking?"
    data[f"human_arm-0-practice-{blank}-answer"] = "yes"
    data[f"human_arm-0-practice-{blank}-logical_form"] = "p, q ⊢ q"
    checks = len(arm.attention_checks)
    for n in range(1, checks):
        data[f"human_arm-0-attention_checks-{n}-delete"] = "on"
    response = researcher.post(url, data)
    assert response.status_code == 302, response.content.decode()[:2000]
    arm = HumanArm.objects.get(study=study)
    assert arm.practice[0]["question"] == "Can we infer that Leo is washing a car today?"
    assert arm.practice[0]["premises"] == first["premises"] and arm.practice[0]["logical_form"] == first["logical_form"]
    assert arm.practice[-1] == {"premises": ["Ann is reading.", "Bo is cooking."],
                                "question": "Can we infer that Bo is cooking?", "answer": "yes", "logical_form": "p, q ⊢ q"}
    assert len(arm.practice) == len(human_arm_ensure(study=StudyFactory(design="modal-syllogisms")).practice)
    assert len(arm.attention_checks) == 1


def test_a_bad_question_is_refused_with_its_number_and_nothing_is_saved(researcher):
    study = StudyFactory(design="modal-syllogisms")
    before = human_arm_ensure(study=study).practice
    url, _, data = _form(researcher, study)
    data["human_arm-0-practice-0-answer"] = ""
    blank = int(data["human_arm-0-practice-count"]) - 1
    data[f"human_arm-0-practice-{blank}-question"] = "Is this a question?"
    data[f"human_arm-0-practice-{blank}-answer"] = "yes"
    data[f"human_arm-0-practice-{blank}-logical_form"] = "p ⊢ ⊢"
    page = researcher.post(url, data).content.decode()
    assert "Practice question #1 needs" in page
    assert HumanArm.objects.get(study=study).practice == before
    # the researcher's text is kept on the page for correction
    assert "Is this a question?" in page
