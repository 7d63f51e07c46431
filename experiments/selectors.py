"""Reads of studies and items."""
from __future__ import annotations

from django.db.models import QuerySet

from .models import Item, Study


def items_for_export(*, study: Study, design: str | None = None) -> QuerySet[Item]:
    items = Item.objects.filter(study=study).select_related("interpretation", "original").order_by("id")
    if design:
        items = items.filter(design=design)
    return items


def study_by_slug(*, slug: str) -> Study | None:
    return Study.objects.filter(slug=slug).first()
