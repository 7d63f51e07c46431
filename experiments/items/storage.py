"""What every design's items are stored with: bulk inserts, and the one rule that a study's items are immutable once
it has responses (a design's own rows, such as 003's interpretations, are stored by its folder: designs/<family>/)."""
from __future__ import annotations

import contextlib
import json

from django.core.exceptions import ValidationError
from django.db import connection, models
from django.utils import timezone

from logic.human_defaults import CATCH_ITEMS
from ..models import Item, ItemsLocked, LinkKind, Study
from ..models.item_summary import items_created
from ..models.items_version import items_version_raise

BULK_BATCH = 2000


def max_import_items() -> int:
    """The most items one import writes: the deployment's DUET_IMPORT_MAX_ITEMS (common/env.py,
    default 300,000). An import's write is one transaction (all rows or none), and on SQLite a
    transaction holds the write lock from its start: the setting bounds that time."""
    from common import env

    return env.import_max_items()


def too_many_message(count: int, limit: int) -> str:
    return (f"This import would write {count:,} items; at most {limit:,} are written at once (the deployment's "
            "setting DUET_IMPORT_MAX_ITEMS). Raise the setting, or split the file and import the parts one "
            "after another.")


def refuse_if_too_many(count: int) -> None:
    limit = max_import_items()
    if count > limit:
        raise ValidationError(too_many_message(count, limit))


def refuse_if_locked(study: Study) -> None:
    if study.has_responses():
        raise ItemsLocked(
            f"Study '{study.slug}' already has responses (participant answers or model scores); "
            "its items are immutable. "
            "Create a new study to change the item set."
        )


def design_items_replace(*, study: Study, design: str, replace: bool) -> int:
    """The one rule for making a design's items again in a study (issue 46 item 6): a study that already has
    items of `design` keeps them unless `replace`, which deletes them (their perturbed copies first); returns how
    many were deleted. Every generated design calls it before writing."""
    existing = study.items.filter(design=design)
    if not existing.exists():
        return 0
    if not replace:
        raise ValidationError(
            f"Study '{study.slug}' already has {existing.count()} items of design '{design}'; "
            "pass replace=True (--replace) to generate them anew."
        )
    count = existing.count()
    existing.filter(original__isnull=False).delete()
    existing.delete()
    return count


def refuse_if_answered(study: Study) -> None:
    """Adding items beside a study's own (a perturbed copy, seed 002) is refused only once real
    participants have answered (issue 37): a simulated pilot is never data, so a researcher may pilot,
    then add perturbed copies, then pilot again; the items already there are never changed."""
    from ..models import Trial

    if Trial.objects.filter(participant__study=study).by_audience(include_preview=True).exists():
        raise ItemsLocked(
            f"Study '{study.slug}' already has answers from real participants; its item set is fixed. "
            "Create a new study to add perturbed copies (a simulated pilot's answers never block them)."
        )


def insert_items(batch: list[Item], originals: dict[str, int]) -> int:
    if not batch:
        return 0
    Item.objects.bulk_create(batch, batch_size=BULK_BATCH)
    if batch[0].pk is None:  # backends that do not return ids from bulk inserts
        codes = [item.code for item in batch]
        lookup = dict(Item.objects.filter(study=batch[0].study, code__in=codes).values_list("code", "pk"))
        for item in batch:
            item.pk = lookup[item.code]
    originals.update({item.code: item.pk for item in batch})
    return len(batch)


SQLITE_IMPORT_CACHE_KB = 256 * 1024  # SQLite's page cache while one import writes (its default is 2 MB)


@contextlib.contextmanager
def large_write():
    """Around an import that writes many items in one transaction: on SQLite a larger page cache, so that
    the transaction's changed pages are not spilled to the WAL again and again (its default 2 MB held a
    256,000-item import to about 900 items/s); nothing on other databases."""
    if connection.vendor != "sqlite":
        yield
        return
    with connection.cursor() as cursor:
        cursor.execute("PRAGMA cache_size")
        before = cursor.fetchone()[0]
        cursor.execute(f"PRAGMA cache_size=-{SQLITE_IMPORT_CACHE_KB}")
    try:
        yield
    finally:
        with connection.cursor() as cursor:
            cursor.execute(f"PRAGMA cache_size={int(before)}")


class Encoded(str):
    """A JSON value already encoded (ItemRows.encoded)."""


class ItemRows:
    """Item rows as tuples in one INSERT's column order, inserted by one executemany each, their ids not
    read back: for a whole dataset in batches (issue 37 item 1), where Django's bulk_create (compiling the
    SQL of every value in Python) and then building 256,000 Item instances took most of the import.
    A row holds what `Item(**values)` would write: the fields not given take their defaults, link_kind is
    filled as Item.fill_link_kind fills it, JSON is written as JSONField writes it, created_at is now.
    `base(values)` prepares the values many rows share once (a pair member's, its JSON encoded once);
    `row(base, values)` adds one row's own."""

    def __init__(self):
        self.fields = [f for f in Item._meta.concrete_fields if not f.primary_key]
        self.position = {f.attname: n for n, f in enumerate(self.fields)}
        self.json = {f.attname: f.encoder for f in self.fields if isinstance(f, models.JSONField)}
        now = timezone.now()
        postgres = connection.vendor == "postgresql"
        self.defaults = [f.get_db_prep_save(now, connection) if getattr(f, "auto_now_add", False)
                         or getattr(f, "auto_now", False) else self._prepared(f.attname, f.get_default())
                         for f in self.fields]
        quote = connection.ops.quote_name
        marks = ["%s::jsonb" if postgres and f.attname in self.json else "%s" for f in self.fields]
        self.sql = (f"INSERT INTO {quote(Item._meta.db_table)} ({', '.join(quote(f.column) for f in self.fields)}) "
                    f"VALUES ({', '.join(marks)})")
        self.copy_sql = (f"COPY {quote(Item._meta.db_table)} ({', '.join(quote(f.column) for f in self.fields)}) "
                         "FROM STDIN")
        self._link = [self.position[n] for n in ("original_id", "condition", "kind", "pair_id", "link_kind")]

    def _prepared(self, attname: str, value):
        if attname in self.json and value is not None and not isinstance(value, Encoded):
            return json.dumps(value, cls=self.json[attname])
        return value

    def encoded(self, attname: str, value) -> Encoded:
        """A JSON field's value encoded once, for many rows."""
        return Encoded(json.dumps(value, cls=self.json[attname]))

    def base(self, values: dict) -> list:
        out = list(self.defaults)
        for name, value in values.items():
            out[self.position[name]] = self._prepared(name, value)
        return out

    def row(self, base: list, values: dict) -> tuple:
        out = list(base)
        for name, value in values.items():
            out[self.position[name]] = self._prepared(name, value)
        original, condition, kind, pair_id, link = self._link
        out[link] = LinkKind.of(original=out[original] is not None, condition=out[condition], kind=out[kind],
                                pair_id=out[pair_id])
        return tuple(out)

    def item_row(self, item: Item) -> tuple:
        """The row of an unsaved Item (as insert_items_at_once writes it)."""
        item.fill_link_kind()  # as save() and bulk_create do
        return self.row(self.defaults, {f.attname: item.__dict__[f.attname] for f in self.fields
                                        if not getattr(f, "auto_now_add", False) and not getattr(f, "auto_now", False)})

    def insert(self, rows: list[tuple]) -> int:
        """The rows inserted: on PostgreSQL by one COPY (psycopg's executemany sends a statement a row:
        94 s of a 256,000-item import), elsewhere by one executemany."""
        if not rows:
            return 0
        with connection.cursor() as cursor:
            raw = cursor.cursor
            if connection.vendor == "postgresql" and hasattr(raw, "copy"):  # psycopg 3
                with raw.copy(self.copy_sql) as copy:
                    for row in rows:
                        copy.write_row(row)
            else:
                cursor.executemany(self.sql, rows)
        # as Item.objects.bulk_create does: the studies' items versions are raised (what was built from their
        # items is rebuilt), and their item summaries are rebuilt once the import commits, so the first page
        # after it finds them ready (experiments/participation/item_summary.py)
        study, design = self.position["study_id"], self.position["design"]
        studies = {row[study] for row in rows if row[design] != CATCH_ITEMS}
        items_version_raise(studies)
        items_created.send(sender=Item, study_ids=studies)
        return len(rows)


ANALYZE_AFTER = 10_000  # items written at once past which PostgreSQL's planner statistics are refreshed


def items_analyze(written: int) -> None:
    """After a bulk load of `written` items, PostgreSQL's planner statistics of the items table, taken in
    the import's own transaction (its rows count as live there). Without them the first queries after a
    256,000-item import planned for the table as it was (a handful of rows): the study's list shape, by a
    nested loop over the items joined to themselves, ran for over ten minutes where it takes a second.
    Autovacuum would analyze the table only later, after the commit."""
    if connection.vendor == "postgresql" and written >= ANALYZE_AFTER:
        with connection.cursor() as cursor:
            cursor.execute(f"ANALYZE {connection.ops.quote_name(Item._meta.db_table)}")


def insert_items_at_once(batch: list[Item]) -> int:
    """Unsaved Items (as built by their design) inserted by one executemany, their ids not read back
    (ItemRows: the values are the instances' own)."""
    rows = ItemRows()
    return rows.insert([rows.item_row(item) for item in batch])
