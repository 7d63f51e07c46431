"""The RULEBREAKERS excerpt (tests/data/published/rulebreakers/, issue 27) imported as published, answered by
simulated participants and two fake-scorer model configurations (as tests/analysis/test_any_bank.py does), and
reported: the paired sections of 000 with pair-clustered intervals (one cluster per pair, its ten phrasings
within it)."""
from __future__ import annotations

from pathlib import Path

import pytest
from django.core.management import call_command

from designs.paired import rulebreakers

pytestmark = pytest.mark.django_db

RULEBREAKERS = Path(__file__).resolve().parents[1] / "data" / "published" / "rulebreakers" / \
    "RULEBREAKERS_finegrained_excerpt.csv"
TEN = [f"{q}/{a}" for q, _ in rulebreakers.QUESTIONS for a, *_ in rulebreakers.ANSWER_OPTIONS]


def test_the_imported_pairs_get_the_paired_report_sections_with_pair_clustered_intervals(r_stack, tmp_path):
    import pandas as pd

    from inference.models import LanguageModel

    call_command("import_items", "rulebreakers", str(RULEBREAKERS), "rb-report")
    LanguageModel.objects.create(name="fake-raw", source="test/fake", backend="fake")
    LanguageModel.objects.create(name="fake-chat", source="test/fake", backend="fake", prompt_format="chat")
    call_command("simulate_participants", "rb-report", "--n", "6", "--seed", "3", "--accuracy", "0.7")
    for name in ("fake-raw", "fake-chat"):
        call_command("run_model", "rb-report", "--model", name, "--device", "cpu", "--scope", "all", "--no-progress")
    out = tmp_path / "report"
    call_command("analyze", "rb-report", "--pilot", "--out", str(out))
    html = (out / "report.html").read_text(encoding="utf-8")
    assert "RULEBREAKERS (000)" in html and "Sampling unit:" in html
    for name in ("fake-raw", "fake-chat"):
        table = pd.read_csv(out / "tables" / f"rulebreakers_accuracy_{name}.csv")
        pooled = table[(table.variant == "all") & (table.subset == "overall")].iloc[0]
        # all ten phrasings of the 26 pairs: one cluster per pair (n = 26 pairs, 260 answered pairs)
        assert (pooled["unit"], pooled["n"], pooled["pairs"], pooled["answered_pairs"]) == ("pair", 26, 26, 260)
        assert pooled["tau_low"] <= pooled["tau"] <= pooled["tau_high"]
        assert set(table.variant) == {"all", *TEN}
        assert (out / "tables" / f"rulebreakers_confidence_{name}.csv").exists()
    table1 = pd.read_csv(out / "tables" / "table1_accuracy.csv")
    models = table1[(table1.respondent == "fake-raw") & (table1.factor == "overall")]
    assert set(models["cluster"]) == {"pair"} and set(models["n_clusters"]) == {26}
