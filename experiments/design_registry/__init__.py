"""The designs registry (the way lm-evaluation-harness registers tasks): every design a study can
be built from declares, in one place (designs/<family>/design.py), how its items are made — generated with its
options or imported from a CSV bank, both validated before anything is written — what answers its
items take, how a perturbation (seed 002) copies them, how a result is said to the researcher,
how a model's answer to its items is read (`Scoring`: the decision rule and the answer forms summed,
each as the design's paper says) and what its items' `valid` and `gold` mean; what participants read
and what a model is sent (`Wording`: the model's prompt ends in its answer cue), the human arm's
defaults (practice questions, catch items: logic/human_defaults.py), which of its phrasings people are
shown (`people_phrasings`; `list_pool` builds the rule the participants' lists are drawn by), the logical
forms it tests, its pair roles, which of its items are one family (`family`: the GLMMs' random intercept
beside the item's); its package (designs/<family>/) registers the report parts that read it.
The commands (generate_items, import_items, perturb_items), the admin, the human arm, the model arm, the
report and the codebook read it; nothing else branches on a design's name
(tests/experiments/test_design_names.py greps for one).

The registry is three modules: design_fields.py (what a design declares: `Design` and its parts), lookups.py (the
registered designs and the lookups the core makes of them) and report_parts.py (the report parts the design
packages register); this package re-exports them, so `from experiments import design_registry as registry;
registry.get(name)` names every one.
"""
from __future__ import annotations

from .design_fields import (  # noqa: F401  (the registry's API)
    ALL_FORMS, ANSWER_FORMS, ANSWERS_ONLY, BANK, CASES, CONSEQUENCE, DECISION_RULES, EVERY_PHRASING, FORM_VALID,
    GENERIC_INSTRUCTION, GENERATE, GENERATED, IMPORT, LOGIC_SYSTEM, MODAL_FIELDS, NO_FORM, ONE_PHRASING, PEOPLE_PHRASINGS, RELATIVE,
    TOP_TOKEN, VALID_IS_GOLD, VALIDITY, BankColumn, Design, Factor, Family, Generation, Level, ListPool, Option, Preview,
    Probe, Scoring,
    Wording, by_pair,
)
from .lookups import (  # noqa: F401  (the registry's API)
    CATCH_ITEMS, UNREGISTERED_SCORING, UNSET, _designs, all_designs, analysed_alone_add, by_answer_forms,
    by_decision_rule, catch_items_for, choices, families, generated, generation, generic_bank, get, importable,
    imported, is_catch_item, is_generic, item_family, item_valid, level_code, level_labels, levels, list_pool,
    modal_fields_for, model_instruction_in, probed_designs,
    demo_design, pair_roles,
    perturbable, practice_for, register, report_part_add, scoring, spoken, tested_forms, unregister, uploadable,
    with_probes,
)
from .report_parts import (  # noqa: F401  (the registry's API: what design packages register)
    analysed_alone, designs_for_section, package_add, report_part_remove, report_parts,
)
