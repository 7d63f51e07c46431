"""What people can be shown, as the database reads it, and participant lists for paired designs (issue 6).

The rule of what a study's human arm can show people is logic.people_shown.PeopleShown (the report's
human/model contrasts read models on exactly those items); `people_shown` builds it for a study and
`shown_q` states it as a filter on items, so the arm's lists (services._grid, shapes.study_shape, the
paired pool below) draw from the very items the rule accepts (tests/experiments/participation/
test_people_shown_pool.py holds the filter to `PeopleShown.shows`). Whatever else reads that population (a
model run's scope, inference/scopes.py) reads `items_people_can_be_shown`.

The paired pool is the shown yes/no items that carry a pair id. A family is a pair together with its
perturbed copies (linked through ``Item.original``); a participant sees at most one item of a family,
and the lists balance the members (role, and condition for perturbed copies) across participants.
"""
from __future__ import annotations

from django.db.models import Q

from logic.people_shown import PeopleShown

from ..models import Condition, HumanArm, Item, ItemKind, Study
from . import lists

HUMAN_VARIANT = "human_variant"


def human_variant(study: Study) -> str | None:
    return (study.settings or {}).get(HUMAN_VARIANT)


def people_shown(study: Study, arm: HumanArm | None = None) -> PeopleShown:
    """The rule for this study: its human variant (study.settings["human_variant"]) and whether its arm
    draws perturbed copies and nonsense mirrors (HumanArm.include_nonsense), with the designs' declarations."""
    from .. import design_registry as registry

    if arm is None:
        arm = HumanArm.objects.filter(study=study).first()
    return registry.people_shown(human_variant=human_variant(study) or "", perturbed=bool(arm and arm.include_nonsense))


def shown_q(rule: PeopleShown) -> Q:
    """`rule.shows(design=, variant=, condition=)` as a filter on items."""
    shown = ~Q(design__in=sorted(rule.never))
    if not rule.perturbed:
        shown &= Q(condition=Condition.REAL)
    if rule.human_variant:
        phrasing = Q(variant="") | Q(variant=rule.human_variant)
        if rule.one_phrasing is not None:  # the designs whose people see every phrasing
            phrasing |= ~Q(design__in=sorted(rule.one_phrasing))
        shown &= phrasing
    return shown


def shown_items(study: Study, arm: HumanArm | None = None):
    """The study's items its human arm can show people: the pool every list is drawn from."""
    return Item.objects.filter(study=study).filter(shown_q(people_shown(study, arm)))


def items_people_can_be_shown(study: Study):
    """The study's items people could be shown, for whatever reads that population outside the lists (a model
    run's scope 'shown': inference/scopes.py): the one place it is read from, `shown_items`, so that a change of
    what defines it (the rule today) reaches every reader at once."""
    return shown_items(study)


def items_people_can_be_shown_words(study: Study) -> str:
    """What `items_people_can_be_shown` holds, in words ("the phrasing 'follow/yes-no'; the real (original)
    items only (read from …)"): kept beside it, so that both change together."""
    return people_shown(study).describe()


def paired_pool(study: Study, arm: HumanArm):
    """The paired yes/no items participants may see, or None when the study has no paired items.
    ListError where a design whose people see one phrasing has several and the study names none: a
    participant's list holds one item of a pair member, so the others would be dropped unsaid while the
    report compared models on them."""
    rule = people_shown(study, arm)
    paired = Item.objects.filter(study=study, kind=ItemKind.YES_NO).exclude(pair_id="")
    if not paired.exclude(design__in=sorted(rule.never)).exists():
        return None
    pool = paired.filter(shown_q(rule))
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
