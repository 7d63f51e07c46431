"""A study's item summary (issue 37 item 2): what its admin page and launch panel show of its items
(how many, their designs, phrasings and logical forms, the list grid's shape), computed once from the
items and kept, so rendering the page reads one row instead of scanning every item. The rules that
build, check and drop it are experiments/participation/item_summary.py."""
from __future__ import annotations

from django.db import models
from django.dispatch import Signal

from .studies import Study

# Sent by Item.objects.bulk_create (every writer of items goes through it) with `study_ids`, the studies
# that got items: participation/item_summary.py rebuilds their summaries once the transaction commits.
items_created = Signal()


class StudyItemSummary(models.Model):
    """The study's items in figures, as they were when its items version was `items_version` and its
    design and settings digested to `key`."""

    study = models.OneToOneField(Study, on_delete=models.CASCADE, related_name="item_summary")
    key = models.CharField(max_length=64, help_text="Digest of the study's design and settings then.")
    items_version = models.BigIntegerField(default=0, help_text="The study's items version then (items_version.py).")
    figures = models.JSONField(default=dict, help_text="Counts, designs, phrasings, forms and list shapes.")
    built_at = models.DateTimeField(auto_now=True)

    class Meta:
        app_label = "experiments"
        verbose_name = "item summary of a study"
        verbose_name_plural = "item summaries of studies"

    def __str__(self) -> str:
        return f"item summary of study {self.study_id}"
