"""Paper 003's designs declared (issue 18; issue 46: a design is one folder): modal syllogisms, necessitation
(Appendix C.1) and modal distribution (Appendix C.2), generated from sampled interpretations and keyed by the model
checker. designs/apps.py registers them when Django's apps are ready (`declare`). Formulas, wordings and protocols
are the paper's (../shared/seeds/README says which is which)."""
from __future__ import annotations

from functools import partial

from experiments import design_registry as registry
from experiments.design_registry import (
    CONSEQUENCE, GENERATE, LOGIC_SYSTEM, MODAL_FIELDS, VALID_IS_GOLD, Design, Factor, Level, Option, Scoring, Wording,
)
from experiments.models import LogicSystem
from logic import human_defaults, wording
from logic.formula import Atom, Not, Or
from logic.parser import Sequent

from . import generate as gen
from . import items, perturbing, practice
from .forms import (
    ARGUMENT_FORMS, MODALITIES, MODALITY_SYMBOLS, NECESSITATION_FORM, distribution_templates, templates_for,
)
from .forms import DESIGNS as MODAL_DESIGNS
from .forms import SYLLOGISMS

# Paper 003's designs: generated from sampled interpretations, keyed by the model checker.
_MODAL_OPTIONS = (
    Option("interpretations", int, 1000, "number of interpretations (default 1000)"),
    Option("seed", int, 0, "random seed (default 0)"),
    Option("nonsense", bool, False, "also generate the nonsense mirror of every item"),
    Option("system", str, None, "modal logic for the checker", choices=LogicSystem.values, study_field=LOGIC_SYSTEM),
    Option("consequence", str, None, "consequence relation that keys the items ('paper': global for Appendix C.1's "
           "necessitation, local otherwise); each item stores the other's answer too", choices=gen.CONSEQUENCES,
           study_field=CONSEQUENCE),
    Option("paper_lexicon", bool, False, "draw from 003 §3.4's top-200 US baby names (the SSA's 2020 top 100 of each "
           "sex: designs/modal/lexicon/PAPER_NAMES.md) and the first 204 verb phrases, instead of all 336 names and "
           "283 verb phrases"),
    Option("replace", bool, False, "regenerate a design the study already has"),
)
# The factors of 003's designs (§3.2): modality and argument form; necessitation varies the modality only.
_MODAL_FACTORS = {"modal-syllogisms": ("modality", "argform"), "necessitation": ("modality",),
                  "modal-distribution": ("modality", "argform")}
_MODAL_TITLES = {"modal-syllogisms": "Modal syllogisms", "necessitation": "Necessitation (Appendix C.1)",
                 "modal-distribution": "Modal distribution (Appendix C.2)"}
# Their factors' levels, in the report's order, one declaration for the three (003 §3.2–3.3, Appendix C): the
# modalities; the argument forms of the syllogisms (valid first), of C.1's rules and of C.2's distribution forms.
_MODAL_WORDS = {"none": "propositional", "box": "must", "dia": "may"}
_MODAL_LEVELS = (
    Factor("modality", tuple(Level(m, m, f"{MODALITY_SYMBOLS[m]} ({_MODAL_WORDS[m]})", aliases=(MODALITY_SYMBOLS[m],))
                             for m in MODALITIES),
           source="003 §3.2: ∅ (propositional), □ (must), ◇ (may)"),
    Factor("argform", (*(Level(label, code, f"{label} {name}") for label, code, name in ARGUMENT_FORMS),
                       Level(NECESSITATION_FORM, "NEC", NECESSITATION_FORM),
                       *(Level(form) for form in dict.fromkeys(t.argument_form for t in distribution_templates()))),
           source="003 §3.3 (Table A1's forms), Appendix C.1 (necessitation) and Table A3 (base, theorem, spurious)",
           spoken="argument form"),
)
_ONE_STATEMENT = {"necessitation"}  # Appendix C.1's items have one statement ({φ} ⊢ □φ, ◇φ, φ)


def _template_forms(design: str):
    def forms() -> tuple[str, ...]:
        return tuple(Sequent(t.premises, t.conclusion).to_unicode() for t in templates_for(design))
    return forms


# 003 Appendix B.3: participants read the statements and "Can we infer that …?"; models get the
# statements, "Question: Based on these statements, can we infer that …?" and the cue "Answer:".
_EXAMPLE = {"p": wording.Proposition("Mia", "painting a fence"), "q": wording.Proposition("Leo", "washing a car")}
_MODAL_WORDING = Wording(
    participant=wording.question(Atom("q"), _EXAMPLE),
    model=wording.prompt([Or(Atom("p"), Atom("q")), Not(Atom("p"))], Atom("q"), _EXAMPLE),
    answer_cue=wording.PROMPT_TAIL,
    source="003 Appendix B.3 (the model's prompt) and Table A1 (what participants read)",
)


def _generate_modal(design: str, *, study, paper_lexicon: bool = False, **options):
    return items.items_generate(study=study, design=design, lexicon="paper" if paper_lexicon else None, **options)


def _describe_modal(report) -> str:
    return (f"Generated {report.items} items ({report.interpretations} interpretations"
            f"{' + nonsense mirror' if report.nonsense else ''}) of '{report.design}' into '{report.study.slug}' "
            f"under {report.system}, keyed by {report.consequence_text()}.")


def _modal_warnings(report) -> list[str]:
    lines = [f"checker disagrees with the template: {line}" for line in report.disagreement_lines()]
    if lines:
        lines.append("Those items carry the checker's gold answer; filter them in the admin with 'checker disagrees'.")
    return lines


# 003 §4.1: "the predicted likelihood of the tokens Yes and No ... serve as the soft labels".
_MODAL_SCORING = Scoring(decision_source="003 §4.1: the likelier of p(Yes | s) and p(No | s)",
                         forms_source="003 §4.1: the tokens Yes and No only")
DESIGNS = tuple(
    Design(
        name=_name, title=_MODAL_TITLES.get(_name, _name), paper="003", source=GENERATE,
        make=partial(_generate_modal, _name), options=_MODAL_OPTIONS, describe=_describe_modal,
        warnings=_modal_warnings, perturb=partial(perturbing.perturb_interpretations, design=_name),
        factors=_MODAL_FACTORS.get(_name, ("modality", "argform")), factor_levels=_MODAL_LEVELS,
        scoring=_MODAL_SCORING, validity=VALID_IS_GOLD, wording=_MODAL_WORDING,
        practice=(practice.one_statement_practice if _name in _ONE_STATEMENT
                  else human_defaults.two_statement_practice),
        catch_items=(practice.one_statement_checks if _name in _ONE_STATEMENT
                     else human_defaults.two_statement_checks),
        tested_forms=_template_forms(_name),
        gold="the model checker's verdict on the item's sequent under the study's modal system and the item's "
             "consequence relation (yes exactly when it is valid, 003 §3.2)",
        modal_fields=MODAL_FIELDS,
        demo=_name == SYLLOGISMS, sample=partial(gen.sample, _name),
    )
    for _name in sorted(MODAL_DESIGNS)
)


def declare() -> None:
    """Register 003's designs (designs/apps.py calls it at start-up)."""
    for design in DESIGNS:
        registry.register(design)
