"""Every design Duet builds studies from, declared once (registry.py says what a declaration holds).
Formulas, wordings and protocols are the seed papers' (../shared/seeds/README says which is which)."""
from __future__ import annotations

from functools import partial

from logic import answer_parsing, dual_sided, prompting, rulebreakers, wording
from logic import generate as gen
from logic import multiple_choice as mc
from logic.formula import Atom, Not, Or
from logic.modal_forms import (
    ARGUMENT_FORMS, DESIGNS, MODALITIES, MODALITY_SYMBOLS, NECESSITATION_FORM, distribution_templates, templates_for,
)
from logic.parser import Sequent
from ..models import LogicSystem
from logic import human_defaults
from . import bank_columns, csv_bank, modal, multiple_choice, paired, perturbations, published
from ..design_registry import (
    CASES, CONSEQUENCE, FORM_VALID, GENERATE, IMPORT, LOGIC_SYSTEM, MODAL_FIELDS, NO_FORM, ONE_PHRASING, TOP_TOKEN,
    VALID_IS_GOLD, Design, Factor, Family, Generation, Level, Option, Probe, Scoring,
    Wording,
    register,
)

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
           "sex: logic/lexicon/PAPER_NAMES.md) and the first 204 verb phrases, instead of all 336 names and 283 "
           "verb phrases"),
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
    Factor("modality", tuple(Level(m, m, f"{MODALITY_SYMBOLS[m]} ({_MODAL_WORDS[m]})") for m in MODALITIES),
           source="003 §3.2: ∅ (propositional), □ (must), ◇ (may)"),
    Factor("argform", (*(Level(label, code, f"{label} {name}") for label, code, name in ARGUMENT_FORMS),
                       Level(NECESSITATION_FORM, "NEC", NECESSITATION_FORM),
                       *(Level(form) for form in dict.fromkeys(t.argument_form for t in distribution_templates()))),
           source="003 §3.3 (Table A1's forms), Appendix C.1 (necessitation) and Table A3 (base, theorem, spurious)"),
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


# 003 §4.1: "the predicted likelihood of the tokens Yes and No ... serve as the soft labels".
_MODAL_SCORING = Scoring(decision_source="003 §4.1: the likelier of p(Yes | s) and p(No | s)",
                         forms_source="003 §4.1: the tokens Yes and No only")
for _name in sorted(DESIGNS):
    register(Design(
        name=_name, title=_MODAL_TITLES.get(_name, _name), paper="003", source=GENERATE,
        make=partial(_generate_modal, _name), options=_MODAL_OPTIONS, describe=_describe_modal,
        warnings=_modal_warnings, perturb=partial(perturbations.perturb_interpretations, design=_name),
        factors=_MODAL_FACTORS.get(_name, ("modality", "argform")), factor_levels=_MODAL_LEVELS,
        scoring=_MODAL_SCORING, validity=VALID_IS_GOLD, wording=_MODAL_WORDING,
        practice=(human_defaults.one_statement_practice if _name in _ONE_STATEMENT
                  else human_defaults.two_statement_practice),
        catch_items=(human_defaults.one_statement_checks if _name in _ONE_STATEMENT
                     else human_defaults.two_statement_checks),
        tested_forms=_template_forms(_name),
        gold="the model checker's verdict on the item's sequent under the study's modal system and the item's "
             "consequence relation (yes exactly when it is valid, 003 §3.2)",
        modal_fields=MODAL_FIELDS,
    ))


def _describe_rulebreakers(report) -> str:
    made = f"Imported {report.pairs} pairs from {report.source}" if report.source else f"Generated {report.pairs} pairs"
    return (f"{made} of '{report.design}' into '{report.study.slug}': {report.items} items "
            f"({len(report.variants)} prompt variant(s) each; participants see "
            f"'{report.study.settings.get(paired.HUMAN_VARIANT)}').")


def _left_out(report) -> list[str]:
    """A published format's rows left out of an import (skip_problems), one line each, by row id."""
    problems = getattr(report, "left_out", ())
    if not problems:
        return []
    rows = len({p.row for p in problems})
    return [f"{rows} row(s) of the file were left out:", *(f"  {p}" for p in problems)]


def _rulebreakers_probe(attributes: dict) -> Probe | None:
    """000 §4.1's probe of the city or instance a rulebreakers item rests on: one per entity kind and subject."""
    found = paired.rulebreakers_probe(attributes)
    if found is None:
        return None
    return Probe(key=f"{found.entity_kind}:{found.subject}", prompt=found.prompt, target=found.expected,
                 accepted=found.accepted)


_VARIANTS = Option("variants", list, ["all"], "prompt variants to store: all (default) or ids such as follow/yes-no "
                   "entail/true-false")


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
        _VARIANTS,
        Option("replace", bool, False, "regenerate a design the study already has"),
    ),
    # RULEBREAKERS as its authors published it (experiments/designs/sources/): pairs by id suffix,
    # gold answers from the file's label, the design's ten phrasings.
    formats=("rulebreakers-finegrained",),
    importer=published.rulebreakers_import, import_preview=published.rulebreakers_import_preview,
    import_options=(_VARIANTS,), warnings=_left_out,
    perturb=perturbations.perturb_rulebreaker_items,
    factors=("pair_role",),  # rulebreaker vs non-rulebreaker (000 §3)
    scoring=Scoring(
        decision_rule=TOP_TOKEN,
        decision_source="000 §4.2: one forward pass per prompt 'to extract the most probable output token'",
        answer_forms=CASES,
        forms_source="000 Eq. 4: p+(x) sums 'Yes', 'yes' and 'YES' ('True', 'true', 'TRUE' where the phrasing asks "
                     "for true or false)",
    ),
    generation=Generation(parser_source="000 §4.2 reads the first output token's answer (Yes/No, True/False)"),
    validity=FORM_VALID,
    gold="by the item's role (000 §3.2): no for a rulebreaker (its conclusion contradicts a fact the premises "
         "assume), yes for its non-rulebreaker; both share a valid form (MT or DS), so a rulebreaker is valid with "
         "gold answer no",
    knowledge_probe=_rulebreakers_probe,
    wording=Wording(
        participant=rulebreakers.participant_question("Liv did not catch any kind of bird.", rulebreakers.QUESTIONS[0][1]),
        model=rulebreakers.prompt_text(
            ["If Liv caught some kind of bird, then she did not catch a goose.", "Liv caught a goose."],
            "Liv did not catch any kind of bird.", rulebreakers.QUESTIONS[1][1], rulebreakers.ANSWER_OPTIONS[0][1]),
        answer_cue=rulebreakers.ANSWER_CUE,
        source="000 §4.2 and Appendix G (five questions × two answer instructions; the chat template's assistant "
               "turn, or the cue 'Answer:' in the raw format, follows); participants read the question alone",
        instructions=tuple(option[1] for option in rulebreakers.ANSWER_OPTIONS),
    ),
    practice=human_defaults.rulebreakers_practice,
    tested_forms=lambda: tuple(rulebreakers.LOGICAL_FORMS.values()),
    pair_roles=rulebreakers.ROLES,
    people_phrasings=ONE_PHRASING,  # people answer the study's human variant; models all ten (000 §4.2)
    family=Family("the pair", "its two members in every phrasing, and their perturbed copies"),
))

register(Design(
    name=dual_sided.DESIGN, title="Dual-sided rules", paper="004", source=IMPORT,
    make=paired.dual_sided_import, preview=paired.dual_sided_preview,
    describe=lambda report: (f"Imported {report.pairs} rules into '{report.study.slug}': {report.items} items (original "
                             f"and flipped × {len(report.variants)} template(s); participants see "
                             f"'{report.study.settings.get(paired.HUMAN_VARIANT)}')."),
    options=(Option("templates", list, [1, 2, 3, 4, 5], "Table 9's templates to use (default 1 2 3 4 5)", item=int),),
    columns=bank_columns.DUAL_SIDED_COLUMNS, examples=bank_columns.DUAL_SIDED_EXAMPLES,
    formats=("ulogic-json",), warnings=_left_out,
    perturb=perturbations.perturb_dual_sided_items,
    factors=("pair_role",),  # original vs flipped conclusion (004 §3)
    scoring=Scoring(
        decision_rule=TOP_TOKEN,
        decision_source="004 §3.1 reads the answer the model generates (True/Right/Yes or False/Wrong/No): its first "
                        "token, the most probable one",
        answer_forms=CASES,
        forms_source="004 reads a generated word and states no rule for token probabilities; Duet sums the "
                     "phrasing's words in three cases, as 000 Eq. 4 does",
    ),
    generation=Generation(
        parser=answer_parsing.FIRST_WORD,
        parser_source="004 §3.1, Table 11 (Answer-Explain): the answer first, then its rationale",
        prompts=(prompting.DUAL_SIDED_TWO_SHOT_COT, prompting.ZERO_SHOT),
        paper_prompt=prompting.DUAL_SIDED_TWO_SHOT_COT.name,
        # 004 §3.1: "affirmed (True/Right/Yes) and its flipped counterpart is negated (False/Wrong/No)"
        synonyms=(("yes", ("true", "right", "yes")), ("no", ("false", "wrong", "no"))),
    ),
    validity=NO_FORM,
    gold="by the item's role (004 §3.1): yes for the original rule, no for its flipped conclusion",
    wording=Wording(
        participant=dual_sided.TEMPLATES[3][0],
        model=dual_sided.dual_sided_items([dual_sided.DualSidedRule(
            0, "example", "Person X is holding a cup and a pen", "Person X is holding a pen",
            "Person X is not holding a pen")], templates=(3,))[0].prompt,
        answer_cue=dual_sided.ANSWER_CUE,
        source="004 Table 9's templates (participants read the template's question under the rule; models get the "
               "template with the rule, then the cue 'Answer:' in the raw format)",
    ),
    practice=human_defaults.dual_sided_practice, tested_forms=lambda: human_defaults.DUAL_SIDED_FORMS,
    pair_roles=dual_sided.ROLES,
    people_phrasings=ONE_PHRASING,  # people answer the study's human variant (template 3); models all five
    family=Family("the rule's pair", "its original and flipped conclusions in every template, and their perturbed "
                                     "copies"),
))

register(Design(
    name=multiple_choice.DESIGN, title="Multiple choice, four options", paper="001", source=IMPORT,
    make=multiple_choice.items_import_multiple_choice, describe=lambda report: report.summary(),
    preview=multiple_choice.items_preview_multiple_choice,
    formats=("logiqa-text",), warnings=_left_out,
    answers=multiple_choice.mc.LETTERS,
    columns=bank_columns.MULTIPLE_CHOICE_COLUMNS, examples=bank_columns.MULTIPLE_CHOICE_EXAMPLES,
    scoring=Scoring(
        decision_source="001 reads the letter the model answers with ('Answer: <A/B/C/D>', §3); Duet takes the "
                        "likeliest of the four letters",
        forms_source="001: the option letters only",
    ),
    generation=Generation(parser=answer_parsing.LETTER,
                          parser_source="001 §3: 'You need to answer in the form of 'Answer: <A/B/C/D>''",
                          synonyms=()),
    validity=NO_FORM,
    gold="the letter of the right option in this item's order of the options (001)",
    wording=Wording(
        participant="Which conclusion follows from the statements? (the bank's question, its four options A–D)",
        model=mc.build_prompt("Mia is painting a fence and Leo is washing a car.",
                              "Which conclusion follows from the statements?",
                              ["Leo isn't washing a car.", "Leo is washing a car.", "Mia isn't painting a fence.",
                               "Sam is cooking dinner."]),
        answer_cue=mc.ANSWER_CUE,
        source="001 Appendix I (the instruction, the content, the question, the options, then 'Answer:')",
        instructions=(mc.INSTRUCTION,),
    ),
    practice=human_defaults.multiple_choice_practice, catch_items=human_defaults.multiple_choice_checks,
    family=Family("the question", f"its {len(multiple_choice.mc.ROLES)} option orders"),
))

register(Design(
    name=csv_bank.DESIGN, title="Yes/no item bank (CSV)", paper="any", source=IMPORT, generic=True,
    make=csv_bank.items_import_csv, preview=csv_bank.items_preview_csv,
    options=(Option("factors", list, [], "the bank's factor columns (names of its columns, e.g. modality or a "
                    "descriptive column): Table 1 and the humans-vs-models model are by these"),),
    describe=lambda report: (f"Imported {report.items} items into '{report.study.slug}' ({report.disagreements} "
                             "where the checker disagrees with the stated gold answer)"
                             + (f": {report.pairs} pairs of the '{report.design}' design." if report.pairs else ".")),
    columns=bank_columns.YES_NO_COLUMNS, examples=bank_columns.YES_NO_EXAMPLES,
    scoring=Scoring(decision_source="no paper: 003 §4.1's rule, the likelier of p(Yes | s) and p(No | s)",
                    forms_source="no paper: 003 §4.1's tokens Yes and No only"),
    validity=VALID_IS_GOLD,
    gold="the model checker's verdict on the row's logical form under the study's system where the row gives one, "
         "else the bank's stated gold answer",
    modal_fields=(LOGIC_SYSTEM,),  # a row's consequence relation is its own column
    wording=Wording(
        participant="the row's question (003's 'Can we infer that …?' where the row gives a conclusion)",
        model=_MODAL_WORDING.model, answer_cue=wording.PROMPT_TAIL,
        source="003 Appendix B.3's prompt, built from the row's premises and question where it gives no prompt",
    ),
))
