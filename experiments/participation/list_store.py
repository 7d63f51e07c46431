"""Stored lists (issue 38 item 7): every list a study's settings draw, computed once from its items.

Drawing a participant's list from the item pool read every item of the study at each entry (a
48,000-item study: 24,001 items, about 145 ms per entry). Here the lists are built once, by
lists.every_list from the same grid and the same rules, and kept: StoredLists, one row per study,
holds what they were built from; StoredList one row per list number. An entry then reads the header
with the study's items version (one row found by the study's primary key: no item is read, whatever plan
the database picks) and the one list it was given. They are built
when the study opens (services.lists_prepare, called by study_transition), so
the first arrivals after a launch find them ready, or else by the first entry that needs them.

The stored lists are rebuilt whenever what they were drawn from changes, whatever changed it:
- the settings that shape them (items per participant, nonsense items, paired presentation and gap,
  the study's settings) are part of the header's key, read from the arm and study in hand;
- every write to the study's items (created by generation, imports, perturbed copies, a regeneration,
  the batched import's raw inserts; edited; deleted) raises the study's items version
  (experiments/models/items_version.py), which the header records;
- an item edited (Item.save) or deleted (one, or a queryset: the admin, a regeneration) also drops the
  study's stored lists (the signals below); deleting the study itself takes them with it.
The catch items the flow creates for itself are never in the pool: they neither count nor drop.
The tables are experiments/models/stored_lists.py.
"""
from __future__ import annotations

import hashlib
import json
from collections.abc import Callable

from django.db import transaction
from django.db.models import OuterRef, Subquery
from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver

from ..models import HumanArm, Item, StoredList, StoredLists, Study
from ..models.items_version import items_version, items_version_query
from .compiled import CompiledRead, field_names, instance
from .fastsave import ATTENTION_DESIGN


def settings_key(*, study: Study, arm: HumanArm) -> str:
    """A digest of every setting the lists depend on, besides the items themselves."""
    shape = [arm.items_per_participant, arm.include_nonsense, arm.paired_presentation, arm.paired_min_gap,
             study.settings or {}]
    return hashlib.sha256(json.dumps(shape, sort_keys=True, default=str).encode()).hexdigest()


Builder = Callable[[], tuple[bool, list[list]]]


def _header_rows(study):
    """The study's header (every field) and the study's items version, in one query (compiled.py: once)."""
    version = items_version_query(OuterRef("study"))
    rows = StoredLists.objects.filter(study=study).annotate(version=Subquery(version))
    return rows.order_by("pk").values_list(*field_names(StoredLists), "version")[:1]


_HEADER = CompiledRead(_header_rows, prepared=True, study=int)  # one-to-one with the study; the versions' key
_LIST = CompiledRead(lambda owner, number: StoredList.objects.filter(owner=owner, number=number).values_list(
    "items")[:2], prepared=True, owner=int, number=int)  # stored_list_unique_number


def stored_lists_current(*, study: Study, arm: HumanArm, build: Builder) -> StoredLists:
    """The study's stored lists, rebuilt first when anything they were drawn from changed. `build`
    gives (within, every list by number) from the items, raising ListError or ValidationError when the
    settings draw none (then nothing is stored). A rebuild locks the study's row first."""
    key = settings_key(study=study, arm=arm)
    found = _HEADER.rows(study=study.pk)  # the header and the items version in one query
    if found:
        header, version = instance(StoredLists, found[0][:-1]), found[0][-1]
        if (header.key, header.items_version) == (key, version or 0):
            return header
    with transaction.atomic():
        Study.objects.select_for_update().filter(pk=study.pk).first()
        version = items_version(study)  # first: items written meanwhile raise it past this, so the lists are stale
        header = StoredLists.objects.filter(study=study).first()
        if header is not None and (header.key, header.items_version) == (key, version):
            return header  # built meanwhile by another request
        within, every = build()
        StoredLists.objects.filter(study=study).delete()
        header = StoredLists.objects.create(study=study, key=key, items_version=version, within=within,
                                            total=len(every))
        StoredList.objects.bulk_create([StoredList(owner=header, number=n, items=ids) for n, ids in enumerate(every)],
                                       batch_size=500)
    return header


def stored_list(*, header: StoredLists, number: int) -> list:
    """The list's item ids (StoredList.DoesNotExist when the header was rebuilt meanwhile)."""
    rows = _LIST.rows(owner=header.pk, number=number)
    if len(rows) != 1:
        raise (StoredList.DoesNotExist if not rows else StoredList.MultipleObjectsReturned)(
            f"stored list {number} of header {header.pk}: {len(rows)} rows")
    return rows[0][0]


def stored_lists_forget(*, study_id: int) -> int:
    """Drop a study's stored lists (they are rebuilt at the next entry); returns rows deleted."""
    return StoredLists.objects.filter(study_id=study_id).delete()[0]


@receiver(post_save, sender=Item, dispatch_uid="stored_lists_item_saved")
def _item_saved(sender, instance: Item, **kwargs) -> None:
    if instance.design != ATTENTION_DESIGN:
        stored_lists_forget(study_id=instance.study_id)


@receiver(post_delete, sender=Item, dispatch_uid="stored_lists_item_deleted")
def _item_deleted(sender, instance: Item, origin=None, **kwargs) -> None:
    study_goes = isinstance(origin, Study) or getattr(origin, "model", None) is Study  # its lists cascade
    if instance.design != ATTENTION_DESIGN and not study_goes:
        stored_lists_forget(study_id=instance.study_id)
