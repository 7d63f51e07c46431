"""The researcher-facing management commands."""
from __future__ import annotations

import csv
import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from experiments.models import Item, Study


def test_check_argument_valid_and_invalid_with_countermodel(capsys):
    call_command("check_argument", "[](p|q), <>~p |- <>q", "--system", "K")
    assert "□(p ∨ q), ◇¬p ⊢ ◇q  is valid in K" in capsys.readouterr().out
    call_command("check_argument", "p ⊢ ◇p", "--system", "K")
    out = capsys.readouterr().out
    assert "p ⊢ ◇p  is invalid in K" in out
    assert "Countermodel" in out and "w0" in out


def test_check_argument_json_countermodel_falsifies(capsys):
    call_command("check_argument", "□(p∨q) ⊢ □p ∨ □q", "--system", "S5", "--json")
    verdict = json.loads(capsys.readouterr().out)
    assert verdict["valid"] is False and verdict["system"] == "S5"
    assert verdict["countermodel"] is not None


def test_check_argument_bad_input_is_a_clear_error():
    with pytest.raises(CommandError, match="column"):
        call_command("check_argument", "p ∨ ⊢ q")
    with pytest.raises(CommandError, match="S5"):
        call_command("check_argument", "p ⊢ p", "--system", "KD45")


@pytest.mark.django_db
def test_generate_items_creates_study_warns_and_exports(tmp_path, capsys):
    path = tmp_path / "items.csv"
    call_command(
        "generate_items", "modal-distribution", "--study", "dist", "--interpretations", "3",
        "--seed", "9", "--export", str(path),
    )
    captured = capsys.readouterr()
    assert "Generated 21 items" in captured.out and "Created study 'dist'" in captured.out
    assert "WARNING checker disagrees with the template: dia.theorem" in captured.err
    rows = list(csv.DictReader(path.open(encoding="utf-8")))
    assert len(rows) == 21
    assert {r["checker_disagrees"] for r in rows if r["form_id"] == "dia.theorem"} == {"TRUE"}  # logical in R and pandas
    assert {r["argform_code"] for r in rows} <= {"base", "theorem", "spurious"} and rows[0]["modality_code"] in ("none", "box", "dia")
    assert Study.objects.get(slug="dist").items.count() == 21


@pytest.mark.django_db
def test_generate_items_refusal_changes_nothing():
    call_command("generate_items", "necessitation", "--study", "nec", "--interpretations", "2")
    with pytest.raises(CommandError, match="--replace"):
        call_command("generate_items", "necessitation", "--study", "nec", "--interpretations", "5")
    assert Item.objects.filter(study__slug="nec").count() == 6
    with pytest.raises(CommandError, match="at least 1"):
        call_command("generate_items", "necessitation", "--study", "new-one", "--interpretations", "0")
    assert not Study.objects.filter(slug="new-one").exists()


@pytest.mark.parametrize("system", ["K", "T", "S4", "S5"])
def test_check_argument_decides_either_consequence_relation(system):
    """003 §3.1's ⊢ (with necessitation) is global consequence: p ⊢ □p; locally it has a countermodel."""
    out = StringIO()
    call_command("check_argument", "p |- []p", "--system", system, "--consequence", "global", stdout=out)
    assert f"p ⊢ □p  is valid in {system} (global consequence)" in out.getvalue()
    out = StringIO()
    call_command("check_argument", "p |- []p", "--system", system, "--consequence", "local", stdout=out)
    assert f"is invalid in {system} (local consequence)" in out.getvalue() and "Countermodel" in out.getvalue()
    out = StringIO()
    call_command("check_argument", "<>(~p -> q), <>~p |- <>q", "--system", system, "--consequence", "global",
                 "--json", stdout=out)
    verdict = json.loads(out.getvalue())
    assert verdict["valid"] is False and verdict["consequence"] == "global" and verdict["countermodel"]
    with pytest.raises(CommandError, match="choose one of local, global"):
        call_command("check_argument", "p |- p", "--consequence", "strict", stdout=StringIO())
