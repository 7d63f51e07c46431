"""The designs registry (the way lm-evaluation-harness registers tasks): every design a study can
be built from declares, in one place (catalog.py), how its items are made — generated with its
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
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from studyserver.registry import Registry

from logic import answer_parsing, human_defaults, prompting
from logic import list_pool as pool

from . import report_parts as report_parts_module
from .report_parts import (  # noqa: F401  (the registry's API: what design packages register)
    analysed_alone, designs_for_section, package_add, report_part_remove, report_parts,
)

GENERATE, IMPORT = "generate", "import"
BANK = "bank"  # the format name of a design's own CSV columns (read by the design; sources/ reads published formats)

# How a model's answer is decided (inference.models.DecisionRule's values but 'paper').
RELATIVE, TOP_TOKEN, GENERATED = "relative", "top_token", "generated"
DECISION_RULES = {
    RELATIVE: "relative: the likelier of the answers (p(Yes) vs p(No), the letters for multiple choice)",
    TOP_TOKEN: "top token: the most probable token over the whole vocabulary",
    GENERATED: "generated: the answer the model writes, read by the design's parser (`generation`)",
}
# Which surface forms of the answers are scored and summed (inference.models.AnswerForms' values but
# 'paper'; inference.scorers.base.AnswerSet applies them).
ANSWERS_ONLY, CASES, ALL_FORMS = "answers", "cases", "all"
ANSWER_FORMS = {
    ANSWERS_ONLY: "the answers as configured only (' Yes' and ' No')",
    CASES: "the answers in three cases, as configured, lower and upper (' Yes', ' yes', ' YES')",
    ALL_FORMS: "every surface form: with and without a leading space, each in every case",
}
# What an item's `valid` column says, from its gold answer.
VALID_IS_GOLD, FORM_VALID, NO_FORM = "gold", "form", "none"
VALIDITY = {
    VALID_IS_GOLD: "TRUE exactly when the gold answer is yes: the gold answer is the checker's verdict on the form",
    FORM_VALID: "TRUE for every item: its logical form is valid, whatever the gold answer",
    NO_FORM: "blank: the items have no logical form",
}


@dataclass(frozen=True)
class Scoring:
    """How a model's answer to a design's items is read, as the design's paper reads it. A model
    configuration asks for 'paper' (the default) or overrides either part for every design."""

    decision_rule: str = RELATIVE
    decision_source: str = "003 §4.1: the likelier of p(Yes | s) and p(No | s)"
    answer_forms: str = ANSWERS_ONLY
    forms_source: str = "003 §4.1: the tokens Yes and No"

    def __post_init__(self):
        if self.decision_rule not in DECISION_RULES:
            raise ValueError(f"unknown decision rule {self.decision_rule!r}; known: {', '.join(DECISION_RULES)}")
        if self.answer_forms not in ANSWER_FORMS:
            raise ValueError(f"unknown answer forms {self.answer_forms!r}; known: {', '.join(ANSWER_FORMS)}")


@dataclass(frozen=True)
class Wording:
    """The two texts of a design's items: what participants read, and what a model is sent. A model's
    prompt ends in its answer cue, so that the next token is the answer (in the raw prompt format; the
    chat format drops the cue, the assistant's turn follows). Participants never read the model's
    answer instructions: they answer with the keys the instructions page names."""

    participant: str  # the participants' question, as they read it (an example)
    model: str  # the model's prompt in the raw format (an example)
    answer_cue: str  # the prompt's last text: the next token is the answer
    source: str  # where the wording comes from (the paper's section)
    # The model prompt's answer instructions ("Answer Yes or No only."): never on a participant's page.
    instructions: tuple[str, ...] = ()

    def __post_init__(self):
        if not self.model.endswith(self.answer_cue):
            raise ValueError(f"the model's prompt must end in its answer cue {self.answer_cue!r}: {self.model!r}")
        shown = [text for text in (*self.instructions, "Answer Yes or No only") if text in self.participant]
        if shown:
            raise ValueError(f"participants must not read the model's answer instruction {shown[0]!r}")


@dataclass(frozen=True)
class Generation:
    """How a design's items are asked and read in generation mode (issue 28): the prompt settings
    (few-shot demonstrations, chain of thought; logic/prompting.py), the one its paper
    used, and the parser reading the generated answer (logic/answer_parsing.py) with the
    words each answer label accepts beyond the item's own answer words."""

    parser: str = answer_parsing.FIRST_WORD
    parser_source: str = "003 §4.1 asks for Yes or No right after 'Answer:': the first word"
    prompts: tuple[prompting.PromptSetting, ...] = (prompting.ZERO_SHOT,)
    paper_prompt: str = prompting.ZERO_SHOT.name
    synonyms: tuple[tuple[str, tuple[str, ...]], ...] = (("yes", ("yes",)), ("no", ("no",)))

    def __post_init__(self):
        if self.parser not in answer_parsing.PARSERS:
            raise ValueError(f"unknown answer parser {self.parser!r}; known: {', '.join(answer_parsing.PARSERS)}")
        if self.paper_prompt not in {p.name for p in self.prompts}:
            raise ValueError(f"the paper's prompt {self.paper_prompt!r} is not among the design's prompt settings")

    def prompt(self, name: str) -> prompting.PromptSetting:
        """The setting called `name` ('paper': the paper's)."""
        wanted = self.paper_prompt if name in ("", "paper") else name
        for setting in self.prompts:
            if setting.name == wanted:
                return setting
        raise ValueError(f"no prompt setting {wanted!r} for this design; it has {', '.join(p.name for p in self.prompts)}")


# The Study fields a modal-logic design keys its items under: the checker's system and consequence relation.
LOGIC_SYSTEM, CONSEQUENCE = "logic_system", "consequence"
MODAL_FIELDS = (LOGIC_SYSTEM, CONSEQUENCE)


# What the lists draw from (issue 35 item 1, issue 44 item 2): a design declares which of its phrasings people
# see (people_phrasings); logic/list_pool.py holds the rule, `list_pool` below builds it for a study.
ONE_PHRASING, EVERY_PHRASING, PEOPLE_PHRASINGS = pool.ONE_PHRASING, pool.EVERY_PHRASING, pool.PEOPLE_PHRASINGS
ListPool = pool.ListPool


def by_pair(pair_id: str, original_pair_id: str) -> str:
    """An item's family by its pair (Family.key's default): its original's pair for a copy or an option order
    (an item linked to its original), else its own; blank for an item in no pair."""
    return original_pair_id or pair_id or ""


@dataclass(frozen=True)
class Family:
    """Which of a design's items are one family (issue 44 item 4): one piece of content asked several ways, as a
    question's option orders, a pair's members and phrasings, and the pair's perturbed copies are. Every GLMM of
    the report and of the power analysis that holds several members of one family gives the family a random
    intercept beside the item's (analysis/versus.py), so the members are not counted as unrelated items.
    `name` says what one family is and `members` what its items are, in the report's words ("the question",
    "its 4 option orders"); `key(pair_id, original_pair_id)` gives an item's family from its own pair and its
    original's (experiments/schema.py's `family` column reads it)."""

    name: str
    members: str
    key: Callable[[str, str], str] = by_pair

    def describe(self) -> str:
        return f"{self.name} ({self.members})"


@dataclass(frozen=True)
class Probe:
    """A knowledge probe (000 §4.1): does a model know a fact a design's items rest on? What a design's
    `knowledge_probe` hook makes from an item's attributes, and all a probe run reads (inference/probes.py):
    `key` names the fact (one probe per key in a study, ProbeScore.probe_key), `prompt` is sent as it is, and the
    model knows the fact when its likeliest next token begins one of the `accepted` answers."""

    key: str
    prompt: str
    target: str  # the answer as the items write it
    accepted: tuple[str, ...]


@dataclass(frozen=True)
class Level:
    """One level of a factor: the value its items carry (the frames' column, "∨⊢"), its R-safe ASCII code (the
    models' level name and the data files' <factor>_code, "DS"; blank: the value is its own code) and how the
    report shows it ("∨⊢ disjunctive syllogism"; blank: as the code)."""

    value: str
    code: str = ""
    label: str = ""

    def __post_init__(self):
        if not self.code:
            object.__setattr__(self, "code", self.value)


@dataclass(frozen=True)
class Factor:
    """A factor's levels as a design declares them, in the report's order (the first is the models' reference
    level), with where they come from. Table 1, the models' level order and codes, the data files' codes and the
    report's legend read them (levels(), level_code(), level_labels() below); a factor no design declares levels
    for is read in the order of its values."""

    name: str  # an item field, a column of the report's frames ("modality", "argform")
    levels: tuple[Level, ...]
    source: str = ""


@dataclass(frozen=True)
class Option:
    """One option of a generated design: the command's --flag and the admin form's field."""

    name: str
    kind: type  # int, bool, str or list (of str, or of int with item=int)
    default: object = None
    help: str = ""
    choices: Sequence[str] = ()
    item: type = str  # a list's element type
    # A Study field whose value the option defaults to when it is not given ("logic_system"): the admin's
    # form names the study's own value, the command's help the field's default for a new study.
    study_field: str = ""

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")


@dataclass(frozen=True)
class BankColumn:
    """One column of an imported design's bank: the field a researcher maps a file's column onto in
    the admin (designs/bank_mapping.py), the template's header and docs/designs.md's table.
    `many`: a field filled from several columns in order (premise_1, premise_2, …), or from one
    column holding a list."""

    name: str
    required: bool
    help: str
    aliases: tuple[str, ...] = ()  # other names a file's column may have for it (matched in any case)
    many: bool = False


@dataclass(frozen=True)
class Preview:
    """What an import would write, found without writing: how many items, and the first of them
    (unsaved Item instances, in the order the write would create them)."""

    count: int
    items: list
    # Rows of a published format that would be left out (sources.Problem: row id, column, reason); the
    # write refuses while there are any, unless told to skip them (sources.RowProblems).
    problems: tuple = ()


@dataclass(frozen=True)
class Design:
    name: str
    title: str
    paper: str  # the seed paper it comes from (../shared/seeds/README)
    source: str  # GENERATE (make(study=, **options)) or IMPORT (make(study=, data=, **options))
    make: Callable
    describe: Callable  # (report) -> the sentence that says what was made
    answers: tuple[str, ...] = ("yes", "no")
    options: tuple[Option, ...] = ()
    perturb: Callable | None = None  # (study=, kind=, seed=, mapping=, label=) -> items created
    warnings: Callable = field(default=lambda report: [])  # (report) -> lines to show as warnings
    generic: bool = False  # a study named after it says nothing yet: a more specific import renames it
    # IMPORT: (study=, data=, rows=, **options) -> Preview: every check of make(), nothing written
    # (no transaction, so no write lock); the admin shows it before the write.
    preview: Callable | None = None
    # The factors its items vary by, as columns of the report's frames (analysis/factors.py reads them):
    # Table 1 and the humans-vs-models model are by these. A bank without any names its own at import.
    factors: tuple[str, ...] = ()
    # The levels of its factors (and of any other item field it codes), each as its paper names them: Factor.
    factor_levels: tuple[Factor, ...] = ()
    scoring: Scoring = Scoring()
    validity: str = VALID_IS_GOLD  # what its items' `valid` says (VALIDITY)
    gold: str = "the model checker's verdict on the item's logical form under the study's system and the item's " \
                "consequence relation"  # what its items' gold answer is
    # (item attributes) -> the knowledge probe (000 §4.1) its item rests on (a Probe), or None; None: it has none
    knowledge_probe: Callable[[dict], Probe | None] | None = None
    # IMPORT: the bank's columns (the mapping's fields) and two valid example rows ({column: value};
    # a `many` column's value is a list): the downloadable template is the header and these rows.
    columns: tuple[BankColumn, ...] = ()
    examples: tuple[dict, ...] = ()
    # The published formats it reads (names of sources.Reader; issue 27), the first its default where
    # it has no bank of its own (sources.BANK).
    formats: tuple[str, ...] = ()
    # Importing: (study=, data=, format=, skip_problems=, **import_options) -> report, and its preview
    # (study=, data=, format=, rows=, **import_options) -> Preview. An IMPORT design's are make and
    # preview (set here); a GENERATE design that also takes imports declares its own.
    importer: Callable | None = None
    import_preview: Callable | None = None
    import_options: tuple[Option, ...] | None = None
    wording: Wording | None = None  # what participants read and what models are sent (required: register)
    # The human arm's defaults for a new study (human_defaults.py): practice questions and catch items.
    practice: Callable[[], list] = human_defaults.two_statement_practice
    catch_items: Callable[[], list] = human_defaults.two_statement_checks
    # The logical forms its items test, as sequents (practice must share none); None: its items carry them
    # (a bank's rows), checked when the study opens.
    tested_forms: Callable[[], tuple[str, ...]] | None = None
    # Its linked pairs' roles (first, second) as logic/pairs.py judges them; () for an unpaired design.
    pair_roles: tuple[str, ...] = ()
    generation: Generation = Generation()  # generation mode: its prompts and its answer parser
    # Which of its phrasings people are shown (PEOPLE_PHRASINGS; ListPool applies it): models answer every one.
    people_phrasings: str = EVERY_PHRASING
    # The study's modal-logic fields its items are keyed under (of MODAL_FIELDS): the study's page shows
    # only these (a design without modal logic, such as Rulebreakers, shows neither).
    modal_fields: tuple[str, ...] = ()
    # Which of its items are one family (a question's option orders, a pair's members, phrasings and copies),
    # sharing a random intercept in the GLMMs; None: each item stands alone (003's designs, a yes/no bank).
    family: Family | None = None

    def __post_init__(self):
        if set(self.modal_fields) - set(MODAL_FIELDS):
            raise ValueError(f"{self.name}: unknown modal fields {self.modal_fields!r}; known: {', '.join(MODAL_FIELDS)}")
        if self.people_phrasings not in PEOPLE_PHRASINGS:
            raise ValueError(f"{self.name}: unknown people_phrasings {self.people_phrasings!r}; "
                             f"known: {', '.join(PEOPLE_PHRASINGS)}")
        if self.validity not in VALIDITY:
            raise ValueError(f"{self.name}: unknown validity {self.validity!r}; known: {', '.join(VALIDITY)}")
        if self.source == IMPORT:
            for name, value in (("importer", self.make), ("import_preview", self.preview),
                                ("import_options", self.options)):
                if getattr(self, name) is None:
                    object.__setattr__(self, name, value)
        elif self.import_options is None:
            object.__setattr__(self, "import_options", ())

    @property
    def has_bank(self) -> bool:
        """Whether it reads a CSV bank of its own columns (sources.BANK; docs/designs.md)."""
        return self.source == IMPORT

    @property
    def default_format(self) -> str:
        """The format an import reads when none is named: its bank, else its first published format."""
        return BANK if self.has_bank or not self.formats else self.formats[0]

    @property
    def import_formats(self) -> tuple[str, ...]:
        """Every format an import may name: its bank (where it has one), then its published formats."""
        return ((BANK,) if self.has_bank else ()) + tuple(self.formats)

    @property
    def report_sections(self) -> tuple:
        """The report parts its items are read by, in the report's order: the objects its package
        registered (report_part_add; analysis/sections.py: a ModelSpec or a SectionBuilder)."""
        return tuple(report_parts_module.report_parts([self.name]))

    def option_values(self, given: dict) -> dict:
        """This design's options from `given` (defaults for those not there)."""
        return {o.name: given.get(o.name, o.default) for o in self.options}


_designs: Registry[Design] = Registry("design")
# The catch items a human arm adds to every list (participation/services.py makes them from the arm's
# attention checks): not a design a study is built from, but stored under this design name (declared
# once, in logic/human_defaults.py, where the checks are made; analysis reads it there).
CATCH_ITEMS = human_defaults.CATCH_ITEMS


def is_catch_item(item) -> bool:
    return item.design == CATCH_ITEMS
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
    _levels_found.clear()
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


def level_code(factor: str, value: str) -> str:
    """`value`'s R-safe code as declared for `factor` (a value without one is its own code)."""
    for level in levels(factor):
        if level.value == value:
            return level.code
    return value


def level_labels() -> dict[str, str]:
    """Level code → how the report shows it, for every declared level with a label (factors in the order the
    designs declare them)."""
    names = dict.fromkeys(f.name for d in all_designs() for f in d.factor_levels)
    return {level.code: level.label for name in names for level in levels(name) if level.label}


def with_probes() -> list[Design]:
    """The designs whose items a knowledge probe (000 §4.1) asks about."""
    return [d for d in all_designs() if d.knowledge_probe is not None]


def probed_designs() -> str:
    """The titles of the designs a knowledge probe asks about, for messages ('Rulebreakers'; 'none')."""
    return ", ".join(d.title for d in with_probes()) or "none"


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


def is_generic(name: str) -> bool:
    """Whether a study's design field says nothing yet about its items: unset, or the generic yes/no
    bank, which a more specific import (multiple choice, a rule bank) then names."""
    return name in UNSET or (name in _designs and _designs[name].generic)
