"""schema.Rows: each column says how it is read (issue 29 item 3); the checks on a declaration and
the reading itself, on plain values (the byte-for-byte check of every export is test_export_golden.py)."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from experiments import schema


def test_every_column_of_every_table_says_how_it_is_read():
    for name, columns in schema.TABLES.items():
        unread = [c.name for c in columns if not (c.source or c.derive)]
        assert unread == (["prompt_format"] if name == "scores" else []), name  # by run: analysis.frames gives it
    with pytest.raises(ValueError, match="no way to read prompt_format: give it"):
        schema.Rows(schema.SCORE)
    with pytest.raises(ValueError, match="no such column: nope"):
        schema.Rows(schema.TRIAL, given={"nope": (("study",), str)})
    with pytest.raises(ValueError, match="read from its source or derived, not both"):
        schema.Column("x", "string", "x", source="a", derive=str, uses=("b",))
    with pytest.raises(ValueError, match="names the columns it uses"):
        schema.Column("x", "string", "x", derive=str)
    with pytest.raises(ValueError, match="uses modality_code, which is not read from the database"):
        schema.Rows(schema.ITEM, given={"valid": (("modality_code",), str)})


def test_a_trial_row_reads_through_the_item_and_derives_the_codes():
    rows = schema.Rows(schema.TRIAL)
    assert "item__argument_form" in rows.lookups and "participant__study__slug" in rows.lookups
    values = {path: None for path in rows.lookups} | {
        "participant_id": 7, "participant__is_preview": 0, "correct": True, "item__design": "modal-syllogisms",
        "item__gold_answer": "no", "item__modality": "□", "item__argument_form": "→ᴿ⊬", "item__options": ["a", "b"],
    }
    row = dict(zip(rows.names, rows.row(tuple(values[p] for p in rows.lookups))))
    assert row["participant"] == "P7" and row["is_preview"] is False and row["correct"] == 1
    assert (row["modality_code"], row["argform_code"], row["valid"], row["options"]) == ("box", "DA", False, "a | b")


def test_an_item_bank_row_reads_an_item_without_interpretation_or_original():
    item = SimpleNamespace(code="i1", design="csv-import", form_id="", modality="dia", argument_form="∨⊢",
                           logical_form="p ⊢ p", template_valid=None, gold_answer="yes", logic_system="S5",
                           consequence="local", gold_other="yes", checker_disagrees=False, condition="real",
                           original=None, interpretation=None)
    row = dict(zip(schema.names(schema.ITEM_BANK), schema.Rows(schema.ITEM_BANK).from_object(item)))
    assert row["modality_code"] == "dia" and row["argform_code"] == "DS"
    assert (row["template_valid"], row["checker_disagrees"], row["original_item_id"], row["q_predicate"]) == (
        "", "FALSE", "", "")


def test_the_simulator_builds_its_rows_without_django():
    """designs.modal.simulate (bench/analysis.py, the power tests) reads the schema but needs no settings."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    code = ("import sys; from designs.modal import simulate; simulate.scores(n_models=1, n_interpretations=1); "
            "simulate.trials(n_participants=2); sys.exit('django.apps' in sys.modules and "
            "__import__('django.apps').apps.apps.ready)")
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
    done = subprocess.run([sys.executable, "-c", code], cwd=Path(__file__).resolve().parents[2], env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
