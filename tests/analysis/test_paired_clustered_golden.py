"""Issue 25: the paired statistics rest on their sampling unit, checked against R on the same data.

A RULEBREAKERS study of 30 pairs × 10 phrasings (`generate_items rulebreakers --pairs 30`, the ten
prompt variants of 000 §4.2) with its names perturbation (`perturb_items … names`), scored by two
configurations of the fake scorer (inference/scorers/fake.py: deterministic, no model) through the
one run loop. The answers the report derives are checked against tests/data/paired_clustered/
(written from the same study once; README there), and the report's numbers against R's on those
files: tests/data/paired_clustered/reference.R (geepack 1.3.9 for the GEE intervals, an R
implementation of Durkalski et al.'s clustered McNemar test, p.adjust for BH), whose printed output
is pasted below. A test here fails if the "all phrasings" rows pool phrasings as independent pairs
again (n would be 300, the interval far narrower than geepack's).

People presenting pairs within participants: τ clustered by participant against geepack, and
the matched-pair test clustered by participant against the same R implementation (reference.R).
"""
from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest

from analysis import clustered
from designs.paired import report as paired_report
from designs.paired.frames import PairedInputs
from analysis.rules import PAIRED_REPORT

DATA = Path(__file__).resolve().parents[1] / "data" / "paired_clustered"
MODELS = ("fake-a", "fake-b")
PAIRS, PHRASINGS = 30, 10


def build_study():
    """The study, scored by both fake configurations; returns (study, scores frame, paired inputs)."""
    from django.core.management import call_command

    from analysis import frames
    from designs.paired import frames as paired_frames
    from experiments.models import Study
    from inference import services
    from inference.models import LanguageModel
    from inference.tasks import run_model_task

    call_command("generate_items", "rulebreakers", "golden-rb", "--pairs", str(PAIRS))
    call_command("perturb_items", "golden-rb", "names")
    study = Study.objects.get(slug="golden-rb")
    for name in MODELS:
        # the relative rule (p(Yes) vs p(No)): the fake's top token is a space, never an answer; every answer
        # form summed, as configurations did when tests/data/paired_clustered was made (before answer_forms)
        lm = LanguageModel.objects.create(name=name, source=f"/fake/{name}", backend="fake", device="cpu",
                                          decision_rule="relative", answer_forms="all")
        run = services.model_run_create(study=study, language_model=lm, batch_size=64, scope="all")  # every phrasing
        assert run_model_task.apply(args=[run.pk]).get() == "done"
    return study, frames.scores_frame(study), paired_frames.inputs(study)


def pair_rows(answers: pd.DataFrame) -> pd.DataFrame:
    """The answered pairs of the real condition as stored in rb_pairs.csv."""
    pairs = paired_report.rulebreaker_pairs(answers, pd.DataFrame(), False)
    pairs = pairs[pairs["condition"] == "real"]
    out = pairs[["respondent", "pair_id", "variant", "rb_correct", "nrb_correct", "rb_yes", "nrb_yes", "rb_p", "nrb_p"]]
    return out.sort_values(["respondent", "pair_id", "variant"]).reset_index(drop=True)


def matched_rows(answers: pd.DataFrame) -> pd.DataFrame:
    """The matched (original, perturbed) observations as stored in matched.csv."""
    rows = paired_report.matched_pairs(answers)[["respondent", "label", "item_pair", "original", "perturbed"]]
    return rows.sort_values(["respondent", "item_pair", "original", "perturbed"]).reset_index(drop=True)


# ------------------------------------------------------------------------- people, within participants


def people_frames():
    """12 people, each answering both members of 6 RULEBREAKERS pairs (their own two answers) and 5
    original items with their perturbation; people differ in ability, so their answers cluster."""
    import random

    rng = random.Random(25)
    items, trials = [], []
    for n in range(10):
        rule = {"rule": "MT", "entity_kind": "geographical", "part": f"city{n}"}
        items += [{"item_id": 2 * n + 1, "design": "rulebreakers", "pair_id": f"rb:{n}", "pair_role": "rulebreaker",
                   "condition": "real", "variant": "v1", "original_item_id": None, "attributes": rule},
                  {"item_id": 2 * n + 2, "design": "rulebreakers", "pair_id": f"rb:{n}",
                   "pair_role": "non-rulebreaker", "condition": "real", "variant": "v1", "original_item_id": None,
                   "attributes": rule}]
    for k in range(8):
        items += [{"item_id": 100 + k, "design": "modal-syllogisms", "pair_id": "", "pair_role": "", "condition": "real",
                   "variant": "", "original_item_id": None, "attributes": {}},
                  {"item_id": 200 + k, "design": "modal-syllogisms", "pair_id": "", "pair_role": "",
                   "condition": "names", "variant": "", "original_item_id": 100 + k, "attributes": {}}]
    for p in range(12):
        ability = rng.gauss(0, 1.2)
        person = f"P{p + 1:02d}"

        def answer(item_id, gold, logit):
            right = rng.random() < 1 / (1 + math.exp(-(logit + ability)))
            trials.append({"item_id": item_id, "participant": person, "answer": gold if right else
                           ("no" if gold == "yes" else "yes"), "correct": int(right)})

        for n in rng.sample(range(10), 6):
            answer(2 * n + 1, "no", -0.3)  # the rulebreaker: harder
            answer(2 * n + 2, "yes", 1.0)
        for k in rng.sample(range(8), 5):
            answer(100 + k, "yes", 0.8)
            answer(200 + k, "yes", 0.2)  # the perturbation: harder
    items = pd.DataFrame(items)
    items["original_item_id"] = items["original_item_id"].astype("Int64")
    return items, pd.DataFrame(trials)


# --------------------------------------------------------------------------------- R's reference
# tests/data/paired_clustered/reference.R printed (reference.out beside it):
R_MODELS = {
    "fake-a": {
        "tau": (0.22333333333333333, 0.17775620941072731, 0.27666446717620474),
        "tau_R": (0.49666666666666665, 0.43678262917527133, 0.55664649065599991),
        "tau_N": (0.46999999999999997, 0.41656355436436687, 0.52413319851874751),
        "tau follow/yes-no": (0.20000000000000001, 0.095051071772898746, 0.37305696413148254),
        "pi": (0.79258822685274322, 0.80054893072111188, -0.2349997269585786, 0.81420894514303221),
        "durkalski": (0.41122049614645845, 0.65954456973665876, 29),
    },
    "fake-b": {
        "tau": (0.28000000000000003, 0.23506276912136162, 0.3298238156787402),
        "tau_R": (0.51000000000000001, 0.45072527243982519, 0.56899486325868553),
        "tau_N": (0.49666666666666665, 0.45018909004475066, 0.54320192174229331),
        "tau follow/yes-no": (0.26666666666666666, 0.14182663319596328, 0.44447961695188881),
        "pi": (0.80867622639305159, 0.76118287393030393, 1.3925345418764434, 0.16376058927414208),
        "durkalski": (-0.67292658491045321, 0.25049699906135503, 27),
    },
}
R_BH = {"fake-a": 0.65954456973665876, "fake-b": 0.50099399812271006}
R_PEOPLE = {
    "tau": (0.40277777777777779, 0.24976475846439136, 0.57738769469710205),
    "tau_R": (0.4861111111111111, 0.34489562511110694, 0.62957944096386453),
    "tau_N": (0.65277777777777779, 0.46581316889882196, 0.80210526013384609),
    "signflip": (-1, 0.5, 10),  # Σd, exact sign-flip p ("n12>n21"), units with d ≠ 0
}
R_SIGNFLIP = {"n12>n21": 0.8984375, "n12<n21": 0.203125, "two-sided": 0.40625}
TOL = 1e-6


def _csv(name: str) -> pd.DataFrame:
    return pd.read_csv(DATA / name)


@pytest.mark.django_db
def test_rulebreakers_and_002_rest_on_pairs_and_equal_r(tmp_path):
    study, scores, inputs = build_study()
    answers = paired_report.responses(scores, pd.DataFrame(), inputs.items)
    # the data R read are the data the report reads
    pairs, matched = pair_rows(answers), matched_rows(answers)
    stored_pairs, stored_matched = _csv("rb_pairs.csv"), _csv("matched.csv")
    pd.testing.assert_frame_equal(pairs, stored_pairs, check_dtype=False, rtol=1e-12)
    pd.testing.assert_frame_equal(matched, stored_matched, check_dtype=False)
    assert len(pairs) == 2 * PAIRS * PHRASINGS

    sections = {s.key: s for s in paired_report.sections(scores, pd.DataFrame(), inputs)}
    rb, pt = sections["rulebreakers"], sections["perturbation"]
    assert "all phrasings (prompt variants) of one pair are one cluster" in rb.unit and "item pair" in pt.unit
    for model, reference in R_MODELS.items():
        table = rb.tables[f"accuracy_{model}"]
        row = table[(table.condition == "real") & (table.variant == "all") & (table.subset == "overall")].iloc[0]
        # the "all phrasings" row rests on the 30 pairs, not on the 300 pair answers
        assert (row["n"], row["pairs"], row["answered_pairs"]) == (PAIRS, PAIRS, PAIRS * PHRASINGS)
        assert row["method"].startswith("GEE logit")
        for measure in ("tau", "tau_R", "tau_N"):
            estimate, low, high = reference[measure]
            assert (row[measure], row[f"{measure}_low"], row[f"{measure}_high"]) == (
                pytest.approx(estimate, abs=TOL), pytest.approx(low, abs=TOL), pytest.approx(high, abs=TOL)), measure
        one = table[(table.condition == "real") & (table.variant == "follow/yes-no") & (table.subset == "overall")].iloc[0]
        estimate, low, high = reference["tau follow/yes-no"]
        assert one["n"] == PAIRS and one["method"] == clustered.WILSON
        assert (one["tau"], one["tau_low"], one["tau_high"]) == (
            pytest.approx(estimate, abs=TOL), pytest.approx(low, abs=TOL), pytest.approx(high, abs=TOL))
        conf = rb.tables[f"confidence_{model}"]
        conf = conf[(conf.condition == "real") & (conf.variant == "all")].iloc[0]
        pi_n, pi_r, z, p = reference["pi"]
        assert (conf["pi_N"], conf["pi_R"], conf["statistic"], conf["p_value"]) == (
            pytest.approx(pi_n, abs=TOL), pytest.approx(pi_r, abs=TOL), pytest.approx(z, abs=TOL),
            pytest.approx(p, abs=TOL))

        test = pt.tables[f"matched_pairs_{model}"].iloc[0]
        z, p, n = reference["durkalski"]
        item_pairs = stored_matched[stored_matched.respondent == model]["item_pair"].nunique()
        assert item_pairs == 2 * PAIRS and test["item_pairs"] == item_pairs and test["matched"] == 600
        # the unit is the original's pair (issue 35): 30 clusters, not the 60 pair members; once 600 "matched pairs"
        assert (test["unit"], test["clusters"]) == ("pair", PAIRS)
        assert test["n"] == n <= PAIRS
        assert test["method"] == "clustered McNemar z (Durkalski 2003)"
        assert (test["statistic"], test["p_value"], test["p_adjusted"]) == (
            pytest.approx(z, abs=TOL), pytest.approx(p, abs=TOL), pytest.approx(R_BH[model], abs=TOL))
    assert any("Departure from 002" in note for note in pt.notes)


@pytest.mark.django_db
def test_table1_counts_a_perturbed_copy_in_its_original_pairs_cluster():
    """Issue 35: the 30 original pairs and their 30 perturbed copies are 30 clusters in Table 1, not 60."""
    from analysis import metrics

    _, scores, _ = build_study()
    assert set(scores["condition"]) == {"real", "names"} and scores["pair_id"].nunique() == 2 * PAIRS
    table = metrics.table1(scores, pd.DataFrame())
    overall = table[table.factor == "overall"]
    assert set(overall["respondent"]) == set(MODELS) and set(overall["cluster"]) == {"pair"}
    assert set(overall["n_clusters"]) == {PAIRS} and set(overall["n"]) == {2 * 2 * PAIRS * PHRASINGS}


def test_people_within_participants_cluster_by_person_and_equal_r():
    items, trials = people_frames()
    answers = paired_report.responses(pd.DataFrame(), trials, items)
    own = paired_report.rulebreaker_pairs(answers, pd.DataFrame(), False)
    stored = _csv("people_pairs.csv")
    assert own[["order", "pair_id", "rb_correct", "nrb_correct"]].rename(columns={"order": "participant"}).sort_values(
        ["participant", "pair_id"]).reset_index(drop=True).equals(stored)
    sections = {s.key: s for s in paired_report.sections(pd.DataFrame(), trials, PairedInputs(items=items,
                                                                                            presentation="within"))}
    row = sections["rulebreakers"].tables["accuracy_human"].iloc[0]
    assert (row["unit"], row["n"], row["answered_pairs"]) == ("participant", 12, 72)  # once n = 72 "pairs"
    for measure in ("tau", "tau_R", "tau_N"):
        estimate, low, high = R_PEOPLE[measure]
        assert (row[measure], row[f"{measure}_low"], row[f"{measure}_high"]) == (
            pytest.approx(estimate, abs=TOL), pytest.approx(low, abs=TOL), pytest.approx(high, abs=TOL)), measure
    test = sections["perturbation"].tables["matched_pairs_human"].iloc[0]
    statistic, p, n = R_PEOPLE["signflip"]
    assert (test["unit"], test["clusters"], test["matched"]) == ("participant", 12, 60)
    assert test["method"] == "exact sign-flip randomisation over units" and test["n"] == n
    assert (test["statistic"], test["p_value"]) == (statistic, pytest.approx(p, abs=TOL))
    people = sections["paired_people"]
    assert people.unit.startswith("a participant")


@pytest.mark.parametrize("alternative", sorted(R_SIGNFLIP))
def test_the_exact_sign_flip_test_equals_r(alternative):
    # units' differences d = (3, −1, 2, 1, −2, 1, 1): unit k gets |d| pairs on one side and a concordant pair
    pairs, units = [], []
    for k, d in enumerate((3, -1, 2, 1, -2, 1, 1)):
        pairs += [(False, True) if d > 0 else (True, False)] * abs(d) + [(True, True)]
        units += [k] * (abs(d) + 1)
    test = clustered.matched_pair_test(pairs, units, alternative=alternative)
    assert (test.statistic, test.n, test.clusters) == (5, 7, 7)
    assert test.p_value == pytest.approx(R_SIGNFLIP[alternative], abs=1e-12)


def test_one_pair_per_unit_is_exactly_the_papers_test():
    from analysis.proportions import Contingency, matched_pair_test

    pairs = [(True, False)] * 20 + [(False, True)] * 31 + [(True, True)] * 40 + [(False, False)] * 9
    test = clustered.matched_pair_test(pairs, list(range(len(pairs))), alternative="two-sided")
    paper = matched_pair_test(Contingency(40, 20, 31, 9), alternative="two-sided")
    assert (test.statistic, test.p_value, test.n) == (paper.statistic, paper.p_value, 51)
    assert test.method == "McNemar z, as paper 002 (one pair per unit)"


def test_every_answer_right_falls_back_to_wilson_over_the_units():
    # 12 pairs × 3 phrasings, all right: the logit is infinite. R: prop.test(12, 12, correct = FALSE)$conf.int
    result = clustered.proportion([True] * 36, [k // 3 for k in range(36)], unit="pair")
    assert (result.n, result.answers, result.estimate, result.high) == (12, 36, 1.0, 1.0)
    assert result.low == pytest.approx(0.75750599334475921, abs=1e-12)  # not Wilson(36, 36): 0.904
    assert result.method == clustered.WILSON_UNITS and "Wilson interval over the 12 pairs" in result.note


# ------------------------------------------------------------------------------------- dual-sided


RULES, TEMPLATES = 20, 5


def build_dual_sided(tmp_path):
    """20 rules × 5 templates (004's), imported as a rule bank declaring its factor `domain`, scored by fake-a."""
    from django.core.management import call_command

    from analysis import frames
    from designs.paired import frames as paired_frames
    from experiments.models import Study
    from inference import services
    from inference.models import LanguageModel
    from inference.tasks import run_model_task

    bank = tmp_path / "rules.csv"
    bank.write_text("premise,conclusion,flipped_conclusion,domain\n" + "".join(
        f"Metal bar {k} is heated,Metal bar {k} expands,Metal bar {k} does not expand,{('heat', 'light')[k % 2]}\n"
        for k in range(RULES)), encoding="utf-8")
    call_command("import_items", "dual-sided", str(bank), "golden-ds")
    study = Study.objects.get(slug="golden-ds")
    study.settings = {**(study.settings or {}), "factors": ["domain"]}
    study.save(update_fields=["settings"])
    lm = LanguageModel.objects.create(name="fake-a", source="/fake/fake-a", backend="fake", device="cpu",
                                      decision_rule="relative", answer_forms="all")
    run = services.model_run_create(study=study, language_model=lm, batch_size=64, scope="all")  # every template
    assert run_model_task.apply(args=[run.pk]).get() == "done"
    return frames.scores_frame(study), paired_frames.inputs(study)


def dual_sided_rows(answers: pd.DataFrame) -> pd.DataFrame:
    rules = paired_report.dual_sided_rules(answers)
    return rules[["respondent", "pair_id", "variant", "domain", "affirmed", "denied"]].sort_values(
        ["pair_id", "variant"]).reset_index(drop=True)


# reference.R: gee_prop on ds_rules.csv, clustered by rule (pair_id)
R_DS = {("overall", ""): (0.22, 0.17642810814700008, 0.27079449605965356, 20),
        ("domain", "heat"): (0.22, 0.16047804181555253, 0.29387096026082432, 10)}


@pytest.mark.django_db
def test_dual_sided_rests_on_rules_and_equals_r(tmp_path):
    scores, inputs = build_dual_sided(tmp_path)
    answers = paired_report.responses(scores, pd.DataFrame(), inputs.items)
    stored = _csv("ds_rules.csv")
    pd.testing.assert_frame_equal(dual_sided_rows(answers), stored, check_dtype=False)
    assert inputs.factors == ["domain"]
    section = paired_report.dual_sided_section(answers, inputs.factors)
    assert "templates (prompt variants) of one rule are one cluster" in section.unit
    table = section.tables["accuracy_fake-a"]
    table = table[table.variant == "all"].set_index(["column", "value"])
    assert set(table.index.get_level_values("column")) == {"overall", "domain"}  # the declared factor only
    for key, (estimate, low, high, n) in R_DS.items():
        row = table.loc[key]
        assert (row["n"], row["rules"], row["answers"]) == (n, n, n * TEMPLATES)  # once n = rules × templates
        assert (row["accuracy"], row["low"], row["high"]) == (
            pytest.approx(estimate, abs=TOL), pytest.approx(low, abs=TOL), pytest.approx(high, abs=TOL))


def test_a_row_resting_on_few_units_says_so():
    # 30 pairs × 10 phrasings, right answers in 2 pairs only: the sandwich interval rests on those 2
    values = [k // 10 in (3, 17) and k % 10 < 6 for k in range(300)]
    result = clustered.proportion(values, [k // 10 for k in range(300)], unit="pair")
    assert (result.n, result.successes, result.method) == (30, 12, clustered.GEE)
    assert result.note == "only 2 pair(s) have a right answer: the interval rests on them and is rough"
    assert result.low < 0.04 < result.high


# ------------------------------------------------------- the closed forms against statsmodels' GEE
from hypothesis import given, strategies as st  # noqa: E402


@given(st.lists(st.tuples(st.integers(0, 7), st.booleans()), min_size=4, max_size=60))
def test_the_closed_form_gee_proportion_equals_statsmodels(rows):
    import numpy as np

    y = np.array([float(v) for _, v in rows])
    groups = clustered._groups([g for g, _ in rows])
    if y.min() == y.max():
        return  # 0 % / 100 %: not fitted (Wilson over the units)
    logit, se = clustered._gee_intercept(y, groups)
    reference = clustered.gee_intercept_statsmodels(y, groups)
    assert (logit, se) == (pytest.approx(reference[0], abs=1e-8), pytest.approx(reference[1], abs=1e-8))


@given(st.lists(st.tuples(st.integers(0, 7), st.booleans(), st.floats(0.01, 0.99)), min_size=4, max_size=60))
def test_the_closed_form_clustered_difference_equals_statsmodels(rows):
    import numpy as np

    v = np.array([x for _, _, x in rows])
    a = np.array([s for _, s, _ in rows])
    if a.all() or not a.any() or v.min() == v.max():
        return
    groups = clustered._groups([g for g, _, _ in rows])
    estimate, se = clustered._gee_difference(v, a, groups)
    reference = clustered.gee_difference_statsmodels(v, a, groups)
    assert (estimate, se) == (pytest.approx(reference[0], abs=1e-8), pytest.approx(reference[1], abs=1e-8))
