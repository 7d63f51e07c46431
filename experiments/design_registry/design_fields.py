"""What a design declares (issue 18): the `Design` dataclass and the parts it is made of — how a model's answer is
read (`Scoring`), what participants read and what a model is sent (`Wording`), generation mode (`Generation`),
which items are one family (`Family`), a generated design's options (`Option`), a bank's columns (`BankColumn`), an
import's preview (`Preview`) — with the vocabularies their fields take. The registry's lookups are lookups.py;
experiments/design_registry/__init__.py re-exports both."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from logic import answer_parsing, human_defaults, prompting
from logic import list_pool as pool

from . import report_parts as report_parts_module

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
        shown = instruction_in(self.participant, self.instructions)
        if shown:
            raise ValueError(f"participants must not read the model's answer instruction {shown!r}")


# The answer instruction of 003's model prompt, refused in what participants read whatever the design.
GENERIC_INSTRUCTION = "Answer Yes or No only"


def _plain(text: str) -> str:
    return " ".join(text.casefold().split())


def instruction_in(text: str, instructions) -> str | None:
    """The first of `instructions` (and the generic one) that `text` contains, letter case and spacing aside, its
    closing full stop optional; None when none does (designs.model_instruction_in: every registered design's)."""
    plain = _plain(text)
    for instruction in dict.fromkeys((*instructions, GENERIC_INSTRUCTION)):
        if _plain(instruction).rstrip(".") in plain:
            return instruction
    return None


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
    models' level name and the data files' <factor>_code, "DS"; blank: the value is its own code), how the
    report shows it ("∨⊢ disjunctive syllogism"; blank: as the code) and the other spellings a file or a stated
    effect may give it ("□" for "box": designs.level_code reads them as the level)."""

    value: str
    code: str = ""
    label: str = ""
    aliases: tuple[str, ...] = ()

    def __post_init__(self):
        if not self.code:
            object.__setattr__(self, "code", self.value)


@dataclass(frozen=True)
class Factor:
    """A factor's levels as a design declares them, in the report's order (the first is the models' reference
    level), with where they come from. Table 1, the models' level order and codes, the data files' codes and the
    report's legend read them (designs.levels(), level_code(), level_labels(), spoken()); a factor no design
    declares levels for is read in the order of its values."""

    name: str  # an item field, a column of the report's frames ("modality", "argform")
    levels: tuple[Level, ...]
    source: str = ""
    spoken: str = ""  # how the report's text, legends and titles name it, where not by its name (designs.spoken)


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
    # The design the demo study and the pilot are built from (demo/), and the benchmarks (bench/): one design
    # declares it (registry.demo_design()), so that neither names a design.
    demo: bool = False
    # A generated design's items made without a database: (**options) -> what make(study=, **options) would write,
    # each with its code and prompt, in the same order (the benchmarks time and score them: bench/generate_items.py,
    # bench/scoring.py); None: it has none.
    sample: Callable[..., list] | None = None

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
