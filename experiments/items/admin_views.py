"""Items in the admin (issue 18 item 2): generate any registered design with its options, or upload
a CSV bank through the same validation as `import_items` — every error with its row and column,
nothing written on an error, and a preview of the first items before anything is written.

The preview is the design's own preview (registry.Design.preview): every check of the import, run
outside any transaction and writing nothing, so it never holds the database's write lock (on SQLite
a transaction takes it when it starts); the researcher sees exactly the items the import would write
(or exactly its errors), never a second validator's opinion of them. Between the preview and the
write the file stays on the server (designs/uploads.py, for its uploader and study only); the form
carries its random token, not the file. An upload is refused while it is read once it passes the
size limit (common/uploads.py). A refused file gives a 400 page listing each error with its row.
"""
from __future__ import annotations

from django import forms
from django.contrib import messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import reverse

from ..models import ItemsLocked, Study
from ..team_scope import study_or_404
from .. import design_registry as registry

PREVIEW_ROWS = 10
FACTORS = "bank_factors"  # the upload form's factors field for a design without a factors option


def _field(option: registry.Option, study: Study | None = None) -> forms.Field:
    """A form field for one of a design's options (the same declaration as the command's flag); an option
    that defaults to a study field names this study's value ("(the study's: K)")."""
    common = {"required": False, "help_text": option.help, "label": option.name.replace("_", " ")}
    if option.study_field and study is not None:
        own = getattr(study, option.study_field)
        common["help_text"] = f"{option.help} (default: this study's, {own})"
        return forms.ChoiceField(choices=[("", f"(the study's: {own})"), *[(c, c) for c in option.choices]],
                                 **common)
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


def options_form(design: registry.Design, data=None, files=None, *, upload: bool = False,
                 study: Study | None = None) -> forms.Form:
    fields = {option.name: _field(option, study)
              for option in (design.import_options if upload else design.options)}
    if upload:
        fields = {"csv_file": forms.FileField(
            label="File", required=False,
            help_text="CSV (UTF-8, header row), JSON (a list of objects, or JSON lines) or Parquet. On the next page "
                      "its columns are mapped onto the design's fields, with its first rows shown; nothing is written "
                      "before you confirm the preview."), **fields}
        if "factors" not in fields:  # every bank may name its factor columns (analysis/factors.py)
            fields[FACTORS] = forms.CharField(
                required=False, label="factors", help_text="the bank's factor columns (its descriptive columns, or "
                "pair_role, …; separate with spaces): the report's tables and models are by these")
    form_class = type(f"{design.name.title().replace('-', '')}Options", (forms.Form,), fields)
    return form_class(data, files, prefix="o")


def _values(design: registry.Design, cleaned: dict, *, upload: bool = False) -> dict:
    values = {}
    for option in (design.import_options if upload else design.options):
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
        "upload": upload, "designs": registry.generated() if kind == "generate" else registry.uploadable(),
        "preview_rows": PREVIEW_ROWS,
    }
    return TemplateResponse(request, "admin/experiments/study/items_form.html", context, status=status)


def _study(request, model_admin, pk) -> Study:
    if not model_admin.has_change_permission(request):
        raise PermissionDenied
    return study_or_404(user=request.user, pk=pk)  # another team's study: 404


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
    form = options_form(design, request.POST if request.method == "POST" else None, study=study)
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
