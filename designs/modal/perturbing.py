"""003's designs perturbed (seed 002): new interpretations under the same logic (perturb_specs.py), stored and
rendered; the registry's `Design.perturb` of each modal design (experiments/items/perturbing.py's items_perturb calls
it)."""
from __future__ import annotations

from django.core.exceptions import ValidationError

from experiments.items.perturbing import real_items
from experiments.items.storage import BULK_BATCH
from experiments.models import Item, Study
from logic.wording import Proposition

from . import generate as gen
from .generate import InterpretationSpec
from .items import item_from_generated, save_interpretations
from .perturb_specs import perturb_interpretations as perturbed_interpretations


def perturb_interpretations(*, design: str, study: Study, kind: str, seed: int, mapping, label: str) -> int:
    """003's designs: new interpretations under the same logic (the registry's perturbation of them)."""
    return _perturb_interpretations(study, design, kind, seed, mapping, label)


def _perturb_interpretations(study: Study, design: str, kind: str, seed: int, mapping, label: str) -> int:
    used = set(real_items(study, design).values_list("interpretation_id", flat=True))
    specs = tuple(
        InterpretationSpec(i.index, "real", Proposition(i.p_subject, i.p_predicate), Proposition(i.q_subject, i.q_predicate))
        for i in study.interpretations.filter(condition="real", pk__in=used).order_by("index")
    )
    if not specs:
        raise ValidationError(f"The '{design}' items have no interpretations to perturb.")
    new = perturbed_interpretations(specs, kind=kind, seed=seed, mapping=mapping, label=label)
    rows = save_interpretations(study, [new])
    originals = dict(real_items(study, design).values_list("code", "pk"))
    batch = [item_from_generated(study, g, rows, originals) for g in gen.generate(design, new, system=study.logic_system)]
    taken = Item.objects.filter(study=study, code__in=[i.code for i in batch]).count()
    if taken:
        raise ValidationError(f"Study '{study.slug}' already has {taken} of these items.")
    Item.objects.bulk_create(batch, batch_size=BULK_BATCH)
    return len(batch)
