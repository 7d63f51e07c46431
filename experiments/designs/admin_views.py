"""Items in the admin (issue 18 item 2): generate any registered design with its options, or upload
a CSV bank through the same validation as `import_items` — every error with its row and column,
nothing written on an error, and a preview of the first items before anything is written.

The preview is the design's own preview (registry.Design.preview): every check of the import, run
outside any transaction and writing nothing, so it never holds the database's write lock (on SQLite
a transaction takes it when it starts); the researcher sees exactly the items the import would write
(or exactly its errors), never a second validator's opinion of them. Between the preview and the
write the file stays on the server (designs/uploads.py, for its uploader and study only); the form
carries its random token, not the file. An upload is refused while it is read once it passes the
size limit (studyserver/uploads.py). A refused file gives a 400 page listing each error with its row.
"""
from __future__ import annotations

from django import forms
from django.contrib import messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.shortcuts import get_object_or_404, redirect
from django.template.response import TemplateResponse
from django.urls import reverse

from studyserver.uploads import describe_size, max_upload_bytes, too_large

from ..item_csv import CsvImportError
from ..models import ItemsLocked, Study
from . import registry, uploads

PREVIEW_ROWS = 10


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


def _page(request, model_admin, study, *, title, design, form, kind, preview=None, errors=(), upload="",
          status=200):
    context = {
        **model_admin.admin_site.each_context(request), "opts": Study._meta, "original": study, "title": title,
        "study": study, "design": design, "form": form, "kind": kind, "preview": preview, "errors": errors,
        "upload": upload, "designs": registry.generated() if kind == "generate" else registry.imported(),
        "preview_rows": PREVIEW_ROWS,
    }
    return TemplateResponse(request, "admin/experiments/study/items_form.html", context, status=status)


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


def upload_view(model_admin, request, pk):
    """Upload a CSV bank: a preview (every check, nothing written) first, then the write."""
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

    def refused(errors, token=""):
        if token:
            uploads.upload_discard(user=request.user, study=study, token=token)
        return _page(request, model_admin, study, **page, errors=errors, status=400)

    limit = max_upload_bytes()
    if too_large(request, form.add_prefix("csv_file")):
        return refused([f"The file is larger than {describe_size(limit)}; nothing of it was kept."])
    upload = form.cleaned_data.get("csv_file")
    token = request.POST.get("upload", "")
    if upload:
        try:
            token = uploads.upload_keep(user=request.user, study=study, chunks=upload.chunks(), limit=limit)
        except uploads.UploadTooLarge as exc:
            return refused([str(exc)])
    path = uploads.upload_path(user=request.user, study=study, token=token) if token else None
    if path is None:
        return refused(["The uploaded file is no longer kept on the server (it expired, or was uploaded "
                        "elsewhere); choose it again." if token else "Choose a CSV file to upload."])
    try:
        values = _values(design, form.cleaned_data)
        with open(path, "rb") as data:
            if request.POST.get("write") != "yes":
                preview = design.preview(study=study, data=data, rows=PREVIEW_ROWS, **values)
                return _page(request, model_admin, study, **page, upload=token,
                             preview={"count": preview.count, "rows": preview.items})
            report = design.make(study=study, data=data, **values)
    except CsvImportError as exc:
        return refused(str(exc).splitlines(), token)
    except (ValidationError, ItemsLocked, ValueError) as exc:
        return refused(exc.messages if isinstance(exc, ValidationError) else [str(exc)], token)
    uploads.upload_discard(user=request.user, study=study, token=token)
    messages.success(request, design.describe(report))
    return redirect(reverse("admin:experiments_study_change", args=[study.pk]))
