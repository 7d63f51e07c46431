"""The study's items version (issue 43 item 8, experiments/models/items_version.py) in place of its highest
item id, read at every entry. Each study with items starts at its highest item id (catch items aside): the
stored lists and item summaries kept before recorded that id, so they stay current, and every write from
now on raises the version past it."""

import django.db.models.deletion
from django.db import migrations, models
from django.db.models import Max

CATCH_ITEMS = "attention-check"  # logic.human_defaults.CATCH_ITEMS, as it was when this was written


def start_at_the_highest_item_id(apps, schema_editor):
    items, versions = apps.get_model("experiments", "Item"), apps.get_model("experiments", "StudyItemsVersion")
    highest = (items.objects.exclude(design=CATCH_ITEMS).order_by().values("study")
               .annotate(top=Max("id")).values_list("study", "top"))
    versions.objects.bulk_create([versions(study_id=study, version=top) for study, top in highest], batch_size=500)


class Migration(migrations.Migration):

    dependencies = [
        ('experiments', '0020_docs_study_help_texts'),
    ]

    operations = [
        migrations.CreateModel(
            name='StudyItemsVersion',
            fields=[
                ('study', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, primary_key=True, related_name='+', serialize=False, to='experiments.study')),
                ('version', models.BigIntegerField(default=0, help_text="Raised by every write to the study's items.")),
            ],
            options={
                'verbose_name': 'items version of a study',
            },
        ),
        migrations.RenameField(
            model_name='storedlists',
            old_name='items_max_id',
            new_name='items_version',
        ),
        migrations.AlterField(
            model_name='storedlists',
            name='items_version',
            field=models.BigIntegerField(default=0, help_text="The study's items version then (items_version.py)."),
        ),
        migrations.RenameField(
            model_name='studyitemsummary',
            old_name='items_max_id',
            new_name='items_version',
        ),
        migrations.AlterField(
            model_name='studyitemsummary',
            name='items_version',
            field=models.BigIntegerField(default=0, help_text="The study's items version then (items_version.py)."),
        ),
        migrations.RunPython(start_at_the_highest_item_id, migrations.RunPython.noop),
    ]
