"""Issue 38 in a real headless Chromium at 1366 px: a researcher publishes a study on Prolific from the launch
panel, syncs, reviews (dry run, then apply) and pays 003's wage bonus (dry run, then apply) from the admin,
against the stand-in Prolific server on loopback (tests/prolific/standin.py); each passing participant is
approved once and paid once."""
from __future__ import annotations

import pytest

from experiments.models import ParticipantStatus
from prolific.models import ProlificStudy
from tests.e2e.admin_walk import admin_walk
from tests.factories import ParticipantFactory, TrialFactory, review_consent
from tests.prolific.standin import StandIn, pid


@pytest.mark.django_db(transaction=True)
def test_a_researcher_runs_the_prolific_side_from_the_admin(live_server, monkeypatch, settings):
    from tests.experiments.participation.test_pilot import draft_study

    settings.DUET_PUBLIC_ORIGIN = "https://duet.example.org"  # the address participants open (not the live server)
    standin = StandIn()
    monkeypatch.setenv("PROLIFIC_API_URL", standin.url)
    monkeypatch.setenv("PROLIFIC_API_TOKEN", standin.state.token)
    study = draft_study(prolific_min_hourly="9.00", answer_input="buttons_touch")  # taps too: tablets may take it
    review_consent(study)
    try:
        with admin_walk(live_server, monkeypatch) as walk:
            page = walk.page
            page.goto(walk.change(study))
            page.click("#launch-publish")
            page.fill("#id_reward", "150")
            page.fill("#id_places", "2")
            page.fill("#id_minutes", "8")
            page.fill("#id_first_language", "English")  # who may take it (issue 47 item 4)
            page.fill("#id_approval_rate_min", "95")
            page.check("input[name=devices][value=tablet]")
            page.click("input[value='Publish on Prolific']")
            page.wait_for_selector("#prolific-state")
            link = ProlificStudy.objects.get(study=study)
            assert "published" in page.inner_text("#prolific-state") and link.prolific_id in standin.state.studies
            assert standin.state.studies[link.prolific_id]["external_study_url"].startswith(
                f"https://duet.example.org/s/{study.slug}/")
            assert standin.state.created[-1]["filters"] == [
                {"filter_id": "first-language", "selected_values": ["19"]},
                {"filter_id": "approval_rate", "selected_range": {"lower": 95}}]
            assert standin.state.created[-1]["device_compatibility"] == ["desktop", "tablet"]
            assert "Approval Rate (approval_rate): at least 95" in page.inner_text("#prolific-eligibility")

            good = ParticipantFactory(study=study, prolific_pid=pid("good"), status=ParticipantStatus.COMPLETED)
            TrialFactory(participant=good, item=study.items.first(), index=0)
            good_sub = standin.add_submission(link.prolific_id, pid("good"), time_taken=720, study_code="C0MPLETE")
            standin.add_submission(link.prolific_id, pid("stranger"), time_taken=300)
            page.click("#prolific-sync input[type=submit]")
            page.wait_for_selector("text=Synced: 2 rows, 1 flagged.")
            assert "no record in Duet" in page.inner_text("#prolific-rows")

            page.click("#prolific-review button[value=no]")
            page.wait_for_selector("#prolific-review-plan")
            assert "approve" in page.inner_text("#prolific-review-plan") and not standin.state.transitions
            page.click("#prolific-review button[value=yes]")
            page.wait_for_selector("text=Review applied.")
            assert standin.state.transitions == [(good_sub, "APPROVE")]

            page.fill("#id_hourly_wage", "15.00")  # 15.00/hour × 12 min = 3.00, minus 1.50 reward: 1.50
            page.click("#prolific-bonus button[value=no]")
            page.wait_for_selector("#prolific-bonus-plan")
            assert "Total 1.50." in page.inner_text("#prolific-bonus-rule") and not standin.state.payments
            page.fill("#id_confirm_total", page.inner_text("#prolific-bonus-to-pay"))  # the total, confirmed
            page.click("#prolific-bonus button[value=yes]")
            page.wait_for_selector("text=Bonuses paid (each participant once).")
            page.fill("#id_confirm_total", "0.00")
            page.click("#prolific-bonus button[value=yes]")  # a second click pays nothing more
            page.wait_for_selector("text=Bonuses paid (each participant once).")
            assert standin.paid() == {pid("good"): 1} and standin.state.payments == [(pid("good"), 150)]
            assert page.evaluate("document.documentElement.scrollWidth") <= 1366
    finally:
        standin.close()
