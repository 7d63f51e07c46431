"""Issue 47 item 5, end to end: a RULEBREAKERS study piloted with a built-in effect (simulate_participants
--accuracy-by pair_role=rulebreaker:0.35 --accuracy-by pair_role=non-rulebreaker:0.95) shows it in its pilot
report, and its power analysis estimates that effect among people beside each model − human contrast."""
from __future__ import annotations

import pandas as pd
import pytest
from django.core.management import call_command

pytestmark = pytest.mark.django_db

EFFECT = ["--accuracy-by", "pair_role=rulebreaker:0.35", "--accuracy-by", "pair_role=non-rulebreaker:0.95"]


def piloted(slug: str, *, people: int = 8):
    from experiments.models import Study

    call_command("generate_items", "rulebreakers", slug, "--pairs", "24", "--seed", "3")
    call_command("simulate_participants", slug, "--n", str(people), "--seed", "5", *EFFECT)
    return Study.objects.get(slug=slug)


def test_a_pilot_with_a_built_in_effect_shows_it_in_its_report(r_stack, tmp_path):
    from inference.models import LanguageModel

    study = piloted("rb-effect")
    LanguageModel.objects.create(name="fake-raw", source="test/fake", backend="fake")
    call_command("run_model", study.slug, "--model", "fake-raw", "--device", "cpu", "--no-progress")
    call_command("analyze", study.slug, "--pilot", "--out", str(tmp_path))
    table1 = pd.read_csv(tmp_path / "tables" / "table1_accuracy.csv")
    people = table1[(table1["respondent"] == "human") & (table1["factor"] == "pair_role")].set_index("level")
    assert abs(people.loc["rulebreaker", "accuracy"] - 0.35) < 0.12
    assert abs(people.loc["non-rulebreaker", "accuracy"] - 0.95) < 0.06
    # the report's GLMM (humans vs the model by pair_role): the people's probability correct on each level
    means = pd.read_csv(tmp_path / "tables" / "humans_vs_models_emmeans_agent_by_pair_role.csv")
    human = means[means["agent"] == "human"].set_index("pair_role")["estimate"]
    assert human["non-rulebreaker"] - human["rulebreaker"] > 0.45  # the built-in 0.60, right sign and size
    assert abs(human["rulebreaker"] - 0.35) < 0.12
    # the people's own model by pair_role (analysis/people_effects.py, what the power analysis simulates): a section
    # of its own, titled, listed in the contents, with its sentence of explanation and its contrast
    from html import escape

    from analysis import people_effects

    html = (tmp_path / "report.html").read_text(encoding="utf-8")
    title = escape("The people's own effect of pair_role (binomial GLMM, people only)")
    assert f"<li><a href='#people_effect_pair_role'>{title}</a></li>" in html
    assert f"<h2 id='people_effect_pair_role'>{title}</h2>" in html
    assert escape(people_effects.explanation("pair_role")) in html
    assert "correct ~ pair_role + (1 | participant) + (1 | family) + (1 | item)" in html  # a pair is a family
    (contrast,) = pd.read_csv(tmp_path / "tables" / "people_effect_pair_role_pair_role_vs_reference.csv").itertuples()
    assert contrast.contrast == "rulebreaker - (non-rulebreaker)" and -0.75 < contrast.estimate < -0.45
    assert (tmp_path / "data" / "model_frames" / "people_effect_pair_role.csv").exists()


@pytest.mark.postgres_only  # R-bound like test_power's command test: the database only keeps the analysis
def test_the_power_analysis_estimates_the_built_in_effect_among_people(r_stack, tmp_path, capsys):
    from analysis.models import PowerAnalysis
    from inference.models import LanguageModel

    study = piloted("rb-power")
    LanguageModel.objects.create(name="fake-raw", source="test/fake", backend="fake")
    call_command("run_model", study.slug, "--model", "fake-raw", "--device", "cpu", "--no-progress")
    capsys.readouterr()
    call_command("estimate_sample_size", study.slug, "--sizes", "8", "--nsim", "10", "--out", str(tmp_path / "p"))
    printed = capsys.readouterr().out
    assert "the people's effects by pair_role: 10 simulated studies each" in printed, printed
    assert "pair_role (people) all, rulebreaker - non-rulebreaker: " in printed
    curve = pd.read_csv(tmp_path / "p" / "power_curve.csv")
    people = curve[curve["effect"] == "people"].set_index("contrast")
    assert people.loc["rulebreaker - non-rulebreaker", "power"] >= 0.9
    assert set(curve.loc[curve["effect"] == "model - human", "contrast"]) == {"fake-raw - human"}
    analysis = PowerAnalysis.objects.get(study=study)
    assert (analysis.done, analysis.total) == (20, 20)
    (row,) = analysis.pilot_summary["people"]
    assert -0.75 < row["pilot_estimate"] < -0.45  # the pilot's built-in 0.35 − 0.95
    from analysis.power import power_section

    section = power_section(analysis)  # the report's section of it (analyze adds the study's latest)
    assert set(section.tables["people"]["contrast"]) == {"rulebreaker - non-rulebreaker"}
    assert any(note.startswith("The people's own effects") and "simulated from the pilot's fit" in note
               for note in section.notes)


def test_a_stated_effect_that_does_not_fit_the_study_is_refused_and_nothing_queued(admin_client):
    """--effect-by (and the power form's field) goes through the pilot's parser and study check, and must name
    every level of the factor: refused with the message before anything is queued."""
    from django.core.management import CommandError

    from analysis.models import PowerAnalysis
    from experiments.models import Study

    call_command("generate_items", "rulebreakers", "rb-stated", "--pairs", "24", "--seed", "3")
    study = Study.objects.get(slug="rb-stated")
    for flags, message in [
        (["pair_role:0.5"], "--effect-by FACTOR=LEVEL:ACCURACY: 'pair_role:0.5' is not FACTOR=LEVEL:ACCURACY"),
        (["pair_role=rulebreaker:1.5"], "an accuracy is a probability between 0 and 1"),
        (["pair_role=rulebreaker:0.5"], "pair_role: name every level (missing non-rulebreaker)"),
        (["modality=box:0.5"], "'modality' is not one of the study's declared factors (pair_role)"),
    ]:
        with pytest.raises(CommandError) as refused:
            call_command("estimate_sample_size", study.slug, "--sizes", "4", "--nsim", "10",
                         *[part for flag in flags for part in ("--effect-by", flag)])
        assert message in str(refused.value), (flags, str(refused.value))
    page = admin_client.post("/admin/experiments/study/", {
        "action": "estimate_sample_size", "_selected_action": [study.pk], "confirm": "yes", "sizes": "4",
        "nsim": "10", "alpha": "0.05", "target": "0.8", "seed": "0", "stated": "pair_role=rulebreaker:0.5"}).content
    assert b"People&#x27;s effect (stated)" in page or b"People's effect (stated)" in page
    assert b"rb-stated: --effect-by FACTOR=LEVEL:ACCURACY: pair_role: name every level (missing non-rulebreaker)" \
        in page
    assert not PowerAnalysis.objects.exists()
