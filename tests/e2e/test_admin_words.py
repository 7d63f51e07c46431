"""The admin in the researcher's words (issue 29 part 5), in a real headless Chromium at 1366 px: a
model run, a pilot, a pilot report and a power analysis, each made by its service (background work in
the server's thread, DUET_TASK_MODE=eager: the report and the power analysis by real R), then each
change page read as a researcher sees it — no raw JSON anywhere on it (no `{"`, `[{`, `{'` or `["`),
its structured values as tables, no queue without Celery workers, and nothing wider than the window.
"""
from __future__ import annotations

import re

import pytest

from analysis.models import ReportStatus
from designs.modal.items import items_generate
from experiments import services
from experiments.participation.services import human_arm_ensure
from tests.e2e.admin_walk import admin_walk

RAW_JSON = re.compile(r"""\{\s*["']|\[\s*\{|\[\s*["']""")


def _make_jobs():
    """A study with items, a model run of the fake scorer, an 8-bot pilot, its pilot report and a
    power analysis from that pilot, each through its service, run to the end (eager)."""
    from analysis.power_plan import PowerPlan
    from analysis.power_services import power_request
    from analysis.services import report_request
    from experiments.participation.pilot import BotProfile, PilotStatus, pilot_create
    from inference import services as inference
    from inference.models import RunStatus

    study = services.study_create(slug="admin-words", title="Admin words", design="modal-syllogisms")
    items_generate(study=study, design="modal-syllogisms", interpretations=4, seed=0, nonsense=True)
    arm = human_arm_ensure(study=study)
    arm.items_per_participant, arm.completion_code = 4, "C0MPLETE"
    arm.save()
    model = inference.language_model_create(name="fake-words", source="test/fake-words", backend="fake")
    run = inference.model_run_launch(study=study, language_model=model, batch_size=8)
    run.refresh_from_db()
    assert run.status == RunStatus.DONE, run.error
    pilot = pilot_create(study=study, participants=8, seed=3, profile=BotProfile(accuracy=0.85))
    pilot.refresh_from_db()
    assert pilot.status == PilotStatus.DONE, pilot.message
    report = report_request(study=study, pilot=True)
    report.refresh_from_db()
    assert report.status == ReportStatus.DONE, report.message
    # the model − human contrasts alone: the page's tables are what is read here (the people's sets: test_power)
    power = power_request(study=study, plan=PowerPlan(sizes=(4,), nsim=10, seed=1, people=False), pilot=True)
    power.refresh_from_db()
    assert power.status == ReportStatus.DONE, power.message
    return run, pilot, report, power


@pytest.mark.django_db(transaction=True)
def test_the_run_report_pilot_and_power_pages_show_tables_not_json_at_1366px(live_server, monkeypatch, settings):
    settings.DUET_TASK_MODE = "eager"
    run, pilot, report, power = _make_jobs()
    assert run.configuration and run.versions and pilot.profile and power.plan and power.pilot_summary
    admin = f"{live_server.url}/admin"
    pages = {
        "run": (f"{admin}/inference/modelrun/{run.pk}/change/", ("Configuration", "Versions"), 2),
        "report": (f"{admin}/analysis/report/{report.pk}/change/", ("Model runs used", f"\n{run.pk}\n"), 0),
        "pilot": (f"{admin}/experiments/pilot/{pilot.pk}/change/", ("Bot profile", "median response time (ms)"), 1),
        "power": (f"{admin}/analysis/poweranalysis/{power.pk}/change/", ("Plan", "simulated studies per size",
                                                                          "What the pilot gave"), 2),
    }

    with admin_walk(live_server, monkeypatch) as walk:
        page = walk.page
        for name, (url, words, tables) in pages.items():
            page.goto(url)
            page.wait_for_selector("#content")
            text = page.inner_text("#content")
            assert not RAW_JSON.search(text), f"{name} page shows raw JSON: {RAW_JSON.search(text).group(0)!r}\n{text}"
            for word in words:
                assert word in text, f"{name} page lacks {word!r}:\n{text}"
            assert page.locator("#content table.structured").count() >= tables, name
            assert "Queue" not in text, f"{name} page shows a queue without Celery workers"
            wide = page.evaluate("document.documentElement.scrollWidth")
            assert wide <= 1366, f"the {name} page is {wide} px wide at a 1366 px window"
        # the seconds a pilot took, rounded to 0.1 s
        page.goto(pages["pilot"][0])
        shown = page.inner_text(".field-seconds_rounded .readonly")
        assert re.fullmatch(r"\d+(,\d{3})*\.\d s", shown.strip()), shown
