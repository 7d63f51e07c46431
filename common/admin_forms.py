"""Admin actions that ask for settings first (a simulated pilot, a power analysis, a model check): the
form is shown with the selected rows until it validates; then the action runs with the cleaned form.
RefusedActionsMixin answers a hand-made POST of an action the user may not take with a 403."""
from __future__ import annotations

from django.contrib.admin import helpers
from django.core.exceptions import PermissionDenied
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


class RefusedActionsMixin:
    """A ModelAdmin whose actions each need their permission (`@admin.action(permissions=[…])`), also when
    the POST is made by hand: an action the user may not take is a 403, not the list's "No action
    selected" (the admin itself only leaves it out of the menu)."""

    def changelist_view(self, request, extra_context=None):
        name = request.POST.get("action") if request.method == "POST" else None
        if name and name not in self.get_actions(request):
            if name in {action_name for _, action_name, _ in self._get_base_actions()}:
                raise PermissionDenied(f"You may not run the action {name!r}.")
        return super().changelist_view(request, extra_context)
