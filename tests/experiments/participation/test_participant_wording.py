"""Participants read each design's own question, never the model's prompt or its answer instruction
(issue 27): every registered design's study is walked through its participant pages (consent,
instructions, practice, trials) and every page, with the trials it hands the browser, is read."""
from __future__ import annotations

import html

import pytest
from django.core.management import call_command
from django.test import Client

from experiments import services
from experiments import design_registry as registry
from experiments.models import Study, StudyStatus
from tests.factories import review_consent

from .test_views import DESKTOP, post_form, walk_to_trials

pytestmark = pytest.mark.django_db

RULE_BANK = ("premise,conclusion,flipped_conclusion,rule_id\n"
             "Person X is holding a hot cup,Person X feels warmth,Person X does not feel warmth,r1\n"
             "Food Y is frozen,Food Y is cold,Food Y is not cold,r2\n"
             "Tool Z is sharp,Tool Z can cut paper,Tool Z cannot cut paper,r3\n"
             "Animal W is a bird,Animal W has feathers,Animal W has no feathers,r4\n")
MC_BANK = ("id,context,question,option_a,option_b,option_c,option_d,answer\n"
           + "".join(f"q{n},Anna reads {n} books.,Which follows?,Anna reads {n} books.,Anna sleeps.,Tom reads.,"
                     f"Tom sleeps.,A\n" for n in range(1, 5)))


def _study(design: str) -> Study:
    if design == "rulebreakers":  # the design names its own makers' inputs: a test may name designs
        call_command("generate_items", "rulebreakers", "w-rb", "--pairs", "8", "--seed", "0")
        study = Study.objects.get(slug="w-rb")
    else:
        study = services.study_create(slug=f"w-{design}", title="Wording", design=design)
        make = registry.get(design)
        if make.source == registry.GENERATE:
            registry.get(design).make(study=study, interpretations=24, seed=0)
        elif design == "dual-sided":
            make.make(study=study, data=RULE_BANK.encode())
        elif design == "multiple-choice":
            make.make(study=study, data=MC_BANK.encode())
        else:
            from tests.experiments.test_csv_import import GOOD, HEADER

            make.make(study=study, data=(HEADER + GOOD).encode())
    arm = review_consent(study)
    arm.items_per_participant = 2
    arm.save()
    services.study_transition(study=study, to=StudyStatus.OPEN)
    return study


@pytest.mark.parametrize("design", [d.name for d in registry.all_designs()])
def test_participants_read_the_designs_question_not_the_models_prompt(design):
    study = _study(design)
    wording = registry.get(design).wording
    browser = Client(enforce_csrf_checks=True, HTTP_USER_AGENT=DESKTOP)
    pages = []
    session_url, participant = walk_to_trials(browser, study)
    practice = browser.get(session_url)
    pages.append(practice.content.decode())
    post_form(browser, session_url + "practice")
    trials = browser.get(session_url)
    assert trials.context["runner"]["phase"] == "trials"
    pages.append(trials.content.decode())
    shown = html.unescape("\n".join(pages)).replace("\\u0027", "'").replace("\\n", "\n")
    for instruction in ("Answer Yes or No only", "Answer True or False only", *wording.instructions):
        assert instruction not in shown
    items = study.items.filter(pk__in=participant.plan)
    assert items.exists()
    for item in items:
        assert item.question in shown or item.question.replace('"', '\\"') in shown
        assert item.prompt not in shown and item.prompt.endswith(wording.answer_cue)
        assert not any(instruction in item.question for instruction in wording.instructions)
