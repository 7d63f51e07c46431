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

import io
import json

from django import forms
from django.contrib import messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.template.response import TemplateResponse
from django.urls import reverse

from studyserver.uploads import describe_size, max_upload_bytes, too_large

from ..item_csv import CsvImportError
from ..models import ItemsLocked, Study
from . import bank_columns, bank_files, registry, uploads
from .presets import MappingPreset, preset_save, presets_for

PREVIEW_ROWS = 10
FACTORS = "bank_factors"  # the upload form's factors field for a design without a factors option


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
        fields = {"csv_file": forms.FileField(
            label="File", required=False,
            help_text="CSV (UTF-8, header row), JSON (a list of objects, or JSON lines) or Parquet; its columns are "
                      "mapped onto the design's next"), **fields}
        if "factors" not in fields:  # every bank may name its factor columns (analysis/factors.py)
            fields[FACTORS] = forms.CharField(
                required=False, label="factors", help_text="the bank's factor columns (its descriptive columns, or "
                "pair_role, …; separate with spaces): the report's tables and models are by these")
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
          status=200, mapping=None):
    context = {
        "mapping": mapping,
        "template_url": (reverse("admin:experiments_study_template", args=[design.name])
                         if design is not None and design.columns else ""),
        **model_admin.admin_site.each_context(request), "opts": Study._meta, "original": study, "title": title,
        "study": study, "design": design, "form": form, "kind": kind, "preview": preview, "errors": errors,
        "upload": upload, "designs": registry.generated() if kind == "generate" else uploadable(),
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


def uploadable() -> list[registry.Design]:
    """The designs a researcher's file can be uploaded into: those with bank columns."""
    return [d for d in registry.imported() if d.columns]


def template_view(model_admin, request, name):
    """A design's template: its header and two valid example rows (bank_columns.py), as a CSV file."""
    if not model_admin.has_view_permission(request):
        raise PermissionDenied
    design = next((d for d in uploadable() if d.name == name), None)
    if design is None:
        raise Http404(f"No design '{name}' takes an uploaded bank.")
    response = HttpResponse(bank_columns.template_csv(design).encode("utf-8"), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{design.name}-template.csv"'
    return response


def _posted_mapping(design: registry.Design, post) -> dict:
    """The mapping form's fields (m-<field>): {field: column, or a list for a field of several columns}."""
    out = {}
    for column in design.columns:
        value = post.get(f"m-{column.name}", "").strip()
        if value:
            out[column.name] = value
    return bank_files.clean_mapping(design.columns, out)


def _canonical(mapping: dict) -> str:
    return json.dumps(mapping, sort_keys=True, ensure_ascii=False)


def _mapping_context(design, table: bank_files.BankTable, mapping: dict, *, source: str, presets, fmt: str) -> dict:
    fields = []
    for column in design.columns:
        value = mapping.get(column.name)
        fields.append({"name": column.name, "required": column.required, "help": column.help, "many": column.many,
                       "value": ", ".join(value) if isinstance(value, list) else (value or "")})
    return {"fields": fields, "columns": table.columns, "first": table.first(), "rows": len(table.rows),
            "format": fmt, "format_name": bank_files.FORMATS[fmt], "source": source, "presets": presets,
            "previewed": _canonical(mapping)}


def _initial_mapping(request, design, table) -> tuple[dict, str]:
    """(the mapping to show, where it came from): the posted one; else a chosen preset; else a known
    source's; else the columns named as the design's fields."""
    post = request.POST
    preset_id = post.get("preset", "")
    if "use_preset" in post and preset_id.isdigit():
        preset = MappingPreset.objects.filter(pk=int(preset_id), design=design.name).first()
        if preset is not None:
            return bank_files.clean_mapping(design.columns, preset.mapping), f"the preset '{preset.name}'"
    if post.get("mapped") == "1":
        return _posted_mapping(design, post), "your choices"
    known = known_source(design, table)
    if known is not None:
        return known
    return bank_files.suggest_mapping(design.columns, table.columns), "the columns' names"


def known_source(design, table):  # (mapping, "the known source NAME") or None; filled by the sources' readers
    return None


def _store_factors(study: Study, factors: list[str]) -> None:
    from analysis.factors import SETTING, validate

    study.refresh_from_db(fields=["settings"])
    study.settings = {**(study.settings or {}), SETTING: validate(study, factors)}
    study.save(update_fields=["settings", "updated_at"])


def upload_view(model_admin, request, pk):
    """Upload a bank (CSV, JSON, Parquet): its columns mapped onto the design's, then a preview
    (every check, nothing written), then the write."""
    study = _study(request, model_admin, pk)
    choices = uploadable()
    design = _chosen(request, choices, study.design if study.design else "csv-import")
    if design is None:
        design = registry.get("csv-import")
    posted = request.method == "POST"
    form = options_form(design, request.POST if posted else None, request.FILES if posted else None, upload=True)
    title = f"Upload {design.title} items into {study.slug}"
    page = dict(title=title, design=design, form=form, kind="upload")
    if not posted or not form.is_valid():
        return _page(request, model_admin, study, **page)

    def refused(errors, token="", mapping=None):
        if token and mapping is None:
            uploads.upload_discard(user=request.user, study=study, token=token)
        return _page(request, model_admin, study, **page, errors=errors, status=400, upload=token if mapping else "",
                     mapping=mapping)

    limit = max_upload_bytes()
    if too_large(request, form.add_prefix("csv_file")):
        return refused([f"The file is larger than {describe_size(limit)}; nothing of it was kept."])
    upload = form.cleaned_data.get("csv_file")
    token = request.POST.get("upload", "")
    fmt = request.POST.get("format", "")
    if upload:
        try:
            token = uploads.upload_keep(user=request.user, study=study, chunks=upload.chunks(), limit=limit)
        except uploads.UploadTooLarge as exc:
            return refused([str(exc)])
        fmt = ""
    path = uploads.upload_path(user=request.user, study=study, token=token) if token else None
    if path is None:
        return refused(["The uploaded file is no longer kept on the server (it expired, or was uploaded "
                        "elsewhere); choose it again." if token else "Choose a file to upload."])
    data = path.read_bytes()
    try:
        fmt = fmt if fmt in bank_files.FORMATS else bank_files.detect_format(upload.name if upload else "", data[:64])
        table = bank_files.read_table(data, format=fmt)
    except bank_files.BankError as exc:
        return refused(exc.problems, token)
    try:
        mapping, source = _initial_mapping(request, design, table)
    except ValueError as exc:
        mapping, source = {}, "nothing"
        errors = [str(exc)]
    else:
        errors = []
    shown = _mapping_context(design, table, mapping, source=source, presets=presets_for(design.name), fmt=fmt)
    if errors:
        return refused(errors, token, shown)
    notes = []
    name = request.POST.get("preset_name", "").strip()
    if name and "use_preset" not in request.POST:
        try:
            preset = preset_save(name=name, design=design.name, mapping=mapping)
        except ValidationError as exc:
            return refused([f"The preset was not saved: {m}" for m in exc.messages], token, shown)
        notes.append(f"Saved this mapping as the preset '{preset.name}'.")
        shown["presets"] = presets_for(design.name)
    try:
        mapped = bank_files.apply_mapping(table, design.columns, mapping)
    except bank_files.BankError as exc:
        return refused(exc.problems, token, shown)
    write = "write" in request.POST and "use_preset" not in request.POST
    if write and "previewed" in request.POST and request.POST["previewed"] != shown["previewed"]:
        write = False
        notes.append("The mapping changed since the preview: check this preview, then write.")
    factors = form.cleaned_data.get(FACTORS) or ""
    if factors:  # checked against the file's descriptive columns and the study's items before anything is written
        from analysis.factors import attribute_keys, check

        try:
            factors = check(factors, set(mapped.kept) | attribute_keys(study))
        except ValueError as exc:
            return refused([str(exc)], token, shown)
    try:
        values = _values(design, form.cleaned_data)
        if not write:
            preview = design.preview(study=study, data=io.BytesIO(mapped.csv), rows=PREVIEW_ROWS, **values)
            return _page(request, model_admin, study, **page, upload=token, mapping={**shown, "notes": notes},
                         preview={"count": preview.count, "rows": preview.items, "kept": mapped.kept,
                                  "dropped": mapped.dropped})
        report = design.make(study=study, data=io.BytesIO(mapped.csv), **values)
        if factors:
            _store_factors(study, factors)
    except CsvImportError as exc:
        return refused([mapped.explain(e) for e in exc.errors[:50]]
                       + ([f"… and {len(exc.errors) - 50} more"] if len(exc.errors) > 50 else []), token, shown)
    except (ValidationError, ItemsLocked, ValueError) as exc:
        return refused(exc.messages if isinstance(exc, ValidationError) else [str(exc)], token, shown)
    uploads.upload_discard(user=request.user, study=study, token=token)
    messages.success(request, design.describe(report))
    for line in design.warnings(report):
        messages.warning(request, line)
    return redirect(reverse("admin:experiments_study_change", args=[study.pk]))
