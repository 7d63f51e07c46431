"""The paired designs declared (issue 6; issue 46: a design is one folder): RULEBREAKERS (seed 000), generated or read
as its authors published it, and dual-sided rules (seed 004), imported from a rule bank or ULogic's file. designs/apps.py
registers them, and their published formats' readers, when Django's apps are ready (`declare`)."""
from __future__ import annotations

from experiments import design_registry as registry
from experiments.design_registry import (
    CASES, FORM_VALID, GENERATE, IMPORT, NO_FORM, ONE_PHRASING, TOP_TOKEN, Design, Family, Generation, Option, Probe,
    Scoring, Wording,
)
from experiments.items import sources
from experiments.items.pairs import HUMAN_VARIANT
from logic import answer_parsing, prompting

from . import bank_columns, dual_sided, items, perturbing, practice, published, rulebreakers
from .prompting import DUAL_SIDED_TWO_SHOT_COT

def _describe_rulebreakers(report) -> str:
    made = f"Imported {report.pairs} pairs from {report.source}" if report.source else f"Generated {report.pairs} pairs"
    return (f"{made} of '{report.design}' into '{report.study.slug}': {report.items} items "
            f"({len(report.variants)} prompt variant(s) each; participants see "
            f"'{report.study.settings.get(HUMAN_VARIANT)}').")


def _rulebreakers_probe(attributes: dict) -> Probe | None:
    """000 §4.1's probe of the city or instance a rulebreakers item rests on: one per entity kind and subject."""
    found = items.rulebreakers_probe(attributes)
    if found is None:
        return None
    return Probe(key=f"{found.entity_kind}:{found.subject}", prompt=found.prompt, target=found.expected,
                 accepted=found.accepted)


_VARIANTS = Option("variants", list, ["all"], "prompt variants to store: all (default) or ids such as follow/yes-no "
                   "entail/true-false")


RULEBREAKERS = Design(
    name=rulebreakers.DESIGN, title="Rulebreakers", paper="000", source=GENERATE,
    make=items.rulebreakers_generate, describe=_describe_rulebreakers,
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
    # RULEBREAKERS as its authors published it (rulebreakers_source.py): pairs by id suffix,
    # gold answers from the file's label, the design's ten phrasings.
    formats=("rulebreakers-finegrained",),
    importer=published.rulebreakers_import, import_preview=published.rulebreakers_import_preview,
    import_options=(_VARIANTS,), warnings=sources.left_out_lines,
    perturb=perturbing.perturb_rulebreaker_items,
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
    practice=practice.rulebreakers_practice,
    tested_forms=lambda: tuple(rulebreakers.LOGICAL_FORMS.values()),
    pair_roles=rulebreakers.ROLES,
    people_phrasings=ONE_PHRASING,  # people answer the study's human variant; models all ten (000 §4.2)
    family=Family("the pair", "its two members in every phrasing, and their perturbed copies"),
)

DUAL_SIDED = Design(
    name=dual_sided.DESIGN, title="Dual-sided rules", paper="004", source=IMPORT,
    make=items.dual_sided_import, preview=items.dual_sided_preview,
    describe=lambda report: (f"Imported {report.pairs} rules into '{report.study.slug}': {report.items} items (original "
                             f"and flipped × {len(report.variants)} template(s); participants see "
                             f"'{report.study.settings.get(HUMAN_VARIANT)}')."),
    options=(Option("templates", list, [1, 2, 3, 4, 5], "Table 9's templates to use (default 1 2 3 4 5)", item=int),),
    columns=bank_columns.DUAL_SIDED_COLUMNS, examples=bank_columns.DUAL_SIDED_EXAMPLES,
    formats=("ulogic-json",), warnings=sources.left_out_lines,
    perturb=perturbing.perturb_dual_sided_items,
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
        prompts=(DUAL_SIDED_TWO_SHOT_COT, prompting.ZERO_SHOT),
        paper_prompt=DUAL_SIDED_TWO_SHOT_COT.name,
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
    practice=practice.dual_sided_practice, tested_forms=lambda: practice.DUAL_SIDED_FORMS,
    pair_roles=dual_sided.ROLES,
    people_phrasings=ONE_PHRASING,  # people answer the study's human variant (template 3); models all five
    family=Family("the rule's pair", "its original and flipped conclusions in every template, and their perturbed "
                                     "copies"),
)


def declare() -> None:
    """Register RULEBREAKERS, dual-sided rules and their published formats' readers (designs/apps.py calls it)."""
    from . import rulebreakers_source, ulogic_source  # noqa: F401  (each registers its reader)

    registry.register(RULEBREAKERS)
    registry.register(DUAL_SIDED)
