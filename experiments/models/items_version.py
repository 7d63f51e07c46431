"""A study's items version (issue 43 item 8): a number raised by every write to the study's items, its
catch items aside, kept in a row of its own keyed by the study. What is built once from the items (the
stored lists, the item summary) records the version it was built at, and is current while the version
has not moved.

It replaced the study's highest item id, read at every participant entry as one step down the (study, id)
index: a read whose cost was the planner's choice. When the study holds most of the items table PostgreSQL
may walk the primary key backwards past every newer study's items instead (21.8 ms of its CPU per arrival
in one burst of four, p99 4,457 ms). The version is read by the study's primary key here, in a table that
holds no item: no plan of it can read an item.

Every writer of items raises it, after writing, in the writer's transaction: Item.save (created or edited),
Item.delete, ItemQuerySet's bulk_create, update and delete (items.py), and the batched import's raw
inserts (designs/storage.py ItemRows.insert). Its own row, not a column of the study, so that a writer
never locks the study's row (a participant entry holds it shared) and a study saved from a stale instance
cannot write an old version back. Deleting the study takes it along.
"""
from __future__ import annotations

from collections.abc import Iterable

from django.db import models

from .studies import Study


class StudyItemsVersion(models.Model):
    """The study's items version; no row is version 0."""

    study = models.OneToOneField(Study, on_delete=models.CASCADE, primary_key=True, related_name="+")
    version = models.BigIntegerField(default=0, help_text="Raised by every write to the study's items.")

    class Meta:
        app_label = "experiments"
        verbose_name = "items version of a study"

    def __str__(self) -> str:
        return f"items version {self.version} of study {self.study_id}"


def items_version_query(study):
    """The one read of a study's items version (`study`: a Study, its id, or an OuterRef to one): its row
    found by the primary key, as a one-column queryset (a subquery of another read, or read by items_version)."""
    return StudyItemsVersion.objects.filter(pk=study).values("version")


def items_version(study) -> int:
    """The study's items version (0: its items were never written)."""
    return items_version_query(getattr(study, "pk", study)).values_list("version", flat=True).first() or 0


def items_version_raise(study_ids: Iterable[int]) -> None:
    """Raise the versions of the studies whose items were just written: one UPDATE a study (a study
    without a row gets one first). Called after the write, in its transaction: a reader that sees the old
    version either sees the old items too, or builds from the new ones and is rebuilt at its next read."""
    for study_id in sorted({study_id for study_id in study_ids if study_id is not None}):
        row = StudyItemsVersion.objects.filter(pk=study_id)
        if not row.update(version=models.F("version") + 1):
            # made at 0, or by a concurrent writer meanwhile (the insert then ignored): raised once either way
            StudyItemsVersion.objects.bulk_create([StudyItemsVersion(study_id=study_id)], ignore_conflicts=True)
            row.update(version=models.F("version") + 1)
