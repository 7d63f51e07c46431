"""The items a study's lists are drawn from, as the database reads them, and participant lists for paired
designs (issue 6).

Which items the lists draw from is logic.list_pool.ListPool (the study's human variant, the real items unless
the arm draws perturbed copies, never catch items): `list_pool` builds it for a study and `pool_q` states it as
a filter on items, so the arm's lists (drawing._grid, shapes.study_shape, the paired pool below) draw from the
very items the rule admits (tests/experiments/participation/test_list_pool.py holds the filter to
`ListPool.admits`). It is how the lists are built, not a definition of what people could be shown: that is
what the lists hold (experiments.participation.selectors.items_people_can_be_shown, which the report and a
model run's scope, inference/scopes.py, read).

The paired pool is the shown yes/no items that carry a pair id. A family is a pair together with its
perturbed copies (linked through ``Item.original``); a participant sees at most one item of a family,
and the lists balance the members (role, and condition for perturbed copies) across participants.
"""
from __future__ import annotations

from django.db.models import Q

from logic.list_pool import ListPool

from ..models import Condition, HumanArm, Item, ItemKind, Study
from . import lists

HUMAN_VARIANT = "human_variant"


def human_variant(study: Study) -> str | None:
    return (study.settings or {}).get(HUMAN_VARIANT)


def list_pool(study: Study, arm: HumanArm | None = None) -> ListPool:
    """The rule for this study's lists: its human variant (study.settings["human_variant"]) and whether its arm
    draws perturbed copies and nonsense mirrors (HumanArm.include_nonsense), with the designs' declarations."""
    from .. import design_registry as registry

    if arm is None:
        arm = HumanArm.objects.filter(study=study).first()
    return registry.list_pool(human_variant=human_variant(study) or "", perturbed=bool(arm and arm.include_nonsense))


def pool_q(rule: ListPool) -> Q:
    """`rule.admits(design=, variant=, condition=)` as a filter on items."""
    shown = ~Q(design__in=sorted(rule.never))
    if not rule.perturbed:
        shown &= Q(condition=Condition.REAL)
    if rule.human_variant:
        phrasing = Q(variant="") | Q(variant=rule.human_variant)
        if rule.one_phrasing is not None:  # the designs whose people see every phrasing
            phrasing |= ~Q(design__in=sorted(rule.one_phrasing))
        shown &= phrasing
    return shown


def pool_items(study: Study, arm: HumanArm | None = None):
    """The study's items its lists are drawn from (not all of them are in a list: a row missing a form is in
    none; what the lists hold is experiments.participation.selectors.items_people_can_be_shown)."""
    return Item.objects.filter(study=study).filter(pool_q(list_pool(study, arm)))


def paired_pool(study: Study, arm: HumanArm):
    """The paired yes/no items participants may see, or None when the study has no paired items.
    ListError where a design whose people see one phrasing has several and the study names none: a
    participant's list holds one item of a pair member, so the others would be dropped unsaid while the
    report compared models on them."""
    rule = list_pool(study, arm)
    paired = Item.objects.filter(study=study, kind=ItemKind.YES_NO).exclude(pair_id="")
    if not paired.exclude(design__in=sorted(rule.never)).exists():
        return None
    pool = paired.filter(pool_q(rule))
    if not rule.human_variant:
        one = pool if rule.one_phrasing is None else pool.filter(design__in=sorted(rule.one_phrasing))
        phrasings = sorted(one.order_by().values_list("variant", flat=True).distinct()[:4])
        if len(phrasings) > 1:
            raise lists.ListError(
                f"The study's pairs are written in several phrasings ({', '.join(p or 'none' for p in phrasings)}"
                f"{', …' if len(phrasings) > 3 else ''}) and a participant sees one: choose it in the study's "
                f"settings ({HUMAN_VARIANT}).")
    return pool


def paired_grid(study: Study, arm: HumanArm) -> lists.PairGrid | None:
    pool = paired_pool(study, arm)
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
