"""Named column mappings (issue 27 part 2): a researcher who imports files of one shape saves the mapping
of its columns onto a design's fields under a name. The row; the rule a saved mapping obeys (its design takes
an uploaded bank, its fields are that bank's) is experiments/items/presets.py's `preset_check`."""
from __future__ import annotations

from django.db import models


class MappingPreset(models.Model):
    name = models.CharField(max_length=100, unique=True, help_text="A name to pick the mapping by at the next upload.")
    design = models.CharField(max_length=40, help_text="The imported design whose fields the mapping fills.")
    mapping = models.JSONField(
        default=dict, blank=True,
        help_text='The design\'s field → the file\'s column, e.g. {"item_id": "id", "premise": ["p1", "p2"], '
                  '"question": "q"} (a field of several columns takes a list).')
    note = models.TextField(blank=True, help_text="Which files it is for.")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        app_label = "experiments"
        ordering = ["name"]

    def __str__(self) -> str:
        return f"{self.name} ({self.design})"
