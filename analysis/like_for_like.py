"""Humans and models on the same items (issue 35 item 1; DESIGN.md rule 19). Pure pandas.

A human/model contrast uses, for models, exactly the items people could be shown: the rule is
logic.people_shown.PeopleShown as experiments.design_registry.people_shown builds it from the designs'
declarations (the study's human variant for a design whose people see one phrasing, the real items
unless the human arm draws perturbed copies), read from the study by analysis.frames.people_shown. Without a study (frames handed over directly) it is inferred from
the people's own answers: the phrasings and conditions they answered. Each contrast says, per side,
how many items and answers it holds and which phrasings (`sides`); the comparison over every item the
models answered stays available as a separately labelled sensitivity analysis.
"""
from __future__ import annotations

import pandas as pd

from logic.people_shown import PeopleShown

SIDES_COLUMNS = ["side", "respondent", "n_items", "n_answers", "phrasings", "conditions"]
SINGLE = "(one phrasing)"  # an item written in no variant


def people_shown(people, trials: pd.DataFrame) -> PeopleShown:
    """The rule to apply: `people` (the study's), else one inferred from the trials people answered (without
    Django, as in the report's second R process: the phrasing people answered, if one, holds for every design
    whose items carry phrasings)."""
    from logic.human_defaults import CATCH_ITEMS

    if people is not None:
        return people
    never = frozenset({CATCH_ITEMS})
    if not len(trials):
        return PeopleShown(never=never, source="no study and no answers from people: every item counts")
    variants = sorted(set(trials["variant"].fillna("").astype(str)) - {""}) if "variant" in trials else []
    conditions = set(trials["condition"].astype(str)) if "condition" in trials else {"real"}
    return PeopleShown(human_variant=variants[0] if len(variants) == 1 else "", perturbed=conditions != {"real"},
                       never=never, source="the phrasings and conditions of the people's own answers (no study given)")


def shown_mask(frame: pd.DataFrame, people) -> pd.Series:
    """Which rows of `frame` (scores or trials) are answers to items people could be shown."""
    if not len(frame):
        return pd.Series(True, index=frame.index, dtype=bool)
    variant = frame["variant"].fillna("").astype(str) if "variant" in frame else pd.Series("", index=frame.index)
    condition = frame["condition"].astype(str) if "condition" in frame else pd.Series("real", index=frame.index)
    design = frame["design"].astype(str) if "design" in frame else pd.Series("", index=frame.index)
    keys = pd.DataFrame({"d": design, "v": variant, "c": condition})
    verdict = {key: people.shows(design=key[0], variant=key[1], condition=key[2])
               for key in keys.drop_duplicates().itertuples(index=False, name=None)}
    return pd.Series([verdict[key] for key in keys.itertuples(index=False, name=None)], index=frame.index, dtype=bool)


def models_like_people(scores: pd.DataFrame, people, trials: pd.DataFrame) -> pd.DataFrame:
    """The model scores on items people could be shown (the rule: people_shown)."""
    return scores[shown_mask(scores, people_shown(people, trials))]


def _phrasings(values: pd.Series) -> str:
    found = sorted(set(values.fillna("").astype(str)))
    return ", ".join(v or SINGLE for v in found)


def sides(humans: pd.DataFrame, models: pd.DataFrame, *, who: str = "participant") -> pd.DataFrame:
    """What each side of a contrast holds: people (all participants together), then each model
    configuration: items, answers, the phrasings (prompt variants) and conditions answered."""
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
                         if "condition" in part else "real"})
    return pd.DataFrame(rows, columns=SIDES_COLUMNS)


def sides_note(table: pd.DataFrame, people) -> str:
    """One sentence stating both sides' counts and phrasings."""
    if table.empty:
        return ""
    said = []
    for row in table.itertuples():
        who = "people" if row.side == "people" else row.respondent
        said.append(f"{who}: {row.n_items} items, {row.n_answers} answers ({row.phrasings}; {row.conditions})")
    rule = people.describe() if people is not None else (
        "the registry's rule (logic.people_shown.PeopleShown): the study's human variant, the real items "
        "unless the human arm draws perturbed copies")
    return (f"Like for like: models are compared on exactly the items people could be shown — {rule}. Each side: "
            + "; ".join(said) + ".")


def state_paired_sides(section, answers: pd.DataFrame, people, design: str | None = None) -> None:
    """What each side of the section holds (issue 35): people's and each model's items, answers and phrasings,
    and which model rows are like for like (the phrasing people saw); rows pooling other phrasings or
    perturbed copies no person saw are the models' own, not a comparison with people."""
    part = answers if design is None else answers[answers["design"] == design]
    if part.empty:
        return
    humans = part[part["respondent"] == "human"]
    models = part[part["respondent"] != "human"].assign(model=lambda f: f["respondent"])
    rule = people_shown(people, humans)
    table = sides(humans, models)
    section.tables["sides"] = table
    said = "; ".join(f"{'people' if r.side == 'people' else r.respondent}: {r.n_items} items, {r.n_answers} answers "
                     f"({r.phrasings}; {r.conditions})" for r in table.itertuples())
    like = ""
    if len(humans) and len(models):
        phrasing = rule.human_variant or "the phrasings people saw"
        like = (f" People saw {rule.describe()}: compare them with the models' rows for variant '{phrasing}' "
                "(like for like); the models' 'all' rows pool phrasings no person was shown (a sensitivity "
                "reading, not a comparison with people).")
    section.notes.insert(0, f"What each side holds: {said}.{like}")
