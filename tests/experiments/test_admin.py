"""Admin is for staff; researchers browse and filter items, locked items cannot be edited there."""
from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from experiments import design_registry as registry

from designs.modal.items import items_generate
from experiments.models import Item
from tests.factories import ItemFactory, StudyFactory, TrialFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff_client(client):
    user = get_user_model().objects.create_user("researcher", password="x-" * 8, is_staff=True, is_superuser=True)
    client.force_login(user)
    return client


@pytest.mark.parametrize("name", ["admin:experiments_item_changelist", "admin:experiments_study_changelist"])
def test_anonymous_and_non_staff_are_sent_to_login(client, name):
    url = reverse(name)
    response = client.get(url)
    assert response.status_code == 302 and "/admin/login/" in response["Location"]
    user = get_user_model().objects.create_user("participant", password="y-" * 8)
    client.force_login(user)
    response = client.get(url)
    assert response.status_code == 302 and "/admin/login/" in response["Location"]


def test_items_filter_by_checker_disagreement_and_form(staff_client):
    study = StudyFactory(design="modal-distribution")
    items_generate(study=study, design="modal-distribution", interpretations=2, seed=0)
    url = reverse("admin:experiments_item_changelist")
    response = staff_client.get(url, {"checker_disagrees__exact": "1"})
    assert response.status_code == 200
    shown = {i.code for i in response.context["cl"].result_list}
    assert shown == set(Item.objects.filter(checker_disagrees=True).values_list("code", flat=True))
    assert shown and all(":dia.theorem" in code for code in shown)
    response = staff_client.get(url, {"modality__exact": "box", "argument_form": "spurious"})
    assert {i.form_id for i in response.context["cl"].result_list} == {"box.spurious"}


def test_items_are_read_only_in_the_admin_and_trials_cannot_be_invented(staff_client):
    item = ItemFactory()  # a study without responses: even then, no hand edits (re-generate or re-import)
    url = reverse("admin:experiments_item_change", args=[item.pk])
    page = staff_client.get(url)
    assert page.status_code == 200 and 'name="question"' not in page.content.decode()  # shown, not a form field
    staff_client.post(url, {"question": "edited?", "premises": "[]", "prompt": "x", "attributes": "{}"})
    item.refresh_from_db()
    assert item.question != "edited?"
    assert staff_client.get(reverse("admin:experiments_trial_add")).status_code == 403
    changelist = staff_client.get(reverse("admin:experiments_trial_changelist")).content.decode()
    assert "Add trial" not in changelist


def test_items_filter_by_pair_role_and_variant(staff_client):
    from django.core.management import call_command

    call_command("generate_items", "rulebreakers", "rb-admin", "--pairs", "3", "--seed", "1")
    url = reverse("admin:experiments_item_changelist")
    response = staff_client.get(url, {"pair_role": "rulebreaker", "variant": "follow/true-false"})
    assert response.status_code == 200
    shown = list(response.context["cl"].result_list)
    expected = Item.objects.filter(study__slug="rb-admin", pair_role="rulebreaker", variant="follow/true-false")
    assert len(shown) == 3 and {i.pk for i in shown} == set(expected.values_list("pk", flat=True))
    assert all(i.gold_answer == "no" and i.answer_words == {"yes": "True", "no": "False"} for i in shown)
    change = staff_client.get(reverse("admin:experiments_item_change", args=[shown[0].pk]))
    assert change.status_code == 200 and shown[0].pair_id in change.content.decode()


def test_the_admins_view_site_link_leads_to_the_start_page(staff_client):
    """It once led to a bare 404; `/` is now the start page (issue 29)."""
    page = staff_client.get(reverse("admin:index")).content.decode()
    assert '<a href="/">View site</a>' in page and staff_client.get("/").status_code == 200


def test_the_items_list_shows_each_items_text_and_gold_answer(staff_client):
    """Issue 27: the researcher reads the items where they list them: premises, question, gold answer."""
    import html

    from django.core.management import call_command

    call_command("generate_items", "rulebreakers", "rb-list", "--pairs", "1", "--seed", "0", "--variants",
                 "follow/yes-no")
    page = html.unescape(staff_client.get(reverse("admin:experiments_item_changelist")).content.decode())
    assert "Text (premises, question)" in page
    for item in Item.objects.filter(study__slug="rb-list"):
        row = page.split(f">{item.code}<", 1)[1].split("</tr>", 1)[0]
        for line in [*item.premises, item.question]:
            assert f"<div>{line}</div>" in row
        assert f"<td class=\"field-gold_answer\">{item.get_gold_answer_display()}</td>" in row
        assert "Answer Yes or No only" not in row  # the participants' question, not the model's prompt


@pytest.mark.parametrize("design, shown", [
    ("modal-syllogisms", {"logic_system", "consequence"}),
    ("csv-import", {"logic_system"}),  # a bank's rows carry their own consequence relation
    ("rulebreakers", set()),
    ("multiple-choice", set()),
])
def test_a_study_shows_the_modal_logic_fields_its_design_declares_and_no_others(staff_client, design, shown):
    """Logic system and consequence relation are shown where the design's registry entry says its items
    are keyed under them: never for Rulebreakers; a save of its page leaves them as they were."""
    assert set(registry.get(design).modal_fields) == shown
    study = StudyFactory(design=design, logic_system="K")
    page = staff_client.get(reverse("admin:experiments_study_change", args=[study.pk]))
    form = page.context["adminform"].form
    assert {"logic_system", "consequence"} & set(form.fields) == shown
    assert ('name="logic_system"' in page.content.decode()) == ("logic_system" in shown)
    listing = staff_client.get(reverse("admin:experiments_study_changelist")).content.decode()
    cell = listing[listing.index(f">{study.slug}<"):].split("</tr>")[0]
    assert ('<td class="field-system_shown">K</td>' in cell) == ("logic_system" in shown)
    assert ('<td class="field-system_shown">—</td>' in cell) == ("logic_system" not in shown)


def test_an_unknown_design_shows_both_modal_fields(staff_client):
    study = StudyFactory(design="no-such-design")
    form = staff_client.get(reverse("admin:experiments_study_change", args=[study.pk])).context["adminform"].form
    assert {"logic_system", "consequence"} <= set(form.fields)
    add = staff_client.get(reverse("admin:experiments_study_add")).context["adminform"].form
    assert {"logic_system", "consequence"} <= set(add.fields)  # before a design is chosen


def test_the_short_names_help_shows_the_studys_link_as_written(staff_client):
    """The admin renders help text as HTML: '/s/<short name>/' lost its placeholder as a tag ('/s//')."""
    page = staff_client.get(reverse("admin:experiments_study_add")).content.decode()
    assert "it is the study&#x27;s link (/s/ then the short name: /s/my-study/)" in page or \
        "it is the study's link (/s/ then the short name: /s/my-study/)" in page
    assert "/s//" not in page
