"""Every export, byte for byte, against golden files made before the rows were derived from the
schema (issue 29 item 3): the admin's trial CSV (with and without Prolific IDs), the report's
data/trials, scores and items as CSV and Parquet with its data-file codebook, the item bank CSV
(generate_items --output), the analysis frames (trials, scores, multiple-choice runs, answer
variants; an empty study's too) and the simulator's frames. The fixture is one deterministic study (below) holding every
kind of item the schema describes; tests/data/README.md says at which commit the files were made.

To remake the files after a deliberate change of an export: DUET_WRITE_GOLDEN=1 and run this test,
then review the diff of tests/data/exports/ and say why in the commit."""
from __future__ import annotations

import datetime as dt
import io
import os
from pathlib import Path

import pandas as pd
import pytest
from django.core.management import call_command

from analysis import frames, report
from designs.modal import simulate
from designs.modal.items import items_generate
from designs.csv_bank.items import items_import_csv
from experiments import selectors
from experiments.item_csv import write_items_csv
from experiments.models import Item, ItemKind, Participant, ParticipantStatus, Study, Trial
from experiments.participation.admin_views import trials_csv_response
from inference import services
from inference.models import RunStatus

GOLDEN = Path(__file__).resolve().parents[1] / "data" / "exports"
BANK = """item_id,premise_1,premise_2,question,logical_form,consequence,template_valid,modality,argument_form,entityA
bank-1,Either the lamp is on or the fan is on.,The lamp is not on.,Can we infer that the fan is on?,"p ∨ q, ¬p ⊢ q",,true,none,∨⊢,lamp
bank-2,It must be that the door is open.,,Can we infer that the door is open?,□p ⊢ p,global,false,box,,"=door"
bank-3,The cat sleeps.,,Can we infer that the dog barks?,p ⊢ q,,,dia,,cat
"""
T0 = dt.datetime(2026, 1, 2, 3, 4, 5, 678000, tzinfo=dt.UTC)


def _study() -> Study:
    """Rulebreakers (2 pairs, one phrasing), modal syllogisms with their nonsense mirror, a CSV
    bank, a dual-sided item, a catch item and a multiple-choice question; two fake-scorer runs;
    participants of every kind (completed on both key mappings, failed attention, preview,
    simulated) with timed-out, attention-check and formula-like trials."""
    call_command("generate_items", "rulebreakers", "golden", "--pairs", "2", "--variants", "follow/yes-no",
                 stdout=io.StringIO())
    study = Study.objects.get(slug="golden")
    items_generate(study=study, design="modal-syllogisms", interpretations=1, seed=0, nonsense=True)
    items_import_csv(study=study, data=BANK.encode())
    Item.objects.create(study=study, code="ds-flipped", design="dual-sided", gold_answer="no", pair_id="rule-1",
                        pair_role="flipped", variant="t1", premises=["If it rains, the street is wet."],
                        question="Is it true?", prompt="P")
    Item.objects.create(study=study, code="catch", design="attention-check", gold_answer="yes",
                        premises=["Press yes."], question="Press yes?", prompt="P")
    Item.objects.create(study=study, code="mc", design="multiple-choice", kind=ItemKind.MULTIPLE_CHOICE,
                        gold_answer="C", options=["alpha", "=beta", "gamma, delta", 'say "hi"'],
                        premises=["Pick one."], question="Which?", prompt="P")
    model = services.language_model_create(name="fake-golden", source="test/golden", device="cpu", backend="fake")
    for kind in ("items", "multiple_choice"):
        run = services.model_run_create(study=study, language_model=model, kind=kind, scope="all")  # every item
        assert services.model_run_execute(run_id=run.pk).status == RunStatus.DONE
    items = list(study.items.order_by("pk"))
    people = [
        dict(prolific_pid="a" * 24, key_mapping="f_yes", status=ParticipantStatus.COMPLETED, list_number=1,
             list_seed=12345678901),
        dict(prolific_pid="b" * 24, key_mapping="j_yes", status=ParticipantStatus.COMPLETED, list_number=2),
        dict(prolific_pid="c" * 24, key_mapping="f_yes", status=ParticipantStatus.FAILED_ATTENTION,
             attention_failures=2),
        dict(prolific_pid="d" * 24, key_mapping="j_yes", status=ParticipantStatus.STARTED, is_preview=True),
        dict(prolific_pid="e" * 24, key_mapping="f_yes", status=ParticipantStatus.COMPLETED, is_simulated=True),
    ]
    for p, fields in enumerate(people):
        participant = Participant.objects.create(study=study, **fields)
        for index, item in enumerate(items[p::2]):
            timed_out = (index + p) % 7 == 3
            answer = "" if timed_out else (item.gold_answer if (index + p) % 3 else
                                           ("yes" if item.gold_answer != "yes" else "no"))
            if item.kind == ItemKind.MULTIPLE_CHOICE and not timed_out:
                answer = "C" if p % 2 else "A"
            Trial.objects.create(
                participant=participant, item=item, index=index, key="" if timed_out else "fj"[index % 2],
                key_code="" if timed_out else "KeyF", answer=answer, correct=answer == item.gold_answer,
                rt_ms=1000.0 + 37.25 * index + p, timed_out=timed_out,
                is_attention_check=item.design == "attention-check",
                client_onset_ms=None if p == 1 else 1.7e12 + index * 1000.5,
                client_response_ms=None if p == 1 else 1.7e12 + index * 1000.5 + 812.125,
                user_agent="=HYPERLINK(1)" if index == 1 else f"Mozilla/5.0 ({p})",
                viewport_width=None if p == 2 else 1366, viewport_height=None if p == 2 else 768,
                focus_lost=index % 5 == 1, visibility_lost=index % 6 == 2,
            )
    for trial in Trial.objects.filter(participant__study=study):
        Trial.objects.filter(pk=trial.pk).update(
            received_at=T0 + dt.timedelta(seconds=trial.participant_id * 100 + trial.index, microseconds=trial.pk))
    return study


def _frame_text(frame: pd.DataFrame) -> bytes:
    """A frame as its dtypes, then its values as CSV (floats written exactly)."""
    head = "".join(f"# {name}: {dtype}\n" for name, dtype in frame.dtypes.items())
    return (head + frame.to_csv(index=False, float_format=None)).encode()


def _exports(study: Study, folder: Path) -> dict[str, bytes]:
    out: dict[str, bytes] = {}
    for suffix, ids in (("", False), ("_prolific", True)):
        response = trials_csv_response(study=study, prolific_ids=ids)
        out[f"admin_trials{suffix}.csv"] = b"".join(
            part if isinstance(part, bytes) else part.encode() for part in response.streaming_content)
    handle = io.StringIO(newline="")
    write_items_csv(handle, selectors.items_for_export(study=study))
    out["items_bank.csv"] = handle.getvalue().encode()
    trials = frames.trials_frame(study, include_simulated=True)
    scores = frames.scores_frame(study)
    codebook = report._write_tidy(trials, scores, folder)
    for name in ("trials", "scores", "items"):
        for ext in ("csv", "parquet"):
            out[f"report_{name}.{ext}"] = (folder / f"{name}.{ext}").read_bytes()
    out["report_datafiles.csv"] = codebook.to_csv(index=False).encode()
    out["frame_trials.txt"] = _frame_text(trials)
    out["frame_trials_real.txt"] = _frame_text(frames.trials_frame(study))
    out["frame_scores.txt"] = _frame_text(scores)
    out["frame_mc_runs.txt"] = _frame_text(frames.mc_runs_frame(study))
    out["frame_variants.txt"] = _frame_text(frames.variants_frame(sorted(set(scores["run_id"]))))
    empty = Study.objects.create(slug="golden-empty", title="Empty", design="modal-syllogisms")
    out["frame_empty_trials.txt"] = _frame_text(frames.trials_frame(empty))
    out["frame_empty_scores.txt"] = _frame_text(frames.scores_frame(empty, []))
    out["simulated_scores.txt"] = _frame_text(simulate.scores(n_models=2, n_interpretations=1, seed=3))
    out["simulated_trials.txt"] = _frame_text(simulate.trials(n_participants=3, n_trials=24, seed=3))
    return out


@pytest.mark.django_db(transaction=True, reset_sequences=True)  # database ids are in the files
def test_every_export_equals_the_golden_files_byte_for_byte(tmp_path):
    made = _exports(_study(), tmp_path / "data")
    if os.environ.get("DUET_WRITE_GOLDEN") == "1":
        GOLDEN.mkdir(parents=True, exist_ok=True)
        for name, data in made.items():
            (GOLDEN / name).write_bytes(data)
    stored = sorted(p.name for p in GOLDEN.iterdir() if p.name != "README.md")
    assert stored == sorted(made), "the golden files and the exports differ in number"
    for name, data in made.items():
        golden = (GOLDEN / name).read_bytes()
        if name.endswith(".parquet") and data != golden:
            import pyarrow.parquet as pq

            got, want = pq.read_table(io.BytesIO(data)), pq.read_table(io.BytesIO(golden))
            assert got.schema.equals(want.schema, check_metadata=False) and got.equals(want), name
            continue  # same table; the bytes differ only where another pyarrow writes its own version
        assert data == golden, f"{name} differs from tests/data/exports/{name}"
