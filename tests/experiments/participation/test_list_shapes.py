"""The launch panel's list checks by query (shapes.py) restate the grid builders' rules, so both paths
run over the same random studies and must give the same shape: the forms, the complete rows and the
pair families' sizes (DESIGN habit 11). Studies: generated 003 items with cells removed (nonsense
mirror in and out), a CSV-like bank without interpretations, linked pairs with missing members,
variants and perturbed copies, and four-option questions with missing rotations."""
from __future__ import annotations

import random

import pytest

from designs.modal.items import items_generate
from experiments.models import Item
from experiments.participation import services
from experiments.participation.shapes import study_shape
from tests.factories import StudyFactory

pytestmark = pytest.mark.django_db

PREMISES = ["Ann is in Paris.", "If Ann is in Paris, she is in France."]


def _item(study, code, **fields):
    defaults = {"design": "csv-import", "gold_answer": "yes", "premises": PREMISES, "question": "Is Ann in France?",
                "prompt": "Is Ann in France?"}
    return Item(study=study, code=code, **{**defaults, **fields})


def generated(rng):
    study = StudyFactory(design="modal-syllogisms")
    items_generate(study=study, design="modal-syllogisms", interpretations=3, seed=rng.randrange(9),
                           nonsense=True)
    mirrors = list(study.items.filter(original__isnull=False).values_list("pk", flat=True))
    Item.objects.filter(pk__in=rng.sample(mirrors, rng.randrange(len(mirrors) // 3))).delete()
    kept = set(study.items.filter(perturbations__isnull=False).values_list("pk", flat=True))
    real = list(study.items.filter(original__isnull=True).exclude(pk__in=kept).values_list("pk", flat=True))
    Item.objects.filter(pk__in=rng.sample(real, rng.randrange(min(len(real), 12)))).delete()
    return study


def bank(rng):
    study = StudyFactory(design="csv-import")
    forms = [f"f{k}" for k in range(rng.choice([1, 1, 2, 3]))] or [""]
    Item.objects.bulk_create(_item(study, f"b{k}", form_id=rng.choice(forms)) for k in range(rng.randrange(1, 30)))
    return study


def pairs(rng):
    study = StudyFactory(design="rulebreakers")
    roots = []
    for p in range(rng.randrange(2, 20)):
        for role in rng.sample(["rulebreaker", "conforming"], rng.choice([1, 2, 2])):
            for variant in rng.sample(["", "v1"], rng.choice([1, 2])):
                roots.append(_item(study, f"p{p}.{role}.{variant}", design="rulebreakers", pair_id=f"pair{p}",
                                   pair_role=role, variant=variant, form_id=rng.choice(["r1", "r2"])))
    roots = Item.objects.bulk_create(roots)
    copies = [_item(study, f"{r.code}.x", design="rulebreakers", pair_id=f"{r.pair_id}.x", pair_role=r.pair_role,
                    variant=r.variant, form_id=r.form_id, condition="nonsense", original=r)
              for r in roots if rng.random() < 0.4]
    Item.objects.bulk_create(copies)
    several = len({r.variant for r in roots}) > 1  # then people's phrasing must be chosen (paired.paired_pool)
    if several or rng.random() < 0.5:
        study.settings = {"human_variant": "v1"}
        study.save(update_fields=["settings"])
    return study


def four_options(rng):
    study = StudyFactory(design="multiple-choice")
    rows = []
    for q in range(rng.randrange(2, 12)):
        pair = "" if rng.random() < 0.2 else f"q{q}"
        for rot in rng.sample(["", "rot1", "rot2", "rot3"], rng.choice([4, 4, 4, 3, 1])):
            rows.append(_item(study, f"q{q}.{rot}", kind="multiple_choice", gold_answer="A", pair_id=pair,
                              pair_role=rot, options=["a", "b", "c", "d"]))
    Item.objects.bulk_create(rows)
    return study


@pytest.mark.parametrize("make", [generated, bank, pairs, four_options])
@pytest.mark.parametrize("seed", [0, 1, 3, 4])
def test_the_queried_shape_is_the_built_grids_shape(make, seed):
    study = make(random.Random(seed))
    arm = services.human_arm_ensure(study=study)
    for include in (False, True):
        arm.include_nonsense = include
        built = services._grid(study, arm).shape
        assert study_shape(study=study, arm=arm) == built, (make.__name__, seed, include)
        assert built.row_count or make is pairs  # the studies have complete rows to compare


def test_the_launch_checks_read_the_shape():
    study = pairs(random.Random(5))
    arm = services.human_arm_ensure(study=study)
    arm.items_per_participant = 1000
    shape = services._grid(study, arm).shape
    assert services.lists_problem(study=study, arm=arm) == (
        f"Items per participant (1000) exceeds the study's {shape.row_count} pairs; a participant sees at most one "
        "member of each pair.")
