"""Every design Duet builds studies from, declared once (registry.py says what a declaration holds).
Formulas, wordings and protocols are the seed papers' (../shared/seeds/README says which is which)."""
from __future__ import annotations

from functools import partial

from ..logic import dual_sided, rulebreakers
from ..logic import generate as gen
from ..logic.designs import DESIGNS
from ..models import LogicSystem
from . import csv_bank, modal, multiple_choice, paired, perturbations
from .registry import GENERATE, IMPORT, Design, Option, register

# Paper 003's designs: generated from sampled interpretations, keyed by the model checker.
_MODAL_OPTIONS = (
    Option("interpretations", int, 1000, "number of interpretations (default 1000)"),
    Option("seed", int, 0, "random seed (default 0)"),
    Option("nonsense", bool, False, "also generate the nonsense mirror of every item"),
    Option("system", str, None, "modal logic for the checker (default: the study's, S5)", choices=LogicSystem.values),
    Option("consequence", str, None, "consequence relation that keys the items (default: the study's, 'paper': "
           "global for Appendix C.1's necessitation, local otherwise); each item stores the other's answer too",
           choices=gen.CONSEQUENCES),
    Option("paper_lexicon", bool, False, "draw from the first 200 names and 204 verb phrases (003 §3.4's counts) "
           "instead of all 336 names and 283 verb phrases"),
    Option("replace", bool, False, "regenerate a design the study already has"),
)
# The factors of 003's designs (§3.2): modality and argument form; necessitation varies the modality only.
_MODAL_FACTORS = {"modal-syllogisms": ("modality", "argform"), "necessitation": ("modality",),
                  "modal-distribution": ("modality", "argform")}
_MODAL_TITLES = {"modal-syllogisms": "Modal syllogisms", "necessitation": "Necessitation (Appendix C.1)",
                 "modal-distribution": "Modal distribution (Appendix C.2)"}


def _generate_modal(design: str, *, study, paper_lexicon: bool = False, **options):
    return modal.items_generate(study=study, design=design, lexicon="paper" if paper_lexicon else None, **options)


def _describe_modal(report) -> str:
    return (f"Generated {report.items} items ({report.interpretations} interpretations"
            f"{' + nonsense mirror' if report.nonsense else ''}) of '{report.design}' into '{report.study.slug}' "
            f"under {report.system}, keyed by {report.consequence_text()}.")


def _modal_warnings(report) -> list[str]:
    lines = [f"checker disagrees with the template: {line}" for line in report.disagreement_lines()]
    if lines:
        lines.append("Those items carry the checker's gold answer; filter them in the admin with 'checker disagrees'.")
    return lines


for _name in sorted(DESIGNS):
    register(Design(
        name=_name, title=_MODAL_TITLES.get(_name, _name), paper="003", source=GENERATE,
        make=partial(_generate_modal, _name), options=_MODAL_OPTIONS, describe=_describe_modal,
        warnings=_modal_warnings, perturb=partial(perturbations.perturb_interpretations, design=_name),
        factors=_MODAL_FACTORS.get(_name, ("modality", "argform")),
    ))


def _describe_rulebreakers(report) -> str:
    return (f"Generated {report.pairs} pairs of '{report.design}' into '{report.study.slug}': {report.items} items "
            f"({len(report.variants)} prompt variant(s) each; participants see "
            f"'{report.study.settings.get(paired.HUMAN_VARIANT)}').")


register(Design(
    name=rulebreakers.DESIGN, title="Rulebreakers", paper="000", source=GENERATE,
    make=paired.rulebreakers_generate, describe=_describe_rulebreakers,
    options=(
        Option("pairs", int, None, "keep a random subset of this many pairs (default: the full design)"),
        Option("seed", int, 0, "random seed (default 0)"),
        Option("rules", list, list(rulebreakers.RULES), "MT and/or DS (default both)", choices=rulebreakers.RULES),
        Option("entity_kinds", list, list(rulebreakers.ENTITY_KINDS), "geographical and/or categorical (default both)",
               choices=rulebreakers.ENTITY_KINDS),
        Option("names_per_combination", int, rulebreakers.NAMES_PER_COMBINATION, "names per rule × entity kind"),
        Option("variants", list, ["all"], "prompt variants to store: all (default) or ids such as follow/yes-no "
               "entail/true-false"),
        Option("replace", bool, False, "regenerate a design the study already has"),
    ),
    perturb=perturbations.perturb_rulebreaker_items,
    factors=("pair_role",),  # rulebreaker vs non-rulebreaker (000 §3)
))

register(Design(
    name=dual_sided.DESIGN, title="Dual-sided rules", paper="004", source=IMPORT,
    make=paired.dual_sided_import, preview=paired.dual_sided_preview,
    describe=lambda report: (f"Imported {report.pairs} rules into '{report.study.slug}': {report.items} items (original "
                             f"and flipped × {len(report.variants)} template(s); participants see "
                             f"'{report.study.settings.get(paired.HUMAN_VARIANT)}')."),
    options=(Option("templates", list, [1, 2, 3, 4, 5], "Table 9's templates to use (default 1 2 3 4 5)", item=int),),
    perturb=perturbations.perturb_dual_sided_items,
    factors=("pair_role",),  # original vs flipped conclusion (004 §3)
))

register(Design(
    name=multiple_choice.DESIGN, title="Multiple choice, four options", paper="001", source=IMPORT,
    make=multiple_choice.items_import_multiple_choice, describe=lambda report: report.summary(),
    preview=multiple_choice.items_preview_multiple_choice,
    answers=multiple_choice.mc.LETTERS,
))

register(Design(
    name=csv_bank.DESIGN, title="Yes/no item bank (CSV)", paper="any", source=IMPORT, generic=True,
    make=csv_bank.items_import_csv, preview=csv_bank.items_preview_csv,
    options=(Option("factors", list, [], "the bank's factor columns (names of its columns, e.g. modality or a "
                    "descriptive column): Table 1 and the humans-vs-models model are by these"),),
    describe=lambda report: (f"Imported {report.items} items into '{report.study.slug}' ({report.disagreements} "
                             "where the checker disagrees with the stated gold answer)."),
))
