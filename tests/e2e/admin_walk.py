"""The steps the Chromium admin tests share: Chromium at 1366 px kept on the test server, logged into the
admin as a superuser (`admin_walk`), and on the way a new study, its human arm's launch settings, a
model run launched from the admin's add page, an action chosen on a list, a pilot of bots and its pilot
report. Each step waits for what it waits for in every test and asserts what it changed in the
database; the timeouts that differ between tests are parameters.
"""
from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from typing import Callable
from urllib.parse import urlsplit

from django.contrib.auth import get_user_model

from analysis.models import Report, ReportStatus
from experiments.models import Participant, Study
from inference.models import ModelRun, RunStatus
from tests.e2e.chromium import LAUNCH_MS, PAGE_MS, chromium, offline_guard

USERNAME = "researcher"
PASSWORD = "a-long-test-passphrase-7"
WIDTH, HEIGHT = 1366, 768


@dataclass
class AdminWalk:
    """A logged-in admin page in Chromium (`page`), the admin's URL (`admin`, no trailing slash) and the
    browser, whose every context stays on the test server."""

    page: object
    admin: str
    browser: object
    guard: Callable
    page_ms: int

    def change(self, study: Study) -> str:
        """The study's change page."""
        return f"{self.admin}/experiments/study/{study.pk}/change/"

    def new_study(self, title: str, design: str, slug: str) -> Study:
        """Create a study on the add page: the title typed (the slug follows it), the design chosen, saved
        without an error; returns it."""
        page = self.page
        page.goto(f"{self.admin}/experiments/study/add/")
        page.locator("#id_title").press_sequentially(title)  # typed: the slug follows
        assert page.input_value("#id_slug") == slug  # filled from the title
        page.select_option("#id_design", design)
        page.click("input[name=_continue]")
        page.wait_for_selector("#launch-panel, .errornote")
        assert not page.query_selector(".errornote"), page.inner_text("#content")[:3000]
        return Study.objects.get(slug=slug)

    def human_arm(self, study: Study, items_per_participant: int, more: Callable | None = None) -> None:
        """The human arm's inline, as a researcher sets it up before a pilot: items per participant, the
        contact, consent marked reviewed, the completion code C0MPLETE; `more(page)` fills whatever else
        the test sets in the arm before the save."""
        page = self.page
        page.goto(self.change(study))
        page.fill("#id_human_arm-0-items_per_participant", str(items_per_participant))
        if more is not None:
            more(page)
        page.fill("#id_human_arm-0-contact", "Dr A. Researcher, duet-study@example.org")
        page.check("#id_human_arm-0-mark_consent_reviewed")
        page.fill("#id_human_arm-0-completion_code", "C0MPLETE")
        page.click("input[name=_continue]")
        page.wait_for_selector("text=consent marked reviewed")

    def model_run(self, study: Study, model) -> None:
        """Launch a run of `model` on `study` from the model runs' add page, opened for them (so it shows each
        scope's count and time at once; the fake scorer scores it in the server's thread): every run of the
        study is then done."""
        page = self.page
        page.goto(f"{self.admin}/inference/modelrun/add/?study={study.pk}&language_model={model.pk}")
        page.wait_for_selector("text=the items each scope holds")
        page.click("input[name=_save]")
        page.wait_for_selector(".messagelist")
        assert set(ModelRun.objects.filter(study=study).values_list("status", flat=True)) == {RunStatus.DONE}

    def action(self, name: str, pk: int, changelist: str = "experiments/study") -> None:
        """Choose the action `name` for the row `pk` on a list (the studies' unless `changelist` says
        another, as "inference/languagemodel") and run it; the caller waits for what it leads to."""
        page = self.page
        page.goto(f"{self.admin}/{changelist}/")
        page.check(f"input[name=_selected_action][value='{pk}']")
        page.select_option("select[name=action]", name)
        page.click("button[name=index]")

    def pilot(self, study: Study, participants: int = 12, seed: int = 5) -> None:
        """Run a simulated pilot of `participants` bots from the studies' action: that many simulated
        participants then exist."""
        page = self.page
        self.action("run_pilot", study.pk)
        page.fill("#id_participants", str(participants))
        page.fill("#id_seed", str(seed))
        page.click("input[value='Run the pilot']")
        page.wait_for_selector("text=simulated participants")
        assert Participant.objects.filter(study=study, is_simulated=True).count() == participants

    def pilot_report(self, study: Study, wait_ms: int) -> Report:
        """Build the pilot report from the studies' action, fitted by R inside the request (waited up to
        `wait_ms`); it is done. Returns it, the page showing its report.html."""
        self.action("build_pilot_report", study.pk)
        self.page.wait_for_selector(".messagelist", timeout=wait_ms)
        report = Report.objects.get(study=study, pilot=True)
        assert report.status == ReportStatus.DONE, report.message
        self.page.goto(f"{self.admin}/analysis/report/{report.pk}/report.html")
        return report

    def person(self, width: int, height: int):
        """A page in a fresh context of the same browser (a participant's), kept on the test server."""
        context = self.browser.new_context(viewport={"width": width, "height": height})
        context.route("**/*", self.guard)
        page = context.new_page()
        page.set_default_timeout(self.page_ms)
        return page


@contextmanager
def admin_walk(live_server, monkeypatch, *, page_ms: int = PAGE_MS, launch_ms: int = LAUNCH_MS):
    """Chromium at 1366 × 768 logged into the admin as a new superuser; yields the AdminWalk. At the end
    the browser is closed, and no request has left the test server (Prolific's redirect is stubbed)."""
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")  # Playwright's loop shares the test thread
    get_user_model().objects.create_superuser(USERNAME, password=PASSWORD)
    external: list[str] = []
    guard = offline_guard(urlsplit(live_server.url).netloc, external)
    admin = f"{live_server.url}/admin"
    with chromium(guard, width=WIDTH, height=HEIGHT, page_ms=page_ms, launch_ms=launch_ms) as (browser, _, page):
        page.goto(f"{admin}/")
        page.fill("#id_username", USERNAME)
        page.fill("#id_password", PASSWORD)
        page.click("input[type=submit]")
        page.wait_for_selector("#site-name")
        yield AdminWalk(page=page, admin=admin, browser=browser, guard=guard, page_ms=page_ms)
    assert external == [], external
