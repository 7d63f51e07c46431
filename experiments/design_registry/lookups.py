"""The registered designs and every lookup the core makes of them (issue 18; issue 46: the core reaches a design
only through these): register, get, the lists (generated, imported, importable, uploadable, perturbable), and a
design's hooks read by name with a default for items of no design (scoring, practice, catch items, tested forms,
modal fields, generation, validity, family), the list pool, and the report parts' registration."""
from __future__ import annotations

from common.registry import Registry

from logic import human_defaults

from . import report_parts as report_parts_module
from .design_fields import (
    ANSWER_FORMS, DECISION_RULES, FORM_VALID, GENERATE, IMPORT, MODAL_FIELDS, NO_FORM, ONE_PHRASING, VALID_IS_GOLD,
    Design, Family, Generation, Level, ListPool, Scoring, instruction_in,
)

_designs: Registry[Design] = Registry("design")
# The catch items a human arm adds to every list (participation/services.py makes them from the arm's
# attention checks): not a design a study is built from, but stored under this design name (declared
# once, in logic/human_defaults.py, where the checks are made; analysis reads it there).
CATCH_ITEMS = human_defaults.CATCH_ITEMS


def is_catch_item(item) -> bool:
    return item.design == CATCH_ITEMS


def model_instruction_in(text: str, instructions=None) -> str | None:
    """The one check that participants never read a model's answer instruction ("Answer Yes or No only."):
    the first instruction `text` contains, or None. `instructions`: a design's own (Wording checks its
    participants' question with them); None: every registered design's (the researcher's texts on the human
    arm: experiments/participation/texts.py)."""
    if instructions is None:
        instructions = [t for design in _designs.values() if design.wording for t in design.wording.instructions]
    return instruction_in(text, instructions)
# A study created for an import gets this design name until its items say more (a yes/no bank).
UNSET = ("",)
# Items of no registered design (catch items, an unset design) are scored the way 003 §4.1 scores.
UNREGISTERED_SCORING = Scoring(decision_source="no design: 003 §4.1's rule, the likelier of p(Yes) and p(No)",
                               forms_source="no design: 003 §4.1's tokens Yes and No")


def register(design: Design) -> Design:
    if design.source == IMPORT and design.preview is None:
        raise ValueError(f"imported design {design.name!r} declares no preview (the admin shows one before writing)")
    if design.source == IMPORT and not (design.columns and len(design.examples) == 2):
        raise ValueError(f"imported design {design.name!r} declares no bank columns or not two example rows "
                         "(its template and the admin's mapping are made from them)")
    if (design.importer is None) != (design.import_preview is None):
        raise ValueError(f"design {design.name!r} declares an importer without a preview, or a preview without one")
    if design.formats and design.importer is None:
        raise ValueError(f"design {design.name!r} declares published formats but no importer")
    if design.wording is None:
        raise ValueError(f"design {design.name!r} declares no wording (participants' question, the model's prompt)")
    demo = [d.name for d in _designs.values() if d.demo]
    if design.demo and demo:
        raise ValueError(f"design {design.name!r} is declared the demo's, but {demo[0]!r} already is")
    _levels_found.clear()
    _codes_found.clear()
    return _designs.add(design.name, design)  # raises on a name registered twice


def get(name: str) -> Design:
    """The design called `name`; ValueError naming the registered ones."""
    return _designs.get_or_raise(name)


def scoring(name: str) -> Scoring:
    """How a model's answer to an item of design `name` is read by default (its paper's way)."""
    found = _designs.get(name)
    return found.scoring if found is not None else UNREGISTERED_SCORING


def practice_for(name: str) -> list:
    """A fresh copy of the default practice questions of a study of design `name` (an unset or unknown
    design practises like a yes/no bank)."""
    found = _designs.get(name)
    return (found.practice if found is not None else human_defaults.two_statement_practice)()


def catch_items_for(name: str) -> list:
    """A fresh copy of the default catch items (attention checks) of a study of design `name`."""
    found = _designs.get(name)
    return (found.catch_items if found is not None else human_defaults.two_statement_checks)()


def tested_forms(name: str) -> tuple[str, ...] | None:
    """The logical forms design `name` declares it tests (None: its items carry their own)."""
    found = _designs.get(name)
    return found.tested_forms() if found is not None and found.tested_forms is not None else None


def modal_fields_for(name: str) -> tuple[str, ...]:
    """The study fields of MODAL_FIELDS that design `name` keys its items under (an unset or unknown
    design: all of them, as nothing says it does not)."""
    found = _designs.get(name)
    return found.modal_fields if found is not None else MODAL_FIELDS


def list_pool(*, human_variant: str = "", perturbed: bool = False,
              source: str = "the study's settings and human arm") -> ListPool:
    """The rule of which items a study's participants' lists are drawn from, with the designs' declarations:
    the designs whose people see one phrasing, and the catch items, which are never items people are shown."""
    one = frozenset(d.name for d in all_designs() if d.people_phrasings == ONE_PHRASING)
    return ListPool(human_variant=human_variant, perturbed=perturbed, one_phrasing=one,
                    never=frozenset({CATCH_ITEMS}), source=source)


def item_family(name: str, pair_id: str | None, original_pair_id: str | None) -> str:
    """The family of an item of design `name` (Family.key): blank for a design without families (and catch
    items, an unset design) and for an item in no pair."""
    found = _designs.get(name)
    if found is None or found.family is None:
        return ""
    return found.family.key(pair_id or "", original_pair_id or "")


def families() -> dict[str, Family]:
    """Design name → its Family, for the designs whose items come in families."""
    return {d.name: d.family for d in all_designs() if d.family is not None}


def pair_roles() -> dict[str, tuple[str, ...]]:
    """Design name → its pair roles (first, second), for the paired designs."""
    return {d.name: d.pair_roles for d in all_designs() if d.pair_roles}


def report_part_add(part, *, designs) -> None:
    """Register a report part (an object with a `key`: analysis.sections.ModelSpec or SectionBuilder) as
    reading the items of `designs` (registered names); the report runs a study's parts in the order they were
    added (report_parts.py). A key added twice, or an unknown design, raises."""
    names = set(designs)
    unknown = sorted(names - set(_designs))
    if unknown:
        raise ValueError(f"report part {part.key!r} reads unknown design(s) {', '.join(unknown)}")
    report_parts_module.part_add(part, names)


def analysed_alone_add(name: str) -> None:
    """Declare that where a study has items of design `name`, the study-wide tables (Table 1, the
    humans-vs-models comparison) read its real items alone (003's Table 1 reads its syllogisms)."""
    get(name)  # raises naming the registered designs
    report_parts_module.alone_add(name)


def unregister(name: str) -> None:
    """Take design `name` and what it registered out of the registry (a test's toy design cleans up)."""
    _designs.entries.pop(name, None)
    _levels_found.clear()
    _codes_found.clear()
    report_parts_module.design_forget(name)


def generation(name: str) -> Generation:
    """How items of design `name` are asked and read in generation mode (a default for catch items)."""
    found = _designs.get(name)
    return found.generation if found is not None else Generation()


def item_valid(name: str, gold: str | None) -> bool | None:
    """An item's `valid`: the logical validity of its form under the study's system, by its design's
    rule (VALIDITY); None (blank) for a design without logical forms and for catch items."""
    found = _designs.get(name)
    rule = found.validity if found is not None else NO_FORM
    if rule == VALID_IS_GOLD:
        return gold == "yes"
    return True if rule == FORM_VALID else None


def by_decision_rule() -> dict[str, list[str]]:
    """Decision rule → the designs whose paper decides by it (names, sorted)."""
    out: dict[str, list[str]] = {rule: [] for rule in DECISION_RULES}
    for design in all_designs():
        out[design.scoring.decision_rule].append(design.name)
    return out


def by_answer_forms() -> dict[str, list[str]]:
    """Answer forms → the designs whose paper sums them (names, sorted)."""
    out: dict[str, list[str]] = {forms: [] for forms in ANSWER_FORMS}
    for design in all_designs():
        out[design.scoring.answer_forms].append(design.name)
    return out


def with_probes() -> list[Design]:
    """The designs whose items a knowledge probe (000 §4.1) asks about."""
    return [d for d in all_designs() if d.knowledge_probe is not None]


def all_designs() -> list[Design]:
    return sorted(_designs.values(), key=lambda d: d.name)


def generated() -> list[Design]:
    return [d for d in all_designs() if d.source == GENERATE]


def uploadable() -> list[Design]:
    """The designs a file can be uploaded into (the admin's upload page): those with bank columns or
    published formats."""
    return [d for d in importable() if d.columns or d.formats]


def imported() -> list[Design]:
    """The designs whose items only come from a file (source IMPORT)."""
    return [d for d in all_designs() if d.source == IMPORT]


def importable() -> list[Design]:
    """Every design that takes a file: the imported ones, and generated ones that also read published
    formats (the rulebreakers design reads RULEBREAKERS' own file). Write with design.importer."""
    return [d for d in all_designs() if d.importer is not None]


def choices() -> list[tuple[str, str]]:
    """(name, label) pairs for a study's design field."""
    return [(d.name, f"{d.title} ({d.name}, seed {d.paper})") for d in all_designs()]


def perturbable() -> list[str]:
    return [d.name for d in all_designs() if d.perturb is not None]


def demo_design() -> Design:
    """The design the demo study, the pilot and the benchmarks are built from (the one declared `demo`)."""
    found = [d for d in all_designs() if d.demo]
    if not found:
        raise LookupError("no registered design is declared the demo's (Design.demo)")
    return found[0]


def generic_bank() -> Design:
    """The generic yes/no bank (the one design declared `generic`): what a file uploaded into a study that names no
    design yet is read as."""
    return next(d for d in all_designs() if d.generic)


def is_generic(name: str) -> bool:
    """Whether a study's design field says nothing yet about its items: unset, or the generic yes/no
    bank, which a more specific import (multiple choice, a rule bank) then names."""
    return name in UNSET or (name in _designs and _designs[name].generic)


def levels(factor: str) -> tuple[Level, ...]:
    """The declared levels of `factor`, every design's that declares them (by design name; a level once, in the
    first declaration's order); () where no design declares levels for it. A value declared twice with another
    code or label raises."""
    if factor in _levels_found:
        return _levels_found[factor]
    found: dict[str, Level] = {}
    for design in all_designs():
        for declared in design.factor_levels:
            if declared.name != factor:
                continue
            for level in declared.levels:
                if found.setdefault(level.value, level) != level:
                    raise ValueError(f"{factor} level {level.value!r} is declared twice with another code or label "
                                     f"({design.name}: {level!r}, before: {found[level.value]!r})")
    return _levels_found.setdefault(factor, tuple(found.values()))


_levels_found: dict[str, tuple[Level, ...]] = {}  # levels() per factor; emptied when a design comes or goes
_codes_found: dict[str, dict[str, str]] = {}  # level_code()'s spelling → code per factor; emptied with it


def level_code(factor: str, value: str) -> str:
    """`value`'s R-safe code as declared for `factor`, `value` being a level's value or one of its aliases (a value
    without one is its own code)."""
    codes = _codes_found.get(factor)
    if codes is None:
        found = levels(factor)  # a level's own value wins over another's alias
        codes = {**{alias: level.code for level in found for alias in level.aliases},
                 **{level.value: level.code for level in found}}
        codes = _codes_found.setdefault(factor, codes)
    return codes.get(value, value)


def spoken(factor: str) -> str:
    """How the report's text, legends and titles name `factor`: the name a design declares for it (Factor.spoken,
    the first design's by name that declares one), else its own name."""
    return next((declared.spoken for design in all_designs() for declared in design.factor_levels
                 if declared.name == factor and declared.spoken), factor)


def level_labels() -> dict[str, str]:
    """Level code → how the report shows it, for every declared level with a label (factors in the order the
    designs declare them)."""
    names = dict.fromkeys(f.name for d in all_designs() for f in d.factor_levels)
    return {level.code: level.label for name in names for level in levels(name) if level.label}


def probed_designs() -> str:
    """The titles of the designs a knowledge probe asks about, for messages ('Rulebreakers'; 'none')."""
    return ", ".join(d.title for d in with_probes()) or "none"
