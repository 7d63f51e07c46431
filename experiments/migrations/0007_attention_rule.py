"""One rule for a failed attention check: attention_failures_to_end (end after N; empty = never, while
the report excluded anyone with one failure) becomes attention_fail_after (failed after N wrong answers,
for every count) and attention_end_session (whether the session ends then)."""
import django.core.validators
from django.db import migrations, models


def forward(apps, schema_editor):
    HumanArm = apps.get_model("experiments", "HumanArm")
    for arm in HumanArm.objects.exclude(attention_failures_to_end=None).exclude(attention_failures_to_end=0):
        arm.attention_fail_after = arm.attention_failures_to_end
        arm.attention_end_session = True
        arm.save(update_fields=["attention_fail_after", "attention_end_session"])


def backward(apps, schema_editor):
    HumanArm = apps.get_model("experiments", "HumanArm")
    for arm in HumanArm.objects.filter(attention_end_session=True):
        arm.attention_failures_to_end = arm.attention_fail_after
        arm.save(update_fields=["attention_failures_to_end"])


class Migration(migrations.Migration):
    dependencies = [("experiments", "0006_human_arm_consent_review")]

    operations = [
        migrations.AddField(
            model_name="humanarm", name="attention_fail_after",
            field=models.PositiveSmallIntegerField(
                default=1, validators=[django.core.validators.MinValueValidator(1)],
                help_text="A participant has failed the attention checks after this many wrong answers to them. "
                "The study page's count, the participants list and the report's exclusions all use this number.",
            ),
        ),
        migrations.AddField(
            model_name="humanarm", name="attention_end_session",
            field=models.BooleanField(
                default=False,
                help_text="End the session as soon as the participant has failed (status 'failed attention check', "
                "the failed-attention code). Unticked, they go on to the end, get the completion code, and are "
                "still counted as failed and left out of the report.",
            ),
        ),
        migrations.RunPython(forward, backward),
        migrations.RemoveField(model_name="humanarm", name="attention_failures_to_end"),
        migrations.AddConstraint(
            model_name="humanarm",
            constraint=models.CheckConstraint(
                condition=models.Q(attention_fail_after__gte=1), name="human_arm_attention_fail_after_min_1",
            ),
        ),
    ]
