"""Prolific's eligibility filters (issue 47 item 4), as pure functions (no Django, no network): what the researcher
typed, Prolific's filter list read as outside data, and the `filters` of the create-study payload in Prolific's
documented shape (docs.prolific.com, api-reference › Filters):

* a select filter: `{"filter_id": ID, "selected_values": [choice id, …]}`;
* a range filter: `{"filter_id": ID, "selected_range": {"lower": L, "upper": U}}` (either bound may be left out),
  integers for an `integer` range, numbers for a `float` one, ISO 8601 dates for a `date` one;
* "not in these earlier studies": the select filter `previous_studies_blocklist`, whose values are Prolific study
  ids (data type StudyID).

What is typed: `ID=VALUE[,VALUE]` (a select filter's choice ids, or their labels as Prolific's list spells them), or
a range `ID=LOW..HIGH` (either side may be empty) or `ID=LOW-HIGH`. A common filter may be named by its short name
(COMMON). Everything typed is checked against Prolific's filter list (GET /api/v1/filters/) before anything is
created: an id Prolific does not list, a value not among a select filter's choices, a range outside the filter's
bounds or of the wrong kind are refused, all at once, in words (`FilterRefused`).

Prolific's list is read like every answer from outside (DESIGN.md habit 18): an entry whose shape is not the
reference's (an id, a type of select or range, choices a mapping of short strings, numeric or date bounds) is not
used; the list, its entries' choices and their words are capped (MAX_FILTERS, MAX_CHOICES, MAX_WORDS); nothing of it
is repeated in a message but the filter ids and choice labels the researcher asked about, cut short.
"""
from __future__ import annotations

import datetime
import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,99}")  # a filter id: a slug of its title (handedness, approval_rate)
DASH_RANGE = re.compile(r"(\d+(?:\.\d+)?)\s*-\s*(\d+(?:\.\d+)?)")
PROLIFIC_ID = re.compile(r"[0-9a-fA-F]{24}")  # as prolific/rules.py: a study's, a participant's, a group's id
MAX_FILTERS = 2000  # filters read from Prolific's list (it lists a few hundred)
MAX_CHOICES = 20_000  # choices of one select filter (countries, languages, the workspace's studies)
MAX_ALL_CHOICES = 200_000  # choices of the whole list
MAX_WORDS = 200  # characters kept of a title or a choice's label
MAX_TYPED_FILTERS = 50
MAX_TYPED_VALUES = 1000  # values of one typed filter (a long list of earlier studies)
MAX_TYPED_CHARS = 100_000
PREVIOUS_STUDIES = "previous_studies_blocklist"
DEVICES = ("desktop", "tablet", "mobile")  # Prolific's device_compatibility values
# A select filter whose values are Prolific's own ids (not choices of a fixed list): checked for their format, and
# against the list's choices only where Prolific lists them.
ID_VALUES = {"StudyID", "ParticipantID", "ParticipantGroupID"}


class FilterSyntax(ValueError):
    """Typed text that is not a filter (said in words, before anything is asked of Prolific)."""


class FilterRefused(ValueError):
    """Filters Prolific's list does not allow: every problem, in words."""

    def __init__(self, problems: list[str]):
        super().__init__("Prolific's filters: " + " ".join(problems) + " No study was created on Prolific.")
        self.problems = problems


class ListShape(ValueError):
    """Prolific's filter list is not in the reference's shape, or longer than Duet reads."""


@dataclass(frozen=True)
class Common:
    """A filter most studies set, named by a short name (the admin's fields, `--filter country=…`)."""
    name: str
    filter_id: str
    label: str
    kind: str  # "select" or "range"


COMMON = (
    Common("first_language", "first-language", "First language", "select"),
    Common("fluent_languages", "fluent-languages", "Fluent languages", "select"),
    Common("country", "current-country-of-residence", "Country of residence", "select"),
    Common("approval_rate", "approval_rate", "Approval rate (%)", "range"),
    Common("submissions", "approval_numbers", "Number of previous submissions", "range"),
)
ALIASES = {**{c.name: c.filter_id for c in COMMON}, **{c.name.replace("_", "-"): c.filter_id for c in COMMON},
           "not_in": PREVIOUS_STUDIES, "not-in": PREVIOUS_STUDIES}


def _shown(text: str, limit: int = 60) -> str:
    text = "".join(c if c.isprintable() else "?" for c in str(text))
    return repr(text if len(text) <= limit else text[:limit] + "…")


# ------------------------------------------------------------------------------------------ what is typed
@dataclass(frozen=True)
class Wanted:
    """One typed filter: select values, or a range's bounds (text, checked against the filter's data type later)."""
    filter_id: str
    values: tuple[str, ...] = ()
    lower: str | None = None
    upper: str | None = None
    is_range: bool = False

    def typed(self) -> str:
        """The filter as the researcher would type it again (ID=…)."""
        if self.is_range:
            return f"{self.filter_id}={self.lower or ''}..{self.upper or ''}"
        return f"{self.filter_id}={','.join(self.values)}"


def parse(text: str) -> Wanted:
    """`ID=VALUE[,VALUE]`, `ID=LOW..HIGH` or `ID=LOW-HIGH` (a common filter's short name in place of its id)."""
    text = str(text)
    if len(text) > MAX_TYPED_CHARS:
        raise FilterSyntax(f"A filter of more than {MAX_TYPED_CHARS} characters is not read.")
    name, eq, value = text.partition("=")
    name, value = name.strip(), value.strip()
    if not eq or not name or not value:
        raise FilterSyntax(f"{_shown(text)} is not a filter: write ID=VALUE[,VALUE] (a range: ID=LOW..HIGH or "
                           "ID=LOW-HIGH), e.g. first-language=English or approval_rate=95..100.")
    filter_id = ALIASES.get(name.lower(), name)
    if not ID.fullmatch(filter_id):
        raise FilterSyntax(f"{_shown(name)} is not a Prolific filter id (letters, digits, '-' and '_', as Prolific's "
                           "list of filters spells them).")
    if ".." in value:
        lower, _, upper = (part.strip() for part in value.partition(".."))
        if ".." in upper or "," in value or not (lower or upper):
            raise FilterSyntax(f"{_shown(text)}: a range is LOW..HIGH, with at least one of the two.")
        return Wanted(filter_id, lower=lower or None, upper=upper or None, is_range=True)
    dashed = DASH_RANGE.fullmatch(value)
    if dashed:
        return Wanted(filter_id, lower=dashed[1], upper=dashed[2], is_range=True)
    values = tuple(v.strip() for v in value.split(","))
    if any(not v for v in values):
        raise FilterSyntax(f"{_shown(text)}: an empty value between commas.")
    if len(values) > MAX_TYPED_VALUES:
        raise FilterSyntax(f"{filter_id}: more than {MAX_TYPED_VALUES} values.")
    return Wanted(filter_id, values=tuple(dict.fromkeys(values)))


def values_of(filter_id: str, text: str) -> Wanted:
    """A select filter's values typed in a field of their own (a country, earlier studies' slugs): split at commas,
    never read as a range (a slug like 2024-2025 is a study, not a range)."""
    values = tuple(dict.fromkeys(v.strip() for v in str(text).split(",") if v.strip()))
    if not values:
        raise FilterSyntax(f"{filter_id}: no value given.")
    if len(values) > MAX_TYPED_VALUES or len(str(text)) > MAX_TYPED_CHARS:
        raise FilterSyntax(f"{filter_id}: more than {MAX_TYPED_VALUES} values.")
    return Wanted(filter_id, values=values)


def combine(wanted: Iterable[Wanted]) -> list[Wanted]:
    """One entry per filter id: select values given twice are joined (a `--not-in` beside a
    `--filter previous_studies_blocklist=…`); a range given twice, or a range and values for one id, is refused."""
    out: dict[str, Wanted] = {}
    for w in wanted:
        seen = out.get(w.filter_id)
        if seen is None:
            out[w.filter_id] = w
        elif seen.is_range or w.is_range:
            raise FilterSyntax(f"The filter {w.filter_id} is given twice: give it once.")
        else:
            out[w.filter_id] = Wanted(w.filter_id, values=tuple(dict.fromkeys(seen.values + w.values)))
    if len(out) > MAX_TYPED_FILTERS:
        raise FilterSyntax(f"More than {MAX_TYPED_FILTERS} filters.")
    return list(out.values())


def parse_lines(text: str) -> list[Wanted]:
    """The admin's free lines: one ID=VALUE a line (blank lines skipped)."""
    return [parse(line) for line in str(text).splitlines() if line.strip()]


# ------------------------------------------------------------------------------------------ Prolific's list
@dataclass(frozen=True)
class Known:
    """One filter as Prolific's list gives it, checked."""
    filter_id: str
    title: str
    kind: str  # "select" or "range"
    data_type: str
    choices: dict[str, str] = field(default_factory=dict)  # choice id → label (select)
    low: object = None  # the range's bounds (range): int/float, or a date
    high: object = None


def _words(value) -> str:
    text = value if isinstance(value, str) else ""
    text = "".join(c if c.isprintable() else " " for c in text[:MAX_WORDS * 2])
    return text[:MAX_WORDS]


def _number(value):
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value if abs(value) <= 10**15 else None


def _date(value):
    if not isinstance(value, str) or len(value) > 40:
        return None
    try:
        return datetime.date.fromisoformat(value[:10])
    except ValueError:
        return None


def _known(entry) -> Known | None:
    """The entry as a Known, or None when its shape is not the reference's (it is not used)."""
    if not isinstance(entry, dict):
        return None
    filter_id, kind, data_type = entry.get("filter_id"), entry.get("type"), entry.get("data_type")
    if not isinstance(filter_id, str) or not ID.fullmatch(filter_id) or kind not in ("select", "range"):
        return None
    data_type = data_type if isinstance(data_type, str) and len(data_type) <= 40 and data_type.isidentifier() else ""
    title = _words(entry.get("title")) or filter_id
    if kind == "select":
        choices = entry.get("choices", {})
        if choices is None:
            choices = {}
        if not isinstance(choices, dict) or len(choices) > MAX_CHOICES:
            return None
        if not all(isinstance(k, str) and 0 < len(k) <= 100 and k.isprintable() for k in choices):
            return None
        return Known(filter_id, title, kind, data_type, {k: _words(v) for k, v in choices.items()})
    read = _date if data_type == "date" else _number
    low, high = entry.get("min"), entry.get("max")
    low, high = (None if low is None else read(low)), (None if high is None else read(high))
    if (entry.get("min") is not None and low is None) or (entry.get("max") is not None and high is None):
        return None
    if low is not None and high is not None and low > high:
        return None
    return Known(filter_id, title, kind, data_type, low=low, high=high)


@dataclass(frozen=True)
class FilterList:
    known: dict[str, Known]
    unread: int  # entries whose shape was not the reference's


def read_list(entries: Iterable) -> FilterList:
    """Prolific's filter list (its results, a page at a time), checked and capped."""
    known: dict[str, Known] = {}
    unread = choices = 0
    for count, entry in enumerate(entries, start=1):
        if count > MAX_FILTERS:
            raise ListShape(f"Prolific's list of filters holds more than {MAX_FILTERS} filters: not read further.")
        checked = _known(entry)
        if checked is None or checked.filter_id in known:
            unread += 1
            continue
        choices += len(checked.choices)
        if choices > MAX_ALL_CHOICES:
            raise ListShape(f"Prolific's list of filters holds more than {MAX_ALL_CHOICES} choices: not read further.")
        known[checked.filter_id] = checked
    return FilterList(known, unread)


# ------------------------------------------------------------------------------------------ checked and sent
@dataclass(frozen=True)
class Chosen:
    """A filter as it is sent (`sent`: Prolific's documented shape) and said (`words`)."""
    sent: dict
    words: str


StudyIdOf = Callable[[str], tuple[str, str]]  # a typed study → (its Prolific id, its words); ValueError: why not


def _no_duet_studies(token: str) -> tuple[str, str]:
    if PROLIFIC_ID.fullmatch(token):
        return token, token
    raise ValueError(f"{_shown(token)} is not a Prolific study id (24 hexadecimal digits)")


def _bound(text: str | None, known: Known):
    """A typed bound as the filter's data type holds it; ValueError with the reason."""
    if text is None:
        return None
    if known.data_type == "date":
        try:
            return datetime.date.fromisoformat(text)
        except ValueError:
            raise ValueError(f"{_shown(text)} is not a date (YYYY-MM-DD)") from None
    try:
        number = float(text) if known.data_type == "float" else int(text)
    except ValueError:
        kind = "a number" if known.data_type == "float" else "a whole number"
        raise ValueError(f"{_shown(text)} is not {kind}") from None
    if not math.isfinite(number):
        raise ValueError(f"{_shown(text)} is not a finite number")
    return number


def _bounds_words(known: Known) -> str:
    low = "" if known.low is None else str(known.low)
    high = "" if known.high is None else str(known.high)
    return f"{low}..{high}"


def _range(w: Wanted, known: Known) -> Chosen:
    lower, upper = _bound(w.lower, known), _bound(w.upper, known)
    if lower is not None and upper is not None and lower > upper:
        raise ValueError(f"the lower bound {w.lower} is above the upper bound {w.upper}")
    for value, text in ((lower, w.lower), (upper, w.upper)):
        if value is None:
            continue
        if (known.low is not None and value < known.low) or (known.high is not None and value > known.high):
            raise ValueError(f"{text} is outside the filter's bounds ({_bounds_words(known)})")
    selected = {}
    if lower is not None:
        selected["lower"] = lower.isoformat() if isinstance(lower, datetime.date) else lower
    if upper is not None:
        selected["upper"] = upper.isoformat() if isinstance(upper, datetime.date) else upper
    said = (f"{w.lower} to {w.upper}" if lower is not None and upper is not None
            else f"at least {w.lower}" if lower is not None else f"at most {w.upper}")
    return Chosen({"filter_id": known.filter_id, "selected_range": selected}, f"{known.title} ({known.filter_id}): {said}")


def _choice(value: str, known: Known) -> str:
    if value in known.choices:
        return value
    matches = [key for key, label in known.choices.items() if label.casefold() == value.casefold()]
    if len(matches) == 1:
        return matches[0]
    if matches:
        raise ValueError(f"{_shown(value)} is the label of {len(matches)} choices: give the choice id")
    if not known.choices:
        raise ValueError(f"{_shown(value)} is not among its choices (Prolific's list gives it none)")
    examples = ", ".join(f"{k} = {label}" for k, label in list(known.choices.items())[:3])
    raise ValueError(f"{_shown(value)} is not among its choices (a choice id or its label, e.g. {examples})")


def _select(w: Wanted, known: Known, study_id_of: StudyIdOf) -> Chosen:
    chosen, said = [], []
    for value in w.values:
        if known.data_type == "StudyID":
            study_id, words = study_id_of(value)
            if known.choices and study_id not in known.choices:
                raise ValueError(f"{words} is not among the studies Prolific lists for it")
            chosen.append(study_id)
            said.append(words)
        elif known.data_type in ID_VALUES:
            if not PROLIFIC_ID.fullmatch(value):
                raise ValueError(f"{_shown(value)} is not a Prolific id (24 hexadecimal digits)")
            if known.choices and value not in known.choices:
                raise ValueError(f"{_shown(value)} is not among its choices")
            chosen.append(value)
            said.append(value)
        else:
            key = _choice(value, known)
            chosen.append(key)
            said.append(f"{known.choices[key]} ({key})")
    chosen = list(dict.fromkeys(chosen))
    return Chosen({"filter_id": known.filter_id, "selected_values": chosen},
                  f"{known.title} ({known.filter_id}): {', '.join(dict.fromkeys(said))}")


def resolve(wanted: Iterable[Wanted], listed: FilterList, *, study_id_of: StudyIdOf = _no_duet_studies
            ) -> list[Chosen]:
    """The typed filters checked against Prolific's list, in the payload's shape; FilterRefused with every problem."""
    chosen, problems = [], []
    for w in combine(wanted):
        known = listed.known.get(w.filter_id)
        if known is None:
            problems.append(f"Prolific does not know a filter {_shown(w.filter_id)} (its list of filters, "
                            "GET /api/v1/filters/, has no such id).")
            continue
        if w.is_range != (known.kind == "range"):
            problems.append(f"{w.filter_id} is a {known.kind} filter: " + (
                "give its values, ID=VALUE[,VALUE]." if known.kind == "select" else
                f"give a range, ID=LOW..HIGH (its bounds: {_bounds_words(known)})."))
            continue
        try:
            chosen.append(_range(w, known) if w.is_range else _select(w, known, study_id_of))
        except ValueError as exc:
            problems.append(f"{w.filter_id}: {exc}.")
    if problems:
        raise FilterRefused(problems)
    return chosen


def devices_checked(devices: Iterable[str]) -> list[str]:
    """Prolific's device_compatibility: some of desktop, tablet, mobile (in that order), at least one."""
    given = [str(d).strip().lower() for d in devices]
    unknown = [d for d in given if d not in DEVICES]
    if unknown:
        raise FilterSyntax(f"{_shown(unknown[0])} is not a device Prolific knows ({', '.join(DEVICES)}).")
    if not given:
        raise FilterSyntax(f"Give at least one device ({', '.join(DEVICES)}).")
    return [d for d in DEVICES if d in given]
