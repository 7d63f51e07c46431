"""Who sees which study (issue 34 item 6), the one rule: a staff user sees the studies of the teams
they are a member of and everything under those studies; a superuser sees everything; anyone else
nothing. Everything under a study names its way to it once — a path of relations, declared by its
admin (team_admin.TeamScopedAdmin.study_path, e.g. "participant__study" for a trial) — and every list,
page, action, filter, form field and download reads it through the functions here.

    scope(Trial.objects.all(), user=request.user, path="participant__study")
    study_or_404(user=request.user, pk=pk)

A row a team owns itself, outside any study (a model configuration, issue 45), has a `team` of its own
and may be shared with other teams read-only, by an explicit act (a many-to-many of teams, declared by
its admin: team_admin.TeamOwnedAdmin.shared_field). Its owners see and change it; the teams it is shared
with see it and use it, never change it; a row owned by no team is a superuser's alone.
"""
from __future__ import annotations

from django.db.models import Model, Q, QuerySet
from django.http import Http404

from .models import Study
from .models import Team

STUDY_PATHS: dict[type[Model], str] = {Study: ""}  # model → the relations from it to its study ("" : itself)
OWNED: dict[type[Model], str] = {}  # model a team owns itself → its many-to-many of the teams it is shared with


def register(model: type[Model], path: str) -> None:
    """Declare how `model` reaches its study (team_admin does it for each admin it scopes)."""
    known = STUDY_PATHS.get(model)
    if known is not None and known != path:
        raise ValueError(f"{model.__name__} reaches its study by {known!r}, not {path!r}")
    STUDY_PATHS[model] = path


def register_owned(model: type[Model], shared: str) -> None:
    """Declare that `model`'s rows are owned by a team (their `team`) and shared read-only through `shared`."""
    known = OWNED.get(model)
    if known is not None and known != shared:
        raise ValueError(f"{model.__name__} is shared through {known!r}, not {shared!r}")
    OWNED[model] = shared


def team_ids(user) -> frozenset[int] | None:
    """The ids of the teams whose studies `user` sees; None for a superuser (every team). Read once
    per user object (a request's user), so a page of many checks asks the database once."""
    if user is None or not getattr(user, "is_authenticated", False) or not user.is_active:
        return frozenset()
    if user.is_superuser:
        return None
    ids = getattr(user, "_duet_team_ids", None)
    if ids is None:
        ids = frozenset(Team.objects.filter(members=user).values_list("pk", flat=True))
        user._duet_team_ids = ids
    return ids


def teams_of(user) -> QuerySet:
    """The teams `user` may put a study in and see (a superuser: every team)."""
    ids = team_ids(user)
    return Team.objects.all() if ids is None else Team.objects.filter(pk__in=ids)


def is_scoped(model: type[Model]) -> bool:
    """Whether `model`'s rows belong to teams (a team, a study, anything under a study)."""
    return model is Team or model in STUDY_PATHS or model in OWNED


def condition(user, path: str) -> Q:
    """The condition on rows that reach their study by `path` that `user` may see (Q(): all)."""
    ids = team_ids(user)
    return Q() if ids is None else Q(**{f"{path}__team__in" if path else "team__in": ids})


def limit(model: type[Model], user) -> Q | None:
    """The condition on `model`'s rows that `user` may see: Q() for all, None when `model` belongs to
    no team (a user, a mapping preset: shared)."""
    ids = team_ids(user)
    if model is Team:
        return Q() if ids is None else Q(pk__in=ids)
    if model in OWNED:
        return owned_condition(model, user)
    path = STUDY_PATHS.get(model)
    return None if path is None else condition(user, path)


def scope(queryset: QuerySet, *, user, path: str) -> QuerySet:
    """`queryset` (of a model `path` leads from to its study) cut to the rows `user` may see."""
    return queryset if team_ids(user) is None else queryset.filter(condition(user, path))


def sees(user, obj, path: str) -> bool:
    """Whether `user` may see `obj` (reached from it by `path`, the relations to its study)."""
    ids = team_ids(user)
    if ids is None:
        return True
    for name in filter(None, path.split("__")):
        obj = getattr(obj, name, None)
        if obj is None:
            return False
    return getattr(obj, "team_id", None) in ids


def visible_studies(user) -> QuerySet:
    return scope(Study.objects.all(), user=user, path="")


def study_or_404(*, user, pk=None, slug=None) -> Study:
    """The study `user` may see, by id or slug; Http404 for any other (another team's study is not
    told apart from a study that does not exist)."""
    found = visible_studies(user).filter(**({"pk": pk} if slug is None else {"slug": slug})).first()
    if found is None:
        raise Http404("No such study.")
    return found


def owned_condition(model: type[Model], user, *, shared: bool = True) -> Q:
    """The condition on the rows of `model` (a team's own, OWNED) that `user` sees: their teams' own,
    and (`shared`) those shared with one of their teams; Q() for a superuser. The shared ones are read
    through a subquery, so a row shared with two of the user's teams is listed once."""
    ids = team_ids(user)
    if ids is None:
        return Q()
    mine = Q(team__in=ids)
    if not shared:
        return mine
    return mine | Q(pk__in=model._default_manager.filter(**{f"{OWNED[model]}__in": ids}).values("pk"))


def owns(user, obj) -> bool:
    """Whether `user` may change `obj` (a team's own row): it is one of their teams' (a superuser: any)."""
    ids = team_ids(user)
    return ids is None or getattr(obj, "team_id", None) in ids


def reads(user, obj) -> bool:
    """Whether `user` may see `obj` (a team's own row): theirs, or shared with one of their teams."""
    ids = team_ids(user)
    if ids is None or getattr(obj, "team_id", None) in ids:
        return True
    shared = OWNED.get(type(obj))
    return bool(ids) and shared is not None and obj.pk is not None and \
        getattr(obj, shared).filter(pk__in=ids).exists()
