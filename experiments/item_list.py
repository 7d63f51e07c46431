"""The item list filtered to one study costs a page of items, not the study (issue 37 item 2).

Django's changelist counts the filtered items for its paginator, and each filter by value lists the
distinct values of its column over every item; a 256,000-item study's list read all of them several
times. Filtered to one study (and nothing else), the count is the study's item summary's
(participation/item_summary.py) and the filters' values are that study's, from the same summary; with
other filters or a search the list counts and lists as Django does.
"""
from __future__ import annotations

from django.contrib import admin
from django.core.paginator import Paginator
from django.utils.functional import cached_property

from .participation.item_summary import ItemSummary, item_summary, with_catch_items
from .team_scope import visible_studies

STUDY_PARAM = "study__id__exact"
PAGING_PARAMS = {"p", "o", "_changelist_filters"}  # the page, the ordering: the same items either way


def study_summary(request) -> ItemSummary | None:
    """The summary of the one study the list is filtered to (one the user's teams see), else None."""
    if hasattr(request, "_item_list_summary"):
        return request._item_list_summary
    found = None
    pk = request.GET.get(STUDY_PARAM, "")
    if pk.isdigit() and len(request.GET.getlist(STUDY_PARAM)) == 1:
        study = visible_studies(request.user).filter(pk=int(pk)).first()
        found = with_catch_items(item_summary(study=study), study=study) if study is not None else None
    request._item_list_summary = found
    return found


class StudyValuesFilter(admin.AllValuesFieldListFilter):
    """A filter by value whose values, on a list filtered to one study, are that study's (kept)."""

    def __init__(self, field, request, params, model, model_admin, field_path):
        super().__init__(field, request, params, model, model_admin, field_path)
        summary = study_summary(request)
        if summary is not None and field.name in summary.columns:
            self.lookup_choices = list(summary.columns[field.name])


class StudyItemsPaginator(Paginator):
    """Counts a list filtered to one study from its summary; any other list as Django does."""

    def __init__(self, object_list, per_page, *, known: int | None = None, **kwargs):
        super().__init__(object_list, per_page, **kwargs)
        self.known = known

    @cached_property
    def count(self) -> int:
        return self.known if self.known is not None else super().count


def paginator_for(request, queryset, per_page, orphans=0, allow_empty_first_page=True) -> Paginator:
    """ItemAdmin.get_paginator: the study's count where the list is the study's items, unfiltered else."""
    known = None
    summary = study_summary(request)
    if summary is not None and set(request.GET) <= PAGING_PARAMS | {STUDY_PARAM}:
        known = summary.items
    return StudyItemsPaginator(queryset, per_page, orphans=orphans, allow_empty_first_page=allow_empty_first_page,
                               known=known)
