"""Admin read-only fields in the researcher's words: a JSON field as tables (common/structured.py)
under its model field's label and help text, and seconds rounded to 0.1 s.

    configuration_table = structured(ModelRun, "configuration")   # in a ModelAdmin's body
    readonly_fields = (..., "configuration_table", ...)
"""
from __future__ import annotations

from collections.abc import Mapping

from django.contrib import admin
from django.contrib.admin.utils import flatten_fieldsets
from django.core.exceptions import FieldDoesNotExist
from django.db import models
from django.utils.html import format_html

from .structured import EMPTY, number, structured_html


def structured(model, field: str, *, labels: Mapping[str, str] | None = None):
    """A ModelAdmin display method showing `model.field` (a JSONField) as tables, labelled with the
    field's verbose_name, its help text below the tables (the admin shows a model field's help text
    only for the field itself, not for a method)."""
    model_field = model._meta.get_field(field)

    @admin.display(description=model_field.verbose_name)
    def show(self, obj):
        value = getattr(obj, field) if obj is not None else None
        help_text = model_field.help_text
        tables = structured_html(value, labels=labels)
        # a span: the admin's CSS indents a div.help inside an aligned form by a label's width
        return format_html('{}<div><span class="help">{}</span></div>', tables, help_text) if help_text else tables

    show.__name__ = f"{field}_table"
    return show


def seconds(model, field: str):
    """A ModelAdmin display method showing a duration in seconds rounded to 0.1 s (8.876871 → "8.9 s")."""
    model_field = model._meta.get_field(field)

    @admin.display(description=model_field.verbose_name, ordering=field)
    def show(self, obj):
        value = getattr(obj, field) if obj is not None else None
        return EMPTY if value is None else number(value, unit="s")

    show.__name__ = f"{field}_rounded"
    return show


PAGE_NUMBER = "_rounded_page"  # ReadOnlyAdmin's name for a number shown rounded on a change page


def rounded(model, field: str, *, help_below: bool = False):
    """A ModelAdmin display method showing a number rounded as a person reads it (structured.number:
    0.123456789 → 0.1235), sortable by the field. `help_below`: with the field's help text under it
    (a change page; the admin shows a model field's help text only for the field itself)."""
    model_field = model._meta.get_field(field)

    @admin.display(description=model_field.verbose_name, ordering=field)
    def show(self, obj):
        value = getattr(obj, field) if obj is not None else None
        shown = EMPTY if value is None else number(value)
        if help_below and model_field.help_text:
            return format_html('{}<div><span class="help">{}</span></div>', shown, model_field.help_text)
        return shown

    show.__name__ = f"{field}{PAGE_NUMBER if help_below else '_rounded'}"
    return show


class ReadOnlyAdmin(admin.ModelAdmin):
    """The admin of what the admin never writes: participants' answers, model scores, a job's results.
    Read here; never added or changed. Deleted only where `deletable` (a job's row, not an answer or
    a score: a run or a participant's erasure removes those with what they belong to)."""

    deletable = False

    def get_fields(self, request, obj=None):
        """The page's fields, each number with a fraction shown rounded (rounded(): 0.2258, not
        0.22580645161290322), with its help text, in its place."""
        return [self._shown(name) for name in super().get_fields(request, obj)]

    def get_form(self, request, obj=None, change=False, **kwargs):
        """The form behind the page, without the rounded numbers' names (shown, not form fields)."""
        if kwargs.get("fields", ()) is not None:
            fields = kwargs.get("fields") or flatten_fieldsets(self.get_fieldsets(request, obj))
            kwargs["fields"] = [name for name in fields if not str(name).endswith(PAGE_NUMBER)]
        return super().get_form(request, obj, change, **kwargs)

    def _shown(self, name):
        if not isinstance(name, str):
            return name
        try:
            field = self.model._meta.get_field(name)
        except FieldDoesNotExist:
            return name
        if not isinstance(field, models.FloatField):
            return name
        shown = f"{name}{PAGE_NUMBER}"
        if not hasattr(type(self), shown):
            setattr(type(self), shown, rounded(self.model, name, help_below=True))
        return shown

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return self.deletable and super().has_delete_permission(request, obj)


def add_action(model, action) -> admin.ModelAdmin | None:
    """Add `action` to the actions of `model`'s registered admin (an app adding its action to another
    app's list, e.g. analysis's "Build a report" on the studies); once, however often the module loads.
    None when `model` has no admin (yet)."""
    model_admin = admin.site._registry.get(model)
    if model_admin is not None and action not in (model_admin.actions or []):
        model_admin.actions = [*(model_admin.actions or []), action]
    return model_admin
