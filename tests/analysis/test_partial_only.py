"""Issue 25: `analyze` on a study whose only model run is partial (a `--limit` check run) writes a
report naming the runs it left out, for every design, with no traceback.

Once `generate_items rulebreakers s --pairs 400; run_model s --model smollm2 --limit 40; analyze s`
stopped with "cannot reindex on an axis with duplicate labels" in analysis/paired_people.py: no run
was used, and the empty frame of answers had duplicate columns. Each study here is built with the
project's commands, scored by the fake scorer (inference/scorers/fake.py) through the one run loop
with an item limit, as `run_model --limit` does, and analysed with `manage.py analyze`.
"""
from __future__ import annotations

import pandas as pd
import pytest
from django.core.management import call_command

MC_CONTEXT = "A crowd of people waits in line at a bus terminal while a man reads the timetable aloud."
MC_QUESTION = "Given the information provided, which conclusion is least likely to be accurate?"


def _mc_bank(path):
    rows = ["id,context,question,option_a,option_b,option_c,option_d,answer,type,source"]
    for k in range(6):
        options = ",".join(f'"Option {k}-{letter}"' for letter in "abcd")
        rows.append(f'q{k},"{MC_CONTEXT}","{MC_QUESTION}",{options},{"ABCD"[k % 4]},3c1e,test')
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")


def _yes_no_bank(path):
    rows = ["item_id,premise_1,premise_2,question,gold_answer,domain"]
    for k in range(12):
        rows.append(f"b{k},Ann is baking cake {k} or Bo is painting fence {k}.,Ann isn't baking cake {k}.,"
                    f"Can we infer that Bo is painting fence {k}?,{'yes' if k % 3 else 'no'},{'food' if k % 2 else 'art'}")
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")


def _dual_sided_bank(path):
    path.write_text("premise,conclusion,flipped_conclusion,domain\n" + "".join(
        f"Thing {k} is heated,Thing {k} expands,Thing {k} does not expand,{'hot' if k % 2 else 'cold'}\n"
        for k in range(10)), encoding="utf-8")


def build(design: str, slug: str, tmp_path) -> None:
    """The study of one design, made with the project's own commands."""
    if design in ("modal-syllogisms", "necessitation", "modal-distribution"):
        call_command("generate_items", design, slug, "--interpretations", "2")
    elif design == "rulebreakers":
        call_command("generate_items", "rulebreakers", slug, "--pairs", "40")
    elif design == "perturbation":
        call_command("generate_items", "rulebreakers", slug, "--pairs", "12", "--variants", "follow/yes-no")
        call_command("perturb_items", slug, "names")
    elif design == "dual-sided":
        _dual_sided_bank(tmp_path / "rules.csv")
        call_command("import_items", "dual-sided", str(tmp_path / "rules.csv"), slug, "--templates", "1", "2")
    elif design == "multiple-choice":
        _mc_bank(tmp_path / "mc.csv")
        call_command("import_items", "multiple-choice", str(tmp_path / "mc.csv"), slug)
    elif design == "csv-bank":
        _yes_no_bank(tmp_path / "bank.csv")
        call_command("import_items", str(tmp_path / "bank.csv"), "--study", slug)
    else:  # pragma: no cover
        raise AssertionError(design)


def partial_run(study, limit: int):
    """A `run_model --limit` run of the fake scorer, run to the end through the one run loop."""
    from inference import services
    from inference.models import LanguageModel
    from inference.tasks import run_model_task

    lm, _ = LanguageModel.objects.get_or_create(name="fake", defaults={"source": "/nowhere", "backend": "fake",
                                                                       "device": "cpu"})
    run = services.model_run_create(study=study, language_model=lm, item_limit=limit, batch_size=8)
    assert run.partial
    assert run_model_task.apply(args=[run.pk]).get() == "done"
    return run


DESIGNS = ["modal-syllogisms", "necessitation", "modal-distribution", "rulebreakers", "dual-sided", "perturbation",
           "multiple-choice", "csv-bank"]


@pytest.mark.django_db
@pytest.mark.parametrize("design", DESIGNS)
def test_only_a_partial_run_gives_a_report_that_names_it(design, tmp_path, monkeypatch, capsys):
    from experiments.models import Study

    monkeypatch.setattr("analysis.report._versions", lambda: {"Python": "test"})
    slug = f"partial-{design}"
    build(design, slug, tmp_path)
    study = Study.objects.get(slug=slug)
    run = partial_run(study, limit=5)
    out = tmp_path / "report"
    call_command("analyze", slug, "--out", str(out))
    printed = capsys.readouterr().out
    assert "model runs used: none" in printed
    assert f"no complete model run is used; left out: {run.pk} (partial: an item limit of 5 of " in printed
    html = (out / "report.html").read_text(encoding="utf-8")
    assert f"run {run.pk}" in html.lower() or f">{run.pk}<" in html
    table = pd.read_csv(out / "tables" / "runs.csv")
    left = table[table["run_id"] == run.pk].iloc[0]
    assert not left["used"] and left["why"].startswith("partial: an item limit of 5 of ")
    assert "No complete model run is used" in html and f"run {run.pk} (partial: an item limit of 5 of" in html
