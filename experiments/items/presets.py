"""Named column mappings (issue 27 part 2): a researcher who imports files of one shape again saves
the mapping of its columns onto a design's fields once, under a name, and picks it at the next
upload. Editable in the admin (Experiments › Mapping presets); checked against the design's bank
columns whenever it is saved.
"""
from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import transaction

from ..models import MappingPreset
from .. import design_registry as registry
from .bank_files import clean_mapping


def preset_check(*, design_name: str, mapping) -> dict:
    """The mapping, cleaned, if `design_name` takes an uploaded bank and every field of `mapping` is one of
    its bank's; else ValidationError naming the field (design or mapping). The rule of every saved preset:
    preset_save and the admin's form (MappingPresetAdmin) both call it."""
    try:
        design = registry.get(design_name)
    except ValueError as exc:
        raise ValidationError({"design": str(exc)}) from None
    if design.source != registry.IMPORT or not design.columns:
        names = ", ".join(d.name for d in registry.imported())
        raise ValidationError({"design": f"'{design_name}' takes no uploaded bank; these do: {names}"})
    if not isinstance(mapping, dict):
        raise ValidationError({"mapping": "a mapping is an object: {field: column, …}"})
    try:
        return clean_mapping(design.columns, mapping)
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
        preset.design, preset.mapping = design, preset_check(design_name=design, mapping=mapping)
        preset.full_clean()
        preset.save()
    return preset


def presets_for(design: str) -> list[MappingPreset]:
    return list(MappingPreset.objects.filter(design=design))
