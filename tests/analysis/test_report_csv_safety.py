"""The report's CSV files quote text a spreadsheet would run as a formula; its Parquet files keep
the data exactly (issue 17 hole 2)."""
from __future__ import annotations

import pandas as pd
from django.core.management import call_command

from inference.models import LanguageModel


def test_report_csvs_quote_formula_like_text_and_parquet_keeps_it(r_stack, make_study, tmp_path):
    study = make_study(models=2, participants=0)
    LanguageModel.objects.filter(name="lm-1").update(name="=HYPERLINK(1)")
    call_command("analyze", study.slug, "--out", str(tmp_path))
    csv = pd.read_csv(tmp_path / "data" / "scores.csv", float_precision="round_trip")
    parquet = pd.read_parquet(tmp_path / "data" / "scores.parquet")
    assert set(csv["model"]) == {"'=HYPERLINK(1)", "lm-2"} and set(parquet["model"]) == {"=HYPERLINK(1)", "lm-2"}
    pd.testing.assert_series_equal(csv["soft_acc"], parquet["soft_acc"])  # numbers untouched, to the last bit
    table1 = pd.read_csv(tmp_path / "tables" / "table1_accuracy.csv")
    assert "'=HYPERLINK(1)" in set(table1["respondent"])
