"""Uploading a bank in the admin (issue 27 part 2): any file, mapped, or a known published source.

1. The researcher chooses a design and a file (CSV, JSON, JSON lines or Parquet; bank_files.py). The
   file is kept on the server under a random token (uploads.py) until it is written.
2. A known published source (sources.py: a reader the design declares, which reads the file) fills
   the mapping in by itself: the reader's columns and what each fills are shown, and the reader
   imports the file (its rows it cannot map are listed, by id, in the preview). Otherwise the
   file's columns are mapped onto the design's bank columns (registry.BankColumn): from a chosen
   preset (presets.py), else from the columns' names; the file's first rows are shown beside the
   mapping, which the researcher can change and save as a named preset.
3. The preview is the design's own: every check, nothing written, errors by the file's row and
   column; "Write" imports with the mapping that was previewed (a changed mapping is previewed again).
"""
from __future__ import annotations

import contextlib
import inspect
import io
import json

from django.contrib import messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.http import Http404, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse

from common.uploads import describe_size, max_upload_bytes, too_large

from ..item_csv import CsvImportError
from ..models import ItemsLocked, Study
from .. import design_registry as registry
from . import bank_columns, bank_files, sources, uploads
from .admin_views import FACTORS, PREVIEW_ROWS, _chosen, _page, _study, _values, options_form
from .import_progress import progress_recorder
from .presets import MappingPreset, preset_save, presets_for

MAP_MYSELF = sources.BANK  # the source choice "map the columns myself" (the design's own bank columns)


def template_view(model_admin, request, name):
    """A design's template: its header and two valid example rows (bank_columns.py), as a CSV file."""
    if not model_admin.has_view_permission(request):
        raise PermissionDenied
    design = next((d for d in registry.imported() if d.name == name and d.columns), None)
    if design is None:
        raise Http404(f"No design '{name}' takes an uploaded bank.")
    response = HttpResponse(bank_columns.template_csv(design).encode("utf-8"), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{design.name}-template.csv"'
    return response


SHOWN_TABLE_BYTES = 2 * 1024 * 1024  # a known source's file up to this size is also shown as a table (first rows)


def known_source(design: registry.Design, path, filename: str, wanted: str = "", errors=None):
    """(reader, the fields its rows fill) of the first published format the design declares that reads
    the kept file at `path` (at least one row, no ReaderError) — or of `wanted`, named by the researcher;
    None when none does (each reader's reason is added to `errors`, when given). The file is read as the
    reader streams it (a line at a time for RULEBREAKERS), its rows counted, not kept."""
    readers = sources.for_design(design)
    if wanted:
        readers = [r for r in readers if r.name == wanted]
    for reader in readers:
        fields, rows = set(), 0
        try:
            with path.open("rb") as handle:
                if reader.stream_lines is not None:
                    sources.check_utf8(handle, filename or reader.name)
                for one in reader.stream(handle, filename=filename):
                    if isinstance(one, sources.Row):
                        rows += 1
                        fields.update(one.fields)
        except sources.ReaderError as exc:
            if errors is not None:
                errors.append(f"As {reader.title} ({reader.name}): {exc}")
            continue
        if rows:
            return reader, fields
    return None


def _posted_mapping(design: registry.Design, post) -> dict:
    """The mapping form's fields (m-<field>): {field: column, or a list for a field of several columns}."""
    out = {c.name: post.get(f"m-{c.name}", "").strip() for c in design.columns}
    return bank_files.clean_mapping(design.columns, {k: v for k, v in out.items() if v})


def _canonical(mapping: dict) -> str:
    return json.dumps(mapping, sort_keys=True, ensure_ascii=False)


def _shown(design, table, mapping: dict, *, source: str, fmt: str, reader=None, problems=()) -> dict:
    fields = []
    for column in design.columns if reader is None else ():
        value = mapping.get(column.name)
        fields.append({"name": column.name, "required": column.required, "help": column.help, "many": column.many,
                       "value": ", ".join(value) if isinstance(value, list) else (value or "")})
    return {
        "fields": fields, "columns": table.columns if table else (), "first": table.first() if table else [],
        "rows": len(table.rows) if table else None, "format": fmt,
        "format_name": bank_files.FORMATS.get(fmt, fmt), "source": source,
        "presets": presets_for(design.name) if reader is None else [],
        "previewed": reader.name if reader is not None else _canonical(mapping),
        "reader": reader, "reader_columns": list(reader.columns.items()) if reader is not None else [],
        "readers": sources.for_design(design), "can_map": bool(design.columns), "map_myself": MAP_MYSELF,
        "notes": [],
    }


def _initial_mapping(post, design, table) -> tuple[dict, str]:
    """(the mapping to show, where it came from): a chosen preset; else the posted one; else the
    columns named as the design's fields."""
    preset_id = post.get("preset", "")
    if "use_preset" in post and preset_id.isdigit():
        preset = MappingPreset.objects.filter(pk=int(preset_id), design=design.name).first()
        if preset is not None:
            return bank_files.clean_mapping(design.columns, preset.mapping), f"the preset '{preset.name}'"
    if post.get("mapped") == "1":
        return _posted_mapping(design, post), "your choices"
    return bank_files.suggest_mapping(design.columns, table.columns), "the columns' names"


def _check_factors(form, study, kept) -> list[str]:
    """The upload form's factor names checked against the file's descriptive columns and the study's
    items (ValueError naming what there is)."""
    factors = form.cleaned_data.get(FACTORS) or ""
    if not factors:
        return []
    from ..factors import attribute_keys, check

    return check(factors, set(kept) | attribute_keys(study))


def _together(factors):
    """With factors to store, the write and the factors in one transaction (a factor refused after the
    write undoes it); without, the import's own transactions (its checks hold no write lock)."""
    return transaction.atomic() if factors else contextlib.nullcontext()


def _store_factors(study: Study, factors: list[str]) -> None:
    from ..factors import SETTING, validate

    study.refresh_from_db(fields=["settings"])
    study.settings = {**(study.settings or {}), SETTING: validate(study, factors)}
    study.save(update_fields=["settings", "updated_at"])


UNREADABLE = ("The file could not be read within the server's limits ({what}); nothing was written. A bank's records "
              "are objects of text, numbers and lists of text: check that the file is the bank you meant to upload.")


def upload_view(model_admin, request, pk):
    """Upload a bank (CSV, JSON, Parquet) or a published file: mapped, previewed (every check, nothing
    written), then written. A file that exhausts the reader (nesting past Python's recursion limit,
    memory) is a refusal like any other, never a server error (issue 34 item 4); the transactions it
    was inside are undone."""
    study = _study(request, model_admin, pk)
    try:
        return _upload(model_admin, request, study)
    except (RecursionError, MemoryError) as exc:
        what = "it nests too deep" if isinstance(exc, RecursionError) else "it needs too much memory"
        design = _chosen(request, registry.uploadable(), study.design or registry.generic_bank().name) \
            or registry.generic_bank()
        token = request.POST.get("upload", "")
        if token:
            uploads.upload_discard(user=request.user, study=study, token=token)
        form = options_form(design, request.POST, request.FILES, upload=True)
        return _page(request, model_admin, study, title=f"Upload {design.title} items into {study.slug}",
                     design=design, form=form, kind="upload", errors=[UNREADABLE.format(what=what)], status=400)


def _upload(model_admin, request, study):
    design = _chosen(request, registry.uploadable(), study.design or registry.generic_bank().name)
    if design is None:
        design = registry.generic_bank()
    posted = request.method == "POST"
    form = options_form(design, request.POST if posted else None, request.FILES if posted else None, upload=True)
    page = dict(title=f"Upload {design.title} items into {study.slug}", design=design, form=form, kind="upload")
    if not posted or not form.is_valid():
        return _page(request, model_admin, study, **page)
    post = request.POST

    def refused(errors, token="", shown=None):
        errors = list(dict.fromkeys(errors))  # each error once
        if token and shown is None:
            uploads.upload_discard(user=request.user, study=study, token=token)
        return _page(request, model_admin, study, **page, errors=errors, status=400, upload=token if shown else "",
                     mapping=shown)

    limit = max_upload_bytes()
    if too_large(request, form.add_prefix("csv_file")):
        return refused([f"The file is larger than {describe_size(limit)} (the deployment's setting DUET_MAX_UPLOAD_MB); "
                        "nothing of it was kept."])
    upload = form.cleaned_data.get("csv_file")
    token, fmt, filename = post.get("upload", ""), post.get("format", ""), post.get("filename", "")[:200]
    wanted = post.get("source", "")
    if upload:
        try:
            token = uploads.upload_keep(user=request.user, study=study, chunks=upload.chunks(), limit=limit)
        except uploads.UploadTooLarge as exc:
            return refused([str(exc)])
        fmt, filename, wanted = "", upload.name[:200], ""
    path = uploads.upload_path(user=request.user, study=study, token=token) if token else None
    if path is None:
        return refused(["The uploaded file is no longer kept on the server (it expired, or was uploaded "
                        "elsewhere); choose it again." if token else "Choose a file to upload."])
    with path.open("rb") as handle:
        head = handle.read(64)
    fmt = fmt if fmt in bank_files.FORMATS else bank_files.detect_format(filename, head)
    if fmt == "workbook":  # a spreadsheet: no reader reads it, and the researcher is told how to export it
        return refused([bank_files.WORKBOOK_MESSAGE], token)
    table, unreadable, reasons = None, [], []
    known = (None if wanted == MAP_MYSELF and design.columns
             else known_source(design, path, filename, wanted, errors=reasons))
    if known is None or path.stat().st_size <= SHOWN_TABLE_BYTES:  # a bank is read whole (at most 20 MB)
        try:
            table = bank_files.read_table(path.read_bytes(), format=fmt)
        except bank_files.BankError as exc:
            unreadable = exc.problems
    if known is not None:  # a published file is streamed from its kept copy, never read whole
        return _from_source(request, model_admin, study, page, form, design, path, filename, token, fmt, table,
                            known, refused)
    if not design.columns:
        names = ", ".join(r.name for r in sources.for_design(design))
        return refused([f"The design '{design.name}' has no bank of its own, and the file is not in a format it "
                        f"reads ({names}). A yes/no bank with pair_id and pair_role columns goes into it through "
                        "the yes/no design (csv-import).", *reasons], token)
    if table is None:
        return refused(unreadable, token)
    return _mapped(request, model_admin, study, page, form, design, table, token, fmt, filename, refused)


def _from_source(request, model_admin, study, page, form, design, path, filename, token, fmt, table, known, refused):
    """A known published source: its reader maps the file; the preview lists the rows it leaves out. The
    preview and the write read the kept file as the reader streams it."""
    reader, kept = known
    shown = _shown(design, table, {}, source=f"the known source {reader.title} ({reader.name})", fmt=fmt,
                   reader=reader)
    shown["filename"] = filename
    post = request.POST
    try:
        factors = _check_factors(form, study, kept | {"pair_role"})
        values = {**_values(design, form.cleaned_data, upload=True), "format": reader.name, "filename": filename}
        write = "write" in post and post.get("previewed") == reader.name
        if not write:
            with _opened(reader, path) as data:
                preview = design.import_preview(study=study, data=data, rows=PREVIEW_ROWS, **values)
            return _page(request, model_admin, study, **page, upload=token, mapping=shown,
                         preview={"count": preview.count, "rows": preview.items,
                                  "problems": [str(p) for p in preview.problems]})
        if "on_progress" in inspect.signature(design.importer).parameters:  # a streamed import: its progress shown
            values["on_progress"] = progress_recorder(user=request.user, token=token)
        with _together(factors), _opened(reader, path) as data:
            report = design.importer(study=study, data=data, skip_problems=True, **values)
            if factors:
                _store_factors(study, factors)
    except (ValidationError, ItemsLocked, ValueError) as exc:
        return refused(exc.messages if isinstance(exc, ValidationError) else [str(exc)], token, shown)
    return _written(request, study, design, report, token)


def _opened(reader, path):
    """The kept file for a reader's import: open, for one that streams; its bytes (within the upload's
    bound) for one that reads a file whole."""
    if reader.stream_lines is not None:
        return path.open("rb")
    return contextlib.nullcontext(path.read_bytes())


def _written(request, study, design, report, token):
    uploads.upload_discard(user=request.user, study=study, token=token)
    messages.success(request, design.describe(report))
    for line in design.warnings(report):
        messages.warning(request, line)
    return redirect(reverse("admin:experiments_study_change", args=[study.pk]))


def _mapped(request, model_admin, study, page, form, design, table, token, fmt, filename, refused):
    """A bank mapped onto the design's columns, through the design's own preview and import."""
    post = request.POST
    try:
        mapping, source = _initial_mapping(post, design, table)
    except ValueError as exc:
        return refused([str(exc)], token, _shown(design, table, {}, source="nothing", fmt=fmt))
    shown = _shown(design, table, mapping, source=source, fmt=fmt)
    shown["filename"] = filename
    name = post.get("preset_name", "").strip()
    if name and "use_preset" not in post:
        try:
            preset = preset_save(name=name, design=design.name, mapping=mapping)
        except ValidationError as exc:
            return refused([f"The preset was not saved: {m}" for m in exc.messages], token, shown)
        shown["notes"].append(f"Saved this mapping as the preset '{preset.name}'.")
        shown["presets"] = presets_for(design.name)
    try:
        mapped = bank_files.apply_mapping(table, design.columns, mapping)
    except bank_files.BankError as exc:
        return refused(exc.problems, token, shown)
    write = "write" in post and "use_preset" not in post
    if write and "previewed" in post and post["previewed"] != shown["previewed"]:
        write = False
        shown["notes"].append("The mapping changed since the preview: check this preview, then write.")
    try:
        factors = _check_factors(form, study, mapped.kept)
        values = _values(design, form.cleaned_data, upload=True)
        if not write:
            preview = design.preview(study=study, data=io.BytesIO(mapped.csv), rows=PREVIEW_ROWS, **values)
            return _page(request, model_admin, study, **page, upload=token, mapping=shown,
                         preview={"count": preview.count, "rows": preview.items, "kept": mapped.kept,
                                  "dropped": mapped.dropped})
        with _together(factors):
            report = design.make(study=study, data=io.BytesIO(mapped.csv), **values)
            if factors:
                _store_factors(study, factors)
    except CsvImportError as exc:
        return refused([mapped.explain(e) for e in exc.errors[:50]]
                       + ([f"… and {len(exc.errors) - 50} more"] if len(exc.errors) > 50 else []), token, shown)
    except (ValidationError, ItemsLocked, ValueError) as exc:
        return refused(exc.messages if isinstance(exc, ValidationError) else [str(exc)], token, shown)
    return _written(request, study, design, report, token)
