"""Admin actions that ask for settings first (a simulated pilot, a power analysis): the form is shown
with the selected rows until it validates; then the action runs with the cleaned form."""
from __future__ import annotations

from django.contrib.admin import helpers
from django.template.response import TemplateResponse


def form_or_page(modeladmin, request, queryset, form_class, *, title: str, template: str, action: str,
                 submit: str):
    """(valid form, None) once the confirmed POST validates; else (None, the page with the form)."""
    form = form_class(request.POST if request.POST.get("confirm") == "yes" else None)
    if form.is_valid():
        return form, None
    context = {**modeladmin.admin_site.each_context(request), "title": title, "opts": modeladmin.model._meta,
               "action_checkbox_name": helpers.ACTION_CHECKBOX_NAME, "selected": list(queryset), "form": form,
               "action": action, "submit": submit}
    return None, TemplateResponse(request, template, context)
