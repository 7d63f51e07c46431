"""Humans against each model for any study (issue 25 item 2): one binomial GLMM of correctness,

    correct ~ agent * (factor_1 + … + factor_k) + (1 | participant) + (1 | item),

with `+ (1 | family)` beside `(1 | item)` where the answers hold several members of one family (issue 44
item 4: a question's option orders, a pair's members, phrasings and perturbed copies; each design declares its
families in the registry, `Design.family`, and the frames carry the `family` column, experiments/schema.py).
The rule, decided by the data: the family term is in the model exactly when some family holds more than one
item among the model's answers; where every family holds one item the item's intercept is its family's, a
second term could not be told apart from it, and the formula stays as above.

with the study's declared factors (analysis/factors.py), built as a `ModelSpec` and fitted by
sections.fit_spec like every model of the report. `agent` is human or a model configuration; a model
configuration is one more level of `participant`. Items are a random effect, crossed with
participants: the items are a sample of the sentences one could have asked, and treating them as
fixed makes every item-level conclusion a statement about these items only (the language-as-fixed-
effect fallacy, Clark 1973; Baayen, Davidson & Bates 2008). A design whose paper fits its own human-vs-model
model registers it (a ModelSpec with humans_vs_models, `registered`); this one is for every other study.
"""
from __future__ import annotations

from functools import partial

import pandas as pd

from experiments import design_registry as registry

from . import factors as declared
from . import like_for_like, metrics
from .prep import codes
from .sections import ModelSpec, StudyFrames

KEY = "humans_vs_models"
ALL_ITEMS_KEY = "humans_vs_models_all_items"  # the sensitivity analysis: models on every item they answered
UNIT = ("one answer: a person's answer to an item, or a model configuration's decision on it. Answers are "
        "clustered by participant (a random intercept per person; each model configuration is one more level) "
        "and by item (a random intercept per item, crossed with participants), so neither the people nor the "
        "items are counted as more independent observations than they are.")
FAMILY_UNIT = " Items of one family (family: {}) share a random intercept too, the item's nested in its family's."
NOTES = (
    "Items are a random effect: they stand for the sentences the study could have asked, not fixed levels "
    "(the language-as-fixed-effect fallacy, Clark 1973; Baayen, Davidson & Bates 2008).",
    "Contrasts are differences in probability correct (model − human); the note on multiple comparisons says "
    "which contrasts each Holm adjustment runs over.",
)


def sides(frames: StudyFrames, *, all_items: bool = False) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(people's answers, models' answers) the comparison reads: for models, only the items people could be
    shown (like_for_like), unless `all_items` (the sensitivity analysis)."""
    humans, models = (metrics.analysed_rows(frame, frames.analysed) for frame in (frames.kept, frames.scores))
    if not all_items and len(models):
        models = like_for_like.models_like_people(models, frames.shown, humans)
    return humans, models


def rows(frames: StudyFrames, *, factors: tuple[str, ...] = (), all_items: bool = False) -> pd.DataFrame:
    """Humans and models in one frame, one row per answer (a model's answer its decision), with the
    factors (frame columns) under their R names; rows with a factor left blank are left out. Models
    answer the items people could be shown (like_for_like), every item they answered with `all_items`;
    `variant` and `condition` ride along (not in the model) so the section can say what each side holds."""
    humans, models = sides(frames, all_items=all_items)
    parts = []
    for frame, agent, who in ((humans, "human", "participant"), (models, None, "model")):
        if not len(frame):
            continue
        part = pd.DataFrame({
            "agent": agent if agent else frame["model"].astype(str),
            "participant": frame[who].astype(str),
            "item": "i" + frame["item_id"].astype(str),
            "correct": frame["correct"].astype(int),
            "item_id": frame["item_id"],
            "variant": frame["variant"].fillna("").astype(str) if "variant" in frame else "",
            "condition": frame["condition"].astype(str) if "condition" in frame else "real",
            "design": frame["design"].fillna("").astype(str) if "design" in frame else "",
        })
        part["family"] = family_labels(frame, part["item"])
        for factor in factors:
            part[declared.r_name(factor)] = _codes(frame, factor)
        parts.append(part)
    names = [declared.r_name(f) for f in factors]
    if not parts:
        return pd.DataFrame(columns=["agent", "participant", "item", "correct", "item_id", "variant", "condition",
                                     "design", "family", *names])
    frame = pd.concat(parts, ignore_index=True)
    for name in names:
        frame = frame[frame[name] != ""]
    agents = ["human"] + sorted(set(frame["agent"]) - {"human"})
    frame["agent"] = pd.Categorical(frame["agent"], categories=agents)
    for group in ("participant", "item", "family"):  # levels recorded, so a refit from the CSV orders them alike
        frame[group] = pd.Categorical(frame[group], categories=sorted(set(frame[group])))
    for factor, name in zip(factors, names):  # levels in their designs' declared order (as codes), then the rest
        present = set(frame[name])
        order = [level.code for level in registry.levels(factor)]
        frame[name] = pd.Categorical(frame[name], categories=[v for v in dict.fromkeys([*order, *sorted(present)])
                                                              if v in present])
    return frame.reset_index(drop=True)


def family_labels(frame: pd.DataFrame, items: pd.Series) -> pd.Series:
    """Each answer's family as the model names it: f + the item's family (the frames' `family` column, declared
    by its design), or the item's own label where it has none (an item alone is a family of one)."""
    if "family" not in frame:
        return items.astype(str)
    family = frame["family"].astype(object).where(frame["family"].notna(), "").astype(str).to_numpy()
    return pd.Series(["f" + f if f else i for f, i in zip(family, items.astype(str))], index=items.index)


def nested(frame: pd.DataFrame) -> bool:
    """The rule for the family term: whether some family holds more than one item among these answers."""
    return bool(len(frame)) and "family" in frame and bool(
        (frame.groupby("family", observed=True)["item"].nunique() > 1).any())


def family_words(frame: pd.DataFrame) -> str:
    """What a family is for the designs among these answers, as their registry entries say ("the question (its 4
    option orders)"; the design named where several are present); "" where none of them has families."""
    from experiments import design_registry as registry

    declared = registry.families()
    present = [d for d in sorted(set(frame["design"])) if d in declared] if "design" in frame else []
    return "; ".join(f"{declared[d].describe()}" + (f" for {d}" if len(present) > 1 else "") for d in present)


def family_note(frame: pd.DataFrame) -> str:
    """The family (family_words), how many there are among these answers and what the model does with them
    ("" where no design among them has families)."""
    words = family_words(frame)
    if not words:
        return ""
    grouped = frame[frame["family"].astype(str).str.startswith("f")]
    counts = (f"{grouped['family'].nunique()} families holding {grouped['item'].nunique()} items among these "
              "answers")
    if nested(frame):
        return (f"Family: {words}. {counts}. Items of one family share a random intercept, (1 | family) beside "
                "(1 | item): the item's intercept is nested in its family's, so a family's members are not counted as "
                "unrelated items (issue 44).")
    return (f"Family: {words}. {counts}: each family holds one item here, so the item's intercept is its family's "
            "and the model has no separate family term.")


def _codes(frame: pd.DataFrame, factor: str) -> pd.Series:
    """A factor's values as text, as the R-safe codes their designs declare (registry.level_code); blank where
    missing."""
    return codes(factor, frame[factor].astype(object).where(frame[factor].notna(), "").astype(str))


def both_arms(frames: StudyFrames) -> str:
    humans, models = sides(frames)
    if not len(humans) or not len(metrics.analysed_rows(frames.scores, frames.analysed)):
        return "needs both human trials and model scores"
    if not len(models):
        shown = like_for_like.items_shown(frames.shown, humans)
        return "no model answered an item people could be shown (" + (shown.describe() if shown else "") + ")"
    return ""


def differs(frames: StudyFrames) -> bool:
    """Whether the models answered items people could not be shown (then the sensitivity analysis runs)."""
    return len(sides(frames)[1]) != len(sides(frames, all_items=True)[1])


def state_sides(section, fit, frame: pd.DataFrame, *, all_items: bool = False, shown=None,
                who: str = "participant") -> None:
    """The section's `sides` table and its sentence: per side, items, answers and phrasings (a frame made
    elsewhere without the item columns says nothing)."""
    if not {"item_id", "agent"} <= set(frame.columns):
        return
    humans = frame[frame["agent"] == "human"]
    models = frame[frame["agent"] != "human"].assign(model=lambda f: f["agent"].astype(str))
    table = like_for_like.sides(humans, models, who=who)
    section.tables["sides"] = table
    if all_items:
        said = "; ".join(like_for_like.side_words(r) for r in table.itertuples())
        section.notes.insert(0, "Sensitivity analysis, not the comparison: the models' side holds every item they "
                                "answered, including phrasings and copies no person could be shown, so the two sides "
                                f"answered different items. The like-for-like comparison is the section '{KEY}'. "
                                f"Each side: {said}.")
    else:
        section.notes.insert(0, like_for_like.sides_note(table, shown))


def formula(names: list[str], *, families: bool = False) -> str:
    """The model's formula: `families` adds (1 | family) beside (1 | item) (the rule: `nested`)."""
    fixed = "agent" if not names else f"agent * {names[0]}" if len(names) == 1 else f"agent * ({' + '.join(names)})"
    return f"correct ~ {fixed} + (1 | participant) + {'(1 | family) + ' if families else ''}(1 | item)"


def spec(frames: StudyFrames, factors, *, all_items: bool = False) -> ModelSpec:
    """The model for these frames: the declared factors with at least two levels among the answers
    (a factor with one level cannot be estimated and is left out, as a note says). Models answer the items
    people could be shown; `all_items`: every item they answered, the separately labelled sensitivity analysis."""
    factors = tuple(f for f in factors if f in frames.kept.columns or f in frames.scores.columns)
    data = rows(frames, factors=factors, all_items=all_items) if not both_arms(frames) else pd.DataFrame()
    kept = tuple(f for f in factors if len(data) and data[declared.r_name(f)].nunique() >= 2)
    names = [declared.r_name(f) for f in kept]
    notes = list(NOTES)
    dropped = [f for f in factors if f not in kept]
    if dropped and len(data):
        notes.append(f"Left out of the model: {', '.join(dropped)} (one level among the answers).")
    if not factors:
        notes.append("The study declares no factors (import_items --factors, or the study's settings): the model "
                     "compares the agents overall.")
    families = nested(data)
    said = family_note(data) if len(data) else ""
    if said:
        notes.insert(0, said)
    shown = like_for_like.items_shown(frames.shown, metrics.analysed_rows(frames.kept, frames.analysed))
    title = "Humans vs each model (binomial GLMM, crossed random effects)"
    if all_items:
        title = "Sensitivity analysis: humans vs each model on every item the models answered (not like for like)"
    return ModelSpec(
        key=ALL_ITEMS_KEY if all_items else KEY, title=title, formula=formula(names, families=families),
        frame=partial(rows, factors=kept, all_items=all_items),
        columns=("correct", "agent", *names, "participant", *(("family",) if families else ()), "item"),
        group="item", needs="answers", factors=("agent", *names), min_groups=2, family="binomial",
        precheck=both_arms,
        emmeans=(("emmeans_agent", "~ agent"), *((f"emmeans_agent_by_{n}", f"~ agent | {n}") for n in names)),
        versus=(("model_vs_human", "agent", None), *((f"model_vs_human_by_{n}", "agent", n) for n in names)),
        notes=tuple(notes),
        unit=UNIT + (FAMILY_UNIT.format(family_words(data) or "as the frames' family column gives it") if families
                     else ""),
        extra=partial(state_sides, all_items=all_items, shown=shown),
    )


def registered(designs=None) -> ModelSpec | None:
    """The humans-vs-models model the designs' packages register (designs/<family>/; None: every design's),
    the first in the report's order; None where they register none."""
    from experiments import design_registry as registry

    return next((part for part in registry.report_parts(designs)
                 if isinstance(part, ModelSpec) and part.humans_vs_models), None)


def human_model_spec(frames: StudyFrames, designs, factors) -> ModelSpec:
    """The one rule for a study's humans-vs-models model: the one its designs register (`registered`), else
    the any-study model by its declared factors. The report fits it (analysis/report.py), the power
    analysis simulates it (analysis/power.py)."""
    found = registered(designs)
    return found if found is not None else spec(frames, tuple(factors))
