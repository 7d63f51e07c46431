"""Seed 001's metrics against the paper's own worked examples (values computed by hand from its text)."""
from __future__ import annotations

import math

import pandas as pd
import pytest

from designs.multiple_choice import metrics as mc
from designs.multiple_choice import report as mc_report

# 001 §2.2 (after Eq. 2): mutants (o1,o2,o3,o4), (o2,o3,o4,o1), (o3,o4,o1,o2), (o4,o1,o2,o3) predict
# o1, o1, o3, o4; the truth is o1. So c = 2, p(o1) = 2/4, p(o2) = 0, p(o3) = p(o4) = 1/4, and
# PartialCircular = 2/4 · (1 + ½ log₄ ½ + 2 · ¼ log₄ ¼) = ½ · (1 − ¼ − ½) = 0.125.
EXAMPLE = (0, 0, 2, 3)  # the predicted options, as original-order indices (o1 = 0)
# The same answers as letters: o1 sits at A, D, C, B in the four mutants; o3 and o4 at A in the last two.
EXAMPLE_LETTERS = ("A", "D", "A", "A")
GOLD_LETTERS = ("A", "D", "C", "B")


def test_section_2_2_worked_example_is_0_125():
    assert mc.entropy_sum(EXAMPLE) == pytest.approx(-0.75)
    assert mc.partial_circular(2, EXAMPLE) == pytest.approx(0.125)


def test_appendix_f_alpha_one_is_pc_alpha_zero_is_c_over_4():
    assert mc.partial_circular(2, EXAMPLE, alpha=1.0) == pytest.approx(0.125)
    assert mc.partial_circular(2, EXAMPLE, alpha=0.0) == pytest.approx(0.5)  # "PC_0 = c/4"
    # α = ½: c/4 · [(1 − ½) + ½ · ¼] = ½ · 0.625
    assert mc.partial_circular(2, EXAMPLE, alpha=0.5) == pytest.approx(0.3125)
    with pytest.raises(ValueError, match="α must lie in"):
        mc.partial_circular(2, EXAMPLE, alpha=1.5)


def test_appendix_g2_edge_cases():
    assert mc.partial_circular(4, (1, 1, 1, 1)) == pytest.approx(1.0)  # perfect: 1
    assert mc.partial_circular(0, (2, 3, 2, 3)) == pytest.approx(0.0)  # complete failure: 0
    # random guessing, uniform predictions (entropy 1): no credit at α = 1, below c/4 otherwise
    assert mc.partial_circular(1, (0, 1, 2, 3)) == pytest.approx(0.0)
    assert mc.partial_circular(1, (0, 1, 2, 3), alpha=0.4) == pytest.approx(0.25 * 0.6)


def test_appendix_g1_range_holds_for_every_possible_instance():
    import itertools

    for predicted in itertools.product(range(4), repeat=4):
        c = sum(p == 0 for p in predicted)
        for alpha in (0.0, 0.3, 1.0):
            value = mc.partial_circular(c, predicted, alpha)
            assert c / 4 * (1 - alpha) - 1e-12 <= value <= c / 4 + 1e-12 and 0 <= value <= 1


def test_letters_map_back_through_the_rotation():
    assert [mc.original_option(x, k) for k, x in enumerate(EXAMPLE_LETTERS)] == list(EXAMPLE)
    assert [mc.original_option(x, k) for k, x in enumerate(GOLD_LETTERS)] == [0, 0, 0, 0]
    assert mc.shift_of("rot3") == 3 and mc.shift_of("rulebreaker") is None


def test_table_2_accuracy_cv_is_3_3_with_divisor_n():
    """001 Table 2: ACC over five Gemini-Pro runs 30.0, 32.0, 32.4, 30.1, 32.0 → CV 3.3."""
    runs = [30.0, 32.0, 32.4, 30.1, 32.0]
    assert round(mc.coefficient_of_variation(runs), 1) == 3.3
    assert math.isnan(mc.coefficient_of_variation([30.0]))


def frame(letters_by_question: dict[str, tuple[str, ...]], gold: dict[str, tuple[str, ...]], *,
          who: str = "m", qtype: str = "3e1c", run_id: int = 1) -> pd.DataFrame:
    rows = []
    for question, letters in letters_by_question.items():
        for k, letter in enumerate(letters):
            rows.append({"model": who, "run_id": run_id, "participant": who, "pair_id": question, "pair_role": f"rot{k}",
                         "decision": letter, "answer": letter, "gold": gold[question][k], "form_id": qtype,
                         "kind": "multiple_choice", "correct": int(letter == gold[question][k])})
    return pd.DataFrame(rows)


def test_instances_and_summary_from_a_frame():
    data = frame({"q1": EXAMPLE_LETTERS, "q2": GOLD_LETTERS}, {"q1": GOLD_LETTERS, "q2": GOLD_LETTERS})
    found, incomplete = mc.instances(data.assign(qtype="3e1c"), answer="decision", respondent="run_id")
    assert incomplete == 0 and [i.predicted for i in found] == [EXAMPLE, (0, 0, 0, 0)]
    estimates = {e.measure: e for e in mc.summarise(found, alphas=(0.0,))}
    assert estimates["accuracy"].estimate == 1.0  # both right on the original order
    assert estimates["circular"].estimate == 0.5
    assert estimates["partial_circular"].estimate == pytest.approx((0.125 + 1.0) / 2)
    assert estimates["pc_alpha_0"].estimate == pytest.approx((0.5 + 1.0) / 2)
    assert estimates["circular"].low <= 0.5 <= estimates["circular"].high


def test_the_report_section_gives_metrics_by_type_for_models_and_humans_and_cv_across_runs():
    gold = {"q1": GOLD_LETTERS, "q2": GOLD_LETTERS}
    scores = pd.concat([frame({"q1": EXAMPLE_LETTERS}, gold, qtype="3e1c"),
                        frame({"q2": GOLD_LETTERS}, gold, qtype="missing")], ignore_index=True)
    runs = pd.concat([scores, frame({"q1": GOLD_LETTERS}, gold, run_id=2),
                      frame({"q2": ("B", "D", "C", "B")}, gold, run_id=2, qtype="missing")], ignore_index=True)
    trials = frame({"q1": EXAMPLE_LETTERS}, gold, who="P1")
    [section] = mc_report.sections(scores, trials, runs)
    assert {"metrics_m", "metrics_human"} <= set(section.tables)  # one table per respondent (issue 25)
    table = pd.concat([section.tables["metrics_m"], section.tables["metrics_human"]]).set_index(
        ["respondent", "type", "measure"])["estimate"]
    assert table[("m", "all", "partial_circular")] == pytest.approx((0.125 + 1) / 2)
    assert table[("m", "3e1c", "partial_circular")] == pytest.approx(0.125)
    assert table[("m", "missing", "circular")] == 1.0
    assert table[("human", "all", "partial_circular")] == pytest.approx(0.125)  # P1 saw every mutant
    assert table[("human", "all", "accuracy")] == 1.0 and table[("human", "all", "accuracy_any_order")] == 0.5
    variation = section.tables["run_variation"].set_index("measure")
    # run 1: circular 0.5; run 2: q1 all right, q2 wrong on rot0 only → circular 0.5, accuracy 0.5
    assert variation.loc["circular", "cv_percent"] == pytest.approx(0.0)
    assert variation.loc["accuracy", "cv_percent"] == pytest.approx(mc.coefficient_of_variation([1.0, 0.5]))
    bias = section.tables["position_bias"].set_index(["respondent", "letter"])
    assert bias.loc[("m", "A"), "share_chosen"] == pytest.approx(4 / 8)


def test_no_section_without_multiple_choice_items_and_a_note_when_humans_saw_one_mutant():
    empty = pd.DataFrame(columns=["kind", "pair_role", "form_id"])
    assert mc_report.sections(empty, empty, None) == []
    gold = {"q1": GOLD_LETTERS}
    one_each = frame({"q1": EXAMPLE_LETTERS}, gold, who="P1").iloc[[1]]
    [section] = mc_report.sections(empty, one_each, None)
    assert any("all_mutants" in note for note in section.notes)
    assert set(section.tables["metrics_human"]["measure"]) == {"accuracy_any_order"}


@pytest.mark.django_db
def test_frames_carry_kind_options_letters_and_every_runs_option_probabilities(tmp_path):
    from analysis import frames
    from designs.multiple_choice import items as mc_items
    from inference.models import LanguageModel, ModelRun, ModelScore
    from tests.factories import StudyFactory

    study = StudyFactory(design="multiple-choice")
    mc_items.items_import_multiple_choice(
        study=study, data="id,context,question,options,answer,type\nq1,Some text.,Which?,w | x | y | z,B,3c1e\n")
    lm = LanguageModel.objects.create(name="m", source="x")
    items = list(study.items.order_by("pair_role"))
    for n in range(2):
        run = ModelRun.objects.create(study=study, language_model=lm, status="done")
        for item in items:
            probs = {"A": 0.1, "B": 0.6, "C": 0.2, "D": 0.1}
            ModelScore.objects.create(run=run, item=item, logprobs={}, token_ids={}, option_probs=probs,
                                      soft_accuracy=probs[item.gold_answer], decision="B", perplexity=3.0,
                                      prompt_tokens=9, answer_mass=0.5)
    latest = frames.scores_frame(study)
    assert len(latest) == 4 and set(latest["run_id"]) == {run.pk}
    row = latest.set_index("pair_role").loc["rot1"]
    assert row["kind"] == "multiple_choice" and row["options"] == "x | y | z | w" and row["gold"] == "A"
    assert (row["p_B"], row["decision"], row["correct"]) == (0.6, "B", 0)
    assert len(frames.mc_runs_frame(study)) == 8
    [section] = mc_report.sections(latest, pd.DataFrame(), frames.mc_runs_frame(study))
    table = section.tables["metrics_m"].set_index(["type", "measure"])["estimate"]
    # decision B in every mutant = options x, y, z, w: one right (rot0), p uniform → PC 0
    assert table[("3c1e", "accuracy")] == 1.0 and table[("all", "partial_circular")] == pytest.approx(0.0)
    from analysis import services

    result = services.report_build(study=study, out_dir=tmp_path / "report")
    html = result.html.read_text(encoding="utf-8")
    assert "Multiple choice (001): Accuracy, Circular, PartialCircular" in html
    metrics = pd.read_csv(tmp_path / "report" / "tables" / "multiple_choice_metrics_m.csv")
    assert set(metrics["measure"]) == {"accuracy", "circular", "partial_circular", "pc_alpha_0.5"}
    variation = pd.read_csv(tmp_path / "report" / "tables" / "multiple_choice_run_variation.csv")
    cv = variation.set_index("measure")["cv_percent"]
    assert set(variation["runs"]) == {2} and cv["accuracy"] == 0  # identical runs
    assert cv[["circular", "partial_circular"]].isna().all()  # mean 0: the CV is undefined
