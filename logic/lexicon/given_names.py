"""Common first names from many regions, each with its pronoun (given_names.csv), and a second list disjoint from
the first (given_names_alt.csv) that name perturbations (seed 002) draw from: RULEBREAKERS' people (000 §3.1) and
003's interpretations perturbed by names. Plain data, read with importlib.resources (works from a wheel)."""
from __future__ import annotations

import csv
import io
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

PRONOUNS = ("she", "he")


@dataclass(frozen=True)
class GivenName:
    name: str
    pronoun: str  # "she" / "he"
    region: str = ""


def _rows(filename: str) -> list[dict[str, str]]:
    text = resources.files(__package__).joinpath(filename).read_text(encoding="utf-8")
    return [{k: (v or "").strip() for k, v in row.items()} for row in csv.DictReader(io.StringIO(text))]


@lru_cache(maxsize=None)
def given_names(alternate: bool = False) -> tuple[GivenName, ...]:
    rows = _rows("given_names_alt.csv" if alternate else "given_names.csv")
    names = tuple(GivenName(r["name"], r["pronoun"], r["region"]) for r in rows)
    repeated = sorted(n for n, k in Counter(n.name for n in names).items() if k > 1)
    if repeated:
        raise ValueError(f"given names repeats: {repeated}")
    bad = [n.name for n in names if n.pronoun not in PRONOUNS]
    if bad:
        raise ValueError(f"given names without she/he: {bad}")
    return names
