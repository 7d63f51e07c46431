"""The progress of a running job as a researcher sees it, in a real headless Chromium at 1366 px
(issue 29 item 1): the model runs' list and a run's page show a bar with items done, items/s and the
time left, on screen without scrolling sideways, and the page follows the run while it runs. The
same bar and words on every job kind's list and page: tests/studyserver/test_jobs_contract.py."""
from __future__ import annotations

from datetime import timedelta

import pytest

from inference.models import LanguageModel, ModelRun
from common import jobs
from tests.e2e.admin_walk import WIDTH, admin_walk
from tests.factories import StudyFactory


def running_run() -> ModelRun:
    """A run 96 of 384 items in, scoring 4 items/s: 72 s left."""
    lm = LanguageModel.objects.create(name="fake", source="fake", backend="fake")
    run = ModelRun.objects.create(study=StudyFactory(), language_model=lm, items_total=384)
    jobs.job_claim(ModelRun, run.pk)
    jobs.job_count_from(run, 0)
    jobs.job_progress(run, 96)
    ModelRun.objects.filter(pk=run.pk).update(progress_since=run.progress_at - timedelta(seconds=24))
    return run


@pytest.mark.django_db(transaction=True)
def test_a_running_runs_progress_bar_shows_on_its_list_and_page_at_1366_px(live_server, monkeypatch):
    run = running_run()
    words = "96 / 384 items (25 %), 4.0 items/s, about 1 min 12 s left"

    with admin_walk(live_server, monkeypatch) as walk:
        page = walk.page
        for url in (f"{walk.admin}/inference/modelrun/", f"{walk.admin}/inference/modelrun/{run.pk}/change/"):
            page.goto(url)
            bar = page.locator("progress.job-progress").first
            bar.wait_for(state="visible")
            assert (bar.get_attribute("value"), bar.get_attribute("max")) == ("96", "384")
            assert page.evaluate("document.querySelector('progress.job-progress').position") == pytest.approx(0.25)
            box = bar.bounding_box()
            assert box["width"] > 20 and 0 <= box["x"] and box["x"] + box["width"] <= WIDTH, box  # on screen
            text = page.locator(".job-progress-text").first
            assert text.inner_text() == words
            text_box = text.bounding_box()
            assert text_box["x"] + text_box["width"] <= WIDTH, text_box  # read without scrolling sideways
        refresh = page.locator("meta[http-equiv=refresh]")
        assert refresh.count() == 1 and refresh.get_attribute("content") == "3"  # the page follows the run
        jobs.job_progress(run, 384)
        jobs.job_move(run, jobs.JobStatus.DONE)  # (job_finish refuses: this page's run stores no scores)
        page.reload()
        assert page.locator(".job-progress-text").first.inner_text() == "384 / 384 items (100 %)"
        assert page.locator("meta[http-equiv=refresh]").count() == 0  # done: the page stays still
