# Issue 43 item 4: a model run's scope (what people could be shown, every item, a stated subset).
# Runs made before scored every item of their study: they get scope 'all'.

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('inference', '0013_teams_configurations_owned'),
    ]

    operations = [
        migrations.AddField(
            model_name='modelrun',
            name='scope',
            field=models.CharField(choices=[('shown', 'what people could be shown'), ('all', 'every item of the study'), ('subset', 'a stated subset (factor values: phrasings, conditions, …)')], default='all', help_text="Which of the study's items the run scores: those people could be shown (the default where the study's human arm shows people items of the run's kind), every item, or a stated subset of factor values. An item limit takes the first N of these.", max_length=8),
        ),
        migrations.AddField(
            model_name='modelrun',
            name='subset',
            field=models.JSONField(blank=True, default=dict, editable=False, help_text='Scope \'subset\': factor → the values scored (an item is scored when each factor\'s value is one of those listed), e.g. {"variant": ["follow/yes-no"]}.', verbose_name='stated subset'),
        ),
        migrations.AddField(
            model_name='modelrun',
            name='scope_detail',
            field=models.JSONField(blank=True, default=dict, editable=False, help_text="The scope as it was when the run was created: its rule in words, the items it held and the study's items of the run's kind.", verbose_name='scope, as created'),
        ),
        migrations.AlterField(
            model_name='modelrun',
            name='item_limit',
            field=models.PositiveIntegerField(blank=True, help_text="Score only the first N items (by id) of the run's scope, a quick check run; empty for all.", null=True),
        ),
        migrations.AlterField(
            model_name='modelrun',
            name='partial',
            field=models.BooleanField(default=False, editable=False, help_text='Scores fewer items than its scope holds (an item limit): a check run, never used by a report unless it is asked for.', verbose_name='partial (a check run)'),
        ),
    ]
