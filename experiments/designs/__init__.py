"""Designs: how a study's items are made. registry.py holds the registry, catalog.py declares every
design in it; modal.py (paper 003), paired.py (seeds 000 and 004), multiple_choice.py (seed 001) and
csv_bank.py make the items, sources/ reads published datasets in their own formats and published.py
imports RULEBREAKERS as published, perturbations.py copies them with other tokens (seed 002), storage.py is
what they share.

    from experiments import designs
    designs.get("modal-syllogisms").make(study=study, interpretations=24)
"""
from . import catalog  # noqa: F401  (registers every design)
from . import sources  # noqa: F401  (published formats: sources.get, sources.for_design)
from .csv_bank import items_import_csv
from .modal import GenerationReport, items_generate
from ..design_registry import (
    Design, Option, all_designs, choices, generated, get, importable, imported, is_generic, perturbable,
)

__all__ = ["Design", "GenerationReport", "Option", "all_designs", "choices", "generated", "get", "importable",
           "imported", "is_generic", "items_generate", "items_import_csv", "perturbable", "sources"]
