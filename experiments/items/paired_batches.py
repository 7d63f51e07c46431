"""Pair members stored in batches, as a file is read (issue 37 item 1): a whole published dataset
(RULEBREAKERS: 25,600 members × ten phrasings = 256,000 items) in one import, without holding it.

The batches come from a streamed reader (sources/), each holding whole pairs (a reader gives a pair's
two rows together once both are read, so a partner later in the file is simply in a later batch).
Every batch passes paired.py's checks (pairing, gold answers by role, the variants, codes and pair ids
already in the study, column lengths) plus those across batches (a pair id given twice). The items of
a batch are built once and written at once; everything is written inside the caller's one transaction,
so an import either completes or is **rolled back** whole (a refusal found in a later batch undoes the
earlier ones; there is no partial import to resume). Once a problem is found nothing more is written,
but reading goes on so that the refusal lists every problem (and the preview counts every item).
"""
from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from django.core.exceptions import ValidationError

from ..item_limits import char_limits, value_errors
from ..models import Item, Study
from .. import design_registry as registry
from .pairs import (
    HUMAN_VARIANT, MAX_PROBLEMS, PairedReport, _originals, _problems, answer_words, choose_variants, item_code,
    member_values, paired_variants, variant_values,
)
from .sources import Meter
from .storage import ItemRows, items_analyze, max_import_items, refuse_if_locked, too_many_message


@dataclass
class Outcome:
    """What a batched store (or its preview) found: the count of items, the first rows, the problems."""

    count: int = 0
    written: int = 0
    pairs: set = field(default_factory=set)
    members: set = field(default_factory=set)  # the member codes stored so far (each once in an import)
    shown: list = field(default_factory=list)
    problems: list = field(default_factory=list)
    chosen: tuple = ()
    first_variants: tuple = ()
    design: str = ""
    condition: str = ""


def _refusal(outcome: Outcome, limit: int, hint: Callable[[Outcome], str] | None) -> ValidationError | None:
    if outcome.count > limit:
        return ValidationError(too_many_message(outcome.count, limit) + (f" {hint(outcome)}" if hint else ""))
    if outcome.problems:
        problems = outcome.problems
        shown = problems[:MAX_PROBLEMS] + ([f"… and {len(problems) - MAX_PROBLEMS} more"]
                                           if len(problems) > MAX_PROBLEMS else [])
        return ValidationError("Nothing was stored: " + "; ".join(shown))
    if not outcome.count:
        return ValidationError("There are no items to store.")
    return None


def paired_batches_store(
    *, study: Study, batches: Iterable[Sequence], variants: Sequence[str] | str | None = "all", write: bool = True,
    rows: int = 0, meter: Meter | None = None, on_batch: Callable[[Meter], None] | None = None,
    hint: Callable[[Outcome], str] | None = None, halt: Callable[[], bool] | None = None,
) -> Outcome:
    """Check (and with `write`, store) batches of PairedItem, one Item per chosen variant. Call it inside
    a transaction when writing (the caller's: all or nothing). ValidationError naming every problem (and
    the count past DUET_IMPORT_MAX_ITEMS, with `hint`'s advice) when any batch has one. `halt()` true:
    write nothing more (the caller will refuse, e.g. a reader's problems), but go on checking."""
    refuse_if_locked(study)
    limit, meter = max_import_items(), meter if meter is not None else Meter()
    out, before, writer = Outcome(), items_before(study), ItemRows()
    for batch in batches:
        batch = tuple(batch)
        if not batch:
            continue
        if not out.chosen:
            out.first_variants = batch[0].variants
            out.chosen = choose_variants([v.variant_id for v in batch[0].variants], variants)
            out.design, out.condition = batch[0].design, batch[0].condition
        if {i.design for i in batch} != {out.design} or {i.condition for i in batch} != {out.condition}:
            out.problems.append("Store one design and condition at a time.")
        problems = _problems(study, batch, out.chosen, before)
        again = {i.pair_id for i in batch} & out.pairs
        if again:
            problems.append(f"the pair id {sorted(again)[0]} is given twice ({len(again)} such)")
        twice = {i.code for i in batch} & out.members
        if twice:
            problems.append(f"item {sorted(twice)[0]} appears twice ({len(twice)} such)")
        out.pairs |= {i.pair_id for i in batch}
        out.members |= {i.code for i in batch}
        originals, more = _originals(study, batch, out.chosen)
        problems += more
        made = _rows(study, batch, out, originals, writer, problems, rows)
        out.problems += problems
        out.count += len(made)
        if write and not out.problems and out.count <= limit and not (halt is not None and halt()):
            out.written += writer.insert(made)
        meter.items, meter.written = out.count, out.written
        if on_batch is not None:
            on_batch(meter)
    refusal = _refusal(out, limit, hint)
    if refusal is not None:
        raise refusal
    return out


@dataclass(frozen=True)
class Before:
    """A study's items from before a batched import began (the study is locked while it runs, so they do
    not change): whether there are any, and their pair ids. Each batch is checked against these, in
    memory and by the (study, code) index, never by a query that reads what the import has written (those
    grew with the import: 0.56 s a batch at 256,000 items, against 0.14 s at 25,600)."""

    any_items: bool
    pair_ids: frozenset


def items_before(study: Study) -> Before:
    if not study.items.exists():
        return Before(False, frozenset())
    return Before(True, frozenset(study.items.exclude(pair_id="").order_by().values_list("pair_id", flat=True)
                                  .distinct()))


_LIMITS = char_limits(Item)


def _rows(study: Study, batch, out: Outcome, originals: dict, writer: ItemRows, problems: list, shown: int
          ) -> list[tuple]:
    """The batch's rows (paired.py's member_values and variant_values, one per chosen variant), each text
    checked against its column's length (a longer one: DataError on PostgreSQL); the first `shown` rows of
    the import kept as Items in out.shown (the preview's)."""
    rows, words = [], {}
    for paired in batch:
        member = member_values(paired)
        problems += [f"{paired.code}: {name} {message}" for name, message in value_errors(Item, member, _LIMITS)]
        base = writer.base({**member, "study_id": study.pk})
        by_id = {v.variant_id: v for v in paired.variants}
        for variant_id in out.chosen:
            if variant_id not in by_id:  # a problem already (the variant is lacking)
                continue
            own = variant_values(paired, by_id[variant_id])
            problems += [f"{paired.code}: {name} {message}" for name, message in value_errors(Item, own, _LIMITS)]
            key = tuple(sorted(own["answer_words"].items()))  # a few phrasings' words, encoded once each
            if key not in words:
                words[key] = writer.encoded("answer_words", own["answer_words"])
            shown_words, own["answer_words"] = own["answer_words"], words[key]
            if paired.original_code is not None:
                own["original_id"] = originals.get(item_code(paired.original_code, variant_id))
            rows.append(writer.row(base, own))
            if len(out.shown) < shown:
                out.shown.append(Item(study=study, **member, **{"original_id": None, **own,
                                                               "answer_words": shown_words}))
    return rows


def finish_store(*, study: Study, outcome: Outcome) -> PairedReport:
    """After a batched write: the study's human variant (a Yes/No phrasing people answer with their keys)
    and design, as paired.paired_items_store leaves them."""
    items_analyze(outcome.written)  # before the queries below and the pages after read the new items
    settings = dict(study.settings or {})
    if settings.get(HUMAN_VARIANT) not in paired_variants(study=study):
        yes_no = [v.variant_id for v in outcome.first_variants
                  if v.variant_id in outcome.chosen and not answer_words(v)]
        settings[HUMAN_VARIANT] = (yes_no or list(outcome.chosen))[0]
    study.settings = settings
    if registry.is_generic(study.design) and not study.items.exclude(design=outcome.design).exists():
        study.design = outcome.design
    study.save(update_fields=["settings", "design", "updated_at"])
    return PairedReport(study=study, design=outcome.design, pairs=len(outcome.pairs), items=outcome.written,
                        variants=outcome.chosen, condition=outcome.condition)


class Progress:
    """A streamed import's progress in words (the command prints it; the admin shows it): rows read,
    items written, the rate and the time left (estimated from the share of the file read)."""

    def __init__(self, clock=time.monotonic):
        self.clock, self.start = clock, clock()

    def text(self, meter: Meter) -> str:
        elapsed = max(self.clock() - self.start, 1e-9)
        rate = meter.written / elapsed
        parts = [f"{meter.records:,} rows read", f"{meter.written:,} items written"]
        if meter.total_bytes:
            share = min(meter.bytes_read / meter.total_bytes, 1.0)
            parts[0] += f" ({share:.0%} of the file)"
            if share > 0 and meter.written:
                parts.append(f"{rate:,.0f} items/s")
                parts.append(f"about {_duration(elapsed * (1 - share) / share)} left")
        elif meter.written:
            parts.append(f"{rate:,.0f} items/s")
        return ", ".join(parts)


def _duration(seconds: float) -> str:
    seconds = round(seconds)
    return f"{seconds // 60} min {seconds % 60} s" if seconds >= 60 else f"{seconds} s"
