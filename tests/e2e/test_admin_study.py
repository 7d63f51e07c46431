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

import pytest

from experiments.models import Participant, StudyStatus, Trial
from experiments.participation.services import human_arm_ensure
from tests.e2e.admin_walk import admin_walk
from tests.e2e.chromium import press_to_start
from tests.experiments.test_csv_import import GOOD, HEADER

CHECK_QUESTION = "Can we infer that Ann is reading a book?"
BAD_ROW = "a3,Ann is baking a cake.,,Can we infer that Ann is baking a cake?,maybe,,none,food\n"


@pytest.mark.django_db(transaction=True)
def test_a_researcher_takes_a_study_from_empty_to_open_in_the_admin(live_server, monkeypatch, tmp_path, settings):
    settings.DUET_TASK_MODE = "eager"
    bad, good = tmp_path / "bank-bad.csv", tmp_path / "bank.csv"
    bad.write_text(HEADER + GOOD + BAD_ROW, encoding="utf-8")
    good.write_text(HEADER + GOOD, encoding="utf-8")

    with admin_walk(live_server, monkeypatch) as walk:  # logged in
        page, admin = walk.page, walk.admin

        # create the study: the design is a choice from the registry, the slug filled from the title
        study = walk.new_study("Admin walk", "modal-syllogisms", slug="admin-walk")

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
        def lists(page) -> None:
            page.fill("[name='human_arm-0-practice-0-question']", "Can we infer that Leo is washing a car today?")
            for box in page.locator("[name^='human_arm-0-practice-'][name$='-delete']").all()[1:]:
                box.check()  # every practice question but the first is removed
            page.fill("[name='human_arm-0-attention_checks-0-premises']",
                      "Ann is reading a book.\nTom is baking bread.")
            page.fill("[name='human_arm-0-attention_checks-0-question']", CHECK_QUESTION)
            page.select_option("[name='human_arm-0-attention_checks-0-answer']", "yes")
            for box in page.locator("[name^='human_arm-0-attention_checks-'][name$='-delete']").all()[1:]:
                box.check()

        walk.human_arm(study, items_per_participant=6, more=lists)
        arm = human_arm_ensure(study=study)
        assert len(arm.practice) == 1 and arm.practice[0]["question"] == "Can we infer that Leo is washing a car today?"
        assert [c["question"] for c in arm.attention_checks] == [CHECK_QUESTION]
        assert "no Latin square" in page.inner_text("#launch-lists")  # the bank's items break the grid: said

        # a simulated pilot through the participant pages, then its report (real R)
        walk.pilot(study, participants=12, seed=5)
        report = walk.pilot_report(study, wait_ms=900_000)
        assert "PILOT report (simulated participants included, not data)" in page.inner_text("h1")

        # the launch panel: the link with Prolific's placeholders, the codes, a checklist that now holds
        page.goto(walk.change(study))
        link = page.inner_text("#launch-link")
        assert link == (f"{live_server.url}/s/admin-walk/?PROLIFIC_PID={{{{%PROLIFIC_PID%}}}}"
                        "&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}")
        panel = page.inner_text("#launch-panel")
        assert "C0MPLETE" in panel and "Ready to open." in panel
        assert "✓ simulated pilot run" in panel and "✓ pilot report built" in panel
        walk.action("open_studies", study.pk)
        page.wait_for_selector(".messagelist")
        study.refresh_from_db()
        assert study.status == StudyStatus.OPEN

        # a participant from that link, in a fresh browser context, to the end
        person = walk.person(1280, 800)
        person.goto(link.replace("{{%PROLIFIC_PID%}}", "adminwalk00000000000000a1").replace("{{%STUDY_ID%}}", "st")
                    .replace("{{%SESSION_ID%}}", "se1"))
        person.click("#agree")
        instructions = person.inner_text("#instructions-text")
        yes_key = "KeyJ" if '"F" for No' in instructions else "KeyF"
        person.click("#continue")
        assert "practice question" in press_to_start(person)
        person.wait_for_selector("#stage[data-state=armed]")
        person.keyboard.press(yes_key)
        person.wait_for_selector("#feedback:not([hidden])")
        person.keyboard.press(yes_key)
        press_to_start(person, yes_key)
        for _ in range(7):  # six items and the attention check
            person.wait_for_selector("#stage[data-state=armed]")
            person.keyboard.press(yes_key if CHECK_QUESTION in person.inner_text("#stage") else
                                  ("KeyF" if yes_key == "KeyJ" else "KeyJ"))
        person.wait_for_url("https://app.prolific.com/submissions/complete?cc=C0MPLETE")

        # monitoring at 1366 px: participants and trials filtered by study, the columns that matter and
        # the report's links on screen without scrolling sideways
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

    person = Participant.objects.get(study=study, prolific_pid="adminwalk00000000000000a1")
    assert person.status == "completed" and not person.is_simulated
    assert Trial.objects.filter(participant=person).count() == 7
    assert Path(report.out_dir, "report.html").exists()
