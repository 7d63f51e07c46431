"""The launch panel on the study's admin page (issue 18): the link and codes to paste into Prolific,
the expected duration and reward, and the checklist that says what must hold before opening."""
from __future__ import annotations

import html
import re

import pytest
from django.contrib.auth import get_user_model

from experiments.participation import launch, services
from tests.experiments.participation.test_pilot import draft_study

pytestmark = pytest.mark.django_db


def test_the_launch_panel_gives_the_link_codes_duration_and_a_checklist(client):
    study = draft_study(completion_code="", failed_attention_code="FAILEDAC", prolific_min_hourly="8.00",
                        pay_multiplier="1.50")
    client.force_login(get_user_model().objects.create_superuser("owner", password="x-" * 8))
    page = html.unescape(client.get(f"/admin/experiments/study/{study.pk}/change/").content.decode())
    link = f"/s/{study.slug}/?PROLIFIC_PID={{{{%PROLIFIC_PID%}}}}&STUDY_ID={{{{%STUDY_ID%}}}}&SESSION_ID={{{{%SESSION_ID%}}}}"
    assert f'data-relative="{link}"' in page and 'data-copy="launch-link"' in page and "experiments/launch.js" in page
    assert "<code>FAILEDAC</code>" in page and "<code>— not set —</code>" in page
    # 24 items + 2 catch items + 2 practice questions at 12 s, plus 2 min: 8 min; 8.00 × 1.5 = 12.00/hour → 1.60
    assert "expected duration 8 min" in page and "reward 1.60 GBP at 12.00 GBP/hour" in page
    assert "✗ completion code set" in page and "Not ready to open" in page
    assert "✗ consent reviewed as it stands" in page and "✗ simulated pilot run (recommended)" in page


def test_the_checklist_turns_ready_when_what_is_required_holds():
    from tests.factories import review_consent

    study = draft_study()
    review_consent(study)
    checks = {c.label: c for c in launch.checklist(study, services.human_arm_ensure(study=study))}
    assert all(c.ok for c in checks.values() if c.required)
    assert not checks["pilot report built"].ok and not checks["pilot report built"].required
    assert "Ready to open." in launch.launch_html(study)


def test_the_study_page_draws_completions_over_time_for_real_participants_only(client):
    from datetime import timedelta

    from django.utils import timezone

    from experiments.models import Participant
    from experiments.participation.pilot import pilot_create, pilot_execute

    study = draft_study()
    pilot_execute(pilot_id=pilot_create(study=study, participants=2, seed=1, run=False).pk)  # bots: not drawn
    start = timezone.now() - timedelta(hours=3)
    for k in range(3):
        Participant.objects.create(study=study, prolific_pid=f"p{k}", key_mapping="f_yes", status="completed",
                                   finished_at=start + timedelta(hours=k))
    client.force_login(get_user_model().objects.create_superuser("owner", password="x-" * 8))
    page = client.get(f"/admin/experiments/study/{study.pk}/change/").content.decode()
    assert 'aria-label="Completions over time: 3 participants completed between' in page
    assert "<figcaption>Completions over time (real participants; cumulative)</figcaption>" in page


def test_the_panel_says_how_lists_are_drawn_and_when_there_is_no_latin_square():
    from experiments import design_registry as registry
    from designs.modal.items import items_generate
    from experiments.design_registry import CATCH_ITEMS
    from tests.experiments.test_csv_import import GOOD, HEADER

    study = draft_study()
    arm = services.human_arm_ensure(study=study)
    interpretations = study.items.values("interpretation").distinct().count()
    assert services.lists_scheme(study=study, arm=arm) == (
        f"Latin square over {interpretations} interpretations × 24 forms: every form equally often in a list, "
        "no interpretation twice")
    # a CSV bank added to generated items: the grid is gone, and the panel says so
    registry.get("csv-import").make(study=study, data=(HEADER + GOOD).encode("utf-8"))
    scheme = services.lists_scheme(study=study, arm=arm)
    assert scheme.startswith(f"one column of {study.items.exclude(design=CATCH_ITEMS).count()} items")
    assert "no Latin square" in scheme and "designs: csv-import, modal-syllogisms" in scheme
    assert f"Lists: {scheme}." in html.unescape(launch.launch_html(study))



def test_every_cross_gives_its_reason_and_where_to_fix_it():
    """Issue 27: the reason of a ✗ is on the panel, not only on the refused opening."""
    from designs.modal.items import items_generate
    from tests.factories import StudyFactory

    study = StudyFactory(design="modal-syllogisms")
    items_generate(study=study, design="modal-syllogisms", interpretations=8, seed=0)
    arm = services.human_arm_ensure(study=study)
    arm.practice = [*arm.practice, {"premises": ["If Mia isn't painting a fence, then Leo is washing a car.",
                                                 "Mia isn't painting a fence."],
                                    "question": "Can we infer that Leo is washing a car?", "answer": "yes",
                                    "logical_form": "¬p → q, ¬p ⊢ q"}]
    arm.completion_code = ""
    arm.save()
    panel = html.unescape(launch.launch_html(study))
    crosses = [line for line in panel.split("<li") if "✗" in line]
    assert len(crosses) == 7  # four required (lists, practice, consent, completion code), three recommended
    assert ("✗ participants' lists can be drawn — Items per participant (24) exceeds the 8 interpretations"
            in panel), panel
    assert "— change it in Human arm › Lists (items per participant, paired presentation).</li>" in panel
    assert ("✗ practice shares no form with the items — Practice question(s) #3 (¬p → q, ¬p ⊢ q) share a logical "
            "form with the study's items, so the practice would teach the answer to a tested form — change it in "
            "Human arm › Trials › Practice questions.") in panel
    assert "✗ completion code set — No completion code" in panel and "change it in Human arm › Prolific" in panel
    assert "✗ consent reviewed as it stands — " in panel and "change it in Human arm › Consent" in panel
    for line in crosses:
        if "(recommended)" not in line:
            assert line.count(" — ") == 2 and "change it in" in line, line  # a reason, and where
    # every line ends in one full stop: the recommended steps' own words end in one ("…and finish it.")
    lines = re.findall(r"<li[^>]*>(.*?)</li>", panel)
    assert len(lines) == 8 and all(line.endswith(".") and not line.endswith("..") for line in lines if "✗" in line), lines
    assert "✗ preview walked to the end (recommended) — Use 'Preview the participant flow' below and finish it.</li>" \
        in panel


@pytest.mark.parametrize("status, said", [
    ("open", "Open: participants can take the study now"), ("paused", "Paused: no new participants"),
    ("closed", "Closed: it takes no participants."),
])
def test_an_open_study_says_it_is_open_not_ready_to_open(status, said):
    from experiments import services as study_services
    from tests.factories import review_consent

    study = draft_study()
    review_consent(study)
    assert "Ready to open." in launch.launch_html(study)
    study_services.study_transition(study=study, to="open")
    if status != "open":
        study_services.study_transition(study=study, to=status)
    panel = launch.launch_html(study)
    assert said in panel and "Ready to open" not in panel
