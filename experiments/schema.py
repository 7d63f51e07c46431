"""The data schema, declared once (issue 19 item 1): every column of the trials, model scores and
items files, with its type, unit, allowed values and meaning, and how it is read (issue 29 item 3):
`source`, the database path from the table's row (a Trial, a ModelScore, an Item) with an optional
`convert` of the stored value, or `derive`, a value computed from the row's other columns.

The admin's trial export (experiments/participation/selectors.py), the analysis frames
(analysis/frames.py), the simulator (designs/modal/simulate.py), the item bank export
(experiments/item_csv.py), the report's data files and its codebook (analysis/codebook.py) all read
these declarations; `Rows` turns a query's values into rows. Plain Python, no Django and no pandas:
the web process imports it.

Conventions every file follows:
* booleans are written TRUE / FALSE (R's read.csv and pandas both read them as logical);
* times are milliseconds (unit "ms"); clock times are ISO 8601 in UTC;
* display labels (the paper's symbols, e.g. ∨⊢) travel beside ASCII codes (`argform_code`,
  `modality_code`: `code_of`, as the designs declare them), the level names the models and the coefficient
  tables use.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from operator import itemgetter
from typing import Any

from .design_registry import item_family, item_valid, level_code, levels

TYPES = ("string", "integer", "number", "boolean", "datetime")


@dataclass(frozen=True)
class Column:
    name: str
    type: str  # one of TYPES
    description: str
    unit: str = ""
    allowed: tuple[str, ...] = ()  # the values the column may hold (blank always allowed where noted)
    # How the column is read: `source` is the database path from the table's row ("item__code" from a
    # Trial), its stored value passed through `convert` when given; `derive` computes the value from
    # the row's columns named in `uses` (called with their values, in that order). A column with
    # neither is given by the reader (`Rows(..., given=...)`): a value that depends on more than the row.
    source: str = ""
    convert: Callable[[Any], Any] | None = None
    derive: Callable[..., Any] | None = None
    uses: tuple[str, ...] = ()
    # A factor whose levels its designs declare (design_registry.levels): the column holds their values, or with
    # `codes` their codes, and its meaning lists them (read when a codebook is written: meaning(), allowed()).
    levels: str = ""
    codes: bool = False

    def __post_init__(self):
        if self.type not in TYPES:
            raise ValueError(f"{self.name}: unknown type {self.type!r}")
        if self.source and self.derive:
            raise ValueError(f"{self.name}: a column is read from its source or derived, not both")
        if bool(self.derive) != bool(self.uses):
            raise ValueError(f"{self.name}: a derived column names the columns it uses, and only it does")

    def under(self, prefix: str) -> Column:
        """The column read through a relation (`item__` from a Trial or a ModelScore): its source, and the
        database paths (names with '__') a derivation uses, are read through it too."""
        if self.source:
            return replace(self, source=prefix + self.source)
        if any("__" in u for u in self.uses):
            return replace(self, uses=tuple(prefix + u if "__" in u else u for u in self.uses))
        return self


def code_of(factor: str) -> Callable[[str | None], str]:
    """A coded column's derivation: an item's level of `factor` as the R-safe ASCII code its design declares
    (design_registry.level_code: by the level's value or one of its aliases; a level without a code is kept as it
    is; blank for none)."""
    def code(label: str | None) -> str:
        return level_code(factor, label) if label else ""

    code.__name__ = f"{factor}_code"
    return code


_NAN = float("nan")


def pseudonym(participant_id: int) -> str:
    """The participant's pseudonymous label, as the analysis names it (P<id>)."""
    return f"P{participant_id}"


def pseudonym_order(label: str) -> tuple[int, int, str]:
    """A sort key putting pseudonyms in their ids' order (P2 before P10, which text order reverses); any
    other label after them, by its text."""
    number = label[1:] if label.startswith("P") else ""
    return (0, int(number), "") if number.isdigit() else (1, 0, label)


def _valid(design: str, gold: str | None) -> bool | None:
    """Each design's rule for `valid`, from the registry."""
    return item_valid(design, gold)




def _family(design: str, pair_id: str | None, original_pair_id: str | None) -> str:
    """Each design's family of an item (its Family in the registry), from its pair and its original's."""
    return item_family(design, pair_id, original_pair_id)


def _options(value) -> str:
    return " | ".join(value) if isinstance(value, list) else (value or "")


def _upper(value) -> str:
    """TRUE / FALSE as text (blank for None), as R's read.csv and pandas read them."""
    return "" if value is None else str(value).upper()


def _text(value) -> str:
    return "" if value is None else value


_YES_NO = ("yes", "no")
ITEM = (  # sources from an Item
    Column("item_id", "integer", "database id of the item", source="id"),
    Column("item_code", "string", "the item's stable code within the study", source="code"),
    Column("design", "string", "design the item comes from (modal-syllogisms, necessitation, modal-distribution, …)",
           source="design"),
    Column("form_id", "string", "the logical sequent (form) the item instantiates", source="form_id"),
    Column("modality", "string", "the modality of the item's premises (blank for designs without one)",
           allowed=("none", "box", "dia"), source="modality"),
    Column("modality_code", "string", "ASCII code of the modality (none = ∅ propositional, box = □ must, "
           "dia = ◇ may): the level names of the model tables", allowed=("none", "box", "dia"),
           derive=code_of("modality"), uses=("modality",), levels="modality", codes=True),
    Column("argform", "string", "argument form, display label", source="argument_form", levels="argform"),
    Column("argform_code", "string", "ASCII code of the argument form, the level names of the model tables",
           derive=code_of("argform"), uses=("argform",), levels="argform", codes=True),
    Column("condition", "string", "real or nonsense (the nonsense mirror)", allowed=("real", "nonsense"),
           source="condition"),
    Column("interpretation_id", "integer", "database id of the interpretation (what p and q mean); blank if none",
           source="interpretation_id"),
    Column("interpretation_index", "integer", "position of the interpretation in the study's generated list "
           "(0-based); blank if none", source="interpretation__index"),
    Column("original_item_id", "integer", "for a nonsense item, the real item it mirrors (blank otherwise)",
           source="original_id"),
    Column("gold", "string", "the expected answer (yes/no; A–D for multiple choice), by the item's design: for "
           "003's designs and a CSV bank with logical forms the model checker's verdict on the form under the "
           "study's system and the consequence relation in `consequence`; for RULEBREAKERS by the item's role (a "
           "rulebreaker's gold answer is no, its non-rulebreaker's yes); for dual-sided rules original yes, flipped "
           "no", allowed=("yes", "no", "A", "B", "C", "D"), source="gold_answer"),
    Column("valid", "boolean", "logical validity of the item's form under the study's system (modal logic and "
           "consequence relation), which is not the same as gold: TRUE exactly when gold is yes for 003's designs and "
           "a CSV bank (gold is the checker's verdict), TRUE for every RULEBREAKERS item (its form, MT or DS, is "
           "valid; a rulebreaker's gold answer is still no); blank where the design has no logical form (dual-sided "
           "rules, multiple choice, attention checks)", derive=_valid, uses=("design", "gold")),
    Column("consequence", "string", "the consequence relation that keyed gold (blank for items without a "
           "logical form)", allowed=("local", "global"), source="consequence"),
    Column("gold_other", "string", "the checker's answer under the other consequence relation (blank where "
           "not recorded)", allowed=_YES_NO, source="gold_other"),
    Column("template_valid", "boolean", "the validity the paper's template (or the imported bank) states, "
           "beside the checker's key (blank when it states none)", source="template_valid"),
    Column("logical_form", "string", "the sequent in symbols", source="logical_form"),
    Column("pair_id", "string", "linked pairs (rulebreakers, dual-sided rules): the pair the item belongs to "
           "(blank otherwise)", source="pair_id"),
    Column("pair_role", "string", "the item's role in its pair (rulebreaker / non-rulebreaker, original / flipped)",
           source="pair_role"),
    Column("family", "string", "the item's family: the items that are one piece of content asked several ways share "
           "it (a question's option orders; a pair's members, phrasings and perturbed copies: the pair id of the "
           "item's original, else its own), and every mixed model holding several of them gives the family a random "
           "intercept beside the item's; blank for an item of a design without families",
           derive=_family, uses=("design", "pair_id", "original__pair_id")),
    Column("variant", "string", "the prompt variant (phrasing) the item is written in (blank for "
           "single-phrasing designs)", source="variant"),
    Column("kind", "string", "yes_no, or multiple_choice (four options, seed 001; gold and answers are then "
           "the letters A–D)", allowed=("yes_no", "multiple_choice"), source="kind"),
    Column("options", "string", "multiple choice: the four option texts in this item's order (A–D), joined by ' | '",
           source="options", convert=_options),
)

TRIAL = (
    Column("study", "string", "the study's slug", source="participant__study__slug"),
    Column("participant", "string", "pseudonymous participant label (P + database id; the admin's "
           "'with Prolific IDs' export holds the Prolific ID here instead)",
           source="participant_id", convert=pseudonym),
    Column("participant_status", "string", "the session's status",
           allowed=("started", "completed", "returned", "excluded", "no_consent", "failed_attention"),
           source="participant__status"),
    Column("is_preview", "boolean", "TRUE for a researcher's preview session",
           source="participant__is_preview", convert=bool),
    Column("is_simulated", "boolean", "TRUE for a simulated pilot participant (a bot; only in pilot reports)",
           source="participant__is_simulated", convert=bool),
    Column("attention_failures", "integer", "attention checks the participant answered wrongly",
           source="participant__attention_failures"),
    Column("failed_attention", "boolean", "TRUE when the participant failed the attention checks by the study's "
           "rule (experiments/participation/attention.py; the rule is in dataset_description.json)",
           source="failed_attention", convert=bool),
    Column("key_mapping", "string", "which key means yes (counterbalancing)", allowed=("f_yes", "j_yes"),
           source="participant__key_mapping"),
    Column("list_number", "integer", "the list (set of items) the participant was given; blank if none",
           source="participant__list_number"),
    Column("list_seed", "integer", "the seed that ordered the participant's list; blank if none",
           source="participant__list_seed"),
    Column("trial_index", "integer", "position of the trial in the participant's list (0-based)", source="index"),
    *(column.under("item__") for column in ITEM),
    Column("is_attention_check", "boolean", "TRUE for an attention-check trial (never analysed as data)",
           source="is_attention_check", convert=bool),
    Column("key", "string", "the accepted key's name (f or j; A–D for multiple choice; blank when timed out); for an "
           "on-screen button clicked or tapped, the key of the button's position", source="key"),
    Column("key_code", "string", "the keydown event's code (KeyF, KeyJ, …; blank when timed out); for an on-screen "
           "button, its position's key code", source="key_code"),
    Column("answer_channel", "string", "how the answer was given: key (a key press), click (an on-screen button "
           "clicked), touch (an on-screen button tapped); which a study accepts is its answer input "
           "(dataset_description.json); blank when timed out", allowed=("key", "click", "touch"),
           source="answer_channel"),
    Column("device", "string", "the kind of device the trial was answered on, as the page judged it from its "
           "pointer, touch support and screen size (not the user agent alone): desktop, phone or tablet; blank "
           "when not reported (trials saved before it was recorded)", allowed=("desktop", "phone", "tablet"),
           source="device"),
    Column("answer", "string", "the participant's answer (blank when the time limit ran out)",
           allowed=("yes", "no", "A", "B", "C", "D"), source="answer"),
    Column("correct", "integer", "1 when the answer matches the gold answer, else 0", allowed=("0", "1"),
           source="correct", convert=int),
    Column("timed_out", "boolean", "TRUE when no key was pressed in time", source="timed_out", convert=bool),
    Column("rt_ms", "number", "response time from stimulus onset", unit="ms", source="rt_ms"),
    Column("client_onset_ms", "number", "stimulus onset on the browser's clock (epoch)", unit="ms",
           source="client_onset_ms"),
    Column("client_response_ms", "number", "key press on the browser's clock (epoch)", unit="ms",
           source="client_response_ms"),
    Column("received_at", "datetime", "when the server stored the trial (ISO 8601, UTC)", source="received_at"),
    Column("focus_lost", "boolean", "TRUE when the page lost focus during the trial",
           source="focus_lost", convert=bool),
    Column("visibility_lost", "boolean", "TRUE when the page was hidden during the trial",
           source="visibility_lost", convert=bool),
    Column("viewport_width", "integer", "browser viewport width", unit="px", source="viewport_width"),
    Column("viewport_height", "integer", "browser viewport height", unit="px", source="viewport_height"),
    Column("user_agent", "string", "the browser's User-Agent", source="user_agent"),
)

SCORE = (
    Column("model", "string", "the model configuration's name (a language model read one way; see runs.csv)",
           source="run__language_model__name"),
    Column("run_id", "integer", "database id of the model run", source="run_id"),
    Column("prompt_format", "string", "the run configuration's prompt format: raw (paper 003's prompt) or chat "
           "(chat template)", allowed=("raw", "chat")),
    Column("p_yes", "number", "p(Yes | prompt)", unit="probability", source="p_yes"),
    Column("p_no", "number", "p(No | prompt)", unit="probability", source="p_no"),
    Column("soft_acc", "number", "soft accuracy: relative probability of the gold answer (paper 003, §4.1)",
           unit="probability", source="soft_accuracy"),
    Column("rel_p_yes", "number", "relative p(Yes) = p(Yes) / (p(Yes) + p(No)) (Eq. 5)", unit="probability",
           source="relative_p_yes"),
    Column("decision", "string", "the model's answer under the score's decision rule (yes/no, A–D, or other)",
           source="decision"),
    Column("decision_rule", "string", "relative: the likelier of the answers (p(Yes) vs p(No), 003 §4.1; the "
           "letters, 001); top_token: the most probable token over the whole vocabulary (000 §4.2)",
           allowed=("relative", "top_token"), source="decision_rule"),
    Column("decision_relative", "string", "the likelier of the answers (p(Yes) vs p(No), or the letters), "
           "whatever the rule", source="decision_relative"),
    Column("top_answer", "string", "the answer whose one-token variant is the most probable token over the "
           "vocabulary, else other", source="top_answer"),
    Column("correct", "integer", "1 when the decision matches the gold answer, else 0", allowed=("0", "1"),
           derive=lambda decision, gold: int(decision == gold), uses=("decision", "gold")),
    Column("perplexity", "number", "perplexity of the prompt under the model", source="perplexity"),
    Column("prompt_tokens", "integer", "number of prompt tokens", unit="tokens", source="prompt_tokens"),
    Column("answer_mass", "number", "p(Yes) + p(No): probability mass on the two answers", unit="probability",
           source="answer_mass"),
    *(Column(f"p_{x}", "number", f"multiple choice: p({x}) relative to the four option letters (001)",
             unit="probability", source="option_probs", convert=lambda probs, x=x: (probs or {}).get(x, _NAN))
      for x in "ABCD"),
    *(column.under("item__") for column in ITEM),
)

# The item bank file (generate_items --output; experiments/item_csv.py): importable again, so its
# columns are the import's names, each read from an Item (with its interpretation and original).
# The premise columns (premise_1 … premise_k, k the longest item's count), question and prompt follow.
ITEM_BANK = (
    Column("item_id", "string", "the item's code (the import's item_id)", source="code"),
    Column("design", "string", "design the item comes from", source="design"),
    Column("form_id", "string", "the logical sequent (form) the item instantiates", source="form_id"),
    Column("modality", "string", "the modality of the item's premises (blank for designs without one)",
           allowed=("none", "box", "dia"), source="modality"),
    Column("modality_code", "string", "ASCII code of the modality", allowed=("none", "box", "dia"),
           derive=code_of("modality"), uses=("modality",)),
    Column("argument_form", "string", "argument form, display label", source="argument_form"),
    Column("argform_code", "string", "ASCII code of the argument form",
           derive=code_of("argform"), uses=("argument_form",)),
    Column("logical_form", "string", "the sequent in symbols", source="logical_form"),
    Column("template_valid", "boolean", "the validity the template or the imported bank states (blank: none)",
           source="template_valid", convert=_upper),
    Column("gold_answer", "string", "the expected answer", allowed=("yes", "no", "A", "B", "C", "D"),
           source="gold_answer"),
    Column("logic_system", "string", "the modal logic the checker keyed gold under", source="logic_system"),
    Column("consequence", "string", "the consequence relation that keyed gold", allowed=("local", "global"),
           source="consequence"),
    Column("gold_other", "string", "the checker's answer under the other consequence relation",
           allowed=_YES_NO, source="gold_other"),
    Column("checker_disagrees", "boolean", "TRUE when the stated answer and the checker's differ",
           source="checker_disagrees", convert=_upper),
    Column("condition", "string", "real or nonsense (the nonsense mirror)", source="condition"),
    Column("original_item_id", "string", "for a nonsense item, the code of the real item it mirrors",
           source="original__code", convert=_text),
    *(Column(name, "string", f"the interpretation's {name.replace('_', ' ')} (blank without one)",
             source=f"interpretation__{name}", convert=_text)
      for name in ("p_subject", "p_predicate", "q_subject", "q_predicate")),
)

TABLES = {"trials": TRIAL, "scores": SCORE, "items": ITEM, "item_bank": ITEM_BANK}
REPORT_FILES = ("trials", "scores", "items")  # the tables a report writes as data/<name>.csv|.parquet


def names(columns: tuple[Column, ...]) -> tuple[str, ...]:
    return tuple(c.name for c in columns)


def descriptions(columns: tuple[Column, ...]) -> dict[str, str]:
    return {c.name: c.description for c in columns}


def meaning(column: Column) -> str:
    """The column's description, with the levels its designs declare where it holds a factor's (the labels, or
    each code with its label): read from the design registry, so call it once every design has registered."""
    if not column.levels:
        return column.description
    found = levels(column.levels)
    if column.codes:
        listed = ", ".join(f"{level.code} = {level.value}" for level in found if level.code != level.value)
        return f"{column.description}: {listed}" if listed else column.description
    return f"{column.description} ({', '.join(level.value for level in found)})" if found else column.description


def allowed(column: Column) -> tuple[str, ...]:
    """The values the column may hold: its own list, or for a factor's codes the codes its designs declare."""
    if column.codes and not column.allowed:
        return tuple(dict.fromkeys(level.code for level in levels(column.levels)))
    return column.allowed


def of_type(columns: tuple[Column, ...], kind: str) -> tuple[str, ...]:
    return tuple(c.name for c in columns if c.type == kind)


def sources(columns: Iterable[Column]) -> tuple[str, ...]:
    """The database paths `columns` read, each once, in order (a query's values_list)."""
    return tuple(dict.fromkeys(c.source for c in columns if c.source))


class Rows:
    """Rows of `columns` from stored values: `from_values` reads a query's values_list(*rows.lookups),
    `from_object` an instance (paths followed through its attributes; None past a missing relation),
    `from_dict` values named by column. `given`: column name → (names, function), for a column whose
    value depends on more than its row (a score's prompt format, by run) or is read another way here
    (the Prolific ID instead of the pseudonym); the names are the row's columns or database paths."""

    def __init__(self, columns: tuple[Column, ...], *,
                 given: Mapping[str, tuple[tuple[str, ...], Callable[..., Any]]] | None = None):
        given = dict(given or {})
        unknown = set(given) - {c.name for c in columns}
        if unknown:
            raise ValueError(f"no such column: {', '.join(sorted(unknown))}")
        missing = [c.name for c in columns if not (c.source or c.derive) and c.name not in given]
        if missing:
            raise ValueError(f"no way to read {', '.join(missing)}: give it")
        read = [c for c in columns if c.source and c.name not in given]
        derived = [(k, *(given[c.name] if c.name in given else (c.uses, c.derive)))
                   for k, c in enumerate(columns) if c.name in given or not c.source]
        column_at = {c.name: k for k, c in enumerate(columns)}
        read_names = {c.name for c in read}
        extra = [u for _, uses, _ in derived for u in uses if u not in column_at]
        wrong = [u for _, uses, _ in derived for u in uses if u in column_at and u not in read_names]
        if wrong:
            raise ValueError(f"a derivation uses {', '.join(wrong)}, which is not read from the database")
        self.columns = columns
        self.names = names(columns)
        self.lookups = tuple(dict.fromkeys((*sources(read), *extra)))
        position = {path: i for i, path in enumerate(self.lookups)}
        # One C-level pick of every column's stored value in column order (a derived column picks a
        # placeholder it then replaces) and of the extra paths after them; then the conversions, then
        # the derivations, each called with the values it uses.
        width = len(columns)
        extra_at = {path: width + i for i, path in enumerate(dict.fromkeys(extra))}
        self._pick = itemgetter(*(position[c.source] if c.source and c.name not in given else 0 for c in columns),
                                *(position[path] for path in extra_at), 0)  # (the 0: always a tuple)
        self._width = width
        self._convert = [(column_at[c.name], c.convert) for c in read if c.convert is not None]
        self._derive = [(k, function, len(uses) == 1,
                         itemgetter(*(column_at[u] if u in column_at else extra_at[u] for u in uses)))
                        for k, uses, function in derived]
        self._derive_named = [(columns[k].name, uses, function) for k, uses, function in derived]

    def row(self, values: tuple) -> tuple:
        """One row in the columns' order from one tuple of values_list(*self.lookups)."""
        out = list(self._pick(values))
        for k, convert in self._convert:
            out[k] = convert(out[k])
        for k, function, single, pick in self._derive:
            out[k] = function(pick(out)) if single else function(*pick(out))
        return tuple(out[:self._width])

    def from_values(self, values: Iterable[tuple]) -> Iterator[tuple]:
        return map(self.row, values)

    def from_object(self, obj) -> tuple:
        return self.row(tuple(_follow(obj, path) for path in self.lookups))

    def from_dict(self, values: Mapping[str, Any]) -> tuple:
        """A row from values named by column (a simulated item): missing sourced columns are blank,
        derived ones are derived."""
        row = {c.name: values.get(c.name) for c in self.columns}
        for name, uses, function in self._derive_named:
            if name not in values:
                row[name] = function(*[row[u] if u in row else values.get(u) for u in uses])
        return tuple(row[name] for name in self.names)


def _follow(obj, path: str):
    for part in path.split("__"):
        if obj is None:
            return None
        obj = getattr(obj, part)
    return obj
