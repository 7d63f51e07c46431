"""Exclusions, factor coding, bootstrap CIs and Figure 4 means: pure pandas/numpy, no R."""
import numpy as np
import pandas as pd
import pytest

from analysis import metrics, prep
from designs.modal import frames as modal
from designs.modal import simulate
from analysis.rules import Exclusions


def _trials():
    frame = simulate.trials(n_participants=6, n_trials=20, seed=3)
    frame.loc[frame["participant"] == "P1", "is_preview"] = True
    frame.loc[frame["participant"] == "P2", ["participant_status", "failed_attention"]] = ["failed_attention", True]
    frame.loc[frame["participant"] == "P3", "participant_status"] = "returned"
    p4 = frame.index[frame["participant"] == "P4"]
    frame.loc[p4[0], "is_attention_check"] = True
    frame.loc[p4[1], "rt_ms"] = 150.0  # too fast
    frame.loc[p4[2], "rt_ms"] = 4000.0 * np.exp(3.0)  # far slower than the rest of P4's trials
    frame.loc[p4[3], ["timed_out", "answer"]] = [True, ""]
    return frame


def test_exclusions_are_counted_rule_by_rule():
    kept, table = prep.apply_exclusions(_trials())
    removed = dict(zip(table["rule"], table["trials_removed"]))
    assert removed["preview session"] == 20
    assert removed["failed attention check"] == 20
    assert removed["session not completed"] == 20
    assert removed["attention-check trial"] == 1
    assert removed["timed out / no answer"] == 1
    assert removed["RT < 200 ms"] == 1
    assert removed["|log RT − participant mean| > 3 SD"] == 1
    assert len(kept) == 120 - 60 - 4 == table["trials_left"].iloc[-1]
    assert set(kept["participant"]) == {"P4", "P5", "P6"}


def test_exclusion_rules_can_be_turned_off():
    rules = Exclusions(drop_failed_attention=False, completed_only=False, rt_min_ms=None, rt_log_sd=None)
    kept, table = prep.apply_exclusions(_trials(), rules)
    assert len(kept) == 120 - 20 - 2  # preview session, the attention-check trial, the timed-out trial
    assert "RT < 200 ms" not in set(table["rule"])
    assert "trials faster" not in " ".join(rules.describe())


def test_factor_codes_and_scaling():
    scores = simulate.scores(n_models=2, n_interpretations=3)
    valid = modal.syllogism_scores(scores, valid_only=True)
    assert list(valid["argform"].cat.categories) == ["DS", "MP", "MT"]
    assert list(valid["modality"].cat.categories) == ["none", "box", "dia"]
    assert valid["perplexity_z"].mean() == pytest.approx(0, abs=1e-12)
    assert valid["perplexity_z"].std() == pytest.approx(1)
    trials = modal.syllogism_trials(simulate.trials(n_participants=4, n_trials=20), valid_only=False)
    assert trials["rt_z"].std() == pytest.approx(1)
    assert np.corrcoef(trials["rt_z"], np.log(trials["rt_ms"]))[0, 1] == pytest.approx(1)


def test_bootstrap_ci_covers_the_mean_and_clusters_widen_it():
    rng = np.random.default_rng(1)
    cluster_means = rng.normal(0, 1, 40)
    clusters = np.repeat(np.arange(40), 25)
    values = cluster_means[clusters] + rng.normal(0, 0.2, clusters.size)
    mean, low, high = metrics.bootstrap_mean(values)
    c_mean, c_low, c_high = metrics.bootstrap_mean(values, clusters)
    assert mean == c_mean == pytest.approx(values.mean())
    assert low < mean < high and c_low < c_mean < c_high
    naive_se = values.std(ddof=1) / np.sqrt(values.size)
    assert (high - low) == pytest.approx(2 * 1.96 * naive_se, rel=0.15)
    assert (c_high - c_low) > 3 * (high - low)  # 25 correlated trials per cluster


def test_table1_rows_for_models_and_humans():
    scores = simulate.scores(n_models=2, n_interpretations=5)
    trials = simulate.trials(n_participants=8, n_trials=18)
    table = metrics.table1(scores, trials)
    assert set(table["respondent"]) == {"sim-model-1", "sim-model-2", "human"}
    per = table[(table["respondent"] == "sim-model-1") & (table["measure"] == "soft accuracy")].set_index(
        ["factor", "level"])
    assert per.loc[("overall", "all"), "n"] == 120
    assert per.loc[("modality", "box"), "accuracy"] == pytest.approx(
        scores[(scores["model"] == "sim-model-1") & (scores["modality"] == "box")]["soft_acc"].mean())
    assert len(per.loc["argform"]) == 6
    human = table[table["respondent"] == "human"].set_index(["factor", "level"])
    assert human.loc[("overall", "all"), "accuracy"] == pytest.approx(trials["correct"].mean())
    assert (table["ci_low"] <= table["accuracy"]).all() and (table["accuracy"] <= table["ci_high"]).all()
    decisions = table[(table["respondent"] == "sim-model-1") & (table["measure"] == "decision accuracy")]
    model = scores[scores["model"] == "sim-model-1"]
    assert decisions.set_index("factor").loc["overall", "accuracy"] == pytest.approx(model["correct"].mean())
    assert set(table.loc[table["respondent"] == "human", "cluster"]) == {"participant"}
    assert set(table.loc[table["respondent"] != "human", "cluster"]) == {"item"}


def test_sequent_means_pair_real_and_nonsense():
    scores = simulate.scores(n_models=1, n_interpretations=2)
    mirror = scores.copy()
    mirror["condition"] = "nonsense"
    mirror["perplexity"] = scores["perplexity"] * 3
    table = modal.sequent_means(pd.concat([scores, mirror]))
    assert len(table) == 24  # 3 modalities × 8 forms
    assert (table["perplexity_nonsense"] / table["perplexity_real"]).to_numpy() == pytest.approx(3)
    assert table["confidence_real"].to_numpy() == pytest.approx(table["confidence_nonsense"].to_numpy())


def test_correlation_reports_pearson_and_spearman():
    x = np.arange(50.0)
    result = metrics.correlation(x, -x ** 3)
    assert result["spearman_rho"] == pytest.approx(-1)
    assert -1 < result["pearson_r"] < -0.9
