"""A lab's configurations and runs are its own (issue 45 item 1).

Schema: a model configuration's owning team, the teams it is shared with read-only, and the earlier
version a configuration replaced when its servers changed.

Data, for what existed before:
- each configuration with runs belongs to the team whose studies' runs use it most (ties: the team of
  its earliest run); the other teams whose studies ran it get it shared with them, read-only, so no
  lab loses a configuration it ran. A configuration no run uses belongs to no team: only superusers
  see it until one of them gives it a team (or shares it).
- each run keeps the configuration it was created with (ModelRun.configuration) and now executes from
  it: a run whose snapshot lacks a key the scorer is built from (runs made before the server backends,
  for one) gets that key from the configuration as it is at the upgrade; what its snapshot holds is
  kept as it is.
"""
from collections import Counter

import django.db.models.deletion
from django.db import migrations, models

# LanguageModel.IDENTITY and the server fields as they are at this migration (a migration never reads
# the model's code, which may change later).
IDENTITY = ("backend", "source", "gguf_file", "revision", "dtype", "prompt_format", "answer_yes", "answer_no",
            "answer_forms", "decision_rule", "server_model", "start_token", "sampling", "samples", "temperature",
            "max_new_tokens", "stop", "seed", "generation_prompt", "answer_parser")
REMOTE_BACKENDS = ("server", "chat")


def _urls(text: str) -> list[str]:
    return [u.strip() for u in (text or "").replace(",", "\n").splitlines() if u.strip()]


def _snapshot(lm) -> dict:
    """LanguageModel.snapshot() as it is at this migration."""
    out = {"name": lm.name, "device": lm.device, **{name: getattr(lm, name) for name in IDENTITY}}
    if lm.backend in REMOTE_BACKENDS:
        out.update(server_urls=_urls(lm.server_urls), concurrency=lm.concurrency, api_key_env=lm.api_key_env)
    return out


def owners_and_snapshots(apps, schema_editor):
    LanguageModel = apps.get_model("inference", "LanguageModel")
    ModelRun = apps.get_model("inference", "ModelRun")
    for lm in LanguageModel.objects.all().order_by("pk"):
        runs = list(ModelRun.objects.filter(language_model=lm).order_by("created_at", "pk")
                    .values_list("study__team_id", flat=True))
        if not runs:
            continue
        counts = Counter(runs)
        first_seen = {team: runs.index(team) for team in counts}
        owner = min(counts, key=lambda team: (-counts[team], first_seen[team]))
        lm.team_id = owner
        lm.save(update_fields=["team"])
        lm.shared_with.set([team for team in counts if team != owner])
    for run in ModelRun.objects.select_related("language_model").order_by("pk").iterator(chunk_size=500):
        kept = dict(run.configuration or {})
        complete = {**_snapshot(run.language_model), **kept}
        if complete != kept:
            run.configuration = complete
            run.save(update_fields=["configuration"])


class Migration(migrations.Migration):

    dependencies = [
        ('experiments', '0016_teams'),
        ('inference', '0012_name_api_key_permission'),
    ]

    operations = [
        migrations.AddField(
            model_name='languagemodel',
            name='team',
            field=models.ForeignKey(blank=True, help_text='The lab that owns the configuration: only its members change it. Empty: no team\'s (only superusers see it).', null=True, on_delete=django.db.models.deletion.PROTECT, related_name='model_configurations', to='experiments.team'),
        ),
        migrations.AddField(
            model_name='languagemodel',
            name='shared_with',
            field=models.ManyToManyField(blank=True, help_text='Other labs that may see this configuration and run it on their studies, read-only: they cannot change it.', related_name='shared_model_configurations', to='experiments.team'),
        ),
        migrations.AddField(
            model_name='languagemodel',
            name='replaces',
            field=models.OneToOneField(blank=True, editable=False, help_text='The configuration this one replaced when its servers changed; the earlier one keeps its runs, which keep the servers they were made with.', null=True, on_delete=django.db.models.deletion.PROTECT, related_name='replaced_by', to='inference.languagemodel', verbose_name='earlier version'),
        ),
        migrations.RunPython(owners_and_snapshots, migrations.RunPython.noop),
    ]
