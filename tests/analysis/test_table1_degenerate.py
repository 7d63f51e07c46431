"""Issue 35 item 3: Table 1 printed a zero-width bootstrap interval ([0.667, 0.667]) when every cluster had
the same share, with no note. Such a row now takes the unit-clustered interval the τ tables use
(clustered.proportion: Wilson over the units, each counted once) and its `interval` column says so."""
from __future__ import annotations

import pandas as pd
import pytest
from statsmodels.stats.proportion import proportion_confint

from analysis import metrics
from designs.modal import simulate


def test_a_zero_width_bootstrap_interval_falls_back_to_the_unit_clustered_interval_and_says_so():
    scores = simulate.scores(n_models=1, n_interpretations=2)
    scores = scores.iloc[:30].copy()
    scores["pair_id"] = [f"p{k // 3}" for k in range(30)]  # ten pairs of three phrasings
    scores["correct"] = [0 if k % 3 == 0 else 1 for k in range(30)]  # each pair: two of three right
    table = metrics.table1(scores, pd.DataFrame())
    row = table[(table["measure"] == "decision accuracy") & (table["factor"] == "overall")].iloc[0]
    assert row["cluster"] == "pair" and row["n_clusters"] == 10 and row["accuracy"] == pytest.approx(2 / 3)
    low, high = proportion_confint(2 / 3 * 10, 10, alpha=0.05, method="wilson")  # Wilson over the 10 pairs
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((low, high), abs=1e-12)
    assert row["ci_low"] < row["accuracy"] < row["ci_high"]
    assert "zero width" in row["interval"] and "Wilson over the units" in row["interval"]
    soft = table[(table["measure"] == "soft accuracy") & (table["factor"] == "overall")].iloc[0]
    assert soft["interval"] == "percentile bootstrap" and soft["ci_low"] < soft["ci_high"]
