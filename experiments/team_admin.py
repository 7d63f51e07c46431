"""The admin side of teams (issue 34 item 6): one mixin every admin of something under a study takes,
and the Team admin where memberships are managed.

    class TrialAdmin(TeamScopedAdmin, ReadOnlyAdmin):
        study_path = "participant__study"   # the relations from a trial to its study

The mixin cuts the admin's queryset to the user's teams (lists, search, filters' counts, actions,
change, delete and history pages all start from it: another team's object "does not exist"), checks
an object against the user's teams in has_view/change/delete_permission, limits every foreign-key
choice (a select, a raw id typed in, a list filter's links) to what the user sees, and gives custom
views the object or a 404 (scoped_object_or_404). The rule itself is team_scope.py's.

    class LanguageModelAdmin(TeamOwnedAdmin, admin.ModelAdmin):
        shared_field = "shared_with"        # the teams it is shared with, read-only

TeamOwnedAdmin is the same for a row a team owns itself, outside any study (issue 45): its list holds
the user's teams' own and those shared with them; only the owners may change or delete one (the others
get the read-only page); its `team` is chosen among the user's teams (a new one: their first, preset),
and so are the teams it is shared with.
"""
from __future__ import annotations

from django.contrib import admin
from django.contrib.admin.utils import NotRelationField, get_fields_from_path
from django.core.exceptions import FieldDoesNotExist, ValidationError
from django.db.models import Count
from django.http import Http404

from . import team_scope
from .models import Team


class TeamRelatedFilter(admin.RelatedFieldListFilter):
    """A list filter over a relation whose choices are cut to the user's teams (Django's own lists
    every row of the related table: every lab's study names in the sidebar)."""

    def field_choices(self, field, request, model_admin):
        ordering = self.field_admin_ordering(field, request, model_admin)
        return field.get_choices(include_blank=False, ordering=ordering,
                                 limit_choices_to=team_scope.limit(field.related_model, request.user))


class TeamChoicesAdmin:
    """What both team mixins share: every foreign-key choice and list filter cut to what the user sees."""

    team_scoped = True

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        condition = team_scope.limit(db_field.related_model, request.user)
        if condition is not None and "queryset" not in kwargs:
            kwargs["queryset"] = db_field.related_model._default_manager.filter(condition)
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def get_list_filter(self, request):
        return [self._scoped_filter(entry) for entry in super().get_list_filter(request)]

    def _scoped_filter(self, entry):
        if not isinstance(entry, str):
            return entry
        try:
            field = get_fields_from_path(self.model, entry)[-1]
        except (FieldDoesNotExist, NotRelationField):
            return entry
        if field.is_relation and team_scope.is_scoped(field.related_model):
            return (entry, TeamRelatedFilter)
        return entry


class TeamScopedAdmin(TeamChoicesAdmin):
    """Mix in first (before ModelAdmin and its other mixins); declare `study_path`."""

    study_path = "study"  # the relations from this admin's model to its study; "" for the study itself

    def __init__(self, model, admin_site):
        super().__init__(model, admin_site)
        team_scope.register(model, self.study_path)

    def get_queryset(self, request):
        return team_scope.scope(super().get_queryset(request), user=request.user, path=self.study_path)

    def scoped_object_or_404(self, request, pk):
        """The object `pk` if the user's teams see it (without the list's annotations); else Http404."""
        rows = team_scope.scope(self.model._default_manager.all(), user=request.user, path=self.study_path)
        try:
            found = rows.filter(pk=pk).first()
        except (ValueError, ValidationError):
            found = None
        if found is None:
            raise Http404(f"No such {self.model._meta.verbose_name}.")
        return found

    def _sees(self, request, obj) -> bool:
        return obj is None or team_scope.sees(request.user, obj, self.study_path)

    def has_view_permission(self, request, obj=None):
        return self._sees(request, obj) and super().has_view_permission(request, obj)

    def has_change_permission(self, request, obj=None):
        return self._sees(request, obj) and super().has_change_permission(request, obj)

    def has_delete_permission(self, request, obj=None):
        return self._sees(request, obj) and super().has_delete_permission(request, obj)


class TeamOwnedAdmin(TeamChoicesAdmin):
    """Mix in first, for a model with a `team` of its own and `shared_field`, a many-to-many of the
    teams it is shared with read-only. A row of no team is a superuser's alone."""

    shared_field = "shared_with"

    def __init__(self, model, admin_site):
        super().__init__(model, admin_site)
        team_scope.register_owned(model, self.shared_field)

    def get_queryset(self, request):
        return super().get_queryset(request).filter(team_scope.owned_condition(self.model, request.user))

    def scoped_object_or_404(self, request, pk):
        """The object `pk` if the user's teams own it or it is shared with them; else Http404."""
        rows = self.model._default_manager.filter(team_scope.owned_condition(self.model, request.user))
        try:
            found = rows.filter(pk=pk).first()
        except (ValueError, ValidationError):
            found = None
        if found is None:
            raise Http404(f"No such {self.model._meta.verbose_name}.")
        return found

    def has_view_permission(self, request, obj=None):
        return (obj is None or team_scope.reads(request.user, obj)) and super().has_view_permission(request, obj)

    def has_change_permission(self, request, obj=None):
        return (obj is None or team_scope.owns(request.user, obj)) and super().has_change_permission(request, obj)

    def has_delete_permission(self, request, obj=None):
        return (obj is None or team_scope.owns(request.user, obj)) and super().has_delete_permission(request, obj)

    def get_changeform_initial_data(self, request):
        initial = super().get_changeform_initial_data(request)
        if "team" not in initial:  # a new one goes to the user's team (the first of theirs; they may choose)
            first = team_scope.teams_of(request.user).first()
            if first is not None:
                initial["team"] = first.pk
        return initial

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        if db_field.name == "team" and "queryset" not in kwargs:
            kwargs["queryset"] = team_scope.teams_of(request.user)
        field = super().formfield_for_foreignkey(db_field, request, **kwargs)
        if db_field.name == "team" and field is not None and not request.user.is_superuser:
            field.required, field.empty_label = True, None  # only a superuser's may belong to no team
        return field

    def formfield_for_manytomany(self, db_field, request, **kwargs):
        if db_field.name == self.shared_field and "queryset" not in kwargs:
            kwargs["queryset"] = team_scope.teams_of(request.user)
        return super().formfield_for_manytomany(db_field, request, **kwargs)


@admin.register(Team)
class TeamAdmin(admin.ModelAdmin):
    """Teams and their members. A superuser sees and manages every team; a staff user with the team
    permissions only the teams they are a member of (a team they add has them as a member)."""

    team_scoped = True
    list_display = ("name", "member_names", "study_count", "created_at")
    search_fields = ("name",)
    filter_horizontal = ("members",)
    fields = ("name", "members")

    def get_queryset(self, request):
        rows = team_scope.teams_of(request.user)
        return rows.annotate(_studies=Count("studies", distinct=True)).prefetch_related("members").order_by("name")

    @admin.display(description="members")
    def member_names(self, obj):
        return ", ".join(sorted(user.get_username() for user in obj.members.all())) or "—"

    @admin.display(description="studies", ordering="_studies")
    def study_count(self, obj):
        return obj._studies

    def save_related(self, request, form, formsets, change):
        super().save_related(request, form, formsets, change)
        if not change and not request.user.is_superuser:
            form.instance.members.add(request.user)  # else they could not see the team they made
            request.user.__dict__.pop("_duet_team_ids", None)
