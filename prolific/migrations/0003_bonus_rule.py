# The bonus rule fixed at the first payment, and the study's choice of whose times the median is of (issue 44 item 8).

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('prolific', '0002_publish_sync_resume_and_pay_permission'),
    ]

    operations = [
        migrations.AddField(
            model_name='prolificstudy',
            name='bonus_median_of',
            field=models.CharField(choices=[('completed', "all participants who completed (003's rule)"), ('approved', 'the approved submissions only')], default='completed', help_text='003 pays by "the median completion time among all participants": all who completed, unless this says approved only. Fixed with the rest of the rule at the first bonus payment.', max_length=12, verbose_name='wage bonus: the median time of'),
        ),
        migrations.CreateModel(
            name='BonusRule',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('kind', models.CharField(choices=[('wage', "003's hourly wage × the median completion time, minus the reward"), ('fixed', 'a fixed amount')], max_length=8)),
                ('median_of', models.CharField(blank=True, choices=[('completed', "all participants who completed (003's rule)"), ('approved', 'the approved submissions only')], help_text="Whose times the median is of ('' for a fixed amount).", max_length=12)),
                ('median_seconds', models.DecimalField(blank=True, decimal_places=1, max_digits=12, null=True)),
                ('counted', models.PositiveIntegerField(default=0, help_text='How many completion times the median is of.')),
                ('hourly_wage', models.DecimalField(blank=True, decimal_places=2, max_digits=10, null=True)),
                ('wage_from_arm', models.BooleanField(default=False, help_text="The wage was the human arm's minimum × multiplier.")),
                ('reward_cents', models.PositiveIntegerField(default=0)),
                ('each_cents', models.PositiveIntegerField(help_text='What each participant is paid.')),
                ('words', models.CharField(help_text='The rule with its numbers, in words.', max_length=300)),
                ('fixed_at', models.DateTimeField(auto_now_add=True)),
                ('study', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, related_name='prolific_bonus_rule', to='experiments.study')),
            ],
        ),
    ]
