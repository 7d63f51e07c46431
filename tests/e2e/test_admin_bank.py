"""A CSV bank analysed like any study, through the admin in a real headless Chromium (issue 25 item 2):
create a study for a yes/no bank, upload it naming its factor column, refuse a factor the items lack in
the study's settings editor (its message names the columns there are), launch two model
configurations (the fake scorer: no model is loaded), run a simulated pilot of 12 participants, build
the pilot report by real R, and read it: Table 1 by the bank's factor, the humans-vs-models fit with
crossed random effects, and nothing listed as "not shown".

Background work runs in the server's own thread (DUET_TASK_MODE=eager), as in test_admin_study.py.
"""
from __future__ import annotations

import pandas as pd
import pytest

from inference.models import LanguageModel
from tests.analysis.test_any_bank import bank_csv
from tests.e2e.admin_walk import admin_walk


@pytest.mark.django_db(transaction=True)
def test_a_csv_bank_gets_its_factor_analysis_through_the_admin(live_server, monkeypatch, tmp_path, settings):
    settings.DUET_TASK_MODE = "eager"
    raw = LanguageModel.objects.create(name="fake-raw", source="test/fake", backend="fake")
    chat = LanguageModel.objects.create(name="fake-chat", source="test/fake", backend="fake", prompt_format="chat")
    bank = tmp_path / "bank.csv"
    bank.write_text(bank_csv(), encoding="utf-8")

    with admin_walk(live_server, monkeypatch, page_ms=30_000, launch_ms=30_000) as walk:
        page = walk.page

        # a study for a yes/no bank
        study = walk.new_study("Bank walk", "csv-import", slug="bank-walk")
        change = walk.change(study)

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
        walk.human_arm(study, items_per_participant=12)

        # two model configurations, launched from the admin (scored by the fake scorer in the server thread)
        for model in (raw, chat):
            walk.model_run(study, model)

        walk.pilot(study, participants=12, seed=5)
        report = walk.pilot_report(study, wait_ms=300_000)
        assert "waiting for data" not in report.message, report.message

        text = page.inner_text("body")
        assert "Accuracy by difficulty." in text
        assert "correct ~ agent * difficulty + (1 | participant) + (1 | item)" in text
        assert "not shown" not in text.lower() and "No data" not in text
        toc = page.inner_text("ul:has(> li > a[href^='#']) >> nth=0")  # the contents (the summary's lists come first)
        assert "Humans vs each model" in toc and "Eq. (4)" not in toc
        assert page.locator("#humans_vs_models ~ p.unit").count() >= 1

    table1 = pd.read_csv(f"{report.out_dir}/tables/table1_accuracy.csv")
    by = table1[table1["factor"] == "difficulty"]
    assert set(by["respondent"]) == {"human", "fake-raw", "fake-chat"} and set(by["level"]) == {"easy", "hard"}
    variances = pd.read_csv(f"{report.out_dir}/tables/humans_vs_models_random_variances.csv")
    assert {"participant", "item"} <= set(variances.iloc[:, 0])
