"""The paired sections of the report (issue 6) on hand-made frames, checked against hand counts
and scipy's Welch test; and one study per paired design built with the commands, answered by a
tiny model and simulated participants, reported, and checked against counts taken from the rows."""
from __future__ import annotations

import math
from collections import defaultdict

import pandas as pd
import pytest
from scipy import stats

from designs.paired import report as paired_report
from designs.paired.frames import PairedInputs, report_options
from analysis.rules import PAIRED_REPORT as OPTIONS


def item(item_id, design, pair_id, role, variant="v1", condition="real", original=None, **attributes):
    return {"item_id": item_id, "design": design, "pair_id": pair_id, "pair_role": role, "condition": condition,
            "variant": variant, "original_item_id": original, "attributes": attributes}


def score(item_id, model, said_yes, gold, p_yes):
    decision = "yes" if said_yes else "no"
    return {"item_id": item_id, "model": model, "decision": decision, "correct": int(decision == gold), "p_yes": p_yes}


def frames(items, scores=(), trials=()):
    items = pd.DataFrame(items)
    items["original_item_id"] = items["original_item_id"].astype("Int64")
    scores = pd.DataFrame(list(scores), columns=["item_id", "model", "decision", "correct", "p_yes"])
    trials = pd.DataFrame(list(trials), columns=["item_id", "participant", "answer", "correct"])
    return items, scores, trials


# Pairs: (rulebreaker said yes?, p_yes) and (non-rulebreaker said yes?, p_yes) per pair and variant.
RB = {  # pair → variant → ((rb_yes, rb_p), (nrb_yes, nrb_p)); rb gold no, nrb gold yes
    0: {"v1": ((False, 0.2), (True, 0.9)), "v2": ((True, 0.6), (True, 0.8))},
    1: {"v1": ((True, 0.55), (True, 0.7)), "v2": ((True, 0.65), (False, 0.3))},
    2: {"v1": ((False, 0.1), (True, 0.95)), "v2": ((False, 0.4), (True, 0.75))},
    3: {"v1": ((True, 0.7), (True, 0.85)), "v2": ((False, 0.2), (True, 0.6))},
}
SUBSET = {0: ("MT", "geographical", "Paris"), 1: ("MT", "geographical", "Oslo"),
          2: ("DS", "categorical", "trumpet"), 3: ("DS", "categorical", "goose")}
KIND = {"Paris": "geographical", "Oslo": "geographical", "trumpet": "categorical", "goose": "categorical"}


def rulebreaker_frames():
    items, scores, n = [], [], 0
    for pair, variants in RB.items():
        rule, kind, part = SUBSET[pair]
        for variant, ((rb_yes, rb_p), (nrb_yes, nrb_p)) in variants.items():
            for role, said, p, gold in (("rulebreaker", rb_yes, rb_p, "no"), ("non-rulebreaker", nrb_yes, nrb_p, "yes")):
                n += 1
                items.append(item(n, "rulebreakers", f"rb:{pair}", role, variant, rule=rule, entity_kind=kind, part=part))
                scores.append(score(n, "m1", said, gold, p))
    return items, scores


def test_rulebreaker_tau_and_confidence_by_hand():
    items, scores = rulebreaker_frames()
    items, scores, trials = frames(items, scores)
    section = paired_report.rulebreakers_section(paired_report.responses(scores, trials, items), PairedInputs(items=items))
    assert set(section.tables) == {"accuracy_m1", "confidence_m1"}
    acc = section.tables["accuracy_m1"].set_index(["variant", "subset"])
    # τ: rb answered no and nrb yes. v1: pairs 0 and 2 → 2/4; v2: pairs 2 and 3 → 2/4; all: 4/8
    assert acc.loc[("v1", "overall"), "tau"] == 0.5 and acc.loc[("v2", "overall"), "tau"] == 0.5
    # one variant: one answer per pair, the Wilson interval for 2/4 with n = 4 pairs:
    # centre 0.5, half-width z√(pq/n + z²/4n²)/(1 + z²/n)
    z = 1.959963984540054
    half = z * math.sqrt(0.25 / 4 + z * z / 64) / (1 + z * z / 4)
    v1 = acc.loc[("v1", "overall")]
    assert (v1["n"], v1["method"]) == (4, "Wilson (one answer per unit)")
    assert v1["tau_low"] == pytest.approx(0.5 - half) and v1["tau_high"] == pytest.approx(0.5 + half)
    row = acc.loc[("all", "overall")]
    # 'all' pools 2 phrasings of 4 pairs: n is the 4 pairs (it once was the 8 pair answers, as if independent)
    assert (row["n"], row["pairs"], row["answered_pairs"], row["unit"]) == (4, 4, 8, "pair")
    assert (row["tau"], row["tau_R"], row["tau_N"]) == (0.5, 4 / 8, 7 / 8)
    # the pair-clustered sandwich by hand: τ per pair and phrasing (1, 0), (0, 0), (1, 1), (0, 1): residual sums
    # per pair 0, −1, 1, 0 about p = ½; var(logit) = Σ r² / (N p q)² = 2 / 2² = ½; Wald on the logit scale
    se = math.sqrt(0.5)
    assert row["tau_low"] == pytest.approx(1 / (1 + math.exp(z * se)))
    assert row["tau_high"] == pytest.approx(1 / (1 + math.exp(-z * se)))
    assert row["method"].startswith("GEE logit")
    assert acc.loc[("all", "DS × categorical"), "tau"] == 3 / 4  # pair 2 both variants, pair 3 v2
    assert acc.loc[("all", "MT × geographical"), "tau"] == 1 / 4
    confidence = section.tables["confidence_m1"].set_index("variant")
    conf = confidence.loc["all"]
    n_side = [0.9, 0.8, 0.7, 0.95, 0.75, 0.85, 0.6]  # nrb prompts answered yes
    r_side = [0.6, 0.55, 0.65, 0.7]  # rb prompts answered yes
    assert conf["pi_N"] == pytest.approx(sum(n_side) / 7) and conf["pi_R"] == pytest.approx(sum(r_side) / 4)
    assert (conf["n_N"], conf["n_R"], conf["pairs"]) == (7, 4, 4)
    assert conf["test"].startswith("z, Π⁺_N − Π⁺_R with sandwich SE clustered by pair")  # phrasings are not independent
    v1 = confidence.loc["v1"]  # one phrasing: Welch's t-test, as the paper
    reference = stats.ttest_ind([0.9, 0.7, 0.95, 0.85], [0.55, 0.7], equal_var=False)
    assert v1["test"] == "Welch t (000 Eq. 5–6)"
    assert v1["statistic"] == pytest.approx(reference.statistic) and v1["p_value"] == pytest.approx(reference.pvalue)


def test_pairs_the_model_does_not_know_can_be_dropped():
    items, scores = rulebreaker_frames()
    items, scores, trials = frames(items, scores)
    probes = pd.DataFrame({"model": ["m1"] * 4, "run_id": 1, "probe_key": [f"{KIND[p]}:{p}" for p in KIND],
                           "target": "", "p_target": [0.9, 0.1, 0.8, 0.7], "top_token": "",
                           "known": [True, False, True, True]})  # Oslo unknown
    answers = paired_report.responses(scores, trials, items)
    kept = paired_report.rulebreakers_section(answers, PairedInputs(items=items, probes=probes,
                                                                    options={**OPTIONS, "drop_unknown_pairs": True}))
    row = kept.tables["accuracy_m1"].set_index(["variant", "subset"]).loc[("all", "overall")]
    assert (row["n"], row["answered_pairs"], row["tau"]) == (3, 6, 4 / 6)
    assert kept.tables["knowledge_probe"].iloc[0]["known"] == 3
    everything = paired_report.rulebreakers_section(answers, PairedInputs(items=items, probes=probes))
    assert everything.tables["accuracy_m1"].set_index(["variant", "subset"]).loc[("all", "overall"), "answered_pairs"] == 8
    with pytest.raises(ValueError, match="Unknown paired_report setting"):
        report_options({"paired_report": {"drop_unknown": True}})
    for bad, named in [({"alpha": 1.5}, "alpha"), ({"alternative": "greater"}, "alternative"),
                       ({"exact_max": -1}, "exact_max"), ({"drop_unknown_pairs": "yes"}, "drop_unknown_pairs")]:
        with pytest.raises(ValueError, match=f"paired_report {named}"):  # refused when read, not when tested
            report_options({"paired_report": bad})


def _rb_pair(n):
    rule = {"rule": "MT", "entity_kind": "geographical", "part": f"city{n}"}
    return [item(2 * n + 1, "rulebreakers", f"rb:{n}", "rulebreaker", **rule),
            item(2 * n + 2, "rulebreakers", f"rb:{n}", "non-rulebreaker", **rule)]


def test_a_persons_pair_is_their_own_two_answers():
    items = _rb_pair(0) + _rb_pair(1)
    trials = [{"item_id": 1, "participant": "P1", "answer": "no", "correct": 1},   # P1: both members of rb:0
              {"item_id": 2, "participant": "P1", "answer": "yes", "correct": 1},
              {"item_id": 1, "participant": "P2", "answer": "yes", "correct": 0},  # P2: both members of rb:0
              {"item_id": 2, "participant": "P2", "answer": "yes", "correct": 1},
              {"item_id": 3, "participant": "P2", "answer": "no", "correct": 1},   # only one member of rb:1
              {"item_id": 4, "participant": "P3", "answer": "yes", "correct": 1}]  # the other, by someone else
    items, scores, trials = frames(items, (), trials)
    inputs = PairedInputs(items=items, presentation="within")
    answers = paired_report.responses(scores, trials, items)
    row = paired_report.rulebreakers_section(answers, inputs).tables["accuracy_human"].iloc[0]
    # two people's own pairs of rb:0; a person is the unit (n = 2 participants, one pair each: Wilson)
    assert (row["respondent"], row["answered_pairs"], row["pairs"], row["n"], row["unit"]) == ("human", 2, 1, 2, "participant")
    assert (row["tau"], row["tau_R"], row["tau_N"]) == (0.5, 0.5, 1.0)
    people = paired_report.sections(scores, trials, inputs)[-1]
    assert people.key == "paired_people" and "members" not in people.tables
    assert "Within-participant presentation" in people.notes[0]


def test_across_participants_people_have_no_pairs_and_the_members_are_compared_by_a_clustered_model():
    items = [cell for n in range(6) for cell in _rb_pair(n)]
    trials = []
    for p in range(8):  # person p answers one member of every pair, the role alternating along the pairs
        for n in range(6):
            role = (p + n) % 2  # 0: the rulebreaker, 1: the non-rulebreaker
            right = (p * 3 + n) % 5 != 0 if role else (p + n * 5) % 3 == 0
            gold = "no" if role == 0 else "yes"
            said = gold if right else ("yes" if gold == "no" else "no")
            trials.append({"item_id": 2 * n + 1 + role, "participant": f"P{p}", "answer": said, "correct": int(right)})
    items, scores, trials = frames(items, (), trials)
    inputs = PairedInputs(items=items, presentation="across")
    sections = {s.key: s for s in paired_report.sections(scores, trials, inputs)}
    assert sections["rulebreakers"].absent  # no respondent answered both members of a pair
    row = sections["paired_people"].tables["members"].iloc[0]
    rb = trials[trials["item_id"] % 2 == 1]["correct"]
    nrb = trials[trials["item_id"] % 2 == 0]["correct"]
    assert (row["design"], row["member_a"], row["member_b"]) == ("rulebreakers", "non-rulebreaker", "rulebreaker")
    assert (row["participants"], row["answers_a"], row["answers_b"]) == (8, len(nrb), len(rb)) == (8, 24, 24)
    assert row["accuracy_a"] == nrb.mean() and row["accuracy_b"] == rb.mean()
    assert row["log_odds_b_vs_a"] < 0 and row["ci_low"] < row["log_odds_b_vs_a"] < row["ci_high"]
    assert row["odds_ratio"] == pytest.approx(math.exp(row["log_odds_b_vs_a"]))
    assert "Across-participant presentation" in sections["paired_people"].notes[0]


def test_dual_sided_accuracy_overall_and_by_column():
    rules = {  # rule → (domain, length, original said yes, flipped said yes)
        "a": ("food", "1", True, False), "b": ("food", "2", True, True),
        "c": ("physics", "1", True, False), "d": ("physics", "2", False, False),
    }
    items, scores, n = [], [], 0
    for rule_id, (domain, length, said_o, said_f) in rules.items():
        for role, said, gold in (("original", said_o, "yes"), ("flipped", said_f, "no")):
            n += 1
            items.append(item(n, "dual-sided", f"ds:{rule_id}", role, "template-1", rule_id=rule_id, domain=domain,
                              length=length, conclusion="x.", member="m", rule=rule_id))
            scores.append(score(n, "m1", said, gold, 0.5))
    items, scores, trials = frames(items, scores)
    answers = paired_report.responses(scores, trials, items)
    overall = paired_report.dual_sided_section(answers).tables["accuracy_m1"]  # no declared factors: overall only
    assert overall["column"].tolist() == ["overall"] and overall["rules"].tolist() == [4]
    table = paired_report.dual_sided_section(answers, ["domain", "length"]).tables["accuracy_m1"]
    table = table.set_index(["column", "value"])
    assert set(table.index.get_level_values("column")) == {"overall", "domain", "length"}  # the declared factors
    assert (table.loc[("overall", ""), "correct"], table.loc[("overall", ""), "rules"]) == (2, 4)
    assert table.loc[("domain", "food"), "accuracy"] == 0.5 and table.loc[("domain", "physics"), "accuracy"] == 0.5
    assert table.loc[("length", "1"), "accuracy"] == 1.0 and table.loc[("length", "2"), "accuracy"] == 0.0


def test_perturbation_tables_tests_and_benjamini_hochberg_by_hand():
    # model m1: 4 discordant pairs (n12=3, n21=1) + 2 concordant right; m2: n12=12, n21=0, n22=1
    patterns = {"m1": [(1, 0)] * 3 + [(0, 1)] + [(1, 1)] * 2, "m2": [(1, 0)] * 12 + [(0, 0)]}
    items = []
    for k in range(13):
        items.append(item(100 + k, "modal-syllogisms", "", "", "", "real"))
        items.append(item(200 + k, "modal-syllogisms", "", "", "", "names", original=100 + k))
    scores = []
    for model, pattern in patterns.items():
        for k, (orig, pert) in enumerate(pattern):
            scores.append(score(100 + k, model, bool(orig), "yes", 0.5))
            scores.append(score(200 + k, model, bool(pert), "yes", 0.5))
    items, scores, trials = frames(items, scores)
    section = paired_report.perturbation_section(paired_report.responses(scores, trials, items), OPTIONS)
    table = pd.concat([section.tables["matched_pairs_m1"], section.tables["matched_pairs_m2"]]).set_index("respondent")
    assert table.loc["m1", ["n11", "n12", "n21", "n22", "n"]].tolist() == [2, 3, 1, 0, 4]
    assert table.loc["m1", "method"] == "exact binomial, as paper 002 (one pair per unit)"  # one phrasing per item
    assert table.loc["m1", "p_value"] == pytest.approx(5 / 16)  # P(X ≤ 1), X ~ Bin(4, ½)
    assert table.loc["m2", "method"] == "McNemar z, as paper 002 (one pair per unit)"
    assert table.loc["m2", "statistic"] == pytest.approx(-12 / math.sqrt(12))
    p2 = 0.5 * math.erfc(math.sqrt(12) / math.sqrt(2))  # Φ(−3.4641)
    assert table.loc["m2", "p_value"] == pytest.approx(p2)
    assert table.loc["m2", "p_adjusted"] == pytest.approx(2 * p2) and table.loc["m1", "p_adjusted"] == pytest.approx(5 / 16)
    assert bool(table.loc["m2", "reject"]) and not bool(table.loc["m1", "reject"])


def test_no_linked_items_no_sections():
    assert paired_report.sections(pd.DataFrame(), pd.DataFrame(), None) == []


# --------------------------------------------------------------------------- end to end


def simulate_people(study, n, answer):
    """Participants through the services; answer(item) → 'yes'/'no'."""
    from experiments.participation import trials
    from experiments.participation import services as flow
    from experiments.participation.payload import parse_trial
    from tests.experiments.participation.conftest import code_for, trial_data

    for k in range(n):
        person, _ = flow.participant_start(study=study, prolific_pid=f"pp{study.pk:04d}{k:018d}",
                                           prolific_session_id=f"ss{study.pk}-{k}")
        flow.participant_consent(participant=person, agree=True)
        flow.participant_instructions_done(participant=person)
        flow.participant_practice_done(participant=person)
        person.refresh_from_db()
        items = {i.pk: i for i in study.items.filter(pk__in=person.plan)}
        for index, pk in enumerate(person.plan):
            data = trial_data(person, index, code=code_for(person, answer(items[pk])), rt=900.0)
            trials.trial_record(participant=person, payload=parse_trial(data), user_agent="pytest")
        flow.participant_finish(participant=person)


def open_for_people(study, per_person, **arm_settings):
    from experiments import services
    from experiments.models import StudyStatus
    from experiments.participation.services import human_arm_ensure
    from tests.factories import review_consent

    arm = human_arm_ensure(study=study)
    arm.items_per_participant, arm.attention_checks, arm.completion_code = per_person, [], "DONE"
    arm.practice = []
    for name, value in arm_settings.items():
        setattr(arm, name, value)
    arm.save()
    review_consent(study)
    services.study_transition(study=study, to=StudyStatus.OPEN)


def wilson_low(k, n):
    z = 1.959963984540054
    p = k / n
    return 0.0 if k == 0 else (p + z * z / (2 * n) - z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))) / (1 + z * z / n)


@pytest.mark.django_db
def test_three_paired_studies_end_to_end(tmp_path, monkeypatch):
    from django.core.management import call_command

    from analysis import services as analysis_services
    from experiments.models import Item, Study, Trial
    from inference import services as inference
    from inference.models import ModelScore
    from inference.tasks import run_model_task
    from tests.inference.paired_tiny import build_llama

    monkeypatch.setattr("analysis.report._versions", lambda: {"Python": "test"})
    folder = build_llama(tmp_path / "tiny")
    lm = inference.language_model_create(name="tiny", source=str(folder), device="cpu")
    bank = tmp_path / "bank.csv"
    bank.write_text("premise,conclusion,flipped_conclusion,domain\n" + "".join(
        f"Thing {k} is heated,Thing {k} expands,Thing {k} does not expand,{'hot' if k % 2 else 'cold'}\n"
        for k in range(6)), encoding="utf-8")
    call_command("generate_items", "rulebreakers", "e2e-rb", "--pairs", "8", "--variants", "follow/yes-no",
                 "follow/true-false")
    call_command("import_items", "dual-sided", str(bank), "e2e-ds", "--templates", "1", "3")
    ds = Study.objects.get(slug="e2e-ds")  # the study declares its factor (people keep the import's phrasing)
    ds.settings = {**ds.settings, "factors": ["domain"]}
    ds.save(update_fields=["settings"])
    call_command("generate_items", "modal-syllogisms", "e2e-pt", "--interpretations", "2")
    call_command("perturb_items", "e2e-pt", "names")

    def rule_of_thumb(item):  # people: yes to everything but the first-listed rulebreakers and flipped rules
        return "no" if item.pair_role in ("rulebreaker", "flipped") and item.pk % 3 == 0 else "yes"

    results = {}
    for slug, people in (("e2e-rb", 4), ("e2e-ds", 2), ("e2e-pt", 0)):
        study = Study.objects.get(slug=slug)
        run = inference.model_run_create(study=study, language_model=lm, batch_size=8, scope="all")  # every item
        assert run_model_task.apply(args=[run.pk]).get() == "done"
        if people:
            open_for_people(study, 4)
            simulate_people(study, people, rule_of_thumb)
        results[slug] = analysis_services.report_build(study=study, out_dir=tmp_path / slug)

    # RULEBREAKERS: counts straight from the rows
    study = Study.objects.get(slug="e2e-rb")
    decided = {s.item_id: s.decision == s.item.gold_answer for s in ModelScore.objects.filter(item__study=study).select_related("item")}
    by_pair = defaultdict(dict)
    for i in Item.objects.filter(study=study):
        by_pair[(i.pair_id, i.variant)][i.pair_role] = decided[i.pk]
    both = sum(p["rulebreaker"] and p["non-rulebreaker"] for p in by_pair.values())
    rb_right = sum(p["rulebreaker"] for p in by_pair.values())
    table = pd.read_csv(tmp_path / "e2e-rb" / "tables" / "rulebreakers_accuracy_tiny.csv")
    row = table[(table.respondent == "tiny") & (table.variant == "all") & (table.subset == "overall")].iloc[0]
    # 8 pairs × 2 phrasings: n is the 8 pairs (once 16, the phrasings counted as independent pairs)
    assert (row["n"], row["pairs"], row["answered_pairs"]) == (8, 8, 16)
    assert (row["tau"], row["tau_R"]) == (both / 16, rb_right / 16)
    one = table[(table.variant == "follow/yes-no") & (table.subset == "overall")].iloc[0]
    both_one = sum(p["rulebreaker"] and p["non-rulebreaker"] for key, p in by_pair.items() if key[1] == "follow/yes-no")
    assert (one["n"], one["tau"]) == (8, both_one / 8) and one["tau_low"] == pytest.approx(wilson_low(both_one, 8))
    assert not (tmp_path / "e2e-rb" / "tables" / "rulebreakers_accuracy_human.csv").exists()  # across: no pairs
    members = pd.read_csv(tmp_path / "e2e-rb" / "tables" / "paired_people_members.csv").iloc[0]
    by_role = defaultdict(list)
    for t in Trial.objects.filter(participant__study=study).select_related("item"):
        by_role[t.item.pair_role].append(t.correct)
    assert (members["answers_a"], members["answers_b"]) == (len(by_role["non-rulebreaker"]), len(by_role["rulebreaker"]))
    assert members["accuracy_b"] == pytest.approx(sum(by_role["rulebreaker"]) / len(by_role["rulebreaker"]))
    html = (tmp_path / "e2e-rb" / "report.html").read_text(encoding="utf-8")
    assert "RULEBREAKERS (000)" in html and "rulebreakers_confidence_tiny.csv" in html and "Sampling unit:" in html
    data = pd.read_csv(tmp_path / "e2e-rb" / "data" / "scores.csv")
    assert {"pair_id", "pair_role", "variant"} <= set(data.columns) and set(data["variant"]) == {"follow/yes-no", "follow/true-false"}

    # dual-sided: a rule is right when the original is affirmed and the flipped denied
    study = Study.objects.get(slug="e2e-ds")
    said = {s.item_id: s.decision for s in ModelScore.objects.filter(item__study=study)}
    rules = defaultdict(dict)
    for i in Item.objects.filter(study=study):
        rules[(i.pair_id, i.variant)][i.pair_role] = (said[i.pk], i.attributes["domain"])
    right = {key: r["original"][0] == "yes" and r["flipped"][0] == "no" for key, r in rules.items()}
    table = pd.read_csv(tmp_path / "e2e-ds" / "tables" / "dual_sided_accuracy_tiny.csv", keep_default_na=False)
    model = table[(table.respondent == "tiny") & (table.variant == "all")].set_index(["column", "value"])
    # 6 rules × 2 templates: the interval rests on the 6 rules (once 12)
    assert model.loc[("overall", ""), "correct"] == sum(right.values()) and model.loc[("overall", ""), "answers"] == 12
    assert model.loc[("overall", ""), "n"] == model.loc[("overall", ""), "rules"] == 6
    assert set(table["column"]) == {"overall", "domain"}  # the declared factor only
    hot = [v for key, v in right.items() if rules[key]["original"][1] == "hot"]
    assert model.loc[("domain", "hot"), "accuracy"] == pytest.approx(sum(hot) / len(hot))
    assert not (tmp_path / "e2e-ds" / "tables" / "dual_sided_accuracy_human.csv").exists()

    # perturbation: the 2×2 table of (original, perturbed) correctness, from the rows
    study = Study.objects.get(slug="e2e-pt")
    correct = {s.item_id: s.decision == s.item.gold_answer for s in ModelScore.objects.filter(item__study=study).select_related("item")}
    cells = defaultdict(int)
    for i in Item.objects.filter(study=study, condition="names"):
        cells[(correct[i.original_id], correct[i.pk])] += 1
    table = pd.read_csv(tmp_path / "e2e-pt" / "tables" / "perturbation_matched_pairs_tiny.csv").iloc[0]
    assert [table.n11, table.n12, table.n21, table.n22] == [cells[(True, True)], cells[(True, False)],
                                                             cells[(False, True)], cells[(False, False)]]
    assert table.n11 + table.n12 + table.n21 + table.n22 == 48
    assert {s.key for s in results["e2e-pt"].sections} >= {"perturbation"}
    assert "rulebreakers" not in {s.key for s in results["e2e-pt"].sections}


@pytest.mark.django_db
def test_people_shown_both_members_are_paired_with_themselves_in_the_report(tmp_path, monkeypatch):
    from django.core.management import call_command

    from analysis import services as analysis_services
    from experiments.models import Study, Trial

    monkeypatch.setattr("analysis.report._versions", lambda: {"Python": "test"})
    call_command("generate_items", "rulebreakers", "within-rb", "--pairs", "8", "--variants", "follow/yes-no")
    study = Study.objects.get(slug="within-rb")
    open_for_people(study, 8, paired_presentation="within", paired_min_gap=3)
    simulate_people(study, 4, lambda item: "no" if item.pair_role == "rulebreaker" and item.pk % 3 == 0 else "yes")
    report = analysis_services.report_build(study=study, out_dir=tmp_path / "r")
    table = pd.read_csv(tmp_path / "r" / "tables" / "rulebreakers_accuracy_human.csv")
    human = table[(table.respondent == "human") & (table.subset == "overall") & (table.variant == "all")].iloc[0]
    answers = defaultdict(dict)  # each person's own pairs, from the rows
    for t in Trial.objects.filter(participant__study=study).select_related("item"):
        answers[(t.participant_id, t.item.pair_id)][t.item.pair_role] = t.correct
    pairs = [a for a in answers.values() if len(a) == 2]
    assert len(pairs) == 16 == human["answered_pairs"]  # 4 people × 4 pairs, both members each
    assert (human["n"], human["unit"]) == (4, "participant")  # a person's pairs are one cluster
    assert human["tau"] == sum(a["rulebreaker"] and a["non-rulebreaker"] for a in pairs) / 16
    people = next(s for s in report.sections if s.key == "paired_people")
    assert "members" not in people.tables and "Within-participant presentation" in people.notes[0]


def test_an_empty_confidence_cell_says_why():
    # the model answers No to every rulebreaker: no positive answer on that side, so Π⁺_R has nothing to average
    items, scores = [], []
    for pair in range(3):
        for k, (role, said, gold) in enumerate((("rulebreaker", False, "no"), ("non-rulebreaker", True, "yes"))):
            items.append(item(2 * pair + k + 1, "rulebreakers", f"rb:{pair}", role, rule="MT", entity_kind="geographical",
                              part=f"c{pair}"))
            scores.append(score(2 * pair + k + 1, "m1", said, gold, 0.3 + 0.2 * pair))
    items, scores, trials = frames(items, scores)
    section = paired_report.rulebreakers_section(paired_report.responses(scores, trials, items), PairedInputs(items=items))
    row = section.tables["confidence_m1"].iloc[0]
    assert row["n_R"] == 0 and math.isnan(row["pi_R"]) and row["n_N"] == 3
    assert row["note"].startswith("Π⁺_R empty: no positive answer (Yes/True) on the rulebreaker side")


def test_one_table_per_model_so_the_page_cap_never_hides_a_model():
    # 3 models × 2 conditions × (10 variants + all) × (overall + 4 subsets): 110 rows each, 330 together; one
    # table of them all showed the first 60 rows, i.e. part of the first model only
    import itertools

    from analysis import html

    items, scores, n = [], [], 0
    subsets = list(itertools.product(("MT", "DS"), ("geographical", "categorical")))
    for pair, condition, variant in itertools.product(range(8), ("real", "names"), [f"v{k}" for k in range(10)]):
        rule, kind = subsets[pair % 4]
        for role, gold in (("rulebreaker", "no"), ("non-rulebreaker", "yes")):
            n += 1
            items.append(item(n, "rulebreakers", f"rb:{pair}", role, variant, condition, rule=rule, entity_kind=kind,
                              part=f"p{pair}"))
            for m, model in enumerate(("alpha", "beta", "gamma")):
                scores.append(score(n, model, (n * (m + 3)) % 5 < 2, gold, 0.5))
    items, scores, trials = frames(items, scores)
    section = paired_report.rulebreakers_section(paired_report.responses(scores, trials, items), PairedInputs(items=items))
    page = html._section(section)
    for model in ("alpha", "beta", "gamma"):
        table = section.tables[f"accuracy_{model}"]
        assert len(table) == 110 and set(table["respondent"]) == {model}
        assert table[["condition", "variant", "subset"]].values.tolist()[:6] == [
            ["real", "all", "overall"], ["real", "all", "DS × categorical"], ["real", "all", "DS × geographical"],
            ["real", "all", "MT × categorical"], ["real", "all", "MT × geographical"], ["names", "all", "overall"]]
        assert f"<td>{model}</td>" in page and f"rulebreakers_accuracy_{model}.csv" in page


def test_declared_factors_are_read_from_the_study_settings():
    from designs.paired.frames import _factors

    assert _factors(None) == [] and _factors([]) == [] and _factors("domain") == ["domain"]
    assert _factors(["domain", "length"]) == ["domain", "length"]
    with pytest.raises(ValueError, match="study setting factors must be a list of column names"):
        _factors([1, 2])
