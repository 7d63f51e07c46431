"""The report states, per model configuration and decision rule, the share of decisions that are
"other" (neither answer), and warns above 10 % (issue 27). Real data: the embedded SmolLM2 (raw)
scores 003's items under the paper's relative rule and under the top-token rule, and the report is
built from those scores."""
from __future__ import annotations

import html

import pandas as pd
import pytest
from django.core.management import call_command

from analysis import services
from designs.modal.items import items_generate
from experiments import services as study_services
from inference.models import LanguageModel, ModelScore

pytestmark = pytest.mark.django_db


def test_the_report_gives_the_share_of_other_decisions_per_configuration_and_rule(r_stack, tmp_path):
    study = study_services.study_create(slug="other-share", title="Other", design="modal-syllogisms")
    items_generate(study=study, design="modal-syllogisms", interpretations=1, seed=0)
    call_command("run_model", "other-share", "--model", "smollm2", "--device", "cpu", "--no-progress")
    call_command("run_model", "other-share", "--model", "smollm2", "--device", "cpu", "--no-progress",
                 "--decision-rule", "top_token")
    by_config = {}
    for lm in LanguageModel.objects.filter(runs__study=study).distinct():
        decisions = list(ModelScore.objects.filter(run__language_model=lm).values_list("decision", flat=True))
        by_config[lm.name] = (decisions.count("other"), len(decisions))
    assert len(by_config) == 2 and all(n == 24 for _, n in by_config.values())
    top = next(name for name in by_config if "top_token" in name or "top token" in name)
    relative = next(name for name in by_config if name != top)
    assert by_config[relative][0] == 0  # the likelier of p(Yes) and p(No) is always one of them
    assert by_config[top][0] / 24 > 0.10, by_config  # SmolLM2's top token on 003's prompts is mostly neither

    result = services.report_build(study=study, out_dir=tmp_path)
    table = pd.read_csv(tmp_path / "tables" / "configurations.csv").set_index("configuration")
    other, n = by_config[top]
    assert table.loc[top, "other_share"] == pytest.approx(other / n)
    assert table.loc[top, "other_by_rule"] == f"top token: {100 * other / n:.1f} % other ({other} of {n})"
    assert table.loc[relative, "other_share"] == 0
    assert table.loc[relative, "other_by_rule"] == "relative: 0.0 % other (0 of 24)"
    assert "% other" not in str(table.loc[relative, "warning"])  # (its answer mass is below 0.5: warned of that)
    warning = f"top token: {100 * other / n:.1f} % other ({other} of {n}) of the decisions (over 10%)"
    assert any(w.startswith(f"{top} (run ") and warning in w for w in result.warnings), result.warnings
    page = html.unescape(result.html.read_text(encoding="utf-8"))
    assert warning in page and "more than 10 % of the decisions 'other'" in page
