"""The design packages' app: when Django's apps are ready, each package's registration is handed to the design
registry (experiments/design_registry/__init__.py: package_add), which runs it the first time a report part is asked
for, so that the web process, which never builds a report, never imports pandas or R's bridge."""
from __future__ import annotations

from importlib import import_module

from django.apps import AppConfig

# The design families, in the report's order of their parts (docs/designs.md: how to add one).
FAMILIES = ("modal", "paired", "multiple_choice", "csv_bank")


def _register(family: str) -> None:
    import_module(f"designs.{family}.register").register()


class DesignsConfig(AppConfig):
    name = "designs"
    verbose_name = "Design packages"

    def ready(self):
        from functools import partial

        from experiments import design_registry as registry

        for family in FAMILIES:
            registry.package_add(partial(_register, family))
