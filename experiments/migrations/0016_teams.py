"""Teams (issue 34 item 6): every study belongs to a team (a lab). Existing studies move to the
default team, and every staff user of the time becomes its member, so nobody loses sight of a study
at the upgrade; an administrator then makes a team per lab and moves studies and people there."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

import experiments.models.teams

DEFAULT_TEAM = "Default team"  # experiments.models.teams.DEFAULT_TEAM as it was when this migration was written


def existing_studies_to_the_default_team(apps, schema_editor):
    Team, Study = apps.get_model("experiments", "Team"), apps.get_model("experiments", "Study")
    User = apps.get_model(*settings.AUTH_USER_MODEL.split("."))
    team, _ = Team.objects.get_or_create(name=DEFAULT_TEAM)
    Study.objects.filter(team__isnull=True).update(team=team)
    team.members.add(*User.objects.filter(is_staff=True, is_superuser=False))


class Migration(migrations.Migration):

    dependencies = [
        ("experiments", "0015_item_link_kind"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="Team",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("name", models.CharField(help_text="The lab's name, e.g. “Modal reasoning lab”.", max_length=100,
                                          unique=True)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("members", models.ManyToManyField(
                    blank=True, related_name="teams", to=settings.AUTH_USER_MODEL,
                    help_text="The staff users who see and work on the team's studies (their permissions still "
                              "apply). Superusers see every team's studies without being members.")),
            ],
            options={"ordering": ["name"]},
        ),
        migrations.AddField(
            model_name="study",
            name="team",
            field=models.ForeignKey(null=True, on_delete=django.db.models.deletion.PROTECT, related_name="studies",
                                    to="experiments.team"),
        ),
        migrations.RunPython(existing_studies_to_the_default_team, migrations.RunPython.noop),
        # The column becomes NOT NULL as it is (every row has its team now); the default (a callable that
        # makes the default team) is the model's, in Python only, so this migration never runs today's model.
        migrations.SeparateDatabaseAndState(
            database_operations=[migrations.AlterField(
                model_name="study", name="team",
                field=models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name="studies",
                                        to="experiments.team"),
            )],
            state_operations=[migrations.AlterField(
                model_name="study",
                name="team",
                field=models.ForeignKey(
                    default=experiments.models.teams.default_team_id, on_delete=django.db.models.deletion.PROTECT,
                    related_name="studies", to="experiments.team",
                    help_text="The lab the study belongs to: only its members (and superusers) see the study and "
                              "everything under it — items, participants, trials, runs, reports."),
            )],
        ),
    ]
