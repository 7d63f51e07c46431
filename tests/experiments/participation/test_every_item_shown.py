"""Every item in the study is shown to someone (issue 44 item 1, first "Done when" bullet): a 40-pair RULEBREAKERS
study with 24 items per participant and a 32-question multiple-choice study with 24 per participant each have
every pair / question answered once enough participants have walked the participant pages (entry, consent,
instructions, trials, finish: the Django client, CSRF enforced); before, their lists were whole blocks of rows
and 16 pairs / 8 questions were in no list. A study whose places cannot cover its lists says so on the launch
panel before launch."""
from __future__ import annotations

import html
from collections import Counter

import pytest
from django.core.management import call_command
from django.test import Client

from experiments.models import Item, Participant, ParticipantStatus, Study, Trial
from experiments.participation import launch
from experiments.participation.services import human_arm_ensure

from .conftest import trial_data
from .test_multiple_choice_trials import make_mc_study
from .test_paired_participants import open_paired
from .test_views import DESKTOP, entry, post_form, post_json

pytestmark = pytest.mark.django_db

QUIET = {"attention_checks": [], "practice": []}


def take_part(study: Study, k: int, code) -> Participant:
    """Participant k walks the pages from the Prolific link to the completion code; `code(item)` is the key."""
    browser = Client(enforce_csrf_checks=True, HTTP_USER_AGENT=DESKTOP, REMOTE_ADDR=f"10.44.0.{k + 1}")  # one each
    response = entry(browser, study, pid=f"5f1a2b3c4d5e6f7a8b9c{k:04d}", session=f"sess-{k}")
    assert response.status_code == 302, response.content
    session_url = response["Location"]
    browser.get(session_url)
    post_form(browser, session_url + "consent", {"agree": "yes"})
    browser.get(session_url)
    post_form(browser, session_url + "instructions")
    participant = Participant.objects.get(token=session_url.rstrip("/").split("/")[-1])
    assert browser.get(session_url).context["runner"]["phase"] == "trials"
    items = Item.objects.in_bulk(participant.plan)
    for index, pk in enumerate(participant.plan):
        sent = post_json(browser, session_url + "trial", trial_data(participant, index, code=code(items[pk])))
        assert sent.status_code == 201, sent.content
    assert post_json(browser, session_url + "finish", {}).json()["status"] == "completed"
    participant.refresh_from_db()
    assert participant.status == ParticipantStatus.COMPLETED
    return participant


def answered(study: Study) -> Counter:
    return Counter(Trial.objects.filter(participant__study=study).values_list("item_id", flat=True))


def test_every_pair_of_a_40_pair_rulebreakers_study_is_answered_by_someone():
    study = open_paired("rb40", "generate_items", "rulebreakers", "rb40", "--pairs", "40", items_per_participant=24,
                        **QUIET)
    shown = Item.objects.filter(study=study, variant="follow/yes-no")
    pairs = set(shown.values_list("pair_id", flat=True))
    assert len(pairs) == 40 and shown.count() == 80
    people = [take_part(study, k, lambda item: "KeyF") for k in range(4)]  # 4 lists: 2 windows × 2 members
    assert sorted(p.list_number for p in people) == [0, 1, 2, 3]
    seen = answered(study)
    assert {Item.objects.get(pk=pk).pair_id for pk in seen} == pairs  # every pair, by someone
    assert set(seen) == set(shown.values_list("pk", flat=True))  # and every member of each
    assert sorted(Counter(seen.values()).items()) == [(1, 64), (2, 16)]  # the 8 pairs the wrap repeats: twice


def test_every_question_of_a_32_question_multiple_choice_study_is_answered_by_someone():
    study = make_mc_study(questions=32, items_per_participant=24, **QUIET)
    keys = {"A": "KeyD", "B": "KeyF", "C": "KeyJ", "D": "KeyK"}
    people = [take_part(study, k, lambda item: keys[item.gold_answer]) for k in range(8)]  # 2 windows × 4 orders
    assert sorted(p.list_number for p in people) == list(range(8))
    seen = answered(study)
    questions = set(Item.objects.filter(study=study).values_list("pair_id", flat=True))
    assert len(questions) == 32
    assert {Item.objects.get(pk=pk).pair_id for pk in seen} == questions
    assert len(seen) == 128  # every circular order of every question
    assert Trial.objects.filter(participant__study=study, correct=True).count() == 8 * 24  # the keys chose the gold


def _draft_rulebreakers(slug: str, **arm_settings) -> Study:
    call_command("generate_items", "rulebreakers", slug, "--pairs", "40")
    study = Study.objects.get(slug=slug)
    arm = human_arm_ensure(study=study)
    for name, value in {"items_per_participant": 24, "completion_code": "C0MPLETE", **arm_settings}.items():
        setattr(arm, name, value)
    arm.save()
    return study


def test_a_study_whose_places_cannot_cover_its_lists_says_so_on_the_launch_panel():
    study = _draft_rulebreakers("rbshort", target_sample_size=1)
    panel = html.unescape(launch.launch_html(study))
    assert ("✗ every item shown to someone at the target sample size (recommended) — people will never see 56 of "
            "the study's 80 items, 16 of its 40 pairs not at all: the settings draw 4 lists and each participant is "
            "given one, the least used, so with 1 place (the target sample size) 3 of them are never given. Set the "
            "target sample size to at least 4 (a multiple of 4 uses the lists equally), or show more items per "
            "participant — change it in Human arm › Lists (target sample size, items per participant).") in panel
    arm = human_arm_ensure(study=study)
    arm.target_sample_size = 4
    arm.save()
    assert "✓ every item shown to someone at the target sample size" in html.unescape(launch.launch_html(study))


def test_the_panel_counts_the_orders_of_questions_fewer_places_leave_out():
    from .test_multiple_choice_trials import mc_bank
    from designs.multiple_choice import items as mc_items
    from tests.factories import StudyFactory

    study = StudyFactory(design="multiple-choice")
    mc_items.items_import_multiple_choice(study=study, data=mc_bank(32))
    arm = human_arm_ensure(study=study)
    arm.items_per_participant, arm.target_sample_size = 24, 5
    arm.save()
    panel = html.unescape(launch.launch_html(study))
    # 8 lists; 5 places: the first window in all 4 orders, the second in one: 8 questions lack 3 orders
    assert "people will never see 24 of the study's 128 items: the settings draw 8 lists" in panel
