"""Entity and name lists for the RULEBREAKERS design (seed 000 §3.1, Appendix B). Plain data.

Written from facts for this project (not copied from the paper's sources):

* capitals.csv — (country, capital) of UN member states, keeping only capitals whose name differs
  from the country's (so no Singapore, Kuwait City, Guatemala City, Luxembourg, Bissau, São Tomé …)
  and that lie in one country (Jerusalem and Nicosia are left out). Also left out: countries whose
  capital is split or in transition (South Africa, Eswatini, Nauru, Indonesia), and capitals whose
  name is shared by a well-known city of another country on the list (Tripoli, Kingston, Victoria,
  Santiago, Georgetown, San José, St. John's, Santo Domingo), since the non-rulebreaker that swaps
  the country would then be ambiguous. ``aliases`` lists other names of the country (for the
  knowledge probe). A country that takes "the" in running text is written with it.
* cities_alt.csv — large non-capital cities, one country each: an alternative entity list for
  perturbations (002) that keeps the logic (the city still lies in its country).
* categories.csv — the 91 (type, instance) pairs of 000's Appendix B (set ``appendix_b``) and
  further instances of the same eight types (set ``alternate``), each with its indefinite article.

The given names with their pronouns (given_names.csv, given_names_alt.csv) are shared wording, in logic/lexicon/
(logic/lexicon/given_names.py), re-exported here.
"""
from __future__ import annotations

import csv
import io
import re
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

from logic.lexicon.given_names import PRONOUNS, GivenName, given_names  # noqa: F401  (the design's names)

CATEGORY_SETS = ("appendix_b", "alternate")


@dataclass(frozen=True)
class Place:
    """A city that lies in exactly one country."""

    country: str  # as written in running text: "Sweden", "the Netherlands"
    city: str
    aliases: tuple[str, ...] = ()

    @property
    def country_bare(self) -> str:
        return self.country[4:] if self.country.startswith("the ") else self.country


@dataclass(frozen=True)
class Category:
    """An instance of a type, e.g. (brass instrument, trumpet, "a")."""

    type: str
    instance: str
    article: str  # "a", "an", or "" for activities (karate, tennis)
    set: str = "appendix_b"


def _rows(filename: str) -> list[dict[str, str]]:
    text = resources.files(__package__).joinpath(filename).read_text(encoding="utf-8")
    return [{k: (v or "").strip() for k, v in row.items()} for row in csv.DictReader(io.StringIO(text))]


def _no_duplicates(values, what: str) -> None:
    dupes = sorted(v for v, n in Counter(values).items() if n > 1)
    if dupes:
        raise ValueError(f"{what} repeats: {dupes}")


def _same_name(country: str, city: str) -> bool:
    bare = country[4:] if country.startswith("the ") else country
    def within(word: str, text: str) -> bool:
        return re.search(rf"(?<!\w){re.escape(word.lower())}(?!\w)", text.lower()) is not None

    return within(bare, city) or within(city, bare)


def validate_places(places: tuple[Place, ...], what: str) -> tuple[Place, ...]:
    _no_duplicates([p.city for p in places], f"{what}: a city")
    for place in places:
        if not place.country or not place.city:
            raise ValueError(f"{what}: a row has an empty country or city")
        if _same_name(place.country, place.city):
            raise ValueError(f"{what}: {place.city!r} shares its name with {place.country!r}")
    return places


@lru_cache(maxsize=None)
def capitals() -> tuple[Place, ...]:
    rows = _rows("capitals.csv")
    places = tuple(Place(r["country"], r["city"], tuple(a for a in r["aliases"].split("|") if a)) for r in rows)
    _no_duplicates([p.country for p in places], "capitals.csv: a country")
    return validate_places(places, "capitals.csv")


@lru_cache(maxsize=None)
def alternative_cities() -> tuple[Place, ...]:
    rows = _rows("cities_alt.csv")
    places = tuple(Place(r["country"], r["city"], tuple(a for a in r["aliases"].split("|") if a)) for r in rows)
    validate_places(places, "cities_alt.csv")
    clash = {p.city for p in places} & {p.city for p in capitals()}
    if clash:
        raise ValueError(f"cities_alt.csv repeats capitals: {sorted(clash)}")
    return places


@lru_cache(maxsize=None)
def categories(which: str = "appendix_b") -> tuple[Category, ...]:
    if which not in CATEGORY_SETS:
        raise ValueError(f"unknown category set {which!r}; expected one of {', '.join(CATEGORY_SETS)}")
    rows = _rows("categories.csv")
    _no_duplicates([r["instance"] for r in rows], "categories.csv: an instance")
    out = []
    for r in rows:
        if r["article"] not in ("a", "an", ""):
            raise ValueError(f"categories.csv: {r['instance']!r} has article {r['article']!r}")
        if r["set"] == which:
            out.append(Category(r["type"], r["instance"], r["article"], r["set"]))
    return tuple(out)
