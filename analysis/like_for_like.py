"""Humans and models on the same items (issue 35 item 1, issue 44 item 2; DESIGN.md rule 19). Pure pandas.

A human/model contrast uses, for models, exactly the items people could be shown: the items the study's
participant lists hold (for a closed study, the items people answered), logic.shown_items.ItemsShown as
experiments.participation.selectors.items_people_can_be_shown gives it for a study (read into the report's
inputs by analysis/services.py). Which phrasings and conditions the lists draw from (logic.list_pool.ListPool)
is how the lists are built, not a second definition: the contrast reads the items, by id. Without a study
(frames handed over directly) it is the items people answered. Each contrast says, per side, how many items
and answers it holds and which phrasings (`sides`); the comparison over every item the models answered stays
available as a separately labelled sensitivity analysis.
"""
from __future__ import annotations

import pandas as pd

from logic.human_defaults import CATCH_ITEMS
from logic.shown_items import ItemsShown

SIDES_COLUMNS = ["side", "respondent", "n_items", "n_answers", "phrasings", "conditions", "n_copies",
                 "n_participants"]
SINGLE = "(one phrasing)"  # an item written in no variant


def items_shown(shown: ItemsShown | None, trials: pd.DataFrame) -> ItemsShown | None:
    """The items to compare on: `shown` (the study's), else the items people answered in `trials` (without
    Django, as in the report's second R process); None where there is neither (every item counts)."""
    if shown is not None:
        return shown
    if not len(trials) or "item_id" not in trials:
        return None
    answered = trials if "design" not in trials else trials[trials["design"].astype(str) != CATCH_ITEMS]
    return ItemsShown(item_ids=frozenset(int(i) for i in answered["item_id"].unique()),
                      source="the items people answered (no study given)")


def shown_mask(frame: pd.DataFrame, shown: ItemsShown | None) -> pd.Series:
    """Which rows of `frame` (scores or trials) are answers to items people could be shown (None: all)."""
    if shown is None or not len(frame):
        return pd.Series(True, index=frame.index, dtype=bool)
    return frame["item_id"].astype("int64").isin(shown.item_ids)


def models_like_people(scores: pd.DataFrame, shown: ItemsShown | None, trials: pd.DataFrame) -> pd.DataFrame:
    """The model scores on items people could be shown (`items_shown`)."""
    return scores[shown_mask(scores, items_shown(shown, trials))]


def _phrasings(values: pd.Series) -> str:
    found = sorted(set(values.fillna("").astype(str)))
    return ", ".join(v or SINGLE for v in found)


def _copies(part: pd.DataFrame) -> int:
    """Distinct items of `part` that are perturbed copies (or nonsense mirrors): condition other than real."""
    if "condition" not in part:
        return 0
    return int(part.loc[part["condition"].astype(str) != "real", "item_id"].nunique())


def sides(humans: pd.DataFrame, models: pd.DataFrame, *, who: str = "participant") -> pd.DataFrame:
    """What each side of a contrast holds: people (all participants together), then each model
    configuration: items, answers, the phrasings (prompt variants) and conditions answered, how many of the
    items are perturbed copies (condition not real), and for people how many participants (`who`: the column
    naming them; blank for a model configuration, one respondent)."""
    rows = []
    for side, frame, groups in (("people", humans, None), ("model", models, "model")):
        if not len(frame):
            continue
        parts = [("human", frame)] if groups is None else list(frame.groupby(groups, sort=True, observed=True))
        for respondent, part in parts:
            rows.append({"side": side, "respondent": str(respondent), "n_items": int(part["item_id"].nunique()),
                         "n_answers": len(part),
                         "phrasings": _phrasings(part["variant"]) if "variant" in part else SINGLE,
                         "conditions": ", ".join(sorted(set(part["condition"].astype(str))))
                         if "condition" in part else "real",
                         "n_copies": _copies(part),
                         "n_participants": int(part[who].nunique()) if side == "people" and who in part else pd.NA})
    table = pd.DataFrame(rows, columns=SIDES_COLUMNS)
    return table.astype({"n_copies": "Int64", "n_participants": "Int64"})


def side_words(row) -> str:
    """One side of a `sides` row in words: the one wording every sides line uses."""
    who = "people" if row.side == "people" else row.respondent
    said = (f"{who}: {row.n_items} items, {row.n_answers} answers ({row.phrasings}; {row.conditions}), "
            f"{row.n_copies} perturbed copies")
    return said + (f", {row.n_participants} participants" if not pd.isna(row.n_participants) else "")


def sides_note(table: pd.DataFrame, shown: ItemsShown | None) -> str:
    """One sentence stating both sides' counts and phrasings."""
    if table.empty:
        return ""
    said = [side_words(row) for row in table.itertuples()]
    rule = shown.describe() if shown is not None else "every item (no study, and no answers from people)"
    return (f"Like for like: models are compared on exactly the items people could be shown — {rule}. Each side: "
            + "; ".join(said) + ".")


def state_paired_sides(section, answers: pd.DataFrame, shown: ItemsShown | None, design: str | None = None) -> None:
    """What each side of the section holds (issue 35): people's and each model's items, answers and phrasings,
    and which model rows are like for like (the phrasing people saw); rows pooling other phrasings or
    perturbed copies no person saw are the models' own, not a comparison with people."""
    part = answers if design is None else answers[answers["design"] == design]
    if part.empty:
        return
    humans = part[part["respondent"] == "human"]
    models = part[part["respondent"] != "human"].assign(model=lambda f: f["respondent"])
    rule = items_shown(shown, humans)
    table = sides(humans, models, who="order")  # designs/paired/report.py: a person's label in `order`
    section.tables["sides"] = table
    said = "; ".join(side_words(r) for r in table.itertuples())
    like = ""
    if len(humans) and len(models) and rule is not None:
        phrasing = rule.human_variant or (_phrasings(humans["variant"]) if "variant" in humans else SINGLE)
        like = (f" People could be shown {rule.describe()}: compare them with the models' rows for variant "
                f"'{phrasing}' (like for like); the models' 'all' rows pool phrasings no person was shown (a "
                "sensitivity reading, not a comparison with people).")
    section.notes.insert(0, f"What each side holds: {said}.{like}")
