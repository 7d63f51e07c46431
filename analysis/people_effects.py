"""The people's own effects (issue 47 item 5): for each declared factor, the people's accuracy by its levels in
one binomial GLMM with the random effects of the report's humans-vs-models model,

    correct ~ factor + (1 | participant) + (1 | item)

with `+ (1 | family)` beside `(1 | item)` by versus.nested's rule, fitted on the people's answers the report
analyses (the kept trials, the analysed rows: analysis.versus.rows, its human side) and tested as the report
tests a factor: each level minus the reference level (the first) in probability correct (emmeans regrid),
Holm-adjusted across the levels. These are the within-people contrasts a study preregisters (one level of a
declared factor against another). The report shows each as a section of its own (analysis/report.py), and the
power analysis simulates them (analysis/power_people.py); each spec is a ModelSpec, so sections.fit_spec fits it
as it fits every model of the report.
"""
from __future__ import annotations

from functools import partial

import pandas as pd

from . import factors as declared
from . import versus
from .sections import ModelSpec, StudyFrames

KEY = "people_effect_{}"  # not participant_factors' "people_by_": a bank's column and a question may share a name
UNIT = ("one answer: a person's answer to an item. Answers are clustered by participant (a random intercept per "
        "person) and by item (a random intercept per item, crossed with participants), as in the report's "
        "humans-vs-models model.")


def rows(frames: StudyFrames, *, factor: str) -> pd.DataFrame:
    """The people's answers with `factor` (its R name), as the humans-vs-models frame holds them (versus.rows),
    the models' rows left out; `agent` kept (all "human": the power simulation's people)."""
    data = versus.rows(frames, factors=(factor,))
    data = data[data["agent"] == "human"].copy()
    for column in data.columns:
        if isinstance(data[column].dtype, pd.CategoricalDtype):
            data[column] = data[column].cat.remove_unused_categories()
    return data.reset_index(drop=True)


def has_people(frames: StudyFrames) -> str:
    """Why the people's model cannot be fitted ("" when it can)."""
    return "" if len(versus.sides(frames)[0]) else "needs people's answers"


def formula(name: str, *, families: bool = False) -> str:
    return f"correct ~ {name} + (1 | participant) + {'(1 | family) + ' if families else ''}(1 | item)"


def explanation(factor: str) -> str:
    """The section's sentence of what it is, before its numbers."""
    return (f"How {factor} changes people's accuracy, from the people's answers alone (no model's scores), with the "
            "random effects of the humans-vs-models model: the within-people contrast a study preregisters, and the "
            "one the power analysis simulates for people (its section, where the study has one).")


def spec(frames: StudyFrames, factor: str) -> ModelSpec | None:
    """The people's model of one declared factor (None where the people's answers hold fewer than two of its
    levels)."""
    if factor not in frames.kept.columns or has_people(frames):
        return None
    data = rows(frames, factor=factor)
    name = declared.r_name(factor)
    if data[name].nunique() < 2:
        return None
    families = versus.nested(data)
    return ModelSpec(
        key=KEY.format(name), title=f"The people's own effect of {factor} (binomial GLMM, people only)",
        formula=formula(name, families=families), frame=partial(rows, factor=factor),
        columns=("correct", name, "participant", *(("family",) if families else ()), "item"),
        group="item", needs="people's answers", factors=(name,), min_groups=2, family="binomial",
        precheck=has_people, emmeans=((f"emmeans_{name}", f"~ {name}"),),
        versus=((f"{name}_vs_reference", name, None),),
        notes=(explanation(factor),
               f"Each level of {factor} minus its first level ({data[name].cat.categories[0]}) in probability correct, "
               "for the typical person on the typical item; Holm-adjusted across the levels.",),
        unit=UNIT + (versus.FAMILY_UNIT.format(versus.family_words(data) or "as the frames' family column gives it")
                     if families else ""),
    )


def specs(frames: StudyFrames, factors) -> list[ModelSpec]:
    """The people's model of each declared factor that has at least two levels among the people's answers."""
    return [found for factor in factors if (found := spec(frames, factor)) is not None]
