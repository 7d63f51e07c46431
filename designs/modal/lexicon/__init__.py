"""Word lists for interpreting propositional variables (paper 003, §3.4, App. B.2).

A proposition reads "<Name> is <verb phrase>", e.g. "Jane is watching a show".

The lists hold 336 names (common US given names; female names first: lines 1–165 are female) and
283 verb phrases; paper 003 §3.4 used "top-200 popular baby names in the US" (its footnote 6: the
Social Security Administration's national data, ssa.gov/oact/babynames/names.zip) and 204 manually
selected verb phrases. The "paper" lexicon size takes paper_names.txt — the top 100 female and top
100 male names of the SSA's national data for 2020, interleaved by rank (a top-200 list balanced by
sex as the SSA's ranked lists are; provenance in PAPER_NAMES.md beside it) — and the first 204 verb
phrases, the paper's count (its own 204 phrases were not published, so the phrases themselves
differ); "full" (the default) takes all of names.txt and every verb phrase.
The nonsense mirror swaps the i-th real verb phrase for the i-th nonsense phrase
("balaring a montery"), so the verb-phrase and nonsense lists have equal length.

Plain data only: no Django imports. The .txt files are package data
(pyproject ``[tool.setuptools.package-data]``) and are read with
importlib.resources so this works from an installed wheel too.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

__all__ = ["LEXICON_SIZES", "Lexicon", "load_lines", "nonsense_phrases", "real_lexicon"]

# How many names and verb phrases each lexicon size takes (None: the whole list).
LEXICON_SIZES: dict[str, tuple[int | None, int | None]] = {"full": (None, None), "paper": (200, 204)}
# The names list each size draws from: 003's "top-200 popular baby names" are the SSA's (PAPER_NAMES.md).
NAME_LISTS = {"full": "names", "paper": "paper_names"}

_FILES = frozenset({"names", "paper_names", "verb_phrases", "nonsense_verbs", "nonsense_nouns"})


@dataclass(frozen=True)
class Lexicon:
    names: tuple[str, ...]
    verb_phrases: tuple[str, ...]


@lru_cache(maxsize=None)
def load_lines(name: str) -> tuple[str, ...]:
    """Non-blank stripped lines of ``<name>.txt`` (``name`` with or without ".txt").

    Raises ValueError for an unknown list or a duplicated line.
    """
    stem = name[:-4] if name.endswith(".txt") else name
    if stem not in _FILES:
        raise ValueError(f"unknown lexicon list {name!r}; expected one of {sorted(_FILES)}")
    text = resources.files(__package__).joinpath(f"{stem}.txt").read_text(encoding="utf-8")
    lines = tuple(line.strip() for line in text.splitlines() if line.strip())
    dupes = sorted(line for line, count in Counter(lines).items() if count > 1)
    if dupes:
        raise ValueError(f"{stem}.txt has duplicate lines: {dupes}")
    return lines


@lru_cache(maxsize=None)
def real_lexicon(size: str = "full") -> Lexicon:
    if size not in LEXICON_SIZES:
        raise ValueError(f"unknown lexicon size {size!r}; choose one of {', '.join(LEXICON_SIZES)}")
    names, phrases = LEXICON_SIZES[size]
    return Lexicon(names=load_lines(NAME_LISTS[size])[:names], verb_phrases=load_lines("verb_phrases")[:phrases])


@lru_cache(maxsize=None)
def nonsense_phrases() -> tuple[str, ...]:
    """The i-th nonsense verb with the i-th nonsense noun, one per real verb phrase."""
    verbs = load_lines("nonsense_verbs")
    nouns = load_lines("nonsense_nouns")
    n = len(real_lexicon().verb_phrases)
    if len(verbs) < n or len(nouns) < n:
        raise ValueError(
            f"need {n} nonsense verbs and nouns, have {len(verbs)} verbs and {len(nouns)} nouns"
        )
    return tuple(f"{verb} {noun}" for verb, noun in zip(verbs[:n], nouns[:n]))
