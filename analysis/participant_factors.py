"""Participant factors from the questionnaires (issue 47 item 2): a study may declare questions (multiple
choice or Likert; study.settings["participant_factors"], experiments/factors.py) whose answers the report
splits people by — an age band, or whether they used an aid or AI tool while answering. Each is a column of
the people's frames (joined by participant from data/questionnaire.csv), and gets a section: people's
accuracy by its levels, and a logistic mixed model of correctness by the factor with random intercepts for
participants and items (a person's answers are one cluster; DESIGN.md rule 15). Models have no such
answers: these sections are about people only."""
from __future__ import annotations

from functools import partial

import pandas as pd

from .factors import r_name
from .sections import ModelSpec, Section, StudyFrames

PREFIX = "people_by_"


def join(kept: pd.DataFrame, questionnaire: pd.DataFrame | None, names) -> pd.DataFrame:
    """`kept` (the people's trials) with each participant factor of `names` as a column named by its question
    key (text; blank answers missing), joined by participant (a copy; `kept` itself when there is nothing)."""
    names = [n for n in names if questionnaire is not None and n in questionnaire]
    if not names or not len(kept) or "participant" not in kept:
        return kept
    values = questionnaire[["participant", *names]].copy()
    for name in names:
        values[name] = values[name].astype("string").replace("", pd.NA)
    joined = kept.drop(columns=[n for n in names if n in kept]).merge(values, on="participant", how="left")
    joined.index = kept.index
    return joined


def _frame(frames: StudyFrames, *, factor: str) -> pd.DataFrame:
    """The rows of the factor's model: people's answers with the factor answered, coded for R."""
    kept = frames.kept
    if not len(kept) or factor not in kept:
        return pd.DataFrame(columns=["correct", r_name(factor), "participant", "item"])
    rows = kept[kept[factor].notna()]
    data = pd.DataFrame({"correct": rows["correct"].astype(int).to_numpy(),
                         r_name(factor): pd.Categorical(rows[factor].astype(str)),
                         "participant": pd.Categorical(rows["participant"].astype(str)),
                         "item": pd.Categorical(rows["item_id"].astype(str))})
    levels = data[r_name(factor)].cat.remove_unused_categories()
    data[r_name(factor)] = levels
    return data


def by_level(frames: StudyFrames, factor: str) -> pd.DataFrame:
    """People's accuracy by the factor's levels: participants, answers and the share correct (blank answers
    to the question as their own row, 'not answered')."""
    kept = frames.kept
    if not len(kept) or factor not in kept:
        return pd.DataFrame(columns=["level", "participants", "answers", "accuracy"])
    level = kept[factor].astype("string").fillna("not answered")
    grouped = kept.assign(level=level).groupby("level", observed=True)
    return pd.DataFrame({"participants": grouped["participant"].nunique(), "answers": grouped.size(),
                         "accuracy": grouped["correct"].mean()}).reset_index()


def _extra(section: Section, fit, frame: pd.DataFrame, *, factor: str, table: pd.DataFrame) -> None:
    section.tables["by_level"] = table


def _precheck(frames: StudyFrames, *, factor: str) -> str:
    if not len(frames.kept) or factor not in frames.kept:
        return (f"no answers to the question {factor!r} among the people analysed (is its questionnaire switched "
                "on, and have people reached it?)")
    return ""


def spec(frames: StudyFrames, factor: str) -> ModelSpec:
    """The section of one participant factor."""
    name = r_name(factor)
    return ModelSpec(
        key=f"{PREFIX}{name}", title=f"People by their answer to “{factor}” (questionnaire)",
        formula=f"correct ~ {name} + (1 | participant) + (1 | item)",
        frame=partial(_frame, factor=factor), columns=("correct", name, "participant", "item"),
        group="participant", needs="answers with the question answered", factors=(name,), family="binomial",
        fast=True, lrt=(name,), emmeans=((f"emmeans_{name}", f"~ {name}"),),
        extra=partial(_extra, factor=factor, table=by_level(frames, factor)),
        precheck=partial(_precheck, factor=factor),
        unit="a participant (random intercepts for participants and items; the factor varies between people)",
        notes=(f"A participant factor: each person's answer to the questionnaire question {factor!r} "
               "(data/questionnaire.csv). People who left it blank are left out of the model (the table by level "
               "counts them as 'not answered'). Self-reports: read as associations, not effects.",),
    )
