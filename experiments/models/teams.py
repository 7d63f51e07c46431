"""Teams (issue 34 item 6): a lab. Every study belongs to one team, and a staff user sees and acts on
the studies of the teams they are a member of, with everything under them (team_scope.py holds that
rule; team_admin.py applies it to the admin). Superusers see every team's studies.

A study made without naming a team (a management command, the demo, a benchmark) goes to the
default team; the migration that brought teams put every existing study there and made every
staff user of the time a member, so nothing changed for anyone until an administrator split them.
"""
from __future__ import annotations

from django.conf import settings
from django.db import models

DEFAULT_TEAM = "Default team"


class Team(models.Model):
    name = models.CharField(max_length=100, unique=True, help_text="The lab's name, e.g. “Modal reasoning lab”.")
    members = models.ManyToManyField(
        settings.AUTH_USER_MODEL, related_name="teams", blank=True,
        help_text="The staff users who see and work on the team's studies (their permissions still apply). "
                  "Superusers see every team's studies without being members.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        app_label = "experiments"
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


def default_team_id() -> int:
    """The default team's id (made when first needed): where a study made without a team goes."""
    return Team.objects.get_or_create(name=DEFAULT_TEAM)[0].pk
