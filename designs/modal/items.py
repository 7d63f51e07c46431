"""Paper 003's designs (modal syllogisms, necessitation, modal distribution): items generated from
sampled interpretations (stored in the study's interpretations), gold answers decided by the modal-logic model
checker."""
from __future__ import annotations

from dataclasses import dataclass, field

from django.core.exceptions import ValidationError
from django.db import transaction

from experiments.items.storage import BULK_BATCH, design_items_replace, insert_items, refuse_if_locked
from experiments.models import Interpretation, Item, Study

from . import generate as gen
from .forms import DESIGNS
from .lexicon import LEXICON_SIZES


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


def save_interpretations(study, conditions) -> dict[tuple[str, int], int]:
    """Create (or reuse) the study's interpretations; returns (condition, index) -> pk."""
    wanted = [spec for specs in conditions for spec in specs]
    existing = {
        (i.condition, i.index): i for i in study.interpretations.all()
    }
    fresh = []
    for spec in wanted:
        row = existing.get((spec.condition, spec.index))
        values = (spec.p.subject, spec.p.predicate, spec.q.subject, spec.q.predicate)
        if row is not None:
            if (row.p_subject, row.p_predicate, row.q_subject, row.q_predicate) != values:
                raise ValidationError(
                    f"Study '{study.slug}' already has interpretation {spec.index} ({row}) drawn with "
                    "another seed; use the study's seed or a new study."
                )
            continue
        fresh.append(Interpretation(
            study=study, index=spec.index, condition=spec.condition,
            p_subject=values[0], p_predicate=values[1], q_subject=values[2], q_predicate=values[3],
        ))
    Interpretation.objects.bulk_create(fresh, batch_size=BULK_BATCH)
    rows = {(i.condition, i.index): i.pk for i in study.interpretations.all()}
    mirrors = [
        Interpretation(pk=pk, original_id=rows[("real", index)])
        for (condition, index), pk in rows.items()
        if condition != "real" and ("real", index) in rows
    ]
    Interpretation.objects.bulk_update(mirrors, ["original"], batch_size=BULK_BATCH)
    return rows


def item_from_generated(study, g: gen.GeneratedItem, interp_rows, originals) -> Item:
    return Item(
        study=study, code=g.code, design=g.design, form_id=g.form_id, modality=g.modality,
        argument_form=g.argument_form, logical_form=g.logical_form, template_valid=g.template_valid,
        gold_answer=g.gold_answer, logic_system=g.logic_system, checker_disagrees=g.checker_disagrees,
        consequence=g.consequence, gold_other=g.gold_other,
        premises=list(g.premises), question=g.question, prompt=g.prompt,
        interpretation_id=interp_rows[(g.condition, g.interpretation_index)],
        condition=g.condition, original_id=originals.get(g.original_code) if g.original_code else None,
        attributes={"rule": g.rule},
    )


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
