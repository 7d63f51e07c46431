"""The design packages' app, the one place that imports the design families (issue 46): when Django's apps are
ready, each family declares its designs into the registry (designs/<family>/design.py: `declare`, its Designs and
its published formats' readers), and hands the registry its report parts' registration (designs/<family>/
report_parts.py: `register`, where the family has parts of its own), which the registry runs the first time a report
part is asked for, so that the web process, which never builds a report, never imports pandas or R's bridge. The core (experiments, inference, analysis, logic) names no design: it
reaches each through its registry entry's fields and hooks (experiments/design_registry/)."""
from __future__ import annotations

from importlib import import_module
from importlib.util import find_spec

from django.apps import AppConfig

# The design families, in the report's order of their parts (docs/designs.md: how to add one).
FAMILIES = ("modal", "paired", "multiple_choice", "csv_bank")


def _report_parts(family: str) -> str:
    return f"designs.{family}.report_parts"


def _register(family: str) -> None:
    import_module(_report_parts(family)).register()


def declare(family: str) -> None:
    """Declare a family's designs (and its readers) into the registry."""
    import_module(f"designs.{family}.design").declare()


class DesignsConfig(AppConfig):
    name = "designs"
    verbose_name = "Design packages"

    def ready(self):
        from functools import partial

        from experiments import design_registry as registry

        for family in FAMILIES:
            declare(family)
            if find_spec(_report_parts(family)) is not None:  # the yes/no bank has none: the study-wide parts read it
                registry.package_add(partial(_register, family))
