"""Matched-pair perturbations (seed 002): keep the logic, change the tokens. Pure Python.

A perturbation works on the specification a design renders from and returns new specifications under a condition
label; rendering them gives items that each name their original (``original_code``), and
``pairs.perturbation_links`` turns those into (original, perturbed) pairs. What every design's perturbation shares
is here: the kinds and their labels, whole-word token mappings (and a mapping file), the checks that only real items
are perturbed and that a perturbation changes something. Each design perturbs its own specifications in its folder
(designs/<family>/perturb_specs.py: 003's interpretations, RULEBREAKERS' pair specs, dual-sided rules), each
taking the kinds it can (names, entities, nonsense, mapping).

A custom mapping must be one-to-one and may not merge two words of one item (mapping "Anne" to
"Bob" where "Bob" is already there would change the logic). Bad input raises ValueError (or
CsvImportError for a mapping file) and returns nothing.
"""
from __future__ import annotations

import csv
import io
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from .csv_table import CsvImportError, RowError

KINDS = ("names", "entities", "nonsense", "mapping")
LABEL = re.compile(r"^[a-z][a-z0-9-]{0,11}$")


def check_label(label: str | None, kind: str) -> str:
    if kind not in KINDS:
        raise ValueError(f"unknown perturbation {kind!r}; choose one of {', '.join(KINDS)}")
    label = kind if label is None else label
    if not LABEL.match(label) or label == "real":
        raise ValueError(f"perturbation label {label!r} must be 1–12 lower-case letters, digits or '-', "
                         "start with a letter, and not be 'real'")
    return label


# ----------------------------------------------------------------------------- custom mappings


@dataclass(frozen=True)
class TokenMapping:
    """Whole-word, case-sensitive, simultaneous replacements (longest match first)."""

    pairs: tuple[tuple[str, str], ...]

    def __post_init__(self):
        problems = []
        for old, new in self.pairs:
            if not old.strip() or not new.strip():
                problems.append(f"{old!r} → {new!r}: both sides must be non-empty")
            elif old != old.strip() or new != new.strip():
                problems.append(f"{old!r} → {new!r}: remove the surrounding spaces")
            elif old == new:
                problems.append(f"{old!r} is mapped to itself")
        olds = [old for old, _ in self.pairs]
        news = [new for _, new in self.pairs]
        problems += [f"{old!r} is mapped twice" for old in sorted({o for o in olds if olds.count(o) > 1})]
        problems += [f"{new!r} is the target of several words (a mapping must be one-to-one)"
                     for new in sorted({n for n in news if news.count(n) > 1})]
        if not self.pairs:
            problems.append("the mapping is empty")
        if problems:
            raise ValueError("bad token mapping: " + "; ".join(problems))

    @classmethod
    def of(cls, mapping: Mapping[str, str] | Sequence[tuple[str, str]]) -> TokenMapping:
        items = mapping.items() if isinstance(mapping, Mapping) else mapping
        return cls(tuple((str(a), str(b)) for a, b in items))

    def _pattern(self) -> re.Pattern:
        keys = sorted((old for old, _ in self.pairs), key=len, reverse=True)
        return re.compile(r"(?<!\w)(" + "|".join(re.escape(k) for k in keys) + r")(?!\w)")

    def apply(self, text: str) -> str:
        table = dict(self.pairs)
        return self._pattern().sub(lambda m: table[m.group(1)], text)

    def apply_unit(self, texts: Sequence[str], where: str) -> tuple[str, ...]:
        """Map the texts of one item (or spec) together, refusing to merge two different words."""
        pattern = self._pattern()
        present = {m.group(1) for text in texts for m in pattern.finditer(text)}
        for old, new in self.pairs:
            if old in present and new not in present and any(_has_word(text, new) for text in texts):
                raise ValueError(f"{where}: mapping {old!r} → {new!r} would merge it with the {new!r} "
                                 "already there, which changes the logic")
        return tuple(self.apply(text) for text in texts)


def _has_word(text: str, word: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(word)}(?!\w)", text) is not None


def parse_mapping_csv(data: bytes | str) -> TokenMapping:
    """A mapping file: header ``from,to``, one replacement a row; errors name row and column."""
    if isinstance(data, bytes):
        try:
            data = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise CsvImportError([RowError(1, "", f"the file is not UTF-8 text ({exc.reason})")]) from None
    rows = list(csv.reader(io.StringIO(data, newline="")))
    if not rows or [h.strip().lower() for h in rows[0]] != ["from", "to"]:
        raise CsvImportError([RowError(1, "", "the header must be exactly: from,to")])
    errors, pairs, seen = [], [], {}
    for line, values in enumerate(rows[1:], start=2):
        if not any(v.strip() for v in values):
            continue
        if len(values) != 2:
            errors.append(RowError(line, "", f"has {len(values)} fields; the header has 2"))
            continue
        old, new = (v.strip() for v in values)
        for column, value in (("from", old), ("to", new)):
            if not value:
                errors.append(RowError(line, column, "is empty"))
        if old and old == new:
            errors.append(RowError(line, "to", f"'{new}' maps the word to itself"))
        if old in seen:
            errors.append(RowError(line, "from", f"'{old}' repeats row {seen[old]}"))
        seen.setdefault(old, line)
        targets = [n for _, n in pairs]
        if new and new in targets:
            errors.append(RowError(line, "to", f"'{new}' is already the target of another word"))
        pairs.append((old, new))
    if not pairs and not errors:
        errors.append(RowError(2, "", "the file has a header but no replacements"))
    if errors:
        raise CsvImportError(errors)
    return TokenMapping(tuple(pairs))


def real_only(specs, condition_of) -> None:
    """Refuse specs that are not the real design's (a perturbation copies the real items only), or none."""
    bad = [s for s in specs if condition_of(s) != "real"]
    if bad:
        raise ValueError(f"only the real design can be perturbed; {len(bad)} given item(s) are already perturbed")
    if not specs:
        raise ValueError("nothing to perturb")


def changed_only(pairs: list, label: str, link=lambda old: {}) -> tuple:
    """The perturbed specs of (old, new) pairs that differ from their original but for the label and `link(old)`
    (the fields by which a perturbed spec names its original); ValueError when none does."""
    kept = tuple(new for old, new in pairs if new != replace(old, condition=label, **link(old)))
    if not kept:
        raise ValueError("the perturbation changes no item (does the mapping name any word they use?)")
    return kept
