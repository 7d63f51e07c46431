"""Paper 003's designs (modal syllogisms, necessitation, modal distribution): items generated from
sampled interpretations, gold answers decided by the modal-logic model checker."""
from __future__ import annotations

from dataclasses import dataclass, field

from django.core.exceptions import ValidationError
from django.db import transaction

from logic import generate as gen
from logic.modal_forms import DESIGNS
from logic.lexicon import LEXICON_SIZES
from experiments.models import Item, Study
from experiments.items.storage import (
    BULK_BATCH, design_items_replace, insert_items, item_from_generated, refuse_if_locked, save_interpretations,
)


@dataclass(frozen=True)
class GenerationReport:
    study: Study
    design: str
    system: str
    interpretations: int
    items: int
    nonsense: bool
    disagreements: tuple[gen.FormVerdict, ...] = field(default_factory=tuple)
    replaced: int = 0
    forms: tuple[gen.FormVerdict, ...] = field(default_factory=tuple)

    def disagreement_lines(self) -> list[str]:
        return [
            f"{v.template.form_id}: {v.logical_form} — template says "
            f"{'valid' if v.template_valid else 'invalid'}, the {v.system} checker says "
            f"{'valid' if v.gold_answer == 'yes' else 'invalid'} ({v.consequence} consequence; "
            f"{'valid' if v.gold_other == 'yes' else 'invalid'} under the other); gold answer = {v.gold_answer}"
            for v in self.disagreements
        ]

    def consequence_text(self) -> str:
        """Which relation keyed the items, form by form where they differ."""
        used = sorted({v.consequence for v in self.forms})
        if len(used) == 1:
            return f"{used[0]} consequence"
        return ", ".join(f"{v.template.form_id}: {v.consequence}" for v in self.forms)


@transaction.atomic
def items_generate(
    *,
    study: Study,
    design: str,
    interpretations: int = 1000,
    seed: int = 0,
    nonsense: bool = False,
    system: str | None = None,
    consequence: str | None = None,
    lexicon: str | None = None,
    replace: bool = False,
) -> GenerationReport:
    """Generate a design's items into a study with bulk inserts; gold answers from the checker, under
    `consequence` (default: the study's; "paper": each form's paper key)."""
    if design not in DESIGNS:
        raise ValidationError(f"Unknown design '{design}'; choose one of: {', '.join(sorted(DESIGNS))}.")
    if consequence is not None and consequence not in gen.CONSEQUENCES:
        raise ValidationError(f"Unknown consequence '{consequence}'; choose one of: {', '.join(gen.CONSEQUENCES)}.")
    system = system or study.logic_system
    consequence = consequence or study.consequence
    lexicon = lexicon or (study.settings or {}).get("lexicon", "full")
    if lexicon not in LEXICON_SIZES:
        raise ValidationError(f"Unknown lexicon size '{lexicon}'; choose one of: {', '.join(LEXICON_SIZES)}.")
    study = Study.objects.select_for_update().get(pk=study.pk)
    refuse_if_locked(study)
    replaced = design_items_replace(study=study, design=design, replace=replace)
    if replaced:
        study.interpretations.filter(items__isnull=True).delete()

    specs = gen.sample_interpretations(interpretations, seed, lexicon)
    conditions = [specs]
    if nonsense:
        conditions.append(gen.nonsense_mirror(specs))
    interp_rows = save_interpretations(study, conditions)
    created = 0
    originals: dict[str, int] = {}
    for specs_of_condition in conditions:
        batch: list[Item] = []
        for generated in gen.generate(design, specs_of_condition, system=system, consequence=consequence):
            batch.append(item_from_generated(study, generated, interp_rows, originals))
            if len(batch) >= BULK_BATCH:
                created += insert_items(batch, originals)
                batch = []
        created += insert_items(batch, originals)
    study.design = study.design or design
    study.logic_system = system
    study.consequence = consequence
    study.settings = {**(study.settings or {}), "lexicon": lexicon}
    study.save(update_fields=["design", "logic_system", "consequence", "settings", "updated_at"])
    forms = gen.verdicts(design, system, consequence)
    return GenerationReport(
        study=study, design=design, system=system, interpretations=interpretations,
        items=created, nonsense=nonsense, replaced=replaced, forms=forms,
        disagreements=tuple(v for v in forms if v.disagrees),
    )
