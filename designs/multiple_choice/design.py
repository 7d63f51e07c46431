"""The multiple-choice design declared (seed 001; issue 46: a design is one folder): a bank of four-option questions,
or LogiQA's text file, each question stored in its four circular orders. designs/apps.py registers it, and LogiQA's
reader, when Django's apps are ready (`declare`)."""
from __future__ import annotations

from experiments import design_registry as registry
from experiments.design_registry import IMPORT, NO_FORM, Design, Family, Generation, Scoring, Wording
from experiments.items import sources
from logic import answer_parsing

from . import bank_columns, items, practice
from . import questions as mc

MULTIPLE_CHOICE = Design(
    name=items.DESIGN, title="Multiple choice, four options", paper="001", source=IMPORT,
    make=items.items_import_multiple_choice, describe=lambda report: report.summary(),
    preview=items.items_preview_multiple_choice,
    formats=("logiqa-text",), warnings=sources.left_out_lines,
    answers=mc.LETTERS,
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
    practice=practice.multiple_choice_practice, catch_items=practice.multiple_choice_checks,
    family=Family("the question", f"its {len(mc.ROLES)} option orders"),
)


def declare() -> None:
    """Register the multiple-choice design and LogiQA's reader (designs/apps.py calls it)."""
    from . import logiqa_source  # noqa: F401  (registers its reader)

    registry.register(MULTIPLE_CHOICE)
