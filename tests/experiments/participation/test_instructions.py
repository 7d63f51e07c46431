"""The instructions fit the design and the list (issue 16): how many statements, the key mapping, how
many questions and about how long; and the trial page's start screens and progress line."""
from __future__ import annotations

import pytest
from django.test import Client

from designs.modal.items import items_generate
from experiments import services as study_services
from experiments.models import StudyStatus
from experiments.participation.overview import statements_phrase
from experiments.participation.services import human_arm_ensure
from tests.factories import StudyFactory, review_consent

from .test_views import DESKTOP, entry, post_form, walk_to_trials

pytestmark = pytest.mark.django_db


def open_design(design: str, **arm_settings):
    study = StudyFactory(design=design)
    items_generate(study=study, design=design, interpretations=4, seed=0)
    arm = human_arm_ensure(study=study)
    for name, value in {"items_per_participant": 3, **arm_settings}.items():
        setattr(arm, name, value)
    arm.save()
    review_consent(study)
    study_services.study_transition(study=study, to=StudyStatus.OPEN)
    return study


def instructions(study) -> str:
    browser = Client(enforce_csrf_checks=True, HTTP_USER_AGENT=DESKTOP)
    session = entry(browser, study)["Location"]
    browser.get(session)
    post_form(browser, session + "consent", {"agree": "yes"})
    return " ".join(browser.get(session).content.decode().split())


def test_statement_counts_in_words():
    assert statements_phrase([2, 2]) == "two statements"
    assert statements_phrase([1]) == "a statement"
    assert statements_phrase([1, 2, 2]) == "one or two statements"
    assert statements_phrase([1, 3]) == "one to three statements"


def test_necessitation_items_come_with_one_statement_not_two():
    page = instructions(open_design("necessitation", attention_checks=[]))
    assert "presented with a statement followed by a question" in page
    assert "based on the information provided in the statement." in page
    assert "two statements" not in page


def test_the_necessitation_designs_default_catch_items_keep_the_one_statement_promise():
    study = open_design("necessitation")  # the design's default catch items: one statement each
    assert [len(check["premises"]) for check in study.human_arm.attention_checks] == [1, 1]
    page = instructions(study)
    assert "presented with a statement followed by a question" in page and "two statements" not in page


def test_the_catch_items_count_as_what_the_participant_sees():
    two = [{"premises": ["Anna is reading a book.", "Tom is baking bread."],
            "question": "Can we infer that Anna is reading a book?", "answer": "yes"}]
    page = instructions(open_design("necessitation", attention_checks=two))
    assert "presented with one or two statements followed by a question" in page


def test_the_syllogisms_keep_the_papers_two_statements_and_say_how_many_and_how_long(open_study):
    page = instructions(open_study(items_per_participant=24))
    assert "presented with two statements followed by a question" in page
    # 24 items, 2 catch items, 2 practice questions: (26 + 2) × 12 s + 2 min → 8 minutes
    assert ("First come 2 practice questions with feedback; they do not count. Then there are 26 questions. "
            "The whole study takes about 8 minutes.") in page


def test_without_practice_the_instructions_do_not_mention_it(open_study):
    page = instructions(open_study(items_per_participant=3, attention_checks=[], practice=[]))
    assert "There are 3 questions. The whole study takes about 3 minutes." in page
    assert "practice" not in page.split('id="instructions-length"')[1].split("</p>")[0]


def test_the_trial_pages_open_on_a_start_screen(open_study):
    study = open_study(items_per_participant=3, attention_checks=[])
    browser = Client(enforce_csrf_checks=True, HTTP_USER_AGENT=DESKTOP)
    session, _ = walk_to_trials(browser, study)
    page = " ".join(browser.get(session).content.decode().split())
    assert "First, 2 practice questions with feedback, to try the keys. They do not count." in page
    assert 'id="progress"' in page and 'id="go-on"' in page
    post_form(browser, session + "practice")
    page = " ".join(browser.get(session).content.decode().split())
    assert "The practice is over. The real questions start now: 3 questions, without feedback." in page
    assert "Press <kbd>F</kbd> or <kbd>J</kbd> to start." in page
