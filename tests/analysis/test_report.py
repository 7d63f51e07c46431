"""The report on a study with only models, only humans, and both (Django test db + factories)."""
import re

import pandas as pd
import pytest
from django.core.management import CommandError, call_command

from analysis.models import Report, ReportStatus


def _html(folder):
    return (folder / "report.html").read_text(encoding="utf-8")


def test_report_with_only_model_runs(r_stack, make_study, tmp_path, capsys):
    study = make_study(models=3, participants=0, appendix=True)
    call_command("analyze", study.slug, "--out", str(tmp_path))
    html = _html(tmp_path)
    assert "Eq. (4)" in html and "data:image/png;base64," in html and "Warnings from R" in html
    assert "Eq. (6): human accuracy on valid items (binomial GLMM) (needs kept valid modal-syllogism trials from at least 2 participants" in html
    assert "Humans and models in one model (needs both human trials and model scores" in html
    assert "Not shown" not in html and "not shown" not in html
    for name in ("eq4_hypotheses", "eq4_lrt", "eq4_random_effects", "eq5_emmeans_modality",
                 "sequents_sequent_means", "necessitation_pairs_modality",
                 "distribution_pairs_argform_by_modality", "table1_accuracy"):
        assert (tmp_path / "tables" / f"{name}.csv").exists(), name
    scores = pd.read_parquet(tmp_path / "data" / "scores.parquet")
    assert len(scores) == 3 * (192 + 3 * 6 + 7 * 6) and set(scores["model"]) == {"lm-1", "lm-2", "lm-3"}
    assert pd.read_csv(tmp_path / "data" / "scores.csv").shape == scores.shape
    necessitation = pd.read_csv(tmp_path / "tables" / "necessitation_emmeans_modality.csv")
    assert set(necessitation["modality"]) == {"none", "box", "dia"}
    # C.1 is keyed as the paper keys it (global consequence) and fitted again under local consequence,
    # which keys {p} ⊢ □p the other way (issue 16); the report says both
    local = pd.read_csv(tmp_path / "tables" / "necessitation_emmeans_modality_local_key.csv").set_index("modality")
    paper = necessitation.set_index("modality")
    assert abs(local.loc["box", "estimate"] - (1 - paper.loc["box", "estimate"])) < 0.05
    assert "keyed by global consequence" in html and "fitted under both keys" in html
    assert set(scores.loc[scores["form_id"] == "box.necessitation", "gold_other"]) == {"no"}
    assert "invalid under local and global consequence alike" in html  # C.2's ◇ theorem
    table1 = pd.read_csv(tmp_path / "tables" / "table1_accuracy.csv")
    assert "human" not in set(table1["respondent"])
    overall = table1[(table1["factor"] == "overall") & (table1["measure"] == "soft accuracy")]
    assert list(overall["n"]) == [96, 96, 96]  # primary items only: no nonsense mirror, no Appendix C
    assert "fitted on" in capsys.readouterr().out


def test_report_with_only_humans(r_stack, make_study, tmp_path):
    study = make_study(models=0, participants=12)
    call_command("analyze", study.slug, "--out", str(tmp_path))
    html = _html(tmp_path)
    assert "(needs valid modal-syllogism scores from at least 2 models" in html
    assert "Not shown" not in html and "not shown" not in html
    # Appendix C is a design of its own: named once, in one line, with no section here
    assert html.count("Analyses of other designs, in the reports of studies that have them: Appendix C.1: "
                      "necessitation, Appendix C.2: distribution of modalities.") == 1
    assert "<h2 id='necessitation'>" not in html and "<h2 id='distribution'>" not in html
    assert "Sampling unit:</strong> one kept trial; a participant" in html  # Eq. 6 states its unit
    assert "(needs model scores on both real items and their nonsense mirror)" in html
    exclusions = pd.read_csv(tmp_path / "tables" / "exclusions.csv").set_index("rule")
    assert exclusions.loc["preview session", "trials_removed"] == 1
    trials = pd.read_parquet(tmp_path / "data" / "trials.parquet")
    assert len(trials) == 12 * 24 + 1 and trials["participant"].str.match(r"^P\d+$").all()
    pids = list(study.participants.values_list("prolific_pid", flat=True))
    assert len(pids) == 13 and not any(pid in html for pid in pids)  # pseudonymous labels only
    lrt = pd.read_csv(tmp_path / "tables" / "eq6_lrt.csv")
    assert list(lrt["term"]) == ["modality", "argform", "rt_z"]
    means = pd.read_csv(tmp_path / "tables" / "eq6_emmeans_argform.csv")
    assert means["estimate"].between(0, 1).all()


def test_admin_action_builds_the_report_with_both(r_stack, make_study, admin_client, settings, tmp_path,
                                                  monkeypatch, django_capture_on_commit_callbacks):
    settings.DUET_TASK_MODE = "eager"
    monkeypatch.setattr("analysis.services.VAR_DIR", tmp_path)  # report files under the test's folder
    study = make_study(models=2, participants=10, model_noise=0.5)  # no separation: glmer fits, not blme (slower)
    runs = sorted(study.model_runs.values_list("pk", flat=True))
    chooser = admin_client.post("/admin/experiments/study/", {"action": "run_analysis", "_selected_action": [study.pk]})
    page = chooser.content.decode()  # first the study's runs, the default rule's checked; nothing queued yet
    checked = re.findall(r'name="runs" value="(\d+)"\s+id="run-\d+" checked', page)
    assert sorted(map(int, checked)) == runs, page
    assert not Report.objects.exists()
    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post("/admin/experiments/study/", {
            "action": "run_analysis", "_selected_action": [study.pk], "confirm": "yes", "runs": runs}, follow=True)
    assert response.status_code == 200
    report = Report.objects.get(study=study)
    assert report.status == ReportStatus.DONE, report.message
    assert report.runs_requested == [] and report.runs_used == runs  # the default rule's runs, recorded
    assert report.n_scores == 2 * 192 and report.n_trials == 10 * 24 + 1
    page = admin_client.get(f"/admin/analysis/report/{report.pk}/report.html")
    html = b"".join(page.streaming_content).decode()
    assert "Humans and models in one model" in html and "model_vs_human_by_modality" in html
    assert "lm-1" in html and "lmerTest" in html  # runs that went in; R package versions
    archive = admin_client.get(f"/admin/analysis/report/{report.pk}/files.zip")
    assert archive["Content-Type"] == "application/zip" and len(archive.content) > 10_000
    assert report.out_dir.startswith(str(tmp_path))
    contrasts = pd.read_csv(f"{report.out_dir}/tables/agents_model_vs_human_by_argform.csv")
    assert len(contrasts) == 2 * 6


def test_bad_input_is_refused_and_changes_nothing(db, make_study, tmp_path):
    with pytest.raises(CommandError, match="No study"):
        call_command("analyze", "no-such-study", "--out", str(tmp_path / "x"))
    study = make_study(models=0, participants=0)
    study.settings = {"analysis_exclusions": {"rt_min": 100}}
    study.save()
    with pytest.raises(CommandError, match="Unknown analysis_exclusions"):
        call_command("analyze", study.slug, "--out", str(tmp_path / "y"))
    with pytest.raises(CommandError, match="Give a study"):
        call_command("analyze", study.slug)
    assert not (tmp_path / "x").exists() and not (tmp_path / "y").exists()
    from analysis import services

    with pytest.raises(ValueError):
        services.report_request(study=study)
    assert not Report.objects.exists()


@pytest.mark.db_independent
def test_the_participants_kept_are_listed_in_their_ids_order_not_as_text():
    """"Participants kept" read P10, P11, P2, P5 (text order); the pseudonyms sort by their ids."""
    from analysis.report import kept_participants
    from experiments.schema import pseudonym_order

    kept = pd.DataFrame({"participant": ["P10", "P5", "P2", "P10", "P11", "P100", "P5"]})
    assert kept_participants(kept) == ["P2", "P5", "P10", "P11", "P100"]
    assert kept_participants(kept.iloc[0:0]) == []
    assert sorted(["P3", "bot", "P21", "Pilot"], key=pseudonym_order) == ["P3", "P21", "Pilot", "bot"]
