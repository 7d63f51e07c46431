"""A study made with the admin's "Add study" gets its design's default practice questions and attention
checks, exactly as a study made by a command does (issue 27 part 4): the registry's sets, both ways."""
from __future__ import annotations

import pytest
from django.core.management import call_command

from experiments import design_registry as registry
from experiments.models import Study
from experiments.participation.services import human_arm_ensure
from tests.admin_form import change_form

pytestmark = pytest.mark.django_db


def _admin_add(client, slug: str, design: str) -> Study:
    url, page, data = change_form(client, "/admin/experiments/study/add/")
    assert 'name="human_arm-0-practice-count"' not in page  # the arm is set up from the design once saved
    data.update(slug=slug, title=slug, design=design)
    response = client.post(url, data)
    assert response.status_code == 302, response.content.decode()[:2000]
    return Study.objects.get(slug=slug)


@pytest.mark.parametrize("design", [d.name for d in registry.all_designs()])
def test_add_study_in_the_admin_gets_the_designs_defaults_as_the_cli_does(admin_client, design):
    made = _admin_add(admin_client, f"admin-{design}", design)
    arm = made.human_arm  # made when the study was saved
    from experiments import services

    cli = human_arm_ensure(study=services.study_create(slug=f"cli-{design}", title="cli", design=design))
    assert (arm.practice, arm.attention_checks) == (cli.practice, cli.attention_checks)
    assert arm.practice == registry.get(design).practice() and arm.practice
    assert arm.attention_checks == registry.get(design).catch_items() and arm.attention_checks
    # the change page then shows them in the editor
    _, page, fields = change_form(admin_client, f"/admin/experiments/study/{made.pk}/change/")
    assert fields["human_arm-0-practice-0-question"] == arm.practice[0]["question"]
    assert fields["human_arm-0-attention_checks-0-question"] == arm.attention_checks[0]["question"]


def test_a_rulebreakers_study_from_the_admin_and_from_generate_items_practise_alike(admin_client):
    made = _admin_add(admin_client, "rb-admin", "rulebreakers")
    call_command("generate_items", "rulebreakers", "rb-cli", "--pairs", "2", "--seed", "0")
    call_command("generate_items", "rulebreakers", "rb-admin", "--pairs", "2", "--seed", "0")
    cli = human_arm_ensure(study=Study.objects.get(slug="rb-cli"))
    made.refresh_from_db()
    assert made.human_arm.practice == cli.practice
    assert made.human_arm.attention_checks == cli.attention_checks
    # participants read the question, never the model's answer instruction
    assert all("Answer" not in q["question"] for q in cli.practice)


def test_a_multiple_choice_bank_uploaded_into_a_yes_no_study_gets_four_option_defaults(admin_client):
    from designs.multiple_choice.items import items_import_multiple_choice

    made = _admin_add(admin_client, "bank", "csv-import")
    assert made.human_arm.practice == registry.practice_for("csv-import")
    bank = ("id,context,question,option_a,option_b,option_c,option_d,answer\n"
            "q1,Anna reads.,Which follows?,Anna reads.,Anna sleeps.,Tom reads.,Tom sleeps.,A\n").encode()
    items_import_multiple_choice(study=made, data=bank)
    made.refresh_from_db()
    design = registry.get("multiple-choice")
    assert made.design == "multiple-choice"
    assert (made.human_arm.practice, made.human_arm.attention_checks) == (design.practice(), design.catch_items())
