"""Stored lists (issue 38 item 7): every list a study's settings draw, kept so an entry reads one list
instead of every item. The rules that build, read and drop them are experiments/participation/list_store.py."""
from __future__ import annotations

from django.db import models

from .studies import Study


class StoredLists(models.Model):
    """What a study's stored lists were built from; its lists are StoredList rows."""

    study = models.OneToOneField(Study, on_delete=models.CASCADE, related_name="stored_lists")
    key = models.CharField(max_length=64, help_text="Digest of the settings the lists were drawn with.")
    items_version = models.BigIntegerField(default=0, help_text="The study's items version then (items_version.py).")
    within = models.BooleanField(default=False, help_text="Pairs shown within participants: lists of pairs.")
    total = models.PositiveIntegerField(help_text="How many distinct lists there are.")
    built_at = models.DateTimeField(auto_now=True)

    class Meta:
        app_label = "experiments"
        verbose_name = "stored lists of a study"

    def __str__(self) -> str:
        return f"{self.total} stored lists of study {self.study_id}"


class StoredList(models.Model):
    """One list, as lists.every_list gives it: item ids, or [first, second] members of pairs."""

    owner = models.ForeignKey(StoredLists, on_delete=models.CASCADE, related_name="lists")
    number = models.PositiveIntegerField()
    items = models.JSONField()

    class Meta:
        app_label = "experiments"
        constraints = [models.UniqueConstraint(fields=["owner", "number"], name="stored_list_unique_number")]

    def __str__(self) -> str:
        return f"list {self.number} of {self.owner}"
