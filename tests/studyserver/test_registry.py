"""One registry helper (common/registry.py) serves every registry by name — designs, scorers,
run-kind strategies, published-format readers and report sections (issue 29 item 4; practice sets
are part of each design's registry entry since issue 29 item 2) — and a name registered
twice raises instead of silently replacing the first (lm-evaluation-harness's registry does)."""
from __future__ import annotations

import pytest

from common.registry import Registry


def _registries():
    from designs.modal import mixed
    from experiments import design_registry as designs
    from experiments.items import sources
    from inference import scorers, strategies

    return {"design": designs._designs, "scorer": scorers.REGISTRY, "run kind": strategies.REGISTRY,
            "format": sources._readers, "report section": mixed.SECTIONS}


def test_every_registry_is_the_one_helper_and_refuses_a_second_entry_of_a_name():
    for what, registry in _registries().items():
        assert isinstance(registry, Registry) and registry.what == what
        assert len(registry), what
        name = next(iter(registry))
        with pytest.raises(ValueError, match=f"{what} '{name}' is registered twice"):
            registry.add(name, registry[name])
        assert registry[name] is registry.entries[name]  # the first entry stays


def test_the_registration_functions_refuse_a_second_entry():
    from designs.modal import mixed
    from inference import strategies

    with pytest.raises(ValueError, match="registered twice"):
        strategies.register(strategies.for_kind("items"))
    assert list(mixed.SECTIONS) == [spec.key for spec in mixed.SPECS]  # the report's order


def test_an_unknown_name_is_refused_with_the_registered_ones():
    registry: Registry[int] = Registry("widget")
    registry.add("b", 2)
    registry.add("a", 1)
    with pytest.raises(ValueError, match="Unknown widget 'c'; choose one of: a, b."):
        registry.get_or_raise("c")
