"""Published formats: a dataset read as its authors published it, into a design (issue 27, part 1).

A design declares the formats it reads (``registry.Design.formats``, reader names); each format is a
``Reader`` registered here by name (registering a name twice raises). A reader maps the file's own
columns onto the design's fields — the columns of the design's own bank (docs/designs.md) — and
derives, by a declared transformation, what the file lacks (ULogic's flipped conclusions). It never
guesses: every row it cannot map or transform is a ``Problem`` (the row's id, the column, the reason),
and the row is left out of ``Reading.rows``. The design then builds its items from the rows exactly
as it builds generated or banked ones (its templates and phrasings, its pairs), and adds the rows its
own checks refuse to the problems.

    from experiments.designs import sources
    reader = sources.get("ulogic-json")               # ValueError naming the known formats
    sources.for_design("dual-sided")                  # [Reader(name="ulogic-json", …)], in the design's order
    reading = reader.read(data, filename="probing_subset.json")   # data: bytes, str or a binary file
    reading.rows        # (Row(id="ulogic-0001", fields={"premise": …, "conclusion": …, "flipped_conclusion": …}), …)
    reading.problems    # (Problem(row="ulogic-0147", column="v_rule", reason="…"), …)
    rows, problems = reading                          # a Reading unpacks as (rows, problems)

A file that cannot be read at all (not JSON, a required column missing) raises ``ReaderError`` (a
ValueError) with a message for the researcher. ``BANK`` ("bank") names a design's own CSV columns:
it is no reader here, the design's ``make``/``importer`` reads it (the default for the designs that
have a bank; the rulebreakers design has none and defaults to its first published format).

Importing: ``design.importer(study=, data=, format=NAME, skip_problems=False, **options)`` writes;
``design.import_preview(study=, data=, format=NAME, rows=10, **options)`` checks without writing and
returns ``registry.Preview`` with ``problems`` (Problem, …). With problems, the write refuses
(``RowProblems``, a ValidationError listing them by row id) unless ``skip_problems=True``: then the
other rows are written and the report's ``left_out`` lists the problems (the admin shows the
preview's problems and passes skip_problems=True when the researcher confirms).

The readers themselves are pure Python (no Django); their formats, sources and transformations are
listed in docs/designs.md ("Published formats").
"""
from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

from django.core.exceptions import ValidationError

from studyserver.registry import Registry

BANK = "bank"  # a design's own CSV columns (read by the design, not by a reader here)
MAX_BYTES = 64 * 1024 * 1024  # a published file read whole; the admin's upload limit is lower


@dataclass(frozen=True)
class Problem:
    """A row the import leaves out: its id in the file, the file's column, and why."""

    row: str
    column: str
    reason: str

    def __str__(self) -> str:
        return f"{self.row}" + (f", {self.column}" if self.column else "") + f": {self.reason}"


@dataclass(frozen=True)
class Row:
    """One row of the file mapped onto the design's fields (the design's bank columns → text)."""

    id: str  # the file's id for the row (its own id column, or its position: 'ulogic-0007')
    fields: dict = field(hash=False)


@dataclass(frozen=True)
class Reading:
    rows: tuple[Row, ...]
    problems: tuple[Problem, ...]

    def __iter__(self) -> Iterator:  # rows, problems = reader.read(…)
        return iter((self.rows, self.problems))


class ReaderError(ValueError):
    """The file cannot be read in this format at all (nothing of it is imported)."""


class RowProblems(ValidationError):
    """Rows that cannot be imported; nothing was written. ``problems`` lists them (Problem)."""

    def __init__(self, problems: Sequence[Problem], *, importable: int, limit: int = 50):
        self.problems = tuple(problems)
        head = (f"{len({p.row for p in self.problems})} row(s) of the file cannot be imported; nothing was written. "
                "Fix them, or "
                f"import the other {importable} row(s) and leave these out (import_items --skip-problems; in the "
                "admin, confirm the preview):")
        lines = [str(p) for p in self.problems[:limit]]
        if len(self.problems) > limit:
            lines.append(f"… and {len(self.problems) - limit} more")
        super().__init__([head, *lines])


@dataclass(frozen=True)
class Reader:
    """A published format: what it is, where it comes from, how its columns become the design's fields."""

    name: str
    design: str  # the design (registry name) it reads into
    title: str
    source: str  # where the format is published: repository and path
    extensions: tuple[str, ...]  # file name endings it is published with (".csv", ".json", ".txt")
    columns: dict  # the file's own column → the design field it fills (or how it is used)
    transformation: str  # what the reader derives, and how ("" when it derives nothing)
    read_text: Callable[[str], Reading] = field(repr=False)

    def read(self, data, *, filename: str = "") -> Reading:
        """The file (bytes, str or a binary file) read as this format; ReaderError if it cannot be."""
        return self.read_text(_text(data, filename or self.name))


def _text(data, filename: str) -> str:
    if hasattr(data, "read"):
        data = data.read(MAX_BYTES + 1)
    if isinstance(data, (bytes, bytearray, memoryview)):
        data = bytes(data)
        if len(data) > MAX_BYTES:
            raise ReaderError(f"{filename}: larger than {MAX_BYTES // 2**20} MiB; split it")
        try:
            data = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise ReaderError(f"{filename}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    if not isinstance(data, str):
        raise ReaderError(f"{filename}: expected the file's bytes or text, got {type(data).__name__}")
    if "\x00" in data:
        raise ReaderError(f"{filename}: contains a NUL character (\\0); not a text file")
    return data


_readers: Registry[Reader] = Registry("format")


def register(reader: Reader) -> Reader:
    return _readers.add(reader.name, reader)  # raises on a name registered twice


def get(name: str) -> Reader:
    """The reader called `name`; ValueError naming the known formats."""
    return _readers.get_or_raise(name)


def all_readers() -> list[Reader]:
    return sorted(_readers.values(), key=lambda r: r.name)


def for_design(design) -> list[Reader]:
    """The readers a design (a Design or its name) declares, in its order (the first is its default
    published format)."""
    from . import registry

    declared = design if isinstance(design, registry.Design) else registry.get(design)
    return [get(name) for name in declared.formats]


def read_for(design: str, format: str, data, *, filename: str = "") -> Reading:
    """`data` read by the reader `format`, which must read into `design`; ValidationError (a message for
    the researcher) for an unknown format, another design's format or a file it cannot read."""
    try:
        reader = get(format)
    except ValueError as exc:
        raise ValidationError(str(exc)) from None
    if reader.design != design:
        from . import registry

        known = ", ".join(registry.get(design).import_formats) or "none"
        raise ValidationError(f"The format '{format}' reads into the design '{reader.design}', not '{design}'; "
                              f"{design} reads: {known}.")
    try:
        return reader.read(data, filename=filename)
    except ReaderError as exc:
        raise ValidationError(str(exc)) from None


def refuse_or_keep(problems: Sequence[Problem], *, importable: int, skip_problems: bool) -> tuple[Problem, ...]:
    """The problems, when the caller leaves those rows out; RowProblems (nothing written) otherwise."""
    if problems and not skip_problems:
        raise RowProblems(problems, importable=importable)
    return tuple(problems)


# --------------------------------------------------------------------------- RULEBREAKERS (000)

RULEBREAKERS_ID = re.compile(r"^(?P<pair>\S+)_(?P<suffix>rb|nonrb)$")
RULEBREAKERS_ROLES = {"rb": "rulebreaker", "nonrb": "non-rulebreaker"}
RULEBREAKERS_COLUMNS = {
    "id": "pair (the id without its suffix) and role (_rb: rulebreaker, _nonrb: non-rulebreaker)",
    "rulebreaker_type": "rule (mt → MT, ds → DS)",
    "category": "entity_kind (cities → geographical, any other → categorical); kept as category",
    "firstName": "name", "pronoun": "pronoun", "verb": "verb",
    "entityA": "whole (the country or type in this member; the rulebreaker's is the true one: true_whole)",
    "entityB": "part (the city or instance; an instance's article — a, an, the — dropped) and entity_b (as written)",
    "premise1": "premise_1", "premise2": "premise_2", "conclusion": "conclusion",
    "label": "gold_answer (True → yes, False → no; 000 §3.4: no for a rulebreaker, yes for its counterpart)",
    "kc_gen_formatted_prompt": "not read (the knowledge-check prompt of the authors' own runs)",
    "target_correct_conclusion": "not read", "target_incorrect_conclusion": "not read",
}
_RB_REQUIRED = tuple(c for c, use in RULEBREAKERS_COLUMNS.items() if use != "not read" and not use.startswith("not "))


def _csv_records(text: str, required: Sequence[str], what: str) -> Iterator[tuple[int, dict]]:
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    try:
        header = [h.strip() for h in next(reader)]
    except StopIteration:
        raise ReaderError(f"{what}: the file is empty") from None
    except csv.Error as exc:
        raise ReaderError(f"{what}: unreadable CSV header ({exc})") from None
    missing = [c for c in required if c not in header]
    if missing:
        raise ReaderError(f"{what}: the column(s) {', '.join(missing)} are missing (the header has "
                          f"{', '.join(header) or 'no columns'})")
    number = 0
    try:
        for values in reader:
            if not any(v.strip() for v in values):
                continue
            number += 1
            if len(values) != len(header):
                yield number, {"": f"has {len(values)} fields; the header has {len(header)}"}
                continue
            yield number, dict(zip(header, (v.strip() for v in values)))
    except csv.Error as exc:
        raise ReaderError(f"{what}: unreadable CSV after data row {number} ({exc})") from None


def read_rulebreakers(text: str) -> Reading:
    """RULEBREAKERS_finegrained_format.csv: one row per member; both members of a pair share the id
    prefix (RULEBREAKER_0000246_rb and RULEBREAKER_0000246_nonrb). A member whose partner is not in
    the file, a repeated id, an unknown rule or a label that is not True/False is a problem, and a
    pair with a problem is left out whole (pairs stay pairs)."""
    members: dict[str, dict[str, tuple[str, dict]]] = {}
    problems: list[Problem] = []
    seen: set[str] = set()
    for number, record in _csv_records(text, _RB_REQUIRED, "RULEBREAKERS (finegrained format)"):
        if "" in record:
            problems.append(Problem(f"data row {number}", "", record[""]))
            continue
        row_id = record["id"]
        match = RULEBREAKERS_ID.match(row_id)
        if not match:
            problems.append(Problem(row_id or f"data row {number}", "id",
                                    "does not end in _rb or _nonrb, so its pair and role are unknown"))
            continue
        if row_id in seen:
            problems.append(Problem(row_id, "id", "appears twice"))
            continue
        seen.add(row_id)
        fields, bad = _rulebreakers_fields(record, RULEBREAKERS_ROLES[match["suffix"]])
        problems += [Problem(row_id, column, reason) for column, reason in bad]
        members.setdefault(match["pair"], {})[match["suffix"]] = (row_id, None if bad else fields)
    rows: list[Row] = []
    for pair, by_suffix in members.items():
        if set(by_suffix) != {"rb", "nonrb"}:
            (suffix, (row_id, _)), = by_suffix.items()
            other = "nonrb" if suffix == "rb" else "rb"
            problems.append(Problem(row_id, "id", f"its partner {pair}_{other} is not in the file (pairs stay pairs)"))
            continue
        (rb_id, rb), (non_id, non) = by_suffix["rb"], by_suffix["nonrb"]
        if rb is None or non is None:  # the partner's own problem is listed already
            for row_id, fields, broken in ((rb_id, rb, non_id), (non_id, non, rb_id)):
                if fields is not None:
                    problems.append(Problem(row_id, "id", f"left out with its partner {broken}, which has a problem"))
            continue
        mismatch = [c for c in ("rule", "entity_kind", "name", "verb", "part") if rb[c] != non[c]]
        if mismatch:
            problems.append(Problem(non_id, mismatch[0], f"differs from its rulebreaker {rb_id} "
                                                         f"('{non[mismatch[0]]}' vs '{rb[mismatch[0]]}'); "
                                                         "a pair differs only by its country or type"))
            continue
        for row_id, fields in ((rb_id, rb), (non_id, non)):
            rows.append(Row(row_id, {**fields, "pair": pair, "true_whole": rb["whole"]}))
    return Reading(tuple(rows), tuple(problems))


def _rulebreakers_fields(record: dict, role: str) -> tuple[dict, list[tuple[str, str]]]:
    bad = []
    rule = record["rulebreaker_type"].upper()
    if rule not in ("MT", "DS"):
        bad.append(("rulebreaker_type", f"'{record['rulebreaker_type']}' is neither mt nor ds"))
    label = record["label"].strip().lower()
    gold = {"true": "yes", "false": "no"}.get(label)
    if gold is None:
        bad.append(("label", f"'{record['label']}' is neither True nor False"))
    elif gold != {"rulebreaker": "no", "non-rulebreaker": "yes"}[role]:
        bad.append(("label", f"{record['label']} on a {role}: 000 §3.4 takes "
                             f"{'no' if role == 'rulebreaker' else 'yes'} as its correct answer"))
    for column in ("firstName", "verb", "entityA", "entityB", "premise1", "premise2", "conclusion"):
        if not record[column]:
            bad.append((column, "is empty"))
    kind = "geographical" if record["category"].lower() == "cities" else "categorical"
    fields = {
        "role": role, "rule": rule, "entity_kind": kind,
        "category": record["category"], "name": record["firstName"], "pronoun": record["pronoun"],
        "verb": record["verb"], "whole": record["entityA"], "entity_b": record["entityB"],
        "part": record["entityB"] if kind == "geographical" else re.sub(r"^(a|an|the) ", "", record["entityB"]),
        "premise_1": record["premise1"], "premise_2": record["premise2"], "conclusion": record["conclusion"],
        "gold_answer": gold or "",
    }
    return fields, bad


register(Reader(
    name="rulebreakers-finegrained", design="rulebreakers", title="RULEBREAKERS, finegrained format (000)",
    source="github.com/jasonchanly/rulebreakers, data/RULEBREAKERS_finegrained_format.csv", extensions=(".csv",),
    columns=RULEBREAKERS_COLUMNS,
    transformation="none: the file's premises and conclusion are kept as written; the design adds its ten "
                   "phrasings (000 §4.2) as for generated pairs",
    read_text=read_rulebreakers,
))


# --------------------------------------------------------------------------- ULogic (004)

# The declared transformation (004 §3.1: "we flip each rule by negating its conclusion"): the one
# modal verb or copula of the conclusion is negated, or its negation removed. A conclusion with none
# of these words, or with more than one, is a problem (never a guess).
NEGATIONS = {
    "can": "cannot", "cannot": "can", "can not": "can", "can't": "can",
    "could": "could not", "could not": "could", "couldn't": "could",
    "may": "may not", "may not": "may", "might": "might not", "might not": "might",
    "must": "must not", "must not": "must", "mustn't": "must",
    "should": "should not", "should not": "should", "shouldn't": "should",
    "will": "will not", "will not": "will", "won't": "will",
    "would": "would not", "would not": "would", "wouldn't": "would",
    "is": "is not", "is not": "is", "isn't": "is", "are": "are not", "are not": "are", "aren't": "are",
}
_NEGATABLE = re.compile(r"\b(" + "|".join(re.escape(w) for w in sorted(NEGATIONS, key=len, reverse=True))
                        + r")(?![\w'])", re.IGNORECASE)
ULOGIC_RULE = re.compile(r"^If (?P<premise>.+?), then (?P<conclusion>.+?)\.?$", re.DOTALL)
ULOGIC_COLUMNS = {
    "v_rule": "premise (the text between 'If' and ', then') and conclusion (after ', then', its full stop "
              "dropped); flipped_conclusion is derived from the conclusion",
    "length": "length (the rule's number of premises)",
    "s_rule": "kept as a descriptive column", "domain": "kept", "depth": "kept", "positive": "kept",
    "structure": "kept", "label": "kept as verified (true: the authors verified the rule)",
    "original_human_prediction": "kept", "flipped_human_prediction": "kept",
}
ULOGIC_KEPT = ("s_rule", "domain", "depth", "positive", "structure", "original_human_prediction",
               "flipped_human_prediction")


def negate(conclusion: str) -> tuple[str, str]:
    """(the flipped conclusion, 'is → is not') by the declared transformation; ValueError saying why
    a conclusion cannot be flipped."""
    found = list(_NEGATABLE.finditer(conclusion))
    if not found:
        raise ValueError("has no modal verb (can, could, may, might, must, should, will, would) and no 'is' or "
                         "'are' to negate; write its flipped conclusion yourself (a dual-sided bank's "
                         "flipped_conclusion column)")
    if len(found) > 1:
        words = ", ".join(f"'{m.group(0)}'" for m in found)
        raise ValueError(f"has {len(found)} words the negation could apply to ({words}); which one is the "
                         "conclusion's own verb is not clear, so it is not guessed")
    match = found[0]
    word = match.group(0)
    flipped = NEGATIONS[" ".join(word.lower().split())]
    if word[0].isupper():
        flipped = flipped[0].upper() + flipped[1:]
    return conclusion[: match.start()] + flipped + conclusion[match.end():], f"{word} → {flipped}"


def _cell(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else str(value)


def read_ulogic(text: str) -> Reading:
    """ULogic's JSON (a list of rule objects, Data/probing_subset.json or Data/ulogic.json): one rule
    each, its id its position in the list (ulogic-0001 is the first). The "If …, then …" text is split
    into the condition and the conclusion; the flipped conclusion is derived (NEGATIONS)."""
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ReaderError(f"ULogic JSON: not JSON ({exc})") from None
    if not isinstance(data, list):
        raise ReaderError(f"ULogic JSON: expected a list of rules, found a {type(data).__name__}")
    rows, problems = [], []
    for position, rule in enumerate(data, 1):
        row_id = f"ulogic-{position:04d}"
        if not isinstance(rule, dict):
            problems.append(Problem(row_id, "", f"is a {type(rule).__name__}, not a rule object"))
            continue
        text_rule = rule.get("v_rule")
        if not isinstance(text_rule, str) or not text_rule.strip():
            problems.append(Problem(row_id, "v_rule", "is missing or empty"))
            continue
        text_rule = " ".join(text_rule.split())
        if text_rule.count(", then ") != 1:
            problems.append(Problem(row_id, "v_rule", f"has {text_rule.count(', then ')} ', then '; the condition "
                                                      "and the conclusion cannot be told apart"))
            continue
        match = ULOGIC_RULE.match(text_rule)
        if not match:
            problems.append(Problem(row_id, "v_rule", "does not read 'If …, then …'"))
            continue
        conclusion = match["conclusion"]
        try:
            flipped, how = negate(conclusion)
        except ValueError as exc:
            problems.append(Problem(row_id, "v_rule", f"the conclusion '{conclusion}' {exc}"))
            continue
        fields = {"rule_id": row_id, "premise": match["premise"], "conclusion": conclusion,
                  "flipped_conclusion": flipped, "flip": how}
        if rule.get("length") is not None:
            fields["length"] = _cell(rule["length"])
        fields.update({k: _cell(rule[k]) for k in ULOGIC_KEPT if k in rule})
        if "label" in rule:
            fields["verified"] = _cell(rule["label"])
        rows.append(Row(row_id, fields))
    return Reading(tuple(rows), tuple(problems))


register(Reader(
    name="ulogic-json", design="dual-sided", title="ULogic rules, JSON (004)",
    source="github.com/SiyuanWangw/ULogic, Data/probing_subset.json (and Data/ulogic.json)", extensions=(".json",),
    columns=ULOGIC_COLUMNS,
    transformation="flipped_conclusion: the conclusion's one modal verb or copula negated (can ↔ cannot, must ↔ must "
                   "not, is ↔ is not, …; 004 §3.1 flips a rule by negating its conclusion); a conclusion with none "
                   "or several of these words is listed as a problem, by id, and left out",
    read_text=read_ulogic,
))


# --------------------------------------------------------------------------- LogiQA (multiple choice)

LOGIQA_COLUMNS = {
    "line 1": "blank (separates questions)",
    "line 2": "answer (a–d → A–D)",
    "line 3": "context", "line 4": "question",
    "lines 5–8": "option_a … option_d (their 'A.' … 'D.' prefixes dropped)",
}


def read_logiqa(text: str) -> Reading:
    """LogiQA's text files (Train.txt, Eval.txt, Test.txt): eight lines a question — a blank line, the
    right choice (a–d), the context, the question and the four options 'A.…' to 'D.…'. A question's
    id is its position (logiqa-0001 is the first); a block that is not of this shape is a problem, and
    reading goes on at the next blank line."""
    lines = text.splitlines()
    rows, problems = [], []
    i, number = 0, 0
    while i < len(lines):
        if not lines[i].strip():
            i += 1
            continue
        number += 1
        row_id = f"logiqa-{number:04d}"
        end = i
        while end < len(lines) and lines[end].strip():
            end += 1
        block = [line.strip() for line in lines[i:end]]
        i = end
        if len(block) != 7:
            problems.append(Problem(row_id, "", f"has {len(block)} lines between blank lines (from line "
                                                f"{i - len(block) + 1}); a question has 7: its answer, context, "
                                                "question and four options"))
            continue
        answer, context, question, *options = block
        bad = []
        if answer.lower() not in ("a", "b", "c", "d"):
            bad.append(("answer", f"'{answer}' is not one of a, b, c, d"))
        texts = []
        for letter, option in zip("ABCD", options):
            if not re.match(rf"^{letter}\s*[.．]", option, re.IGNORECASE):
                bad.append((f"option_{letter.lower()}", f"does not start with '{letter}.'"))
            texts.append(re.sub(rf"^{letter}\s*[.．]\s*", "", option, flags=re.IGNORECASE))
        if bad:
            problems += [Problem(row_id, column, reason) for column, reason in bad]
            continue
        rows.append(Row(row_id, {"id": row_id, "context": context, "question": question,
                                 **{f"option_{l}": t for l, t in zip("abcd", texts)}, "answer": answer.upper()}))
    return Reading(tuple(rows), tuple(problems))


register(Reader(
    name="logiqa-text", design="multiple-choice", title="LogiQA, text format",
    source="github.com/lgw863/LogiQA-dataset, Eval.txt (Train.txt, Test.txt alike)", extensions=(".txt",),
    columns=LOGIQA_COLUMNS,
    transformation="none: the option letters' prefixes are dropped and the answer letter upper-cased; the design "
                   "adds its four circular orders (001)",
    read_text=read_logiqa,
))
