"""The yes/no item bank declared (any paper; issue 46: a design is one folder): a CSV bank's rows, checked by the model
checker where a row gives a logical form. designs/apps.py registers it when Django's apps are ready (`declare`)."""
from __future__ import annotations

from experiments import design_registry as registry
from experiments.design_registry import IMPORT, LOGIC_SYSTEM, VALID_IS_GOLD, Design, Option, Scoring, Wording
from logic import wording
from logic.formula import Atom, Not, Or

from . import bank_columns, items

# A row without a prompt gets 003 Appendix B.3's (logic/wording.py); the declaration's example.
_EXAMPLE = {"p": wording.Proposition("Mia", "painting a fence"), "q": wording.Proposition("Leo", "washing a car")}
_EXAMPLE_PROMPT = wording.prompt([Or(Atom("p"), Atom("q")), Not(Atom("p"))], Atom("q"), _EXAMPLE)

CSV_BANK = Design(
    name=items.DESIGN, title="Yes/no item bank (CSV)", paper="any", source=IMPORT, generic=True,
    make=items.items_import_csv, preview=items.items_preview_csv,
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
        model=_EXAMPLE_PROMPT, answer_cue=wording.PROMPT_TAIL,
        source="003 Appendix B.3's prompt, built from the row's premises and question where it gives no prompt",
    ),
)


def declare() -> None:
    """Register the yes/no bank (designs/apps.py calls it)."""
    registry.register(CSV_BANK)
