"""Which of a study's items its participants' lists are drawn from (issue 35 item 1; issue 44 item 2): one rule,
pure Python. It is how the lists are built, not what the report compares on: the human/model contrasts read
the items the lists hold (logic/shown_items.py's ItemsShown, given for a study by
experiments.participation.selectors.items_people_can_be_shown), and the lists are drawn from the items this rule admits.

The designs' declarations are the registry's (experiments/design_registry/__init__.py: `Design.people_phrasings`;
`registry.list_pool` builds a ListPool from them and the study's settings); the human arm's lists draw from the
items it admits (experiments/participation/paired.py: `pool_q` states it as a filter on items).
"""
from __future__ import annotations

from dataclasses import dataclass

ONE_PHRASING, EVERY_PHRASING = "one", "every"
PEOPLE_PHRASINGS = {
    ONE_PHRASING: "one phrasing: the study's human variant (study.settings['human_variant']; participation/paired.py)",
    EVERY_PHRASING: "every phrasing its items have (a single-phrasing design has one)",
}


@dataclass(frozen=True)
class ListPool:
    """Never an item of the `never` designs (the arm's catch items); the real items, and the perturbed copies
    and nonsense mirrors only where the arm draws them (HumanArm.include_nonsense); of a design in
    `one_phrasing` (None: every design whose items carry a phrasing), only the study's human variant (an item
    written in no variant always counts). `source` says where the settings were read."""

    human_variant: str = ""  # "": every phrasing
    perturbed: bool = False  # HumanArm.include_nonsense: perturbed copies (and nonsense mirrors) too
    one_phrasing: frozenset[str] | None = None  # the designs whose people see ONE_PHRASING
    never: frozenset[str] = frozenset()  # designs people are never shown as items (catch items)
    source: str = "the study's settings and human arm"

    def admits(self, *, design: str, variant: str, condition: str) -> bool:
        """Whether the lists may draw an item of this design, phrasing and condition."""
        if design in self.never or (condition != "real" and not self.perturbed):
            return False
        if variant and self.human_variant and (self.one_phrasing is None or design in self.one_phrasing):
            return variant == self.human_variant
        return True

    def describe(self) -> str:
        phrasing = f"the phrasing '{self.human_variant}'" if self.human_variant else "every phrasing"
        copies = ("originals, perturbed copies and nonsense mirrors" if self.perturbed
                  else "the real (original) items only")
        return f"{phrasing}; {copies} (read from {self.source})"
