"""The demo and the benchmarks name no design (issue 46): they build from the one design declared the demo's
(`Design.demo`, registry.demo_design()), and the benchmarks make its items without a database through its
`Design.sample`, which must be exactly what its `make` writes with the same options."""
from __future__ import annotations

import dataclasses

import pytest

from experiments import design_registry as registry
from experiments.models import Item
from tests.factories import StudyFactory


def test_one_registered_design_is_the_demo_s_and_it_can_be_sampled():
    demo = [d for d in registry.all_designs() if d.demo]
    assert demo == [registry.demo_design()]
    assert registry.demo_design().source == registry.GENERATE and registry.demo_design().sample is not None


def test_a_second_demo_design_is_refused():
    second = dataclasses.replace(registry.demo_design(), name="second-demo")
    with pytest.raises(ValueError, match="already is"):
        registry.register(second)
    with pytest.raises(ValueError, match="Unknown design"):
        registry.get("second-demo")


@pytest.mark.django_db
@pytest.mark.parametrize("name", [d.name for d in registry.all_designs() if d.sample is not None])
def test_a_design_s_sample_is_the_items_its_make_writes(name):
    design = registry.get(name)
    options = {"interpretations": 3, "seed": 5, "nonsense": True}
    study = StudyFactory(design=name)
    design.make(study=study, **options)
    written = list(Item.objects.filter(study=study).order_by("pk").values_list("code", "prompt", "gold_answer"))
    sampled = [(item.code, item.prompt, item.gold_answer) for item in design.sample(**options)]
    assert sampled == written and len(written) > 3
