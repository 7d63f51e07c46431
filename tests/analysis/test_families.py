"""Issue 44 item 4: a family of items is one random effect, not several unrelated items.

A question's four option orders (001), a pair's members and phrasings, and the pair's perturbed copies (000,
002, 004) are one piece of content asked several ways: each design declares its families in the registry
(`Design.family`), the schema's `family` column carries them into every frame, and the humans-vs-models GLMM
(analysis/versus.py) adds `(1 | family)` beside `(1 | item)` wherever some family holds several items among its
answers. Checked here:

* the family column from the database: a LogiQA study's option orders share their question, a RULEBREAKERS
  pair's members and its perturbed copies share the pair, 003's items have none;
* the formula and the section's words: multiple choice and the paired all-items fit carry the family term and
  name the family; a frame where each family holds one item, and a modal (003) study, keep their formula;
* R: the same model fitted directly by lme4::glmer in Rscript, with the formula written out here, on the
  section's own model frame, agrees to 1e-6 on every estimate and SE (and the random-effect variances); the
  report's reproduce.R refits it to the same numbers;
* the power analysis simulates and fits the same model: power.R draws the families' effects (a simulated
  study's fit recovers a known family variance), and a power curve runs on the family model.

The data are drawn here with a fixed seed (numpy's PCG64): family effects N(0, 1), each item's own N(0, 0.6) for
the option orders and N(0, 0.35) for the paired items; with these seeds no variance is estimated at its boundary
(a singular fit would check less).
"""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis import versus
from analysis.sections import StudyFrames, fit_spec

MC = "multiple-choice"
RB = "rulebreakers"
LOGIQA = Path(__file__).resolve().parents[1] / "data" / "published" / "logiqa" / "Eval_excerpt.txt"


@pytest.fixture(scope="module")
def rscript():
    """The Rscript command; missing, the test fails under CI=true and is skipped elsewhere."""
    found = shutil.which("Rscript")
    if found is None:
        if os.environ.get("CI") == "true":
            pytest.fail("Rscript must be installed under CI")
        pytest.skip("Rscript not installed")
    return found


# ----------------------------------------------------------------------------------------- the data


def _answers(items: pd.DataFrame, who: dict, people: list[tuple[str, float, pd.DataFrame]], rng) -> StudyFrames:
    """Scores (every model answers every item once) and kept trials (each person their own items): eta = the
    item's fixed part + the agent's shift + the person's effect + the family's + the item's own."""
    def draw(eta):
        return (rng.random(len(eta)) < 1 / (1 + np.exp(-eta))).astype(int)

    models = [items.assign(model=name, correct=draw(items["eta"].to_numpy() + shift)) for name, shift in who.items()]
    humans = [part.assign(participant=name, correct=draw(part["eta"].to_numpy() + effect))
              for name, effect, part in people]
    drop = ["eta"]
    return StudyFrames(scores=pd.concat(models, ignore_index=True).drop(columns=drop),
                       kept=pd.concat(humans, ignore_index=True).drop(columns=drop))


def multiple_choice_frames(seed: int = 44, *, questions: int = 32, people: int = 30, per_person: int = 24,
                           orders: int = 4) -> StudyFrames:
    """32 questions in 4 option orders (128 items, the audit's shape); 30 people, each answering 24 questions in
    one order each; two configurations answering every order."""
    rng = np.random.default_rng(seed)
    family = rng.normal(0, 1.0, questions)
    rows = []
    for q in range(questions):
        for k in range(orders):
            rows.append({"item_id": 1 + q * 4 + k, "design": MC, "condition": "real", "variant": "",
                         "pair_id": f"logiqa-{q:02d}", "pair_role": f"rot{k}", "family": f"logiqa-{q:02d}",
                         "original_item_id": pd.NA if k == 0 else 1 + q * 4,
                         "eta": 0.9 + family[q] + rng.normal(0, 0.6)})
    items = pd.DataFrame(rows)
    chosen = []
    for p in range(people):
        picked = rng.choice(questions, per_person, replace=False)
        order = rng.integers(0, orders, per_person)
        chosen.append((f"P{p}", rng.normal(0, 0.5), items.loc[picked * 4 + order].reset_index(drop=True)))
    return _answers(items, {"mcA": -0.5, "mcB": 0.6}, chosen, rng)


PHRASINGS = ("follow/yes-no", "follow/true-false", "entail/yes-no")


def paired_frames(seed: int = 48, *, pairs: int = 20, people: int = 24) -> StudyFrames:
    """20 RULEBREAKERS pairs × 2 members × 3 phrasings, each with a perturbed copy (condition 'names'): 240
    items; 24 people, each answering one member of every pair in the first phrasing (real items); two
    configurations answering every item."""
    rng = np.random.default_rng(seed)
    family = rng.normal(0, 1.0, pairs)
    rows, item_id = [], 0
    for p in range(pairs):
        for role, shift in (("rulebreaker", -0.8), ("non-rulebreaker", 0.4)):
            for variant in PHRASINGS:
                for condition in ("real", "names"):
                    item_id += 1
                    rows.append({"item_id": item_id, "design": RB, "condition": condition, "variant": variant,
                                 "pair_id": f"{RB}:{condition}:{p:05d}", "pair_role": role,
                                 "family": f"{RB}:real:{p:05d}",
                                 "original_item_id": pd.NA if condition == "real" else item_id - 1,
                                 "eta": 0.7 + shift + family[p] + rng.normal(0, 0.35)})
    items = pd.DataFrame(rows)
    shown = items[(items["condition"] == "real") & (items["variant"] == PHRASINGS[0])]
    chosen = []
    for k in range(people):
        roles = rng.integers(0, 2, pairs)
        part = pd.concat([shown.iloc[2 * p + r: 2 * p + r + 1] for p, r in enumerate(roles)], ignore_index=True)
        chosen.append((f"P{k}", rng.normal(0, 0.5), part))
    return _answers(items, {"fake-a": -0.3, "fake-b": 0.5}, chosen, rng)


# ----------------------------------------------------------------------------------------- the database


@pytest.mark.django_db
def test_the_frames_carry_each_items_family_from_its_design():
    """A question's option orders share the question; a pair's members, phrasings and perturbed copies share the
    (original's) pair; 003's items and catch items have none. Read through the schema, as every export is."""
    from django.core.management import call_command

    from analysis import frames
    from experiments import design_registry as registry
    from experiments.models import Study
    from experiments.participation.selectors import trial_records, trials_for_export

    call_command("import_items", MC, str(LOGIQA), "fam-logiqa", "--format", "logiqa-text", "--skip-problems")
    call_command("generate_items", RB, "fam-rb", "--pairs", "3", "--variants", "follow/yes-no", "entail/yes-no")
    call_command("perturb_items", "fam-rb", "names")
    call_command("generate_items", "modal-syllogisms", "fam-modal", "--interpretations", "1", "--nonsense")

    from experiments.schema import ITEM, Rows

    read = Rows(ITEM)
    mc_items = [read.from_object(i) for i in Study.objects.get(slug="fam-logiqa").items.exclude(design="attention-check")]
    names = list(read.names)
    mc_items = pd.DataFrame(mc_items, columns=names)
    assert len(mc_items) and (mc_items["family"] == mc_items["pair_id"]).all()
    assert (mc_items.groupby("family")["item_id"].nunique() == 4).all()  # the question's four orders

    rb = pd.DataFrame([read.from_object(i) for i in Study.objects.get(slug="fam-rb").items.all()], columns=names)
    copies = rb[rb["condition"] == "names"]
    assert len(copies) == 3 * 2 * 2 and set(copies["pair_id"]) != set(copies["family"])
    assert (rb["family"] == rb["pair_id"].str.replace(":names:", ":real:")).all()
    assert (rb.groupby("family")["item_id"].nunique() == 2 * 2 * 2).all()  # members × phrasings × real/copy
    modal = pd.DataFrame([read.from_object(i) for i in Study.objects.get(slug="fam-modal").items.all()], columns=names)
    assert len(modal) and (modal["family"] == "").all()
    assert registry.item_family("attention-check", "x", "y") == "" and registry.item_family(MC, "q1", "") == "q1"

    # the trials' export and frame read it through the trial's item (a nested database path under item__)
    from experiments.participation import services as participation

    study = Study.objects.get(slug="fam-rb")
    arm = participation.human_arm_ensure(study=study)
    arm.items_per_participant = 3  # one member of each of the 3 pairs
    arm.save()
    call_command("simulate_participants", "fam-rb", "--n", "2", "--seed", "3")
    trials = frames.trials_frame(study, include_simulated=True)
    assert len(trials) and (trials["family"] == trials["pair_id"].str.replace(":names:", ":real:")).all()
    exported = pd.DataFrame(list(trial_records(trials_for_export(study=study, include_simulated=True))),
                            columns=list(frames.TRIAL_COLUMNS))
    assert list(exported["family"]) == list(trials["family"])


# ----------------------------------------------------------------------------------------- the formula


def test_multiple_choice_and_paired_fits_carry_the_family_term_and_name_the_family():
    mc = versus.spec(multiple_choice_frames(), ())
    assert mc.formula == "correct ~ agent + (1 | participant) + (1 | family) + (1 | item)"
    assert mc.columns == ("correct", "agent", "participant", "family", "item")
    assert mc.notes[0].startswith("Family: the question (its 4 option orders). 32 families holding 128 items")
    assert mc.unit.endswith("Items of one family (family: the question (its 4 option orders)) share a random "
                            "intercept too, the item's nested in its family's.")
    rows = mc.frame(multiple_choice_frames())
    assert rows["item"].nunique() == 128 and rows["family"].nunique() == 32
    assert rows.groupby("family", observed=True)["item"].nunique().eq(4).all()

    frames = paired_frames()
    everything = versus.spec(frames, ("pair_role",), all_items=True)
    assert everything.formula == "correct ~ agent * pair_role + (1 | participant) + (1 | family) + (1 | item)"
    assert everything.notes[0].startswith("Family: the pair (its two members in every phrasing, and their perturbed "
                                          "copies). 20 families holding 240 items")
    like = versus.spec(frames, ("pair_role",))  # models on the people's items: both members in one phrasing
    assert like.formula == everything.formula and "20 families holding 40 items" in like.notes[0]


def test_a_frame_whose_families_hold_one_item_each_and_a_modal_study_keep_their_formula():
    """Each question in its original order only: the item is its family, the formula stays, and the note says
    why. The test's generic bank (no families) is unchanged too."""
    frames = multiple_choice_frames()
    first = StudyFrames(scores=frames.scores[frames.scores["pair_role"] == "rot0"],
                        kept=frames.kept[frames.kept["pair_role"] == "rot0"])
    spec = versus.spec(first, ())
    assert spec.formula == "correct ~ agent + (1 | participant) + (1 | item)" and "family" not in spec.columns
    assert "each family holds one item here, so the item's intercept is its family's" in spec.notes[0]
    bank = StudyFrames(scores=frames.scores.drop(columns="family").assign(design="csv-import"),
                       kept=frames.kept.drop(columns="family").assign(design="csv-import"))
    assert versus.spec(bank, ()).formula == "correct ~ agent + (1 | participant) + (1 | item)"
    assert not any(note.startswith("Family") for note in versus.spec(bank, ()).notes)


@pytest.mark.django_db
def test_a_modal_study_has_no_families_and_keeps_its_formula(make_study):
    """003's designs declare no family: the frames' family column is blank, the study's humans-vs-models model
    is 003's AGENTS as written, and the any-study model by modality and argform has no family term."""
    from analysis import frames, prep
    from designs.modal.mixed import AGENTS

    study = make_study(models=2, participants=6)
    kept, _ = prep.apply_exclusions(frames.trials_frame(study))
    scores = frames.scores_frame(study, list(study.model_runs.values_list("pk", flat=True)))
    assert (kept["family"] == "").all() and (scores["family"] == "").all()
    study_frames = StudyFrames(scores=scores, kept=kept)
    chosen = versus.human_model_spec(study_frames, ["modal-syllogisms"], ("modality", "argform"))
    assert chosen is AGENTS
    assert chosen.formula == "correct ~ agent * (modality + argform) + (1 | respondent) + (1 | interpretation)"
    generic = versus.spec(study_frames, ("modality", "argform"))
    assert generic.formula == "correct ~ agent * (modality + argform) + (1 | participant) + (1 | item)"
    assert not any(note.startswith("Family") for note in generic.notes)


# ----------------------------------------------------------------------------------------- against R


R_FIT = """
args <- commandArgs(TRUE)
suppressPackageStartupMessages(library(lme4))
d <- read.csv(args[1], colClasses = "character")
d$correct <- as.integer(d$correct)
{levels}
m <- glmer({formula}, data = d, family = binomial, nAGQ = 1L, control = glmerControl(optimizer = "{optimizer}"))
co <- summary(m)$coefficients
write.csv(data.frame(term = rownames(co), Estimate = co[, "Estimate"], SE = co[, "Std. Error"]), args[2],
          row.names = FALSE)
vc <- as.data.frame(VarCorr(m))
write.csv(data.frame(group = vc$grp, Var = vc$vcov), args[3], row.names = FALSE)
"""


def _glmer_in_r(rscript, section, formula: str, tmp_path: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The model fitted by lme4::glmer in a separate Rscript on the section's model frame, `formula` written out by
    the caller (not taken from the spec), the factors' levels in the report's order."""
    data = section.data
    levels = "\n".join(f"d${name} <- factor(d${name}, levels = c({', '.join(repr(str(v)) for v in data[name].cat.categories)}))"
                       for name in data.columns if isinstance(data[name].dtype, pd.CategoricalDtype))
    frame, script = tmp_path / f"{section.key}.csv", tmp_path / f"{section.key}.R"
    data.to_csv(frame, index=False)
    script.write_text(R_FIT.format(levels=levels, formula=formula, optimizer=section.fitted.optimizer), encoding="utf-8")
    coefs, variances = tmp_path / f"{section.key}_coefs.csv", tmp_path / f"{section.key}_var.csv"
    ran = subprocess.run([rscript, str(script), str(frame), str(coefs), str(variances)], capture_output=True,
                         text=True, timeout=600)
    assert ran.returncode == 0, ran.stderr[-3000:]
    return pd.read_csv(coefs).set_index("term"), pd.read_csv(variances).set_index("group")["Var"]


def _agrees(section, coefs: pd.DataFrame, variances: pd.Series) -> None:
    ours = section.tables["coefficients"].set_index("term")
    assert list(ours.index) == list(coefs.index)
    assert (ours["Estimate"] - coefs["Estimate"]).abs().max() < 1e-6
    assert (ours["SE"] - coefs["SE"]).abs().max() < 1e-6
    found = dict(zip(section.tables["random_variances"].iloc[:, 0], section.tables["random_variances"]["Var"]))
    assert set(found) == {"participant", "family", "item"}
    for group, value in variances.items():
        assert found[group] == pytest.approx(value, abs=1e-6), group
        assert value > 0.01, (group, value)  # no variance at its boundary: a singular fit would check less


def test_the_multiple_choice_fit_agrees_with_glmer_in_r_and_reproduce_r(r_stack, rscript, tmp_path):
    from analysis import reproduce

    frames = multiple_choice_frames()
    section = fit_spec(versus.spec(frames, ()), frames)
    assert not section.absent, section.absent
    assert section.fitted.method == "ml" and section.stats["n_family"] == 32 and section.stats["n_item"] == 128
    coefs, variances = _glmer_in_r(rscript, section, "correct ~ agent + (1 | participant) + (1 | family) + (1 | item)",
                                   tmp_path)
    _agrees(section, coefs, variances)
    assert variances["family"] > 0.3  # the questions' shared effect the item-only model spread over 128 items

    # the report's reproduce.R refits the same formula from the same frame
    folder = tmp_path / "report"
    (folder / reproduce.FOLDER).mkdir(parents=True)
    section.data.to_csv(folder / reproduce.FOLDER / f"{section.key}.csv", index=False)
    reproduce.write_scripts([section], folder)
    assert '"formula": "correct ~ agent + (1 | participant) + (1 | family) + (1 | item)"' in (
        folder / "reproduce.py").read_text(encoding="utf-8")
    ran = subprocess.run([rscript, str(folder / "reproduce.R")], cwd=tmp_path, capture_output=True, text=True,
                         timeout=600)
    assert ran.returncode == 0, ran.stderr[-3000:]
    again = pd.read_csv(folder / "reproduced" / "R" / f"{section.key}_coefficients.csv").set_index("term")
    assert (again["Estimate"] - coefs["Estimate"]).abs().max() < 1e-6 and (again["SE"] - coefs["SE"]).abs().max() < 1e-6


def test_the_paired_all_items_fit_agrees_with_glmer_in_r(r_stack, rscript, tmp_path):
    frames = paired_frames()
    section = fit_spec(versus.spec(frames, ("pair_role",), all_items=True), frames)
    assert not section.absent, section.absent
    assert section.key == versus.ALL_ITEMS_KEY and section.fitted.method == "ml"
    assert section.stats["n_family"] == 20 and section.stats["n_item"] == 240
    coefs, variances = _glmer_in_r(
        rscript, section, "correct ~ agent * pair_role + (1 | participant) + (1 | family) + (1 | item)", tmp_path)
    _agrees(section, coefs, variances)


# ----------------------------------------------------------------------------------------- the power analysis


def test_the_power_analysis_simulates_and_fits_the_family_model(r_stack):
    """power.R draws the families' effects (a large simulated study recovers a known family variance with its
    items' own near zero), and a power curve runs on the multiple-choice family model with the report's fit."""
    from analysis import power
    from analysis import rbridge as rb

    frames = multiple_choice_frames()
    spec = versus.spec(frames, ())
    pilot = power.pilot_frame(frames, spec)
    assert power.groups(spec) == ("participant", "item", "family")
    fit = rb.fit(spec.formula, pilot, family="binomial")
    truth = {"beta": dict(zip(fit.coefs["term"], fit.coefs["Estimate"])),
             "theta": {"participant.(Intercept)": 0.5, "family.(Intercept)": 1.5, "item.(Intercept)": 0.0}}
    with rb.r_session() as r:
        if "duet_power_simulate" not in r.ro.globalenv:
            r.ro.r(f"source('{power.POWER_R.as_posix()}')")
        data = rb.to_r(r, rb.factors_for_r(pilot))
        beta, theta = power._newparams(r.ro, fit.model, truth)
        study = rb.to_pandas(r, rb.call("duet_power_simulate", fit.model, data, 200, 3, "participant", "item", beta,
                                        theta, "family"))
        with pytest.raises(Exception, match="handles random intercepts by"):  # the family term is not left out
            rb.call("duet_power_simulate", fit.model, data, 4, 3, "participant", "item", beta, theta)
    simulated = rb.fit(spec.formula, study.assign(correct=study["correct"].astype(int)), family="binomial")
    found = dict(zip(simulated.variances.iloc[:, 0], simulated.variances["Var"]))
    assert 1.0 < found["family"] < 4.5 and found["item"] < 0.3, found

    result = power.estimate(pilot, power.PowerPlan(sizes=(8,), nsim=10, seed=2), spec=spec)
    assert result.pilot["formula"] == spec.formula and "(1 | family)" in result.pilot["formula"]
    assert (result.curve["nsim"] == 10).all() and (result.curve["failed"] == 0).all()
    assert set(result.curve["contrast"]) == {"mcA - human", "mcB - human"}
