"""Table 1 with both sides stated (issue 44 item 3; DESIGN.md rule 19). Pure pandas over the report's frames.

Table 1 sets people and models side by side, so its models' side holds the items people could be shown (the one
definition, logic.shown_items.ItemsShown, read by analysis/versus.py `sides` as the humans-vs-models model reads
it): in a paired design the people's phrasing of the items in their lists, not every phrasing and perturbed copy
the models answered; in a multiple-choice design the option orders the lists hold. The models' accuracy over every
item they answered is its own table, labelled as not like for like ("models on every item"), made only where
it differs. Each table carries its sides (like_for_like.sides: items, answers, phrasings, copies, participants)
as a table, a sentence, and in its CSV the columns `items` (what the row's respondent answered) and `n_items`.
"""
from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from . import like_for_like, metrics, versus
from .sections import StudyFrames

TABLE1 = "table1_accuracy"
EVERY = "table1_models_all_items"  # the models on every item they answered
EVERY_TITLE = "Models on every item: not like for like"
PEOPLE_ITEMS = "the items people answered"
LIKE = "the items people could be shown"
ALL = "every item the model answered"
ALL_UNLIKE = "every item the model answered (not like for like)"


@dataclass
class AccuracyTables:
    """Table 1 (people, and models on the people's items) and, where the models answered more, their accuracy on
    every item; each with its `sides` table and sentence (`note`)."""

    table1: pd.DataFrame
    sides: pd.DataFrame
    note: str
    every: pd.DataFrame | None = None  # None: the models answered no item beyond Table 1's
    every_sides: pd.DataFrame | None = None
    every_note: str = ""

    def files(self) -> list[tuple[str, pd.DataFrame]]:
        """(name under tables/, frame) of every CSV these tables write."""
        found = [(TABLE1, self.table1), (f"{TABLE1}_sides", self.sides)]
        if self.every is not None:
            found += [(EVERY, self.every), (f"{EVERY}_sides", self.every_sides)]
        return found


def _items(table: pd.DataFrame, humans: pd.DataFrame, models: pd.DataFrame, factors, models_on: str) -> pd.DataFrame:
    """`table` with what each row's respondent answered (`items`) and how many distinct items (`n_items`)."""
    counts = []
    for row in table.itertuples():
        frame = humans if row.respondent == "human" else models[models["model"] == row.respondent]
        if row.factor != "overall" and row.factor in frame:
            values = frame[row.factor].astype(str).where(frame[row.factor].notna(), "")
            frame = frame[values == str(row.level)]
        counts.append(int(frame["item_id"].nunique()) if "item_id" in frame else pd.NA)
    said = [PEOPLE_ITEMS if r == "human" else models_on for r in table["respondent"]]
    out = table.assign(items=said, n_items=pd.array(counts, dtype="Int64"))
    return out[[*table.columns[:5], "items", "n_items", *table.columns[5:]]]


def accuracy_tables(frames: StudyFrames, *, factors, seed: int = 0) -> AccuracyTables:
    """Table 1 with the models on the items people could be shown (versus.sides: the rule of every human/model
    contrast), and the models on every item they answered where that is more. Without people's answers there is
    no comparison: Table 1 holds the models on every item they answered, and says so."""
    humans, models = versus.sides(frames)
    _, every = versus.sides(frames, all_items=True)
    shown = like_for_like.items_shown(frames.shown, humans)
    if not len(humans):  # no comparison: a model-only table reads every item the models answered
        models, shown = every, None
    models_on = LIKE if shown is not None else ALL
    table = metrics.table1(models, frames.kept, factors=factors, seed=seed, analysed=frames.analysed)
    table = _items(table, humans, models, factors, models_on)
    sides = like_for_like.sides(humans, models)
    if shown is None or not len(humans) or not len(models):
        said = "; ".join(like_for_like.side_words(r) for r in sides.itertuples())
        why = ("no model answered an item people could be shown" if len(humans) else
               "no person has answered yet; the models' side holds every item they answered")
        note = f"No comparison in Table 1: {why}." + (f" Each side: {said}." if said else "")
    else:
        note = like_for_like.sides_note(sides, shown)
    found = AccuracyTables(table1=table, sides=sides, note=note)
    if len(every) != len(models) and len(every):
        wide = metrics.table1(every, frames.kept.iloc[0:0], factors=factors, seed=seed, analysed=frames.analysed)
        found.every = _items(wide, humans, every, factors, ALL_UNLIKE)
        found.every_sides = like_for_like.sides(humans.iloc[0:0], every)
        said = "; ".join(like_for_like.side_words(r) for r in found.every_sides.itertuples())
        found.every_note = (f"{EVERY_TITLE}: each model's accuracy over every item it answered — every phrasing and "
                            "perturbed copy, including items no person could be shown — so it is not compared with "
                            f"people here; Table 1 holds the like-for-like comparison. Each side: {said}.")
    return found
