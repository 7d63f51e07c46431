"""A researcher's whole study in the admin, in a real headless Chromium, without the command line
(issue 18): log in, create a study, generate its items, upload a CSV bank with one bad row (errors
with row and column, nothing written), fix it (a preview, then the write), edit the practice questions
and attention checks in their structured editors, run a simulated pilot, build the pilot report, read
the launch panel's link and codes, open the study; then a participant follows that link to the end.

Background work (the pilot, the report) runs in the server's own thread (DUET_TASK_MODE=eager), so
the report is built by real R before the action's page returns.
"""
from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from django.contrib.auth import get_user_model

from analysis.models import Report, ReportStatus
from experiments.models import Participant, Study, StudyStatus, Trial
from experiments.participation.services import human_arm_ensure
from tests.e2e.test_participant_flow import ARGS, CHROMIUM, LAUNCH_MS, PAGE_MS, _playwright, offline_guard, press_to_start
from tests.experiments.test_csv_import import GOOD, HEADER

PASSWORD = "a-long-test-passphrase-7"
CHECK_QUESTION = "Can we infer that Ann is reading a book?"
BAD_ROW = "a3,Ann is baking a cake.,,Can we infer that Ann is baking a cake?,maybe,,none,food\n"


@pytest.mark.django_db(transaction=True)
def test_a_researcher_takes_a_study_from_empty_to_open_in_the_admin(live_server, monkeypatch, tmp_path, settings):
    sync_playwright = _playwright()
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")  # Playwright's loop shares the test thread
    settings.DUET_TASK_MODE = "eager"
    get_user_model().objects.create_superuser("researcher", password=PASSWORD)
    bad, good = tmp_path / "bank-bad.csv", tmp_path / "bank.csv"
    bad.write_text(HEADER + GOOD + BAD_ROW, encoding="utf-8")
    good.write_text(HEADER + GOOD, encoding="utf-8")
    server = urlsplit(live_server.url).netloc
    external = []
    admin = f"{live_server.url}/admin"

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=ARGS, timeout=LAUNCH_MS)
        context = browser.new_context(viewport={"width": 1366, "height": 768})
        context.route("**/*", offline_guard(server, external))
        page = researcher = context.new_page()
        page.set_default_timeout(PAGE_MS)

        # log in
        page.goto(f"{admin}/")
        page.fill("#id_username", "researcher")
        page.fill("#id_password", PASSWORD)
        page.click("input[type=submit]")
        page.wait_for_selector("#site-name")

        # create the study: the design is a choice from the registry
        page.goto(f"{admin}/experiments/study/add/")
        page.locator("#id_title").press_sequentially("Admin walk")  # typed: the slug follows
        assert page.input_value("#id_slug") == "admin-walk"  # filled from the title
        page.select_option("#id_design", "modal-syllogisms")
        page.click("input[name=_continue]")
        page.wait_for_selector("#launch-panel, .errornote")
        assert not page.query_selector(".errornote"), page.inner_text("#content")[:3000]
        study = Study.objects.get(slug="admin-walk")
        change = f"{admin}/experiments/study/{study.pk}/change/"

        # generate items with the design's options
        page.click("text=Generate items…")
        page.fill("#id_o-interpretations", "6")
        page.click("input[value='Generate the items']")
        page.wait_for_selector("text=Generated 144 items")
        assert study.items.count() == 144

        # upload a CSV bank with one bad row: its row and column named, nothing written
        page.click("text=Upload a bank (CSV, JSON, Parquet)…")
        page.set_input_files("#id_o-csv_file", str(bad))
        page.click("input[value='Check and preview']")
        errors = page.inner_text("#import-errors")
        assert "Nothing was written." in errors and re.search(r"row 4\b.*gold_answer", errors), errors
        assert study.items.count() == 144
        # fixed: a preview of exactly what would be written, then the write
        page.set_input_files("#id_o-csv_file", str(good))
        page.click("input[value='Check and preview']")
        assert "2 items would be written" in page.inner_text("#import-preview")
        assert study.items.count() == 144
        page.click("input[value='Write these 2 items']")
        page.wait_for_selector("text=146 items")

        # the human arm: lists, one practice question and one attention check, in the structured editors
        page.goto(change)
        page.fill("#id_human_arm-0-items_per_participant", "6")
        page.fill("[name='human_arm-0-practice-0-question']", "Can we infer that Leo is washing a car today?")
        for box in page.locator("[name^='human_arm-0-practice-'][name$='-delete']").all()[1:]:
            box.check()  # every practice question but the first is removed
        page.fill("[name='human_arm-0-attention_checks-0-premises']", "Ann is reading a book.\nTom is baking bread.")
        page.fill("[name='human_arm-0-attention_checks-0-question']", CHECK_QUESTION)
        page.select_option("[name='human_arm-0-attention_checks-0-answer']", "yes")
        for box in page.locator("[name^='human_arm-0-attention_checks-'][name$='-delete']").all()[1:]:
            box.check()
        page.fill("#id_human_arm-0-contact", "Dr A. Researcher, duet-study@example.org")
        page.check("#id_human_arm-0-mark_consent_reviewed")
        page.fill("#id_human_arm-0-completion_code", "C0MPLETE")
        page.click("input[name=_continue]")
        page.wait_for_selector("text=consent marked reviewed")
        arm = human_arm_ensure(study=study)
        assert len(arm.practice) == 1 and arm.practice[0]["question"] == "Can we infer that Leo is washing a car today?"
        assert [c["question"] for c in arm.attention_checks] == [CHECK_QUESTION]
        assert "no Latin square" in page.inner_text("#launch-lists")  # the bank's items break the grid: said

        def action(name: str):
            page.goto(f"{admin}/experiments/study/")
            page.check(f"input[name=_selected_action][value='{study.pk}']")
            page.select_option("select[name=action]", name)
            page.click("button[name=index]")

        # a simulated pilot through the participant pages, then its report (real R)
        action("run_pilot")
        page.fill("#id_participants", "12")
        page.fill("#id_seed", "5")
        page.click("input[value='Run the pilot']")
        page.wait_for_selector("text=simulated participants")
        assert Participant.objects.filter(study=study, is_simulated=True).count() == 12
        action("build_pilot_report")
        page.wait_for_selector(".messagelist", timeout=900_000)  # the report is fitted by R inside the request
        report = Report.objects.get(study=study, pilot=True)
        assert report.status == ReportStatus.DONE, report.message
        page.goto(f"{admin}/analysis/report/{report.pk}/report.html")
        assert "PILOT report (simulated participants included, not data)" in page.inner_text("h1")

        # the launch panel: the link with Prolific's placeholders, the codes, a checklist that now holds
        page.goto(change)
        link = page.inner_text("#launch-link")
        assert link == (f"{live_server.url}/s/admin-walk/?PROLIFIC_PID={{{{%PROLIFIC_PID%}}}}"
                        "&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}")
        panel = page.inner_text("#launch-panel")
        assert "C0MPLETE" in panel and "Ready to open." in panel
        assert "✓ simulated pilot run" in panel and "✓ pilot report built" in panel
        action("open_studies")
        page.wait_for_selector(".messagelist")
        study.refresh_from_db()
        assert study.status == StudyStatus.OPEN

        # a participant from that link, in a fresh browser context, to the end
        person = browser.new_context(viewport={"width": 1280, "height": 800})
        person.route("**/*", offline_guard(server, external))
        page = person.new_page()
        page.set_default_timeout(PAGE_MS)
        page.goto(link.replace("{{%PROLIFIC_PID%}}", "adminwalk00000000000000a1").replace("{{%STUDY_ID%}}", "st")
                  .replace("{{%SESSION_ID%}}", "se1"))
        page.click("#agree")
        instructions = page.inner_text("#instructions-text")
        yes_key = "KeyJ" if '"F" for No' in instructions else "KeyF"
        page.click("#continue")
        assert "practice question" in press_to_start(page)
        page.wait_for_selector("#stage[data-state=armed]")
        page.keyboard.press(yes_key)
        page.wait_for_selector("#feedback:not([hidden])")
        page.keyboard.press(yes_key)
        press_to_start(page, yes_key)
        for _ in range(7):  # six items and the attention check
            page.wait_for_selector("#stage[data-state=armed]")
            page.keyboard.press(yes_key if CHECK_QUESTION in page.inner_text("#stage") else
                                ("KeyF" if yes_key == "KeyJ" else "KeyJ"))
        page.wait_for_url("https://app.prolific.com/submissions/complete?cc=C0MPLETE")

        # monitoring at 1366 px: participants and trials filtered by study, the columns that matter and
        # the report's links on screen without scrolling sideways
        page = researcher

        def on_screen(selector: str) -> None:
            box = page.locator(selector).first.bounding_box()
            assert box and box["x"] >= 0 and box["x"] + box["width"] <= 1366, (selector, box)

        page.goto(f"{admin}/experiments/participant/?study__id__exact={study.pk}&is_simulated__exact=0")
        assert page.locator("#result_list tbody tr").count() == 1
        for column in ("status", "answered", "attention"):
            on_screen(f"#result_list th.column-{column}")
        page.goto(f"{admin}/experiments/trial/?participant__study__id__exact={study.pk}")
        for column in ("answer", "correct", "rt_ms_rounded"):  # response times rounded (issue 29)
            on_screen(f"#result_list th.column-{column}")
        page.goto(f"{admin}/analysis/report/")
        on_screen("#result_list td.field-files a")
        browser.close()

    assert external == []
    person = Participant.objects.get(study=study, prolific_pid="adminwalk00000000000000a1")
    assert person.status == "completed" and not person.is_simulated
    assert Trial.objects.filter(participant=person).count() == 7
    assert Path(report.out_dir, "report.html").exists()
