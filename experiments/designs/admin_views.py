"""Items in the admin (issue 18 item 2): generate any registered design with its options, or upload
a CSV bank through the same validation as `import_items` — every error with its row and column,
nothing written on an error, and a preview of the first items before anything is written.

The preview is the real import run inside a transaction that is then rolled back: the researcher
sees exactly the items the import would write (or exactly its errors), never a second validator's
opinion of them.
"""
from __future__ import annotations

import base64
import binascii

from django import forms
from django.contrib import messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.shortcuts import get_object_or_404, redirect
from django.template.response import TemplateResponse
from django.urls import reverse

from ..item_csv import CsvImportError
from ..models import Item, ItemsLocked, Study
from . import registry

PREVIEW_ROWS = 10
MAX_UPLOAD_BYTES = 20 * 1024 * 1024


def _field(option: registry.Option) -> forms.Field:
    """A form field for one of a design's options (the same declaration as the command's flag)."""
    common = {"required": False, "help_text": option.help, "label": option.name.replace("_", " ")}
    if option.kind is bool:
        return forms.BooleanField(initial=bool(option.default), **common)
    if option.kind is int:
        return forms.IntegerField(initial=option.default, min_value=1 if option.name != "seed" else 0, **common)
    if option.kind is list and option.choices:
        return forms.MultipleChoiceField(choices=[(c, c) for c in option.choices], initial=option.default,
                                         widget=forms.CheckboxSelectMultiple, **common)
    if option.kind is list:
        return forms.CharField(initial=" ".join(map(str, option.default or [])),
                               **{**common, "help_text": f"{option.help} (separate with spaces)"})
    if option.choices:
        return forms.ChoiceField(choices=[("", "(the study's)"), *[(c, c) for c in option.choices]], **common)
    return forms.CharField(initial=option.default, **common)


def options_form(design: registry.Design, data=None, files=None, *, upload: bool = False) -> forms.Form:
    fields = {option.name: _field(option) for option in design.options}
    if upload:
        fields = {"csv_file": forms.FileField(label="CSV file", required=False,
                                              help_text="UTF-8 CSV; see docs/designs.md for its columns"), **fields}
    form_class = type(f"{design.name.title().replace('-', '')}Options", (forms.Form,), fields)
    return form_class(data, files, prefix="o")


def _values(design: registry.Design, cleaned: dict) -> dict:
    values = {}
    for option in design.options:
        value = cleaned.get(option.name)
        if option.kind is list and isinstance(value, str):
            try:
                value = [option.item(v) for v in value.split()]
            except ValueError:
                raise ValidationError(f"{option.name}: whole numbers separated by spaces") from None
        if value in (None, "", []) and option.kind is not bool:
            value = option.default
        values[option.name] = value
    return values


def _page(request, model_admin, study, *, title, design, form, kind, preview=None, errors=(), payload=""):
    context = {
        **model_admin.admin_site.each_context(request), "opts": Study._meta, "original": study, "title": title,
        "study": study, "design": design, "form": form, "kind": kind, "preview": preview, "errors": errors,
        "payload": payload, "designs": registry.generated() if kind == "generate" else registry.imported(),
        "preview_rows": PREVIEW_ROWS,
    }
    return TemplateResponse(request, "admin/experiments/study/items_form.html", context)


def _preview(study: Study, after_id: int) -> dict:
    """The items the trial import wrote (ids above `after_id`): how many, and the first rows."""
    new = study.items.filter(id__gt=after_id).order_by("id")
    rows = list(new.values("code", "design", "condition", "gold_answer", "question", "prompt")[:PREVIEW_ROWS])
    return {"count": new.count(), "rows": rows}


def _study(request, model_admin, pk) -> Study:
    if not model_admin.has_change_permission(request):
        raise PermissionDenied
    return get_object_or_404(Study, pk=pk)


def _chosen(request, choices, default: str | None = None) -> registry.Design | None:
    name = request.POST.get("design") or request.GET.get("design") or default
    return next((d for d in choices if d.name == name), None)


def generate_view(model_admin, request, pk):
    """Generate a design's items into the study, with that design's options."""
    study = _study(request, model_admin, pk)
    design = _chosen(request, registry.generated(), study.design)
    if design is None:
        return _page(request, model_admin, study, title=f"Generate items into {study.slug}", design=None, form=None,
                     kind="generate")
    form = options_form(design, request.POST if request.method == "POST" else None)
    title = f"Generate {design.title} items into {study.slug}"
    if request.method != "POST" or not form.is_valid():
        return _page(request, model_admin, study, title=title, design=design, form=form, kind="generate")
    try:
        with transaction.atomic():
            report = design.make(study=study, **_values(design, form.cleaned_data))
    except (ValidationError, ItemsLocked, ValueError) as exc:
        errors = exc.messages if isinstance(exc, ValidationError) else [str(exc)]
        return _page(request, model_admin, study, title=title, design=design, form=form, kind="generate",
                     errors=errors)
    messages.success(request, design.describe(report))
    for line in design.warnings(report):
        messages.warning(request, line)
    return redirect(reverse("admin:experiments_study_change", args=[study.pk]))


class _Rollback(Exception):
    """Ends a preview's transaction: everything the trial import wrote is undone."""


def upload_view(model_admin, request, pk):
    """Upload a CSV bank: a preview (the import run and rolled back) first, then the write."""
    study = _study(request, model_admin, pk)
    design = _chosen(request, registry.imported(), study.design if study.design else "csv-import")
    if design is None:
        design = registry.get("csv-import")
    posted = request.method == "POST"
    form = options_form(design, request.POST if posted else None, request.FILES if posted else None, upload=True)
    title = f"Upload {design.title} items into {study.slug}"
    page = dict(title=title, design=design, form=form, kind="upload")
    if not posted or not form.is_valid():
        return _page(request, model_admin, study, **page)
    upload = form.cleaned_data.get("csv_file")
    try:
        data = upload.read() if upload else base64.b64decode(request.POST.get("payload", ""), validate=True)
    except (binascii.Error, ValueError):
        data = b""
    if not data:
        return _page(request, model_admin, study, **page, errors=["Choose a CSV file to upload."])
    if len(data) > MAX_UPLOAD_BYTES:
        return _page(request, model_admin, study, **page, errors=[f"The file is larger than {MAX_UPLOAD_BYTES // 2**20} MB."])
    try:
        values = _values(design, form.cleaned_data)
        if request.POST.get("write") != "yes":  # the preview: the real import, then undone
            try:
                with transaction.atomic():
                    last = Item.objects.order_by("-id").values_list("id", flat=True).first() or 0
                    design.make(study=study, data=data, **values)
                    preview = _preview(study, last)
                    raise _Rollback
            except _Rollback:
                pass
            return _page(request, model_admin, study, **page, preview=preview,
                         payload=base64.b64encode(data).decode("ascii"))
        with transaction.atomic():
            report = design.make(study=study, data=data, **values)
    except CsvImportError as exc:
        return _page(request, model_admin, study, **page, errors=str(exc).splitlines())
    except (ValidationError, ItemsLocked, ValueError) as exc:
        return _page(request, model_admin, study, **page,
                     errors=exc.messages if isinstance(exc, ValidationError) else [str(exc)])
    messages.success(request, design.describe(report))
    return redirect(reverse("admin:experiments_study_change", args=[study.pk]))
