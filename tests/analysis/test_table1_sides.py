"""Issue 44 item 3: both sides stated wherever humans and models stand side by side.

A closed RULEBREAKERS study (20 pairs) whose two fake-scorer configurations answered every one of the ten
phrasings, and two simulated participants who answered one phrasing of the items in their lists. Table 1 puts the
models on the people's items: its model accuracy is recomputed from the report's own data files (data/scores.csv
restricted to the items in data/trials.csv). The models' accuracy over every phrasing is its own, labelled table;
every table with a human and a model side has its sides table, in report.html and as CSV. (On main Table 1's
models' side held all 400 scores and no table said what either side held.)
"""
from __future__ import annotations

import pandas as pd
import pytest
from django.core.management import call_command

from analysis import accuracy_tables, like_for_like, versus

pytestmark = pytest.mark.django_db
PAIRS, PHRASINGS = 20, 10
MODELS = ("fake-a", "fake-b")


@pytest.fixture
def closed_report(tmp_path, r_stack):
    from analysis import services as analysis_services
    from experiments import services as study_services
    from experiments.models import Study, StudyStatus
    from experiments.participation import services as participation
    from inference import services
    from inference.models import LanguageModel
    from inference.tasks import run_model_task
    from tests.factories import review_consent

    call_command("generate_items", "rulebreakers", "t1-sides", "--pairs", str(PAIRS))
    study = Study.objects.get(slug="t1-sides")
    arm = participation.human_arm_ensure(study=study)
    arm.items_per_participant, arm.completion_code = 12, "C0MPLETE"
    arm.save()
    for name in MODELS:
        lm = LanguageModel.objects.create(name=name, source=f"/fake/{name}", backend="fake", device="cpu",
                                          decision_rule="relative")
        run = services.model_run_create(study=study, language_model=lm, batch_size=64, scope="all")  # every phrasing
        assert run_model_task.apply(args=[run.pk]).get() == "done"
    call_command("simulate_participants", "t1-sides", "--n", "2", "--seed", "7", "--accuracy", "0.7")
    review_consent(study)
    study_services.study_transition(study=study, to=StudyStatus.OPEN)
    study_services.study_transition(study=study, to=StudyStatus.CLOSED)
    out = tmp_path / "report"
    analysis_services.report_build(study=study, out_dir=out, pilot=True)
    return out


def test_table1_puts_models_on_the_peoples_items_and_states_both_sides(closed_report):
    out = closed_report
    trials = pd.read_csv(out / "data" / "trials.csv")
    scores = pd.read_csv(out / "data" / "scores.csv")
    answered = set(trials.loc[trials["design"] != "attention-check", "item_id"])
    assert len(scores) == len(MODELS) * 2 * PAIRS * PHRASINGS  # the models answered every phrasing
    assert len(answered) < 2 * PAIRS * PHRASINGS

    table1 = pd.read_csv(out / "tables" / f"{accuracy_tables.TABLE1}.csv")
    people = scores[scores["item_id"].isin(answered)]
    for model, part in people.groupby("model"):
        rows = table1[(table1.respondent == model) & (table1.factor == "overall")].set_index("measure")
        assert rows.loc["soft accuracy", "accuracy"] == pytest.approx(part["soft_acc"].mean(), abs=1e-9)
        assert rows.loc["decision accuracy", "accuracy"] == pytest.approx(part["correct"].mean(), abs=1e-9)
        assert rows.loc["soft accuracy", "n"] == len(part) and rows.loc["soft accuracy", "n_items"] == len(answered)
        assert set(rows["items"]) == {accuracy_tables.LIKE}
    human = table1[(table1.respondent == "human") & (table1.factor == "overall")].iloc[0]
    assert human["items"] == accuracy_tables.PEOPLE_ITEMS and human["n_items"] == len(answered)

    # the models over every phrasing: their own, labelled table, and not Table 1
    every = pd.read_csv(out / "tables" / f"{accuracy_tables.EVERY}.csv")
    assert "human" not in set(every.respondent) and set(every["items"]) == {accuracy_tables.ALL_UNLIKE}
    for model, part in scores.groupby("model"):
        row = every[(every.respondent == model) & (every.factor == "overall")
                    & (every.measure == "soft accuracy")].iloc[0]
        assert row["accuracy"] == pytest.approx(part["soft_acc"].mean(), abs=1e-9)
        assert row["n"] == 2 * PAIRS * PHRASINGS and row["n_items"] == 2 * PAIRS * PHRASINGS
    html = (out / "report.html").read_text(encoding="utf-8")
    assert accuracy_tables.EVERY_TITLE in html and "Table 1: what each side holds" in html

    # Table 1's sides, in its CSV and in the page
    sides = pd.read_csv(out / "tables" / f"{accuracy_tables.TABLE1}_sides.csv").set_index("respondent")
    assert list(sides.columns[1:]) == like_for_like.SIDES_COLUMNS[2:]
    assert sides.loc["human", "n_participants"] == 2 and sides.loc["human", "n_items"] == len(answered)
    for model in MODELS:
        assert sides.loc[model, "n_items"] == len(answered) and sides.loc[model, "phrasings"] == "follow/yes-no"
        assert pd.isna(sides.loc[model, "n_participants"]) and sides.loc[model, "n_copies"] == 0
        assert f"{model}: {len(answered)} items, {len(answered)} answers (follow/yes-no; real)" in html
    every_sides = pd.read_csv(out / "tables" / f"{accuracy_tables.EVERY}_sides.csv").set_index("respondent")
    assert every_sides.loc[MODELS[0], "n_items"] == 2 * PAIRS * PHRASINGS
    assert f"people: {len(answered)} items" in html and "2 participants" in html


def test_every_table_with_a_human_and_a_model_side_has_its_sides_table(closed_report):
    """Every CSV of the report whose rows hold both people and a model has its sides CSV beside it, and the
    page says each side's participants."""
    out = closed_report
    tables = out / "tables"
    both = []
    for path in sorted(tables.glob("*.csv")):
        frame = pd.read_csv(path)
        who = next((c for c in ("respondent", "agent") if c in frame), None)
        if who is None or path.stem.endswith("_sides"):
            continue
        values = set(frame[who].astype(str))
        if "human" in values and values & set(MODELS):
            both.append(path.stem)
    assert accuracy_tables.TABLE1 in both and len(both) > 1
    sections = {path.stem.removesuffix("_sides") for path in tables.glob("*_sides.csv")}
    for stem in both:
        assert stem in sections or any(stem.startswith(f"{key}_") for key in sections), stem
    for key in sections:
        sides = pd.read_csv(tables / f"{key}_sides.csv")
        assert list(sides.columns) == like_for_like.SIDES_COLUMNS, key
    assert versus.KEY in sections


def test_a_table1_without_people_says_no_comparison():
    from analysis.sections import StudyFrames

    scores = pd.DataFrame({"model": ["m"] * 4, "item_id": [1, 2, 3, 4], "design": "d", "condition": "real",
                           "variant": "", "soft_acc": [0.9, 0.2, 0.6, 0.7], "correct": [1, 0, 1, 1]})
    found = accuracy_tables.accuracy_tables(StudyFrames(scores=scores), factors=())
    assert found.every is None and found.note.startswith("No comparison in Table 1: no person has answered yet")
    assert set(found.table1["items"]) == {accuracy_tables.ALL} and list(found.table1["n_items"])[:2] == [4, 4]


def test_the_multiple_choice_section_states_both_sides():
    """001's section sets people's and each model's Accuracy side by side: its sides table and sentence say the
    models answered every option order and people the orders they were shown."""
    from designs.multiple_choice import report as mc_report

    def rows(who, orders, participant):
        return [{"model": who, "run_id": 1, "participant": participant, "pair_id": f"q{q}", "pair_role": f"rot{k}",
                 "item_id": 10 * q + k, "decision": "A", "answer": "A", "gold": "A", "form_id": "t",
                 "kind": "multiple_choice", "correct": 1, "condition": "real", "variant": ""}
                for q in (1, 2) for k in orders]

    scores = pd.DataFrame(rows("m", range(4), "m"))
    trials = pd.DataFrame(rows("", [0], "P1") + rows("", [1], "P2"))
    [section] = mc_report.sections(scores, trials)
    sides = section.tables["sides"].set_index("respondent")
    assert (sides.loc["m", "n_items"], sides.loc["human", "n_items"], sides.loc["human", "n_participants"]) == (8, 4, 2)
    assert section.notes[0].startswith("What each side holds") and "people: 4 items, 4 answers" in section.notes[0]
