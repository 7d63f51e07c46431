"""The data schema, declared once (issue 19 item 1): every column of the trials, model scores and
items files, with its type, unit, allowed values and meaning.

The admin's trial export (experiments/participation/selectors.py), the analysis frames
(analysis/frames.py), the report's data files and its codebook (analysis/codebook.py) all read
these declarations. Plain Python, no Django and no pandas: the web process imports it.

Conventions every file follows:
* booleans are written TRUE / FALSE (R's read.csv and pandas both read them as logical);
* times are milliseconds (unit "ms"); clock times are ISO 8601 in UTC;
* display labels (the paper's symbols, e.g. ∨⊢) travel beside ASCII codes (`argform_code`,
  `modality_code`), the level names the models and the coefficient tables use.
"""
from __future__ import annotations

from dataclasses import dataclass

from .logic.modal_forms import NECESSITATION_FORM

TYPES = ("string", "integer", "number", "boolean", "datetime")


@dataclass(frozen=True)
class Column:
    name: str
    type: str  # one of TYPES
    description: str
    unit: str = ""
    allowed: tuple[str, ...] = ()  # the values the column may hold (blank always allowed where noted)

    def __post_init__(self):
        if self.type not in TYPES:
            raise ValueError(f"{self.name}: unknown type {self.type!r}")


# Paper 003's argument forms → ASCII codes (valid forms first, then the fallacies); other designs' labels.
ARGFORM_CODES = {
    "∨⊢": "DS", "→ᴸ⊢": "MP", "→ᴿ⊢": "MT", "∨⊬": "AD", "→ᴸ⊬": "AC", "→ᴿ⊬": "DA",
    NECESSITATION_FORM: "NEC", "base": "base", "theorem": "theorem", "spurious": "spurious",
}
MODALITY_CODES = {"∅": "none", "□": "box", "◇": "dia", "none": "none", "box": "box", "dia": "dia"}
MODALITY_LABELS = {"none": "∅", "box": "□", "dia": "◇"}


def argform_code(label: str | None) -> str:
    """The ASCII code of an argument-form label (a label without a code is kept as it is)."""
    return ARGFORM_CODES.get(label, label) if label else ""


def modality_code(label: str | None) -> str:
    return MODALITY_CODES.get(label, label) if label else ""


_YES_NO = ("yes", "no")
ITEM = (
    Column("item_id", "integer", "database id of the item"),
    Column("item_code", "string", "the item's stable code within the study"),
    Column("design", "string", "design the item comes from (modal-syllogisms, necessitation, modal-distribution, …)"),
    Column("form_id", "string", "the logical sequent (form) the item instantiates"),
    Column("modality", "string", "the modality of the item's premises (blank for designs without one)",
           allowed=("none", "box", "dia")),
    Column("modality_code", "string", "ASCII code of the modality (none = ∅ propositional, box = □ must, "
           "dia = ◇ may): the level names of the model tables", allowed=("none", "box", "dia")),
    Column("argform", "string", "argument form, display label (∨⊢, →ᴸ⊢, →ᴿ⊢, ∨⊬, →ᴸ⊬, →ᴿ⊬; necessitation; "
           "base/theorem/spurious)"),
    Column("argform_code", "string", "ASCII code of the argument form, the level names of the model tables: "
           + ", ".join(f"{code} = {label}" for label, code in ARGFORM_CODES.items() if code != label),
           allowed=tuple(dict.fromkeys(ARGFORM_CODES.values()))),
    Column("condition", "string", "real or nonsense (the nonsense mirror)", allowed=("real", "nonsense")),
    Column("interpretation_id", "integer", "database id of the interpretation (what p and q mean); blank if none"),
    Column("interpretation_index", "integer", "position of the interpretation in the study's generated list "
           "(0-based); blank if none"),
    Column("original_item_id", "integer", "for a nonsense item, the real item it mirrors (blank otherwise)"),
    Column("gold", "string", "the expected answer (yes/no; A–D for multiple choice), by the item's design: for "
           "003's designs and a CSV bank with logical forms the model checker's verdict on the form under the "
           "study's system and the consequence relation in `consequence`; for RULEBREAKERS by the item's role (a "
           "rulebreaker's gold answer is no, its non-rulebreaker's yes); for dual-sided rules original yes, flipped "
           "no", allowed=("yes", "no", "A", "B", "C", "D")),
    Column("valid", "boolean", "logical validity of the item's form under the study's system (modal logic and "
           "consequence relation), which is not the same as gold: TRUE exactly when gold is yes for 003's designs and "
           "a CSV bank (gold is the checker's verdict), TRUE for every RULEBREAKERS item (its form, MT or DS, is "
           "valid; a rulebreaker's gold answer is still no); blank where the design has no logical form (dual-sided "
           "rules, multiple choice, attention checks)"),
    Column("consequence", "string", "the consequence relation that keyed gold (blank for items without a "
           "logical form)", allowed=("local", "global")),
    Column("gold_other", "string", "the checker's answer under the other consequence relation (blank where "
           "not recorded)", allowed=_YES_NO),
    Column("template_valid", "boolean", "the validity the paper's template (or the imported bank) states, "
           "beside the checker's key (blank when it states none)"),
    Column("logical_form", "string", "the sequent in symbols"),
    Column("pair_id", "string", "linked pairs (rulebreakers, dual-sided rules): the pair the item belongs to "
           "(blank otherwise)"),
    Column("pair_role", "string", "the item's role in its pair (rulebreaker / non-rulebreaker, original / flipped)"),
    Column("variant", "string", "the prompt variant (phrasing) the item is written in (blank for "
           "single-phrasing designs)"),
    Column("kind", "string", "yes_no, or multiple_choice (four options, seed 001; gold and answers are then "
           "the letters A–D)", allowed=("yes_no", "multiple_choice")),
    Column("options", "string", "multiple choice: the four option texts in this item's order (A–D), joined by ' | '"),
)

TRIAL = (
    Column("study", "string", "the study's slug"),
    Column("participant", "string", "pseudonymous participant label (P + database id; the admin's "
           "'with Prolific IDs' export holds the Prolific ID here instead)"),
    Column("participant_status", "string", "the session's status",
           allowed=("started", "completed", "returned", "excluded", "no_consent", "failed_attention")),
    Column("is_preview", "boolean", "TRUE for a researcher's preview session"),
    Column("is_simulated", "boolean", "TRUE for a simulated pilot participant (a bot; only in pilot reports)"),
    Column("attention_failures", "integer", "attention checks the participant answered wrongly"),
    Column("failed_attention", "boolean", "TRUE when the participant failed the attention checks by the study's "
           "rule (experiments/participation/attention.py; the rule is in dataset_description.json)"),
    Column("key_mapping", "string", "which key means yes (counterbalancing)", allowed=("f_yes", "j_yes")),
    Column("list_number", "integer", "the list (set of items) the participant was given; blank if none"),
    Column("list_seed", "integer", "the seed that ordered the participant's list; blank if none"),
    Column("trial_index", "integer", "position of the trial in the participant's list (0-based)"),
    *ITEM,
    Column("is_attention_check", "boolean", "TRUE for an attention-check trial (never analysed as data)"),
    Column("key", "string", "the accepted key's name (f or j; A–D for multiple choice; blank when timed out)"),
    Column("key_code", "string", "the keydown event's code (KeyF, KeyJ, …; blank when timed out)"),
    Column("answer", "string", "the participant's answer (blank when the time limit ran out)",
           allowed=("yes", "no", "A", "B", "C", "D")),
    Column("correct", "integer", "1 when the answer matches the gold answer, else 0", allowed=("0", "1")),
    Column("timed_out", "boolean", "TRUE when no key was pressed in time"),
    Column("rt_ms", "number", "response time from stimulus onset", unit="ms"),
    Column("client_onset_ms", "number", "stimulus onset on the browser's clock (epoch)", unit="ms"),
    Column("client_response_ms", "number", "key press on the browser's clock (epoch)", unit="ms"),
    Column("received_at", "datetime", "when the server stored the trial (ISO 8601, UTC)"),
    Column("focus_lost", "boolean", "TRUE when the page lost focus during the trial"),
    Column("visibility_lost", "boolean", "TRUE when the page was hidden during the trial"),
    Column("viewport_width", "integer", "browser viewport width", unit="px"),
    Column("viewport_height", "integer", "browser viewport height", unit="px"),
    Column("user_agent", "string", "the browser's User-Agent"),
)

SCORE = (
    Column("model", "string", "the model configuration's name (a language model read one way; see runs.csv)"),
    Column("run_id", "integer", "database id of the model run"),
    Column("prompt_format", "string", "the run configuration's prompt format: raw (paper 003's prompt) or chat "
           "(chat template)", allowed=("raw", "chat")),
    Column("p_yes", "number", "p(Yes | prompt)", unit="probability"),
    Column("p_no", "number", "p(No | prompt)", unit="probability"),
    Column("soft_acc", "number", "soft accuracy: relative probability of the gold answer (paper 003, §4.1)",
           unit="probability"),
    Column("rel_p_yes", "number", "relative p(Yes) = p(Yes) / (p(Yes) + p(No)) (Eq. 5)", unit="probability"),
    Column("decision", "string", "the model's answer under the score's decision rule (yes/no, A–D, or other)"),
    Column("decision_rule", "string", "relative: the likelier of the answers (p(Yes) vs p(No), 003 §4.1; the "
           "letters, 001); top_token: the most probable token over the whole vocabulary (000 §4.2)",
           allowed=("relative", "top_token")),
    Column("decision_relative", "string", "the likelier of the answers (p(Yes) vs p(No), or the letters), "
           "whatever the rule"),
    Column("top_answer", "string", "the answer whose one-token variant is the most probable token over the "
           "vocabulary, else other"),
    Column("correct", "integer", "1 when the decision matches the gold answer, else 0", allowed=("0", "1")),
    Column("perplexity", "number", "perplexity of the prompt under the model"),
    Column("prompt_tokens", "integer", "number of prompt tokens", unit="tokens"),
    Column("answer_mass", "number", "p(Yes) + p(No): probability mass on the two answers", unit="probability"),
    *(Column(f"p_{x}", "number", f"multiple choice: p({x}) relative to the four option letters (001)",
             unit="probability") for x in "ABCD"),
    *ITEM,
)

TABLES = {"trials": TRIAL, "scores": SCORE, "items": ITEM}


def names(columns: tuple[Column, ...]) -> tuple[str, ...]:
    return tuple(c.name for c in columns)


def descriptions(columns: tuple[Column, ...]) -> dict[str, str]:
    return {c.name: c.description for c in columns}


def of_type(columns: tuple[Column, ...], kind: str) -> tuple[str, ...]:
    return tuple(c.name for c in columns if c.type == kind)
