"""Named column mappings (issue 27 part 2): a researcher who imports files of one shape again saves
the mapping of its columns onto a design's fields once, under a name, and picks it at the next
upload. Editable in the admin (Experiments › Mapping presets); checked against the design's bank
columns whenever it is saved.
"""
from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import models, transaction

from . import registry
from .bank_files import clean_mapping


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

    def clean(self) -> None:
        try:
            design = registry.get(self.design)
        except ValueError as exc:
            raise ValidationError({"design": str(exc)}) from None
        if design.source != registry.IMPORT or not design.columns:
            names = ", ".join(d.name for d in registry.imported())
            raise ValidationError({"design": f"'{self.design}' takes no uploaded bank; these do: {names}"})
        if not isinstance(self.mapping, dict):
            raise ValidationError({"mapping": "a mapping is an object: {field: column, …}"})
        try:
            self.mapping = clean_mapping(design.columns, self.mapping)
        except ValueError as exc:
            raise ValidationError({"mapping": str(exc)}) from None


def preset_save(*, name: str, design: str, mapping: dict) -> MappingPreset:
    """Save `mapping` under `name` (replacing a preset of that name); ValidationError, nothing saved,
    for an empty name, a design without a bank or a field the design does not have."""
    name = (name or "").strip()
    if not name:
        raise ValidationError("Give the preset a name.")
    with transaction.atomic():
        preset = MappingPreset.objects.select_for_update().filter(name=name).first() or MappingPreset(name=name)
        preset.design, preset.mapping = design, mapping
        preset.full_clean()
        preset.save()
    return preset


def presets_for(design: str) -> list[MappingPreset]:
    return list(MappingPreset.objects.filter(design=design))
