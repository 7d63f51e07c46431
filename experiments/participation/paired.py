"""Participant lists for paired designs (issue 6): the database side of lists.PairGrid.

The pool is the study's yes/no items that carry a pair id, in the study's human prompt variant
(``study.settings["human_variant"]``; items without a variant always count). A family is a pair
together with its perturbed copies (linked through ``Item.original``); a participant sees at most
one item of a family, and the lists balance the members (role, and condition for perturbed copies)
across participants.
"""
from __future__ import annotations

from ..models import Condition, Item, ItemKind, Study
from . import lists

HUMAN_VARIANT = "human_variant"


def human_variant(study: Study) -> str | None:
    return (study.settings or {}).get(HUMAN_VARIANT)


def paired_pool(study: Study, *, include_perturbed: bool, exclude_design: str):
    """The paired yes/no items participants may see, or None when the study has none."""
    pool = Item.objects.filter(study=study, kind=ItemKind.YES_NO).exclude(pair_id="").exclude(design=exclude_design)
    if not pool.exists():
        return None
    variant = human_variant(study)
    if variant:
        pool = pool.filter(variant__in=[variant, ""])
    if not include_perturbed:
        pool = pool.filter(condition=Condition.REAL)
    return pool


def paired_grid(study: Study, *, include_perturbed: bool, exclude_design: str) -> lists.PairGrid | None:
    pool = paired_pool(study, include_perturbed=include_perturbed, exclude_design=exclude_design)
    if pool is None:
        return None
    rows = list(pool.order_by("id").values_list("id", "pair_id", "pair_role", "condition", "original_id", "form_id"))
    roots = dict(Item.objects.filter(pk__in={o for _, _, _, _, o, _ in rows if o}).values_list("pk", "pair_id"))
    perturbed = any(condition != Condition.REAL for _, _, _, condition, _, _ in rows)
    strata: dict[str, str] = {}
    cells = []
    for pk, pair_id, role, condition, original, form_id in rows:
        family = roots.get(original, pair_id) if original else pair_id
        strata[family] = min(strata.get(family, form_id), form_id)
        slot = f"{condition}/{role}" if perturbed else role
        cells.append((pk, family, slot))
    return lists.PairGrid.from_cells(
        (lists.PairedCell(item_id=pk, family=family, slot=slot, stratum=strata[family]) for pk, family, slot in cells),
        seed=study.pk,
    )
