# Prolific's eligibility filters and devices, stored with the study when it is published (issue 47 item 4).

from django.db import migrations, models

import prolific.models


class Migration(migrations.Migration):

    dependencies = [
        ('prolific', '0003_bonus_rule'),
    ]

    operations = [
        migrations.AddField(
            model_name='prolificstudy',
            name='filters',
            field=models.JSONField(blank=True, default=list, help_text='The filters sent with the study, checked against Prolific\'s list when it was created: each {"sent": the payload\'s entry, "words": in words, "typed": as typed} (prolific/filters.py).', verbose_name='eligibility filters'),
        ),
        migrations.AddField(
            model_name='prolificstudy',
            name='devices',
            field=models.JSONField(blank=True, default=prolific.models.desktop_only, help_text="Prolific's device_compatibility: desktop, tablet, mobile.", verbose_name='devices'),
        ),
    ]
