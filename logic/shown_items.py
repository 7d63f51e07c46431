"""The items people could be shown (issue 44 item 2; DESIGN.md rules 19 and 22): one population, pure Python, so
that the report's second R process (analysis/rprocess.py, no Django there) applies it as the main process does.

For a study it is what its participants' lists hold (the stored lists, experiments/participation/list_store.py),
and for a closed study the items people answered: experiments.participation.selectors.items_people_can_be_shown gives it,
and every human/model contrast (analysis/like_for_like.py), the power analysis, human-likeness and the launch
panel read it. Without a study (frames handed over directly) it is the items people answered
(analysis/like_for_like.py `items_shown`). Which phrasings and conditions the lists draw from is the lists'
own rule (logic/list_pool.py ListPool), carried here only to be said.
"""
from __future__ import annotations

from dataclasses import dataclass

from .list_pool import ListPool


@dataclass(frozen=True)
class ItemsShown:
    item_ids: frozenset[int]
    source: str  # where the items were read: "the study's 4 stored lists", "the items people answered", …
    pool: ListPool | None = None  # the rule the lists were drawn by (None: not known here)

    @property
    def human_variant(self) -> str:
        """The one phrasing people saw of the designs shown in one ("" : every phrasing, or not known)."""
        return self.pool.human_variant if self.pool is not None else ""

    def shows(self, item_id: int) -> bool:
        return int(item_id) in self.item_ids

    def describe(self) -> str:
        said = f"the {len(self.item_ids)} items of {self.source}"
        return said + (f", drawn from {self.pool.describe()}" if self.pool is not None else "")
