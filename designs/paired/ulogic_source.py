"""The ULogic reader (seed 004): Data/probing_subset.json as published, flipped conclusions derived."""
from __future__ import annotations

import re

from experiments.items.bounded_reading import BankError, json_document
from experiments.items.sources.base import Problem, Reader, ReaderError, Reading, Row, register

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
    from ijson import JSONError

    try:  # streamed within the upload bounds (bounded_reading.py): no recursion follows the file's nesting
        data = json_document(text.encode("utf-8"))
    except BankError as exc:
        raise ReaderError("ULogic JSON: " + "; ".join(exc.problems)) from None
    except (JSONError, UnicodeDecodeError, StopIteration) as exc:
        raise ReaderError(f"ULogic JSON: not JSON ({str(exc).strip().splitlines()[0] if str(exc).strip() else 'empty'})"
                          ) from None
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
