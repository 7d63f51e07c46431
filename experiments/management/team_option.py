"""--team for the commands that make a study (generate_items, import_items): a new study goes to the
named team (experiments/models/teams.py) instead of the default team; an existing study must already be in it
(a command never moves a study between teams; the admin does, with its permissions)."""
from __future__ import annotations

from django.core.management.base import CommandError

from experiments.models import Team


def add_team_argument(parser) -> None:
    parser.add_argument("--team", metavar="NAME",
                        help="the team (lab) a new study belongs to (default: the default team); an existing "
                             "study must already be in it")


def team_named(name: str | None) -> Team | None:
    """The team called `name` (None when no name is given); CommandError naming the teams there are."""
    if not name:
        return None
    team = Team.objects.filter(name=name).first()
    if team is None:
        known = ", ".join(repr(n) for n in Team.objects.values_list("name", flat=True)) or "none"
        raise CommandError(f"No team is called '{name}' (teams: {known}). An administrator adds teams in the admin "
                           "(Experiments › Teams).")
    return team


def check_team(study, team: Team | None) -> None:
    """CommandError when `study` (existing) is not in `team`."""
    if team is not None and study.team_id != team.pk:
        raise CommandError(f"Study '{study.slug}' belongs to the team '{study.team}', not '{team.name}'; "
                           "nothing was changed.")
