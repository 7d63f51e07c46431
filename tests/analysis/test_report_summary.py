"""The report's opening summary (analysis/summary.py, issue 47 item 6): sentences that follow the numbers the
report's sections computed. Table 1 and the human-likeness section are computed here as the report computes them
(pandas, no R); the humans-vs-models contrasts are given as the fitted tables are shaped, so each direction and
interval can be set and the sentence checked against it."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from analysis import html, likeness_report, summary, versus
from analysis.accuracy_tables import accuracy_tables
from analysis.sections import FittedModel, Section, StudyFrames

ITEMS = 16
PEOPLE = 10


def _frames() -> StudyFrames:
    """Ten people on 16 yes/no items (half gold yes; items 1–8 easy, 9–16 hard: people right 90% and 60%), and two
    model configurations: always-no (No to every item, p(Yes) 0.3 throughout) and sharp (the gold answer on every item,
    its relative p(Yes) following the people's share of Yes, with noise)."""
    rng = np.random.default_rng(47)
    gold = ["yes" if i % 2 == 0 else "no" for i in range(ITEMS)]
    difficulty = ["easy" if i < 8 else "hard" for i in range(ITEMS)]
    rows = []
    for p in range(PEOPLE):
        for i in range(ITEMS):
            right = rng.random() < (0.9 if i < 8 else 0.6)
            answer = gold[i] if right else ("no" if gold[i] == "yes" else "yes")
            rows.append({"participant": f"P{p + 1}", "item_id": i + 1, "gold": gold[i], "answer": answer,
                         "correct": int(right), "difficulty": difficulty[i]})
    people = pd.DataFrame(rows).assign(design="csv-import", condition="real", variant="")
    share_yes = people.groupby("item_id")["answer"].apply(lambda a: (a == "yes").mean())
    scores = []
    for model in ("always-no", "sharp"):
        for i in range(ITEMS):
            p_yes = 0.3 if model == "always-no" else float(np.clip(0.15 + 0.7 * share_yes.loc[i + 1]
                                                                    + rng.normal(0, 0.1), 0.05, 0.95))
            decision = "no" if model == "always-no" else gold[i]
            correct = int(decision == gold[i])
            scores.append({"model": model, "item_id": i + 1, "gold": gold[i], "decision": decision,
                           "correct": correct, "rel_p_yes": p_yes, "p_yes": p_yes, "p_no": 1 - p_yes,
                           "soft_acc": p_yes if gold[i] == "yes" else 1 - p_yes, "difficulty": difficulty[i]})
    scores = pd.DataFrame(scores).assign(design="csv-import", condition="real", variant="")
    return StudyFrames(scores=scores, kept=people)


def _contrasts(**by_model) -> Section:
    """The humans-vs-models section as fit_spec leaves it: model − human contrasts (emmeans' shape), the agents'
    marginal means, and the coefficients with people the reference agent (treatment coding)."""
    section = Section(versus.KEY, "Humans vs each model")
    section.tables["emmeans_agent"] = pd.DataFrame({"agent": ["human", *by_model], "estimate": 0.7})
    section.tables["model_vs_human"] = pd.DataFrame(
        [{"contrast": f"{model} - human", "estimate": e, "se": 0.05, "ci_low": lo, "ci_high": hi, "p_value": 0.01}
         for model, (e, lo, hi) in by_model.items()])
    section.tables["coefficients"] = pd.DataFrame(
        [{"term": "(Intercept)", "Estimate": 2.0, "2.5_ci": 1.5, "97.5_ci": 2.5},
         {"term": "difficultyhard", "Estimate": -1.6, "2.5_ci": -2.4, "97.5_ci": -0.8}])
    section.tables["emmeans_agent_by_difficulty"] = pd.DataFrame(
        {"agent": ["human", "human"], "difficulty": ["easy", "hard"], "estimate": [0.9, 0.6]})
    section.fitted = FittedModel(formula="correct ~ agent * difficulty + (1 | participant) + (1 | item)",
                                 family="binomial", nagq=1, optimizer="bobyqa",
                                 levels={"agent": ["human", *by_model], "difficulty": ["easy", "hard"]})
    return section


@pytest.fixture(scope="module")
def computed():
    frames = _frames()
    table1 = accuracy_tables(frames, factors=("difficulty",)).table1
    likeness = likeness_report.section(frames, splits=10, resamples=50)
    return frames, table1, likeness


def _said(found: summary.Summary, model: str) -> str:
    return " ".join(dict(found.models)[model])


def test_a_model_answering_no_everywhere_is_said_so_with_the_base_rate_comparison(computed):
    frames, table1, likeness = computed
    section = _contrasts(**{"always-no": (-0.22, -0.35, -0.09), "sharp": (0.28, 0.18, 0.38)})
    found = summary.summarise(sections=[section, likeness], table1=table1, scores=frames.scores,
                              factors=("difficulty",))
    said = _said(found, "always-no")
    assert "Answers No to every item it was asked (16 items)" in said
    row = likeness.tables[likeness_report.KEY].set_index("model").loc["always-no"]
    assert row["loglik_per_answer"] < row["loglik_base"]  # the data: worse than knowing how often people said yes
    assert (f"predicts people's answers worse than the base rate (how often people gave each answer): "
            f"{row['loglik_per_answer']:.3f} vs {row['loglik_base']:.3f} nats per answer").replace("-", "−") in said
    assert "cannot be correlated with people's item by item" in said  # a constant p(Yes): choice r is blank
    assert "less accurate than people, −0.22 in probability correct (95% CI −0.35 to −0.09)" in said
    accuracy = table1[(table1.respondent == "always-no") & (table1.factor == "overall")
                      & (table1.measure == "decision accuracy")].iloc[0]
    assert accuracy["accuracy"] == 0.5 and f"On the {ITEMS} items people could be shown, 0.50 of its decisions" in said


def test_a_model_better_than_people_gets_the_right_direction_and_a_crossing_interval_no_direction(computed):
    frames, table1, likeness = computed
    better = summary.summarise(sections=[_contrasts(**{"always-no": (0.02, -0.1, 0.14), "sharp": (0.28, 0.18, 0.38)}),
                                         likeness], table1=table1, scores=frames.scores, factors=("difficulty",))
    sharp = _said(better, "sharp")
    assert "more accurate than people, +0.28 in probability correct (95% CI 0.18 to 0.38)" in sharp
    assert "Answers" not in sharp  # it answers Yes and No
    row = likeness.tables[likeness_report.KEY].set_index("model").loc["sharp"]
    assert row["loglik_per_answer"] > row["loglik_base"] and "better than the base rate" in sharp
    assert f"r = {row['choice_r']:.2f}" in sharp and f"ceiling, of {row['ceiling']:.2f}" in sharp
    assert "no clear difference from people, +0.02 in probability correct (95% CI −0.10 to 0.14)" in _said(
        better, "always-no")
    assert "more accurate" not in _said(better, "always-no") and "less accurate" not in _said(better, "always-no")


def test_people_get_the_main_effect_of_each_declared_factor_as_the_model_fits_it(computed):
    frames, table1, likeness = computed
    found = summary.summarise(sections=[_contrasts(sharp=(0.28, 0.18, 0.38)), likeness], table1=table1,
                              scores=frames.scores, factors=("difficulty",))
    people = " ".join(found.people)
    human = table1[(table1.respondent == "human") & (table1.factor == "overall")].iloc[0]
    assert f"People ({PEOPLE} participants, {PEOPLE * ITEMS} answers kept) answered {human['accuracy']:.2f}" in people
    odds = f"odds ratio {math.exp(-1.6):.2f}, 95% CI {math.exp(-2.4):.2f} to {math.exp(-0.8):.2f}"
    assert f"By difficulty (the humans-vs-models model's effect among people): lower odds of a correct answer than " \
           f"easy: hard ({odds}); people's P(correct): easy 0.90, hard 0.60." in people
    unclear = _contrasts(sharp=(0.28, 0.18, 0.38))
    unclear.tables["coefficients"].loc[1, ["Estimate", "2.5_ci", "97.5_ci"]] = [-0.2, -0.9, 0.5]
    found = summary.summarise(sections=[unclear], table1=table1, scores=frames.scores, factors=("difficulty",))
    assert "no clear difference from easy: hard; people's P(correct): easy 0.90, hard 0.60." in " ".join(found.people)
    # without a fitted model for people (e.g. no model scores): Table 1 per level, described, not tested
    alone = summary.summarise(sections=[], table1=table1, scores=frames.scores.iloc[0:0], factors=("difficulty",))
    assert "By difficulty (Table 1, proportion correct with bootstrap 95% intervals; no model fitted): easy" in \
        " ".join(alone.people)


def test_per_level_contrasts_group_the_levels_by_direction():
    section = Section("agents", "Humans and models in one model")
    section.tables["emmeans_agent"] = pd.DataFrame({"agent": ["human", "lm-1"], "estimate": [0.7, 0.6]})
    section.tables["model_vs_human_by_modality"] = pd.DataFrame({
        "contrast": ["(lm-1) - human"] * 3, "modality": ["none", "box", "dia"], "estimate": [0.1, -0.3, 0.02],
        "ci_low": [-0.05, -0.5, -0.1], "ci_high": [0.25, -0.1, 0.14]})
    said = summary._versus(section, "lm-1")
    assert "by modality: lower in □ (must) (−0.30, 95% CI −0.50 to −0.10); no clear difference in ∅ " \
           "(propositional), ◇ (may)" in said
    assert summary.comparison([Section(versus.ALL_ITEMS_KEY, "sensitivity", tables=dict(section.tables))]) is None


def test_the_page_opens_with_the_summary(computed):
    frames, table1, likeness = computed
    found = summary.summarise(sections=[_contrasts(sharp=(0.28, 0.18, 0.38)), likeness], table1=table1,
                              scores=frames.scores, factors=("difficulty",))
    page = html._summary(html.Page(inputs=None, generated="", versions={}, exclusions=pd.DataFrame(), table1=table1,
                                   overview=None, sections=[], participants=[], columns=pd.DataFrame(), n_kept=0,
                                   summary=found))
    assert page.startswith("<section id='summary'><h2>Summary</h2><h3>People</h3>")
    assert "<strong>always-no</strong>: Answers No to every item" in page
    frame = found.frame()
    assert list(frame.columns) == ["about", "sentence"] and set(frame["about"]) == {"human", "always-no",
                                                                                             "sharp"}


def test_with_one_side_only_the_summary_says_there_is_no_comparison():
    frames = _frames()
    models_only = StudyFrames(scores=frames.scores, kept=frames.kept.iloc[0:0])
    table1 = accuracy_tables(models_only, factors=("difficulty",)).table1
    found = summary.summarise(sections=[], table1=table1, scores=frames.scores, factors=("difficulty",))
    assert found.people == ("No answers from people are kept: the models are described alone, with no comparison.",)
    said = _said(found, "always-no")
    assert said.startswith("Answers No to every item it was asked (16 items)")
    assert "On the items it answered, 0.50 of its decisions are correct" in said and "people" not in said
    people_only = StudyFrames(scores=frames.scores.iloc[0:0], kept=frames.kept)
    table1 = accuracy_tables(people_only, factors=("difficulty",)).table1
    found = summary.summarise(sections=[], table1=table1, scores=people_only.scores, factors=("difficulty",))
    assert found.models == () and found.people[0].startswith(f"People ({PEOPLE} participants")
