"""Issue 35 item 1: humans and models compared like for like.

A RULEBREAKERS study (30 pairs, the ten phrasings of 000 §4.2, people shown one member of each pair
across participants in the study's human variant), two fake-scorer configurations, simulated people.
The humans-vs-models frame holds for models only the phrasing people saw, and the section says what
each side holds. The audit's construction — a configuration right on the people's phrasing and wrong
on every true/false phrasing — gives a positive model − human contrast like for like, and a negative
one in the all-items sensitivity analysis (on main the frame held every phrasing, and the report said
−0.091). The items people could be shown (items_people_can_be_shown) are the human arm's own lists.
"""
from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from django.core.management import call_command

from analysis import like_for_like, versus
from analysis.sections import StudyFrames, fit_spec

pytestmark = pytest.mark.django_db
PAIRS, PHRASINGS, PEOPLE = 30, 10, 12
MODELS = ("fake-a", "fake-b")


@pytest.fixture(scope="module")
def study_frames(django_db_setup, django_db_blocker):
    """(scores, kept trials, ItemsShown, the arm's list items) of the study; the database is rolled back."""
    from django.db import transaction

    from analysis import frames, prep
    from experiments.models import Study
    from experiments.participation import services as participation
    from experiments.participation.selectors import items_people_can_be_shown
    from inference import services
    from inference.models import LanguageModel
    from inference.tasks import run_model_task

    with django_db_blocker.unblock(), transaction.atomic():
        call_command("generate_items", "rulebreakers", "lfl-rb", "--pairs", str(PAIRS))
        study = Study.objects.get(slug="lfl-rb")
        for name in MODELS:
            lm = LanguageModel.objects.create(name=name, source=f"/fake/{name}", backend="fake", device="cpu",
                                              decision_rule="relative")
            run = services.model_run_create(study=study, language_model=lm, batch_size=64, scope="all")  # every phrasing
            assert run_model_task.apply(args=[run.pk]).get() == "done"
        call_command("simulate_participants", "lfl-rb", "--n", str(PEOPLE), "--seed", "5", "--accuracy", "0.7")
        arm = participation.human_arm_ensure(study=study)
        grid = participation._grid(study, arm)
        listed = set(grid.items.values())
        scores = frames.scores_frame(study)
        kept, _ = prep.apply_exclusions(frames.trials_frame(study, include_simulated=True))
        people = items_people_can_be_shown(study, include_simulated=True)
        transaction.set_rollback(True)
    return scores, kept, people, listed


def audit_scores(scores: pd.DataFrame, human_variant: str) -> pd.DataFrame:
    """fake-a made right on the people's phrasing (all but every eleventh item) and wrong on every
    true/false phrasing; fake-b as scored."""
    out = scores.copy()
    a = out["model"] == "fake-a"
    people = a & (out["variant"] == human_variant)
    out.loc[people, "correct"] = (out.loc[people, "item_id"] % 11 != 0).astype(int)
    out.loc[a & out["variant"].str.endswith("/true-false"), "correct"] = 0
    return out


def test_the_items_people_can_be_shown_are_the_human_arms_lists(study_frames):
    scores, kept, people, listed = study_frames
    assert people.human_variant == "follow/yes-no" and not people.pool.perturbed
    assert people.item_ids == listed and people.source == "the study's 4 participant lists"
    items = scores.drop_duplicates("item_id")
    shown = set(items.loc[like_for_like.shown_mask(items, people), "item_id"])
    assert shown == listed and len(shown) == 2 * PAIRS  # both members of every pair, in one phrasing
    assert set(kept["item_id"]) <= shown


def test_the_frame_holds_for_models_only_the_phrasing_people_saw_and_says_both_sides(study_frames):
    scores, kept, people, _ = study_frames
    frames = StudyFrames(scores=scores, kept=kept, shown=people)
    rows = versus.rows(frames)
    models = rows[rows["agent"] != "human"]
    assert len(scores) == len(MODELS) * 2 * PAIRS * PHRASINGS  # models answered all ten phrasings ...
    assert set(models["variant"]) == {"follow/yes-no"} and len(models) == len(MODELS) * 2 * PAIRS  # ... 60 count
    assert set(rows.loc[rows["agent"] == "human", "variant"]) == {"follow/yes-no"}
    table = like_for_like.sides(rows[rows["agent"] == "human"],
                                models.assign(model=models["agent"].astype(str)))
    people_row = table[table.side == "people"].iloc[0]
    assert (people_row["n_answers"], people_row["phrasings"]) == (len(kept), "follow/yes-no")
    assert list(table.loc[table.side == "model", "n_items"]) == [2 * PAIRS] * 2
    assert versus.differs(frames)
    everything = versus.rows(frames, all_items=True)
    assert (everything["agent"] != "human").sum() == len(scores)


def test_the_audits_construction_gives_a_positive_contrast_like_for_like(study_frames, r_stack):
    scores, kept, people, _ = study_frames
    frames = StudyFrames(scores=audit_scores(scores, people.human_variant), kept=kept, shown=people)
    like = fit_spec(versus.spec(frames, ()), frames)
    assert not like.absent, like.absent
    sides = like.tables["sides"].set_index("respondent")
    assert sides.loc["fake-a", "n_answers"] == 2 * PAIRS and sides.loc["human", "n_answers"] == len(kept)
    assert sides.loc["fake-a", "phrasings"] == "follow/yes-no"
    assert like.notes[0].startswith("Like for like") and "fake-a: 60 items, 60 answers (follow/yes-no" in like.notes[0]
    contrast = like.tables["model_vs_human"].set_index("contrast").filter(like="fake-a", axis=0).iloc[0]
    assert contrast["estimate"] > 0.1 and contrast["p_value"] < 0.01

    sensitivity = fit_spec(versus.spec(frames, (), all_items=True), frames)
    assert sensitivity.key == versus.ALL_ITEMS_KEY and sensitivity.title.startswith("Sensitivity analysis")
    assert sensitivity.notes[0].startswith("Sensitivity analysis, not the comparison")
    assert sensitivity.tables["sides"].set_index("respondent").loc["fake-a", "n_answers"] == 2 * PAIRS * PHRASINGS
    wrong = sensitivity.tables["model_vs_human"].set_index("contrast").filter(like="fake-a", axis=0).iloc[0]
    assert wrong["estimate"] < 0  # the comparison main's report made: the sign flips


# ------------------------------------------------------------------- typed links: multiple choice (001)
LOGIQA = Path(__file__).resolve().parents[1] / "data" / "published" / "logiqa" / "Eval_excerpt.txt"


def test_a_logiqa_study_has_option_orders_and_no_perturbation_section():
    """The circular option orders link back to their original question (option_order links): the report's
    paired sections read perturbations only, so a LogiQA study gets no 002 table and people no
    'perturbation vs original' row (on main both appeared)."""
    from analysis import frames, prep
    from designs.paired import frames as paired_frames
    from designs.paired import report as paired_report
    from experiments.models import LinkKind, Study

    call_command("import_items", "multiple-choice", str(LOGIQA), "lfl-logiqa", "--format", "logiqa-text",
                 "--skip-problems")
    study = Study.objects.get(slug="lfl-logiqa")
    kinds = dict(study.items.exclude(design="attention-check").values_list("pair_role", "link_kind").distinct())
    assert kinds == {"rot0": LinkKind.PAIR_MEMBER, "rot1": LinkKind.OPTION_ORDER, "rot2": LinkKind.OPTION_ORDER,
                     "rot3": LinkKind.OPTION_ORDER}
    call_command("simulate_participants", "lfl-logiqa", "--n", "8", "--seed", "2", "--accuracy", "0.6")
    kept, _ = prep.apply_exclusions(frames.trials_frame(study, include_simulated=True))
    assert len(kept) and kept["original_item_id"].notna().any()  # people answered rotated orders
    inputs = paired_frames.inputs(study)
    sections = {s.key: s for s in paired_report.sections(pd.DataFrame(), kept, inputs)}
    assert "perturbation" not in sections
    people = sections.get("paired_people")
    assert people is None or all(d != "perturbation" for d in people.tables["members"]["design"])


def test_the_rule_travels_to_the_reports_second_process_without_django(study_frames, tmp_path):
    """The humans-vs-models fit runs in a second process with no Django (analysis/rprocess.py): the study's
    rule, pickled with the spec and frames, is read and applied there to the same rows as here."""
    import pickle
    import subprocess
    import sys

    scores, kept, people, _ = study_frames
    frames = StudyFrames(scores=scores, kept=kept, shown=people)
    spec = versus.spec(frames, ())
    (tmp_path / "job.pickle").write_bytes(pickle.dumps((spec, frames)))
    code = ("import pickle, sys; spec, frames = pickle.load(open(sys.argv[1], 'rb')); "
            "print(len(spec.frame(frames)), sorted(spec.frame(frames)['variant'].unique()))")
    ran = subprocess.run([sys.executable, "-c", code, str(tmp_path / "job.pickle")], capture_output=True, text=True,
                         timeout=300, env={k: v for k, v in __import__("os").environ.items()
                                           if k != "DJANGO_SETTINGS_MODULE"})
    assert ran.returncode == 0, ran.stderr[-2000:]
    assert ran.stdout.split(" ", 1) == [str(len(versus.rows(frames))), "['follow/yes-no']\n"]


# ------------------------------------------- issue 44 item 2: the models' side is what the lists held
def test_a_closed_studys_report_puts_models_on_the_items_people_answered_recomputed_from_its_files(tmp_path, r_stack):
    """A 40-pair RULEBREAKERS study, 24 items per participant, closed after two participants: they answered the
    48 items of the first window of pairs, so the models' side of the humans-vs-models contrast holds those 48
    (the audit's study: on main it held all 80 items of the people's phrasing, and the contrast moved). The
    contrast is recomputed from the report's own data files (data/trials.csv, data/scores.csv): its frame, its
    sides and its estimate."""
    from analysis import prep
    from analysis import services as analysis_services
    from analysis.factors import declared_factors as factors_of
    from experiments import services as study_services
    from experiments.models import Study, StudyStatus
    from experiments.participation import services as participation
    from inference import services
    from inference.models import LanguageModel
    from inference.tasks import run_model_task
    from logic.shown_items import ItemsShown
    from tests.factories import review_consent

    call_command("generate_items", "rulebreakers", "lfl-closed", "--pairs", "40")
    study = Study.objects.get(slug="lfl-closed")
    arm = participation.human_arm_ensure(study=study)
    arm.items_per_participant, arm.completion_code = 24, "C0MPLETE"
    arm.save()
    for name in MODELS:
        lm = LanguageModel.objects.create(name=name, source=f"/fake/{name}", backend="fake", device="cpu",
                                          decision_rule="relative")
        assert run_model_task.apply(args=[services.model_run_create(study=study, language_model=lm,
                                                                    batch_size=64).pk]).get() == "done"
    call_command("simulate_participants", "lfl-closed", "--n", "2", "--seed", "7", "--accuracy", "0.7")
    review_consent(study)
    study_services.study_transition(study=study, to=StudyStatus.OPEN)
    study_services.study_transition(study=study, to=StudyStatus.CLOSED)
    out = tmp_path / "report"
    analysis_services.report_build(study=study, out_dir=out, pilot=True)

    trials = pd.read_csv(out / "data" / "trials.csv")
    scores = pd.read_csv(out / "data" / "scores.csv")
    answered = set(trials.loc[trials["design"] != "attention-check", "item_id"])
    assert len(answered) == 48 and trials["variant"].dropna().unique().tolist() == ["follow/yes-no"]
    pool = set(scores.loc[scores["variant"] == "follow/yes-no", "item_id"])
    assert len(pool) == 80 and answered < pool  # the people's phrasing: 80 items, 32 no person was shown

    frame = pd.read_csv(out / "data" / "model_frames" / f"{versus.KEY}.csv")
    models = frame[frame["agent"] != "human"].assign(item_id=lambda f: f["item"].str[1:].astype(int))
    assert set(models["item_id"]) == answered and len(models) == len(MODELS) * 48
    recomputed = scores[scores["item_id"].isin(answered)]
    for model, part in recomputed.groupby("model"):
        assert models.loc[models["agent"] == model, "correct"].mean() == pytest.approx(part["correct"].mean())
    sides = pd.read_csv(out / "tables" / f"{versus.KEY}_sides.csv").set_index("respondent")
    assert [sides.loc[m, "n_items"] for m in MODELS] == [48, 48]

    # model − human, refitted from the files on the items people answered, is the report's
    kept, _ = prep.apply_exclusions(trials[trials["design"] != "attention-check"], prep.Exclusions())
    closed = ItemsShown(item_ids=frozenset(int(i) for i in answered), source="the data files")
    factors = tuple(factors_of(study))
    assert factors == ("pair_role",)
    refit = fit_spec(versus.spec(StudyFrames(scores=scores, kept=kept, shown=closed), factors),
                     StudyFrames(scores=scores, kept=kept, shown=closed))
    reported = pd.read_csv(out / "tables" / f"{versus.KEY}_model_vs_human.csv").set_index("contrast")
    mine = refit.tables["model_vs_human"].set_index("contrast")
    assert list(mine.index) == list(reported.index)
    for contrast in mine.index:
        assert mine.loc[contrast, "estimate"] == pytest.approx(reported.loc[contrast, "estimate"], abs=1e-6)
    # on the 80 items of the phrasing (main's rule) the models' side, and so the contrast, is another
    wide = ItemsShown(item_ids=frozenset(int(i) for i in pool), source="the phrasing")
    other = fit_spec(versus.spec(StudyFrames(scores=scores, kept=kept, shown=wide), factors),
                     StudyFrames(scores=scores, kept=kept, shown=wide))
    assert other.tables["sides"].set_index("respondent").loc[MODELS[0], "n_items"] == 80
