"""A CSV bank analysed like any study, through the admin in a real headless Chromium (issue 25 item 2):
create a study for a yes/no bank, upload it naming its factor column, refuse a factor the items lack in
the study's settings editor (its message names the columns there are), launch two model
configurations (the fake scorer: no model is loaded), run a simulated pilot of 12 participants, build
the pilot report by real R, and read it: Table 1 by the bank's factor, the humans-vs-models fit with
crossed random effects, and nothing listed as "not shown".

Background work runs in the server's own thread (DUET_TASK_MODE=eager), as in test_admin_study.py.
"""
from __future__ import annotations

from urllib.parse import urlsplit

import pandas as pd
import pytest
from django.contrib.auth import get_user_model

from analysis.models import Report, ReportStatus
from experiments.models import Participant, Study
from inference.models import LanguageModel, ModelRun, RunStatus
from tests.analysis.test_any_bank import bank_csv
from tests.e2e.test_participant_flow import ARGS, CHROMIUM, _playwright, offline_guard

PASSWORD = "a-long-test-passphrase-7"


@pytest.mark.django_db(transaction=True)
def test_a_csv_bank_gets_its_factor_analysis_through_the_admin(live_server, monkeypatch, tmp_path, settings):
    sync_playwright = _playwright()
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")  # Playwright's loop shares the test thread
    settings.DUET_TASK_MODE = "eager"
    get_user_model().objects.create_superuser("researcher", password=PASSWORD)
    raw = LanguageModel.objects.create(name="fake-raw", source="test/fake", backend="fake")
    chat = LanguageModel.objects.create(name="fake-chat", source="test/fake", backend="fake", prompt_format="chat")
    bank = tmp_path / "bank.csv"
    bank.write_text(bank_csv(), encoding="utf-8")
    server = urlsplit(live_server.url).netloc
    external = []
    admin = f"{live_server.url}/admin"

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=ARGS)
        context = browser.new_context(viewport={"width": 1366, "height": 768})
        context.route("**/*", offline_guard(server, external))
        page = context.new_page()
        page.set_default_timeout(30_000)

        page.goto(f"{admin}/")
        page.fill("#id_username", "researcher")
        page.fill("#id_password", PASSWORD)
        page.click("input[type=submit]")
        page.wait_for_selector("#site-name")

        # a study for a yes/no bank
        page.goto(f"{admin}/experiments/study/add/")
        page.locator("#id_title").press_sequentially("Bank walk")
        page.select_option("#id_design", "csv-import")
        page.click("input[name=_continue]")
        page.wait_for_selector("#launch-panel, .errornote")
        assert not page.query_selector(".errornote"), page.inner_text("#content")[:3000]
        study = Study.objects.get(slug="bank-walk")
        change = f"{admin}/experiments/study/{study.pk}/change/"

        # upload it, naming its factor column: a preview, then the write
        page.click("text=Upload a bank (CSV, JSON, Parquet)…")
        page.set_input_files("#id_o-csv_file", str(bank))
        page.fill("#id_o-factors", "difficulty")
        page.click("input[value='Check and preview']")
        assert "24 items would be written" in page.inner_text("#import-preview")
        page.click("input[value='Write these 24 items']")
        page.wait_for_selector("text=Imported 24 items")
        study.refresh_from_db()
        assert study.settings["factors"] == ["difficulty"]

        # the settings editor: a factor the items lack is refused with the columns there are, nothing stored
        page.goto(change)
        assert page.input_value("#id_factors") == "difficulty"
        page.fill("#id_factors", "level")
        page.click("input[name=_continue]")
        page.wait_for_selector(".errornote")
        message = page.inner_text(".field-factors")
        assert "no column named 'level' among the items" in message and "(difficulty, topic)" in message, message
        study.refresh_from_db()
        assert study.settings["factors"] == ["difficulty"]

        # the human arm, as a researcher sets it up before a pilot
        page.goto(change)
        page.fill("#id_human_arm-0-items_per_participant", "12")
        page.fill("#id_human_arm-0-contact", "Dr A. Researcher, duet-study@example.org")
        page.check("#id_human_arm-0-mark_consent_reviewed")
        page.fill("#id_human_arm-0-completion_code", "C0MPLETE")
        page.click("input[name=_continue]")
        page.wait_for_selector("text=consent marked reviewed")

        # two model configurations, launched from the admin (scored by the fake scorer in the server thread)
        for model in (raw, chat):
            page.goto(f"{admin}/inference/modelrun/add/")
            page.select_option("#id_study", str(study.pk))
            page.select_option("#id_language_model", str(model.pk))
            page.click("input[name=_save]")
            page.wait_for_selector(".messagelist")
        assert set(ModelRun.objects.filter(study=study).values_list("status", flat=True)) == {RunStatus.DONE}

        def action(name: str):
            page.goto(f"{admin}/experiments/study/")
            page.check(f"input[name=_selected_action][value='{study.pk}']")
            page.select_option("select[name=action]", name)
            page.click("button[name=index]")

        action("run_pilot")
        page.fill("#id_participants", "12")
        page.fill("#id_seed", "5")
        page.click("input[value='Run the pilot']")
        page.wait_for_selector("text=simulated participants")
        assert Participant.objects.filter(study=study, is_simulated=True).count() == 12
        action("build_pilot_report")
        page.wait_for_selector(".messagelist", timeout=300_000)  # fitted by R inside the request
        report = Report.objects.get(study=study, pilot=True)
        assert report.status == ReportStatus.DONE, report.message
        assert "waiting for data" not in report.message, report.message

        page.goto(f"{admin}/analysis/report/{report.pk}/report.html")
        text = page.inner_text("body")
        assert "Accuracy by difficulty." in text
        assert "correct ~ agent * difficulty + (1 | participant) + (1 | item)" in text
        assert "not shown" not in text.lower() and "No data" not in text
        toc = page.inner_text("ul >> nth=0")
        assert "Humans vs each model" in toc and "Eq. (4)" not in toc
        assert page.locator("#humans_vs_models ~ p.unit").count() >= 1
        browser.close()

    assert external == []
    table1 = pd.read_csv(f"{report.out_dir}/tables/table1_accuracy.csv")
    by = table1[table1["factor"] == "difficulty"]
    assert set(by["respondent"]) == {"human", "fake-raw", "fake-chat"} and set(by["level"]) == {"easy", "hard"}
    variances = pd.read_csv(f"{report.out_dir}/tables/humans_vs_models_random_variances.csv")
    assert {"participant", "item"} <= set(variances.iloc[:, 0])
