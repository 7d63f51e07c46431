"""The report on generated answers (issue 28): the unparseable share per run, counted from the stored
samples, and each item's p(Yes) estimate with its Wilson interval over its own samples."""
from __future__ import annotations

import pandas as pd
import pytest
from django.core.management import call_command

from analysis import generated
from analysis.html import _section
from logic.answer_parsing import wilson
from experiments.models import Study
from inference import services
from inference.models import GeneratedAnswer, ModelScore
from inference.tasks import run_model_task

pytestmark = pytest.mark.django_db

RULES = "premise,conclusion,flipped_conclusion\n" + "".join(
    f"Metal bar {k} is heated,Metal bar {k} expands,Metal bar {k} does not expand\n" for k in range(6))


@pytest.fixture
def generated_run(tmp_path):
    bank = tmp_path / "rules.csv"
    bank.write_text(RULES, encoding="utf-8")
    call_command("import_items", "dual-sided", str(bank), "gen-report", "--templates", "1")
    study = Study.objects.get(slug="gen-report")
    lm = services.language_model_create(name="fake-sampled", source="/fake/s", backend="fake", device="cpu",
                                        decision_rule="generated", sampling="sampled", samples=4, seed=1)
    run = services.model_run_create(study=study, language_model=lm)
    assert run_model_task.apply(args=[run.pk]).get() == "done"
    return study, run


def test_the_section_counts_unparseable_answers_from_the_stored_samples(generated_run):
    study, run = generated_run
    section = generated.section([run.pk])
    row = section.tables["runs"].iloc[0]
    samples = GeneratedAnswer.objects.filter(score__run=run)
    other = samples.filter(parsed="other").count()
    assert (row["items"], row["samples_per_item"], row["samples"]) == (12, 4, 48) and samples.count() == 48
    assert row["unparseable"] == other > 0 and row["unparseable_share"] == pytest.approx(other / 48)
    assert (row["unparseable_low"], row["unparseable_high"]) == pytest.approx(wilson(other, 48))
    assert row["samples_with_thinking"] == samples.exclude(thinking="").count()
    assert (row["prompt"], row["parser"], row["sampling"]) == ("two-shot-cot", "first_word", "sampled")
    items = section.tables["items"]
    for score in ModelScore.objects.filter(run=run).select_related("item"):
        mine = items[items["item"] == score.item.code].iloc[0]
        yes = score.generated_answers.filter(parsed="yes").count()
        assert mine["p_yes"] == score.p_yes == yes / 4
        assert (mine["p_yes_low"], mine["p_yes_high"]) == pytest.approx(wilson(yes, 4))
    html = _section(section)
    assert f"Unparseable answers: {other} of 48 samples ({other / 48:.1%})" in html
    assert "Sampling unit:</strong> one generated sample" in html


def test_no_section_without_generated_answers(generated_run):
    study, _ = generated_run
    lm = services.language_model_create(name="fake-logprob", source="/fake/l", backend="fake", device="cpu")
    run = services.model_run_create(study=study, language_model=lm)
    run_model_task.apply(args=[run.pk])
    assert generated.section([run.pk]) is None


def test_the_report_shows_the_unparseable_share(generated_run, tmp_path, monkeypatch):
    study, run = generated_run
    monkeypatch.setattr("analysis.report._versions", lambda: {"Python": "test"})
    out = tmp_path / "report"
    call_command("analyze", study.slug, "--out", str(out))
    html = (out / "report.html").read_text(encoding="utf-8")
    other = GeneratedAnswer.objects.filter(score__run=run, parsed="other").count()
    assert "Generated answers (decision rule &#x27;generated&#x27;)" in html or "Generated answers" in html
    assert f"Unparseable answers: {other} of 48 samples" in html
    table = pd.read_csv(out / "tables" / "generated_runs.csv")
    assert table.loc[0, "unparseable"] == other
