"""The RULEBREAKERS reader (seed 000): RULEBREAKERS_finegrained_format.csv as published."""
from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable, Iterator, Sequence

from experiments.items.sources.base import Meter, Problem, Reader, ReaderError, Reading, Row, max_records, register, too_many_records

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


def _csv_records(lines: Iterable[str], required: Sequence[str], what: str,
                 meter: Meter | None = None) -> Iterator[tuple[int, dict]]:
    """(data row number, {column: value}) of a CSV file given a line at a time (a quoted cell may span
    lines); past DUET_IMPORT_MAX_RECORDS rows a ReaderError."""
    reader = csv.reader(lines, strict=True)
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
    number, limit = 0, max_records()
    try:
        for values in reader:
            if not any(v.strip() for v in values):
                continue
            number += 1
            if meter is not None:
                meter.records = number
            if number > limit:
                raise ReaderError(too_many_records(what, "data rows", limit) + " (pairs kept together)")
            if len(values) != len(header):
                yield number, {"": f"has {len(values)} fields; the header has {len(header)}"}
                continue
            yield number, dict(zip(header, (v.strip() for v in values)))
    except csv.Error as exc:
        raise ReaderError(f"{what}: unreadable CSV after data row {number} ({exc})") from None


def read_rulebreakers(text: str) -> Reading:
    """RULEBREAKERS_finegrained_format.csv read whole (see stream_rulebreakers): its rows and problems."""
    rows, problems = [], []
    for one in stream_rulebreakers(io.StringIO(text, newline="")):
        (rows if isinstance(one, Row) else problems).append(one)
    return Reading(tuple(rows), tuple(problems))


def stream_rulebreakers(lines: Iterable[str], meter: Meter | None = None) -> Iterator[Row | Problem]:
    """RULEBREAKERS_finegrained_format.csv a line at a time: one row per member; both members of a pair
    share the id prefix (RULEBREAKER_0000246_rb and RULEBREAKER_0000246_nonrb), and the published file
    puts a block's non-rulebreakers before its rulebreakers, so a member waits (its fields only) until
    its partner is read, and the pair's two rows are given together then. A member whose partner is not
    in the file (known at the end), a repeated id, an unknown rule or a label that is not True/False is
    a Problem, given when it is found, and a pair with a problem is left out whole (pairs stay pairs)."""
    waiting: dict[str, dict[str, tuple[str, dict | None]]] = {}
    seen: set[str] = set()
    for number, record in _csv_records(lines, _RB_REQUIRED, "RULEBREAKERS (finegrained format)", meter):
        if "" in record:
            yield Problem(f"data row {number}", "", record[""])
            continue
        row_id = record["id"]
        match = RULEBREAKERS_ID.match(row_id)
        if not match:
            yield Problem(row_id or f"data row {number}", "id",
                          "does not end in _rb or _nonrb, so its pair and role are unknown")
            continue
        if row_id in seen:
            yield Problem(row_id, "id", "appears twice")
            continue
        seen.add(row_id)
        fields, bad = _rulebreakers_fields(record, RULEBREAKERS_ROLES[match["suffix"]])
        for column, reason in bad:
            yield Problem(row_id, column, reason)
        pair = match["pair"]
        by_suffix = waiting.setdefault(pair, {})
        by_suffix[match["suffix"]] = (row_id, None if bad else fields)
        if len(by_suffix) == 2:
            del waiting[pair]
            yield from _pair(pair, by_suffix)
    for pair, by_suffix in waiting.items():
        (suffix, (row_id, _)), = by_suffix.items()
        other = "nonrb" if suffix == "rb" else "rb"
        yield Problem(row_id, "id", f"its partner {pair}_{other} is not in the file (pairs stay pairs)")


def _pair(pair: str, by_suffix: dict) -> Iterator[Row | Problem]:
    """A pair's two rows (rulebreaker first), or the problems that leave it out."""
    (rb_id, rb), (non_id, non) = by_suffix["rb"], by_suffix["nonrb"]
    if rb is None or non is None:  # the partner's own problem is listed already
        for row_id, fields, broken in ((rb_id, rb, non_id), (non_id, non, rb_id)):
            if fields is not None:
                yield Problem(row_id, "id", f"left out with its partner {broken}, which has a problem")
        return
    mismatch = [c for c in ("rule", "entity_kind", "name", "verb", "part") if rb[c] != non[c]]
    if mismatch:
        yield Problem(non_id, mismatch[0], f"differs from its rulebreaker {rb_id} "
                                           f"('{non[mismatch[0]]}' vs '{rb[mismatch[0]]}'); "
                                           "a pair differs only by its country or type")
        return
    for row_id, fields in ((rb_id, rb), (non_id, non)):
        yield Row(row_id, {**fields, "pair": pair, "true_whole": rb["whole"]})


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
    read_text=read_rulebreakers, stream_lines=stream_rulebreakers,
))
