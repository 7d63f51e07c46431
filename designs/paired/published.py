"""RULEBREAKERS as its authors published it (issue 27), into the rulebreakers design: the reader's rows
(rulebreakers_source.py) become pair members under the design's ten phrasings (000 §4.2), exactly as
generated pairs do, and are stored by experiments/items/pairs.py's paired_items_store (every check there).
Generation stays in items.rulebreakers_generate; the registry's entry (design.py) declares both."""
from __future__ import annotations

from collections.abc import Callable, Sequence

from django.core.exceptions import ValidationError
from django.db import transaction

from logic.pairs import PairedItem
from experiments.models import Study
from experiments.items import sources
from experiments.items.pairs import PairedReport
from experiments.items.paired_batches import finish_store, paired_batches_store
from experiments.design_registry import Preview
from experiments.items.storage import large_write

from . import rulebreakers


def _imported_member(row: sources.Row) -> PairedItem:
    """A pair member from a published RULEBREAKERS row (sources.read_rulebreakers): the file's premises
    and conclusion, under the design's ten phrasings (000 §4.2) as for generated pairs."""
    f = row.fields
    premises = (f["premise_1"], f["premise_2"])
    variants = rulebreakers.phrasings(premises, f["conclusion"])
    pair = f"{rulebreakers.DESIGN}:real:{f['pair']}"
    return PairedItem(
        code=f"{pair}:{f['role']}", design=rulebreakers.DESIGN, pair_id=pair, role=f["role"],
        form_id=f"{f['rule']}.{f['entity_kind']}", rule=f["rule"], premises=premises, conclusion=f["conclusion"],
        gold_answer=f["gold_answer"], question=variants[0].question, prompt=variants[0].text, variants=variants,
        attributes={
            "rule": f["rule"], "logical_form": rulebreakers.LOGICAL_FORMS[f["rule"]],
            "entity_kind": f["entity_kind"], "category": f["category"], "verb": f["verb"], "name": f["name"],
            "pronoun": f["pronoun"], "part": f["part"], "entity_b": f["entity_b"], "whole": f["whole"],
            "true_whole": f["true_whole"],
            "source_id": row.id,
        },
    )


DEFAULT_RULEBREAKERS_FORMAT = "rulebreakers-finegrained"
PAIRS_PER_BATCH = 200  # × 2 members × the phrasings (ten: 4,000 items a batch)


def _batches(rows_and_problems, problems: list, size: int | None = None):
    """Batches of whole pairs' members from a streamed reader (a pair's two rows come together); its
    problems are collected in `problems` as they come."""
    batch, size = [], size or PAIRS_PER_BATCH
    for one in rows_and_problems:
        if isinstance(one, sources.Problem):
            problems.append(one)
            continue
        batch.append(_imported_member(one))
        if len(batch) >= 2 * size and len(batch) % 2 == 0:
            yield batch
            batch = []
    if batch:
        yield batch


def _fewer_phrasings(outcome) -> str:
    members = outcome.count // max(len(outcome.chosen), 1)
    return (f"Or store fewer phrasings: {members:,} pair members × {len(outcome.chosen)} phrasing(s); "
            "--variants follow/yes-no stores one each.")


def _streamed(study: Study, data, format: str, filename: str, variants, *, write: bool, rows: int = 0,
              skip_problems: bool = False, on_progress: Callable | None = None):
    """(the batched store's Outcome, the reader's problems): the file read a line at a time, its pairs
    checked (and written, with `write`) in batches as they are read."""
    reader = sources.reader_for(rulebreakers.DESIGN, format or DEFAULT_RULEBREAKERS_FORMAT)
    meter, problems = sources.Meter(), []
    stream = reader.stream(data, filename=filename, meter=meter)
    try:
        outcome = paired_batches_store(study=study, batches=_batches(stream, problems), variants=variants,
                                       write=write, rows=rows, meter=meter, on_batch=on_progress,
                                       hint=_fewer_phrasings, halt=lambda: bool(problems) and not skip_problems)
    except sources.ReaderError as exc:
        raise ValidationError(str(exc)) from None
    except ValidationError as exc:
        if exc.messages == ["There are no items to store."]:  # every row had a problem, or none was there
            raise sources.RowProblems(problems, importable=0) if problems else ValidationError(
                "The file has no rows.") from None
        raise
    return outcome, problems


def rulebreakers_import_preview(*, study: Study, data, format: str = DEFAULT_RULEBREAKERS_FORMAT,
                                variants: Sequence[str] | str | None = "all", rows: int = 10,
                                filename: str = "") -> Preview:
    """What rulebreakers_import would write, without writing; the rows it would leave out as problems."""
    outcome, problems = _streamed(study, data, format, filename, variants, write=False, rows=rows)
    return Preview(count=outcome.count, items=outcome.shown, problems=tuple(problems))


def rulebreakers_import(*, study: Study, data, format: str = DEFAULT_RULEBREAKERS_FORMAT,
                        variants: Sequence[str] | str | None = "all", skip_problems: bool = False,
                        filename: str = "", on_progress: Callable | None = None) -> PairedReport:
    """Seed 000's published pairs (sources/: rulebreakers-finegrained) into the design: each pair a
    rulebreaker (gold no) and its non-rulebreaker (gold yes), from the file's label (000 §3.4), under
    the chosen phrasings. The file is streamed and written in batches inside one transaction
    (paired_batches.py): it completes, or is rolled back whole. Rows with a problem refuse the import
    (sources.RowProblems, by id; nothing written) unless `skip_problems`: then their pairs are left out
    whole and listed in the report's `left_out`. `on_progress(meter)` is called after each batch."""
    with large_write(), transaction.atomic():
        study = Study.objects.select_for_update().get(pk=study.pk)
        outcome, problems = _streamed(study, data, format, filename, variants, write=True,
                                      skip_problems=skip_problems, on_progress=on_progress)
        left_out = sources.refuse_or_keep(problems, importable=outcome.count // max(len(outcome.chosen), 1),
                                          skip_problems=skip_problems)
        report = finish_store(study=study, outcome=outcome)
    return PairedReport(**{**report.__dict__, "source": format or DEFAULT_RULEBREAKERS_FORMAT, "left_out": left_out})
