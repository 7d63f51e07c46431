"""Which model runs a report reads (issue 15): the explicit run set of analysis.runs.

A `--limit 8` check run finished after a complete run once hid it (Table 1 n = 8). The rule as a pure
function first, then on a test database: frames, the report's runs table and CSV, the Report's
provenance fields, `analyze --runs`, report_request and the admin's run chooser.
"""
import datetime as dt
import re

import pandas as pd
import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from analysis import runs
from analysis.models import Report, ReportStatus

T0 = dt.datetime(2026, 11, 1, tzinfo=dt.timezone.utc)


def facts(run_id, lm, kind="items", status="done", partial=False, minutes=0, **more):
    return runs.RunFacts(run_id=run_id, configuration=f"lm-{lm}", language_model_id=lm, kind=kind, status=status,
                         partial=partial, item_limit=8 if partial else None, items_total=8 if partial else 96,
                         created_at=T0 + dt.timedelta(minutes=minutes),
                         finished_at=T0 + dt.timedelta(minutes=minutes + 1) if status == "done" else None, **more)


# --------------------------------------------------------------------------- the rule (pure)


def test_default_rule_the_latest_complete_run_per_configuration_and_kind():
    chosen = runs.choose([
        facts(1, 1, minutes=0), facts(2, 1, minutes=10), facts(3, 1, partial=True, minutes=20),
        facts(4, 1, status="failed", minutes=30), facts(5, 2, minutes=5), facts(6, 2, kind="multiple_choice"),
        facts(7, 1, kind="knowledge_probe", minutes=1), facts(8, 1, kind="knowledge_probe", partial=True, minutes=9),
    ], totals={"items": 96, "knowledge_probe": 40})
    by_id = {r.run_id: r for r in chosen}
    assert runs.used_ids(chosen) == [2, 5, 6] and runs.used_ids(chosen, kinds=[runs.PROBE]) == [7]
    assert by_id[1].why == "an earlier complete run of the same configuration (run 2 is used)"
    assert by_id[3].why == "partial: an item limit of 8 of 96 items; ask for it by id to use it"
    assert by_id[4].why == "status failed"
    assert by_id[7].why.startswith("knowledge probe: read by the sections of the designs it asks about (Rulebreakers)")
    assert by_id[8].why == "knowledge probe, partial: an item limit of 8 of 40 items; ask for it by id to use it"
    assert [r.run_id for r in chosen] == list(range(1, 9)) and not any(r.run_variation for r in chosen)


def test_the_scoring_kinds_are_inferences():
    from inference.selectors import SCORING_KINDS

    assert runs.SCORING == tuple(str(kind) for kind in SCORING_KINDS)


def test_finish_time_decides_before_the_id():
    chosen = runs.choose([facts(1, 1, minutes=30), facts(2, 1, minutes=0)])
    assert runs.used_ids(chosen) == [1]


def test_explicit_runs_are_exactly_those_and_bad_ones_are_refused_by_name():
    all_runs = [facts(1, 1), facts(2, 1, partial=True, minutes=5), facts(3, 2), facts(4, 2, status="failed"),
                facts(5, 1, kind="knowledge_probe")]
    chosen = runs.choose(all_runs, [2, 3, 3])
    assert runs.used_ids(chosen) == [2, 3]
    by_id = {r.run_id: r for r in chosen}
    assert by_id[2].why == "asked for by id (a partial run)" and by_id[1].why == "not asked for (runs asked for: 2 3)"
    assert by_id[5].used  # probes keep the default rule
    with pytest.raises(ValueError) as refused:
        runs.choose(all_runs, [4, 5, 99])
    message = str(refused.value)
    assert "run(s) 99 are not runs of the study" in message and "4 (failed) are not done" in message
    assert "5 (knowledge_probe) are not scoring runs" in message


def test_two_runs_of_one_configuration_over_the_same_items_are_never_mixed():
    all_runs = [facts(1, 1), facts(2, 1, partial=True, minutes=5), facts(3, 1, kind="multiple_choice")]
    with pytest.raises(runs.RunSelectionError, match="runs 1 and 2 are both of configuration 'lm-1' and score 8 of "
                                                     "the same items: two runs of one configuration over the same "
                                                     "items are never mixed"):
        runs.choose(all_runs, [1, 2], items={1: range(96), 2: range(8), 3: range(100, 110)})
    # other items (here: the configuration's multiple-choice run) are fine
    assert runs.used_ids(runs.choose(all_runs, [1, 3], items={1: range(96), 3: range(100, 110)})) == [1, 3]


def test_run_variation_reads_every_complete_run_of_a_configuration_in_use():
    all_runs = [facts(1, 1, kind="multiple_choice"), facts(2, 1, kind="multiple_choice", minutes=5),
                facts(3, 1, kind="multiple_choice", partial=True, minutes=9), facts(4, 2, kind="multiple_choice")]
    chosen = runs.choose(all_runs, multiple_choice=[1, 2, 3, 4])
    assert runs.used_ids(chosen) == [2, 4] and runs.variation_ids(chosen) == [1, 2, 4]
    assert chosen[0].why.endswith("read by the run-variation table (001 Table 2), which uses every complete run "
                                  "of a configuration")
    explicit = runs.choose(all_runs, [2], multiple_choice=[1, 2, 3, 4])
    assert runs.used_ids(explicit) == [2] and runs.variation_ids(explicit) == [1, 2]  # lm-2 not in use


def test_configurations_table_and_the_answer_mass_warning():
    chosen = runs.choose([facts(1, 1, prompt_format="raw", dtype="float32", answers=(" Yes", " No")),
                          facts(2, 2, prompt_format="chat", dtype="bfloat16", answers=("Yes", "No"),
                                answer_forms="all")])
    scores = pd.DataFrame({"run_id": [1, 1, 2, 2], "answer_mass": [0.8, 0.6, 0.1, 0.2],
                           "design": ["modal-syllogisms", "rulebreakers", "modal-syllogisms", "modal-syllogisms"],
                           "kind": "yes_no", "decision_rule": ["relative", "top_token", "relative", "relative"]})
    variants = pd.DataFrame({
        "run_id": [1, 1, 1, 2], "design": ["modal-syllogisms", "rulebreakers", "rulebreakers", "modal-syllogisms"],
        "answer_forms": ["answers", "cases", "cases", "all"],
        "variants": [{"yes": [" Yes"], "no": [" No"]}, {"yes": [" Yes", " yes", " YES"], "no": [" No", " no", " NO"]},
                     {"yes": [" True", " true", " TRUE"], "no": [" False", " false", " FALSE"]},
                     {"yes": ["Yes", "yes", "YES", " Yes", " yes", " YES"], "no": ["No", "no", "NO", " No", " no", " NO"]}]})
    table = runs.configurations(chosen, scores, variants).set_index("run_id")
    assert table.loc[1, "answers"] == "' Yes' / ' No'" and table.loc[2, "prompt_format"] == "chat"
    assert table.loc[1, "variants"] == (
        "modal-syllogisms: yes: ' Yes' | no: ' No' — the answers only, the paper's setting (003 §4.1: the tokens Yes "
        "and No only) · rulebreakers: yes: ' Yes', ' yes', ' YES' | no: ' No', ' no', ' NO'; yes: ' True', ' true', "
        "' TRUE' | no: ' False', ' false', ' FALSE' — the answers in three cases, the paper's setting (000 Eq. 4: p+(x) "
        "sums 'Yes', 'yes' and 'YES' ('True', 'true', 'TRUE' where the phrasing asks for true or false))")
    assert table.loc[2, "variants"].endswith("— every surface form (spacing × case), set by the configuration; the "
                                             "paper's: the answers only")
    assert table.loc[1, "decision_rules"] == (
        "modal-syllogisms: relative: p(Yes) vs p(No) (003 §4.1), the paper's setting (003 §4.1: the likelier of "
        "p(Yes | s) and p(No | s)); rulebreakers: top token over the whole vocabulary (000 §4.2), the paper's setting "
        "(000 §4.2: one forward pass per prompt 'to extract the most probable output token')")
    assert table.loc[1, "warning"] == "" and table.loc[2, "mean_answer_mass"] == pytest.approx(0.15)
    assert table.loc[2, "warning"].startswith("mean answer mass 0.15 < 0.5: the model mostly predicts other tokens: "
                                              "p(Yes) and p(No) are read from a small share of its distribution")


# --------------------------------------------------------------------------- on the database


def _copy_run(study, language_model, *, source=None, limit=None, status="done", minutes=1, mass=None, rule=None):
    """A run of `language_model` scoring the study's yes/no items (the first `limit` by id), its
    numbers copied from `source` (a run of the fixture) so that the fits stay well defined."""
    from inference.models import ModelRun, ModelScore

    total = study.items.filter(kind="yes_no").count()
    run = ModelRun.objects.create(
        study=study, language_model=language_model, status=status, item_limit=limit,
        items_total=min(limit or total, total), partial=bool(limit and limit < total),
        configuration=language_model.snapshot(), finished_at=timezone.now() + dt.timedelta(minutes=minutes),
    )
    source = source or ModelRun.objects.filter(study=study).order_by("pk").first()
    base = {s.item_id: s for s in source.scores.all()}
    items = list(study.items.filter(kind="yes_no").order_by("pk"))[:limit]
    scores = []
    for item in items:
        s = base[item.pk]
        scores.append(ModelScore(
            run=run, item=item, logprobs={}, token_ids={}, p_yes=s.p_yes, p_no=s.p_no,
            relative_p_yes=s.relative_p_yes, soft_accuracy=s.soft_accuracy, decision=s.decision,
            perplexity=s.perplexity, prompt_tokens=s.prompt_tokens, answer_mass=mass or s.answer_mass,
            variants={"yes": [language_model.answer_yes], "no": [language_model.answer_no]}, answer_forms="answers",
            decision_rule=rule or "relative", decision_relative=s.decision, top_answer="other",
        ))
    ModelScore.objects.bulk_create(scores)
    run.items_done = len(scores)
    run.save(update_fields=["items_done"])
    return run


@pytest.fixture
def study_with_check_run(make_study):
    """Two models with a complete run each; then a `--limit 8` check run of lm-1, finished last, and a
    failed run of lm-2."""
    from inference.models import LanguageModel

    study = make_study(models=2, participants=0)
    lm1, lm2 = LanguageModel.objects.get(name="lm-1"), LanguageModel.objects.get(name="lm-2")
    full = {lm.name: lm.runs.get().pk for lm in (lm1, lm2)}
    check = _copy_run(study, lm1, limit=8, minutes=60)
    failed = _copy_run(study, lm2, limit=4, status="failed", minutes=61)
    return study, full, check, failed


def test_a_check_run_after_a_full_run_leaves_table_1_unchanged(study_with_check_run):
    from analysis import frames, metrics

    study, full, check, failed = study_with_check_run
    chosen = runs.select_runs(study)
    assert runs.used_ids(chosen) == sorted(full.values())
    scores = frames.scores_frame(study)
    assert sorted(scores["run_id"].unique()) == sorted(full.values()) and len(scores) == 2 * 192
    table1 = metrics.table1(scores, pd.DataFrame())
    overall = table1[(table1["factor"] == "overall") & (table1["measure"] == "soft accuracy")].set_index("respondent")["n"]
    assert overall.to_dict() == {"lm-1": 96, "lm-2": 96}
    why = {r.run_id: r.why for r in chosen}
    assert why[check.pk] == "partial: an item limit of 8 of 192 items; ask for it by id to use it"
    assert why[failed.pk] == "status failed"
    new_columns = scores[["decision_rule", "decision_relative", "top_answer", "prompt_format"]]
    assert set(new_columns["prompt_format"]) == {"raw"} and set(new_columns["decision_rule"]) == {"relative"}
    assert (scores["correct"] == (scores["decision"] == scores["gold"]).astype(int)).all()


def test_the_report_names_the_runs_it_used_and_why_the_others_were_not(
        r_stack, study_with_check_run, settings, tmp_path, monkeypatch, django_capture_on_commit_callbacks):
    from analysis import services

    settings.DUET_TASK_MODE = "eager"
    monkeypatch.setattr("analysis.services.VAR_DIR", tmp_path)
    study, full, check, failed = study_with_check_run
    with django_capture_on_commit_callbacks(execute=True):
        report = services.report_request(study=study)
    report.refresh_from_db()
    assert report.status == ReportStatus.DONE, report.message
    assert report.runs_requested == [] and report.runs_used == sorted(full.values())
    assert report.n_scores == 2 * 192
    table = pd.read_csv(f"{report.out_dir}/tables/runs.csv").set_index("run_id")
    assert list(table.index) == sorted([*full.values(), check.pk, failed.pk])
    assert table.loc[check.pk, "used"] == False and table.loc[check.pk, "partial"] == True  # noqa: E712
    assert table.loc[check.pk, "why"].startswith("partial: an item limit of 8 of 192 items")
    table1 = pd.read_csv(f"{report.out_dir}/tables/table1_accuracy.csv")
    assert list(table1[(table1["factor"] == "overall") & (table1["measure"] == "soft accuracy")]["n"]) == [96, 96]
    html = (tmp_path / "reports" / study.slug / str(report.pk) / "report.html").read_text(encoding="utf-8")
    assert "2 of 4 run(s) used" in html and "ask for it by id to use it" in html and "Default rule:" in html
    assert "relative: p(Yes) vs p(No) (003 §4.1)" in html and "Configurations used" in html
    configurations = pd.read_csv(f"{report.out_dir}/tables/configurations.csv")
    assert list(configurations["configuration"]) == ["lm-1", "lm-2"]


def test_analyze_runs_uses_exactly_those_and_refuses_overlap(r_stack, study_with_check_run, tmp_path, capsys):
    study, full, check, failed = study_with_check_run
    asked = sorted([check.pk, full["lm-2"]])
    call_command("analyze", study.slug, "--out", str(tmp_path / "a"), "--runs", str(check.pk), str(full["lm-2"]))
    scores = pd.read_parquet(tmp_path / "a" / "data" / "scores.parquet")
    assert sorted(scores["run_id"].unique()) == asked and len(scores) == 8 + 192
    table = pd.read_csv(tmp_path / "a" / "tables" / "runs.csv").set_index("run_id")
    assert table.loc[check.pk, "why"] == "asked for by id (a partial run)"
    assert table.loc[full["lm-1"], "why"] == f"not asked for (runs asked for: {asked[0]} {asked[1]})"
    assert f"model runs used: {asked[0]}, {asked[1]}" in capsys.readouterr().out
    assert "Asked for by id" in (tmp_path / "a" / "report.html").read_text(encoding="utf-8")

    with pytest.raises(CommandError, match=rf"runs {full['lm-1']} and {check.pk} are both of configuration 'lm-1' "
                                           "and score 8 of the same items"):
        call_command("analyze", study.slug, "--out", str(tmp_path / "b"), "--runs", str(full["lm-1"]), str(check.pk))
    with pytest.raises(CommandError, match=rf"{failed.pk} \(failed\) are not done"):
        call_command("analyze", study.slug, "--out", str(tmp_path / "c"), "--runs", str(failed.pk))
    assert not (tmp_path / "b").exists() and not (tmp_path / "c").exists()


def test_report_request_validates_the_runs_before_queueing(study_with_check_run, make_study):
    from analysis import services

    study, full, check, failed = study_with_check_run
    other = make_study(models=1, participants=0)
    foreign = other.model_runs.get().pk
    with pytest.raises(ValueError, match=rf"run\(s\) {foreign} are not runs of study '{study.slug}'"):
        services.report_request(study=study, run_ids=[full["lm-1"], foreign])
    with pytest.raises(ValueError, match="never mixed"):
        services.report_request(study=study, run_ids=[full["lm-1"], check.pk])
    assert not Report.objects.exists()
    report = services.report_request(study=study, run_ids=[check.pk, full["lm-2"], check.pk])
    assert report.runs_requested == sorted([check.pk, full["lm-2"]]) and report.runs_used == []


def test_two_configurations_of_one_model_both_appear_with_their_answers_and_mass(
        r_stack, make_study, tmp_path):
    from analysis import frames
    from analysis import services
    from inference.models import LanguageModel

    study = make_study(models=1, participants=0)
    raw = LanguageModel.objects.create(name="tiny", source="test/tiny", backend="fake")
    chat = LanguageModel.objects.create(name="tiny [chat]", source="test/tiny", backend="fake", prompt_format="chat",
                                        answer_yes="Yes", answer_no="No")
    _copy_run(study, raw)
    _copy_run(study, chat, mass=0.2)
    scores = frames.scores_frame(study)
    formats = scores.groupby("model")["prompt_format"].unique().map(list).to_dict()
    assert formats == {"lm-1": ["raw"], "tiny": ["raw"], "tiny [chat]": ["chat"]}
    result = services.report_build(study=study, out_dir=tmp_path)
    configurations = pd.read_csv(tmp_path / "tables" / "configurations.csv").set_index("configuration")
    assert configurations.loc["tiny [chat]", "answers"] == "'Yes' / 'No'"
    assert configurations.loc["tiny [chat]", "variants"] == (
        "modal-syllogisms: yes: 'Yes' | no: 'No' — the answers only, the paper's setting (003 §4.1: the tokens Yes "
        "and No only)")
    assert configurations.loc["tiny", "prompt_format"] == "raw"
    assert configurations.loc["tiny [chat]", "mean_answer_mass"] == pytest.approx(0.2)
    html = result.html.read_text(encoding="utf-8")
    assert "the model mostly predicts other tokens: p(Yes) and p(No) are read from a small share" in html
    assert any(w.startswith("tiny [chat] (run ") for w in result.warnings)
    table1 = pd.read_csv(tmp_path / "tables" / "table1_accuracy.csv")
    assert set(table1["respondent"]) == {"lm-1", "tiny", "tiny [chat]"}


def test_admin_chooser_checks_the_default_rule_and_records_a_choice(
        study_with_check_run, admin_client, monkeypatch):
    monkeypatch.setattr("common.jobs.job_dispatch", lambda job: None)  # queued, not built
    study, full, check, failed = study_with_check_run
    page = admin_client.post("/admin/experiments/study/",
                             {"action": "run_analysis", "_selected_action": [study.pk]}).content.decode()
    checkboxes = dict(re.findall(r'name="runs" value="(\d+)"\s+id="run-\d+"( checked)?', page))
    assert checkboxes == {str(full["lm-1"]): " checked", str(full["lm-2"]): " checked", str(check.pk): ""}
    assert "partial: an item limit of 8 of 192 items" in page and "status failed" in page
    assert not Report.objects.exists()

    def confirm(chosen):
        return admin_client.post("/admin/experiments/study/", {
            "action": "run_analysis", "_selected_action": [study.pk], "confirm": "yes", "runs": chosen}, follow=True)

    confirm([full["lm-1"], full["lm-2"]])  # the default rule's runs, as checked
    assert Report.objects.get().runs_requested == []
    confirm([check.pk, full["lm-2"]])
    assert Report.objects.order_by("pk").last().runs_requested == sorted([check.pk, full["lm-2"]])
    response = confirm([full["lm-1"], check.pk])
    assert "never mixed" in response.content.decode() and Report.objects.count() == 2
    response = confirm([])
    assert "no model run checked" in response.content.decode() and Report.objects.count() == 2
    listing = admin_client.get("/admin/analysis/report/").content.decode()
    asked = sorted([check.pk, full["lm-2"]])
    assert f"asked: {asked[0]} {asked[1]}" in listing and "default rule" in listing
