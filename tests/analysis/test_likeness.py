"""How human-like is each model (analysis/likeness.py, issue 35 item 5): the table's point estimates against an
independent R computation on a stored frame, and each edge case the report defines.

tests/data/human_likeness/ holds the frame (people.csv, scores.csv, splits.csv: made once by make.py there) and
reference.R, whose output is reference.out (R 4, base R only: cor(), Spearman–Brown and Cohen's κ by hand)."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis import likeness

DATA = Path(__file__).resolve().parents[1] / "data" / "human_likeness"


def stored() -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    people = pd.read_csv(DATA / "people.csv", keep_default_na=False)  # a timed-out answer stays blank
    return people, pd.read_csv(DATA / "scores.csv"), pd.read_csv(DATA / "splits.csv")


def reference() -> dict[tuple[str, str], float]:
    found = {}
    for line in (DATA / "reference.out").read_text(encoding="utf-8").splitlines():
        model, *pairs = line.split()  # "model-a items 19 answers 129": name, value, name, value
        found.update({(model, name): float(value) for name, value in zip(pairs[::2], pairs[1::2])})
    return found


def test_the_table_equals_an_independent_r_computation_to_1e_6():
    people, scores, halves = stored()
    frame, left = likeness.answer_frame(people, scores)
    table = likeness.table(frame, halves, resamples=200).set_index("model")
    expected = reference()
    assert sorted(table.index) == ["model-a", "model-b"]
    for model in table.index:
        for name in ("choice_r", "ceiling", "error_consistency", "loglik_per_answer", "loglik_base"):
            assert table.loc[model, name] == pytest.approx(expected[(model, name)], abs=1e-6), (model, name)
        assert table.loc[model, "items"] == expected[(model, "items")]
        assert table.loc[model, "answers"] == expected[(model, "answers")]
    # the built-in cases: one timed-out answer, model-a never scored item 16, P10 has no κ against model-b
    assert left.no_choice == 1 and left.unscored == {"model-a": 5, "model-b": 0}
    assert table.loc["model-b", "kappa_participants"] == 9 and table.loc["model-a", "kappa_participants"] == 10
    assert table.loc["model-b", "clipped"] == 8 and table.loc["model-a", "clipped"] == 0
    assert (table["splits"] == 20).all() and (table["seed"] == likeness.SEED).all()
    assert list(table.reset_index().columns) == list(likeness.TABLE_COLUMNS)


def test_the_intervals_are_seeded_and_rest_on_resampled_participants_and_items():
    people, scores, halves = stored()
    frame, _ = likeness.answer_frame(people, scores)
    one = likeness.table(frame, halves, resamples=300, seed=7)
    assert one.equals(likeness.table(frame, halves, resamples=300, seed=7))
    other = likeness.table(frame, halves, resamples=300, seed=8)
    assert not np.allclose(one["choice_r_low"], other["choice_r_low"])
    for name in ("choice_r", "ceiling", "error_consistency"):
        assert (one[f"{name}_low"] < one[f"{name}_high"]).all(), name
        assert (one[f"{name}_low"] <= one[name] + 0.05).all() and (one[name] - 0.05 <= one[f"{name}_high"]).all()
    assert (one["resamples"] == 300).all() and (one["seed"] == 7).all()


def _frame(rows, model="m") -> pd.DataFrame:
    """rows: (participant, item_id, answer, gold, rel_p_yes, decision)."""
    people = pd.DataFrame([(p, i, a, g, int(a == g)) for p, i, a, g, _, _ in rows],
                          columns=["participant", "item_id", "answer", "gold", "correct"])
    items = {i: (g, r, d) for _, i, _, g, r, d in rows}
    scores = pd.DataFrame([(model, i, g, r, d) for i, (g, r, d) in items.items()],
                          columns=["model", "item_id", "gold", "rel_p_yes", "decision"])
    return likeness.answer_frame(people, scores)[0]


def test_an_item_everyone_answered_alike_keeps_its_share_and_constant_shares_leave_r_undefined():
    rows = [(p, i, a, "yes", r, "yes") for p in ("P1", "P2", "P3") for i, a, r in
            ((1, "yes", 0.9), (2, "no" if p != "P1" else "yes", 0.4), (3, "no", 0.2))]
    frame = _frame(rows)
    shares, probs = np.array([1.0, 1 / 3, 0.0]), np.array([0.9, 0.4, 0.2])
    assert likeness.choice_r(frame) == pytest.approx(np.corrcoef(shares, probs)[0, 1], abs=1e-12)
    alike = _frame([(p, i, "yes", "yes", r, "yes") for p in ("P1", "P2") for i, r in ((1, 0.9), (2, 0.4), (3, 0.2))])
    assert math.isnan(likeness.choice_r(alike))  # every share is 1: no variance, no correlation
    assert math.isnan(likeness.choice_r(_frame(rows[:2])))  # fewer than three items


def test_a_decision_other_is_an_error_and_an_undefined_kappa_is_left_out():
    rows = [("P1", 1, "yes", "yes", 0.7, "other"), ("P1", 2, "no", "yes", 0.6, "yes"),
            ("P2", 1, "yes", "yes", 0.7, "other"), ("P2", 2, "yes", "yes", 0.6, "yes"),
            ("P3", 3, "yes", "yes", 0.8, "yes"), ("P3", 4, "no", "no", 0.3, "no")]
    frame = _frame(rows)
    assert frame.loc[frame["item_id"] == 1, "model_correct"].eq(0).all()  # 'other' is not the gold answer
    assert frame.loc[frame["item_id"] == 1, "model_decision"].eq("other").all()
    kappa = likeness.kappas(frame)
    assert kappa["P1"] == pytest.approx(-1.0)  # P1 right on 1, wrong on 2; the model the other way round
    assert kappa["P2"] == pytest.approx(0.0)  # P2 always right: κ = 0, agreement no better than chance
    assert math.isnan(kappa["P3"])  # P3 and the model both always right: expected agreement 1
    assert likeness.error_consistency(frame) == pytest.approx(-0.5)
    halves = likeness.split_halves(frame["participant"], splits=4)
    row = likeness.summarise(frame, halves, resamples=50)
    assert row["kappa_participants"] == 2 and row["error_consistency"] == pytest.approx(-0.5)


def test_log_likelihood_floors_a_vanishing_probability_and_the_base_rate_is_the_peoples_share():
    rows = [("P1", 1, "no", "yes", 1.0, "yes"), ("P2", 1, "yes", "yes", 1.0, "yes"),
            ("P1", 2, "yes", "no", 0.25, "no"), ("P2", 2, "no", "no", 0.25, "no")]
    model, base, clipped = likeness.loglik(_frame(rows))
    assert clipped == 1  # p(No) = 0 on item 1
    assert model == pytest.approx((math.log(likeness.EPS) + math.log(1.0) + math.log(0.25) + math.log(0.75)) / 4)
    assert base == pytest.approx(math.log(0.5))  # half the answers are yes


def test_timed_out_answers_and_unscored_items_are_left_out_and_counted():
    people = pd.DataFrame({"participant": ["P1", "P1", "P1", "P2"], "item_id": [1, 2, 3, 1],
                           "answer": ["yes", None, "no", "A"], "gold": ["yes", "no", "no", "yes"],
                           "correct": [1, 0, 1, 0]})
    scores = pd.DataFrame({"model": ["m", "m"], "item_id": [1, 2], "gold": ["yes", "no"], "rel_p_yes": [0.8, 0.3],
                           "decision": ["yes", "no"]})
    frame, left = likeness.answer_frame(people, scores)
    assert left.no_choice == 2  # a blank answer, and a letter on a yes/no item
    assert left.unscored == {"m": 1}  # P1's answer to item 3, which m never scored
    assert list(frame["item_id"]) == [1] and frame["p_answer"].tolist() == [0.8]


def test_multiple_choice_targets_the_gold_letter_and_reads_the_answers_letter():
    people = pd.DataFrame({"participant": ["P1", "P2"], "item_id": [5, 5], "kind": "multiple_choice",
                           "answer": ["B", "C"], "gold": ["B", "B"], "correct": [1, 0]})
    scores = pd.DataFrame({"model": ["m"], "item_id": [5], "kind": "multiple_choice", "gold": ["B"],
                           "p_A": [0.1], "p_B": [0.6], "p_C": [0.2], "p_D": [0.1], "rel_p_yes": [np.nan],
                           "decision": ["B"]})
    frame, _ = likeness.answer_frame(people, scores)
    assert frame["target"].tolist() == ["B", "B"] and frame["chose_target"].tolist() == [1, 0]
    assert frame["p_target"].tolist() == [0.6, 0.6] and frame["p_answer"].tolist() == [0.6, 0.2]


def test_splits_halve_the_sorted_participants_and_a_split_table_must_cover_them():
    halves = likeness.split_halves(["P3", "P1", "P2", "P5", "P4"], splits=6, seed=1)
    assert halves["split"].nunique() == 6
    assert (halves.groupby("split")["half"].apply(lambda h: (h == "A").sum()) == 2).all()
    assert halves.equals(likeness.split_halves(["P1", "P2", "P3", "P4", "P5"], splits=6, seed=1))
    frame = _frame([(p, i, "yes", "yes", 0.5, "yes") for p in ("P1", "P9") for i in (1, 2, 3)])
    with pytest.raises(ValueError, match="leaves out participants"):
        likeness.matrices(frame, halves)
