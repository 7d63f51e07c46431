"""The mixed-effects analyses of paper 003 (Eq. 4–6, Appendix C) and the human-vs-model model,
declared as `ModelSpec`s (analysis/sections.py; report_parts.py adds them to the design registry, in the report's
order, with the designs each reads): each names its frame, formula, family, what it
needs, its likelihood-ratio terms and marginal-means tables; `sections.fit_spec` fits any of them,
and analysis/reproduce.py writes the scripts that refit them. What a section adds beyond the common
skeleton (the other consequence key of C.1, the relative p(Yes) refit of C.2, …) is its `extra`.
R is reached only through analysis.rbridge.
"""
from __future__ import annotations

from functools import partial

import pandas as pd

from common.registry import Registry
from .forms import DISTRIBUTION as DISTRIBUTION_DESIGN
from .forms import NECESSITATION as NECESSITATION_DESIGN
from .forms import SYLLOGISMS

from analysis import like_for_like, metrics, prep, versus
from analysis import rbridge as rb
from analysis.sections import ModelSpec, Section, StudyFrames, fit_spec

from . import frames as modal

MODALITY_HYPOTHESES = (("none", "dia"), ("box", "none"), ("box", "dia"))  # Table 2: a < b
ARGFORM_HYPOTHESES = (("DS", "MP"), ("MT", "MP"), ("MT", "DS"))
TABLE2 = (("modality", MODALITY_HYPOTHESES), ("argform", ARGFORM_HYPOTHESES))
BY_FACTOR = (("emmeans_modality", "~ modality"), ("emmeans_argform", "~ argform"))


MODEL_SCORES = ("one model's score on one item; each model configuration scores each item once, and the "
                "scores of one model share its random intercept and perplexity slope (the model is the cluster, "
                "as the paper fits it). Items enter as fixed factor levels, not as a random effect (the paper's "
                "equation; docs/analysis.md says what that leaves out).")
SYLLOGISM_DESIGNS = (SYLLOGISMS,)


# ----------------------------------------------------------------------------- frames of the specs


def valid_syllogism_scores(frames: StudyFrames) -> pd.DataFrame:
    scores = frames.scores
    return modal.syllogism_scores(scores, valid_only=True) if len(scores) else scores


def syllogism_scores(frames: StudyFrames) -> pd.DataFrame:
    scores = frames.scores
    return modal.syllogism_scores(scores, valid_only=False) if len(scores) else scores


def valid_syllogism_trials(frames: StudyFrames) -> pd.DataFrame:
    kept = frames.kept
    return modal.syllogism_trials(kept, valid_only=True) if len(kept) else kept


def necessitation_scores(frames: StudyFrames) -> pd.DataFrame:
    return _design_scores(frames.scores, NECESSITATION_DESIGN)


def distribution_scores(frames: StudyFrames) -> pd.DataFrame:
    frame = _design_scores(frames.scores, DISTRIBUTION_DESIGN)
    if len(frame):
        frame = frame[frame["modality"].isin(["box", "dia"])]
        frame["modality"] = frame["modality"].cat.remove_unused_categories()
    return frame


def agent_rows(frames: StudyFrames) -> pd.DataFrame:
    """People and models on the modal syllogisms, models on the items people could be shown (issue 35)."""
    return modal.agent_frame(frames.kept, like_for_like.models_like_people(frames.scores, frames.shown, frames.kept))


def humans_and_models(frames: StudyFrames) -> str:
    def syllogisms(frame):
        return len(frame) and len(modal.real_syllogisms(frame))

    if not (syllogisms(frames.kept) and syllogisms(frames.scores)):
        return "needs both human trials and model scores on the modal syllogisms"
    return ""


def has_design(design: str, appendix: str, frames: StudyFrames) -> str:
    """A precheck: the study's scores include the design at all (Appendix C's designs are scored by models
    only, each in its own study, since people's lists are drawn from every item of a study)."""
    if len(frames.scores) and (frames.scores["design"] == design).any():
        return ""
    return (f"this study has no '{design}' items; {appendix} is a design of its own, generated into its own "
            f"study (generate_items {design} …) and scored by the models")


def _design_scores(scores: pd.DataFrame, design: str) -> pd.DataFrame:
    frame = scores[(scores["design"] == design) & (scores["condition"] == "real")] if len(scores) else scores
    if not len(frame):
        return frame
    frame = modal.code_factors(frame.dropna(subset=["soft_acc", "perplexity"]))
    frame["perplexity_z"] = prep.zscore(frame["perplexity"].astype(float))
    return frame


RELATION_TEXT = {
    "global": "global consequence (premises true at every world ⇒ conclusion true at every world: "
              "003 §3.1's ⊢ with the necessitation rule, the paper's key for C.1)",
    "local": "local consequence (premises true at a world ⇒ conclusion true there)",
}


def _keys_note(frame: pd.DataFrame) -> list[str]:
    """Which consequence relation keyed the items, and the forms whose template (the paper's stated
    validity) the key disagrees with."""
    notes = []
    used = sorted(set(frame.get("consequence", pd.Series(dtype=str)).dropna()) - {""})
    for relation in used:
        notes.append(f"Gold answers keyed by {RELATION_TEXT.get(relation, relation)}.")
    if not used:
        notes.append("The items do not record the consequence relation that keyed them (generated before "
                     "Duet recorded it): they were keyed by local consequence.")
    if "template_valid" in frame and "gold" in frame:
        stated = frame["template_valid"].map({True: "yes", False: "no"})
        disagree = frame[stated.notna() & (stated != frame["gold"])]
        for form, part in disagree.groupby("form_id", sort=True):
            first = part.iloc[0]
            notes.append(f"The checker disagrees with the paper's template on {form} ({first['logical_form']}): "
                         f"the paper states {'valid' if first['template_valid'] else 'invalid'}, the key here is "
                         f"'{first['gold']}' ({part['item_id'].nunique()} items).")
    return notes


def _other_key(frame: pd.DataFrame) -> pd.DataFrame | None:
    """The frame re-keyed by the other consequence relation, where that changes some item's answer."""
    if "gold_other" not in frame or not (frame["gold_other"].isin(["yes", "no"])).any():
        return None
    differs = frame["gold_other"].isin(["yes", "no"]) & (frame["gold_other"] != frame["gold"])
    if not differs.any():
        return None
    other = frame.copy()
    yes = other["gold_other"] == "yes"
    other.loc[differs, "soft_acc"] = other.loc[differs, "rel_p_yes"].where(yes[differs], 1 - other.loc[differs, "rel_p_yes"])
    return other




# ---------------------------------------------------------------------------- what specs add


def perplexity_correlation(section: Section, fit: rb.Fit, frame: pd.DataFrame) -> None:
    corr = metrics.correlation(frame["perplexity"], frame["soft_acc"])
    section.tables["correlation"] = pd.DataFrame([corr])


def both_keys(section: Section, fit: rb.Fit, frame: pd.DataFrame) -> None:
    """C.1: which relation keyed the items; where the other relation keys some form differently, the
    model again under that key (the paper's number and the corrected one side by side)."""
    section.notes[:0] = _keys_note(frame)
    other = _other_key(frame)
    if other is None:
        return
    relation = "local" if set(frame.get("consequence", [])) == {"global"} else "global"
    changed = sorted(frame.loc[frame["gold_other"] != frame["gold"], "form_id"].unique())
    refit = rb.fit(NECESSITATION.formula, other[list(NECESSITATION.columns)])
    section.warnings += [f"(keyed by {relation} consequence) {w}" for w in refit.warnings]
    section.tables[f"emmeans_modality_{relation}_key"] = rb.emmeans(refit, "~ modality")
    section.tables[f"pairs_modality_{relation}_key"] = rb.pairs(refit, "~ modality")
    section.notes.append(
        f"The two consequence relations key {', '.join(changed)} differently, so the model is fitted "
        f"under both keys: the tables above use the items' key, the '{relation}_key' tables re-key those "
        f"forms by {relation} consequence (soft accuracy becomes 1 − soft accuracy there). Under local "
        "consequence {p} ⊢ □p is invalid, so □'s soft accuracy reverses.")


def affirmation_refit(section: Section, fit: rb.Fit, frame: pd.DataFrame) -> None:
    """C.2: the same model on relative p(Yes); the keys; the ◇ theorem that is not one."""
    yes = rb.fit(DISTRIBUTION.formula.replace("soft_acc", "rel_p_yes", 1), frame[list(DISTRIBUTION.columns)])
    section.warnings += [f"(relative p(Yes) model) {w}" for w in yes.warnings]
    section.tables["rel_p_yes_pairs_argform_by_modality"] = rb.pairs(yes, "~ argform | modality")
    section.notes += _keys_note(frame)
    theorem = frame[(frame["modality"] == "dia") & (frame["argform"] == "theorem")]
    if len(theorem) and (theorem["gold"] == "no").all():
        section.notes.append(
            "Departure from the paper: Table A3 states the ◇ 'theorem' ◇(¬p→q), ◇¬p ⊢ ◇q valid, but it is "
            "invalid under local and global consequence alike (the checker's key here is 'no'), so the ◇ "
            "theorem-vs-base contrast compares an invalid form with a valid one, not two valid forms.")


# ------------------------------------------------------------------------------------- the specs

FACTORS = ("modality", "argform")  # 003's (§3.2): each needs at least two levels in a fit's data

EQ4 = ModelSpec(
    key="eq4", means_label="soft accuracy", title="Eq. (4): soft accuracy of the models on valid items",
    formula="soft_acc ~ modality + argform + perplexity_z + (1 + perplexity_z | model)",
    frame=valid_syllogism_scores, columns=("soft_acc", "modality", "argform", "perplexity_z", "model"),
    group="model", needs="valid modal-syllogism scores",
    factors=FACTORS,
    lrt=("modality", "argform", "perplexity_z"), emmeans=BY_FACTOR, hypotheses=TABLE2, random_effects=True,
    notes=("Perplexity enters as perplexity_z (z-scored over all scores in the fit). Table 2 hypotheses are "
           "one-sided tests of the marginal means, Holm-adjusted within each factor; random effects carry 99.9% "
           "CIs from their conditional SDs.",),
    extra=perplexity_correlation,
    unit=MODEL_SCORES, paper="003",
)
EQ5 = ModelSpec(
    key="eq5", means_label="relative p(Yes)", title="Eq. (5): affirmation bias (relative p(Yes)), all items",
    formula="rel_p_yes ~ modality + argform + perplexity_z + (1 + perplexity_z | model)",
    frame=syllogism_scores, columns=("rel_p_yes", "modality", "argform", "perplexity_z", "model"),
    group="model", needs="modal-syllogism scores", emmeans=BY_FACTOR,
    factors=FACTORS,
    notes=("Fitted on valid and invalid items alike (on valid items alone relative p(Yes) equals soft accuracy); "
           "0.5 marks no bias.",),
    unit=MODEL_SCORES, paper="003",
)
EQ6 = ModelSpec(
    key="eq6", means_label="P(correct)", title="Eq. (6): human accuracy on valid items (binomial GLMM)",
    formula="correct ~ modality + argform + rt_z + (1 + rt_z | participant)",
    frame=valid_syllogism_trials, columns=("correct", "modality", "argform", "rt_z", "participant"),
    group="participant", needs="kept valid modal-syllogism trials", family="binomial",
    factors=FACTORS,
    lrt=("modality", "argform", "rt_z"), emmeans=BY_FACTOR, hypotheses=TABLE2, paper="003",
    notes=("RT enters as rt_z: log(RT in ms), z-scored over the kept trials. Marginal means are on the "
           "probability scale; hypotheses on the logit scale.",),
    unit=("one kept trial; a participant's trials are one cluster (random intercept and RT slope by "
          "participant, as Eq. 6 writes it)."),
)
NECESSITATION = ModelSpec(
    key=NECESSITATION_DESIGN, title="Appendix C.1: necessitation",
    formula="soft_acc ~ modality + perplexity_z + (1 + perplexity_z | model)",
    frame=necessitation_scores, columns=("soft_acc", "modality", "perplexity_z", "model"),
    group="model", needs="necessitation scores", factors=("modality",),
    precheck=partial(has_design, NECESSITATION_DESIGN, "Appendix C.1"),
    emmeans=(("emmeans_modality", "~ modality"),), pairs=(("pairs_modality", "~ modality"),),
    extra=both_keys,
    unit=MODEL_SCORES, paper="003",
)
DISTRIBUTION = ModelSpec(
    key="distribution", title="Appendix C.2: distribution of modalities",
    formula="soft_acc ~ modality * argform + perplexity_z + (1 + perplexity_z | model)",
    frame=distribution_scores, columns=("soft_acc", "rel_p_yes", "modality", "argform", "perplexity_z", "model"),
    group="model", needs="modal-distribution scores", precheck=partial(has_design, DISTRIBUTION_DESIGN, "Appendix C.2"),
    factors=FACTORS,
    emmeans=(("emmeans", "~ argform | modality"),),
    pairs=(("pairs_argform_by_modality", "~ argform | modality"), ("pairs_modality_by_argform", "~ modality | argform")),
    notes=("The ∅ base form has no theorem/spurious counterpart, so the interaction model uses □ and ◇ items; the "
           "second table set refits with relative p(Yes).",),
    extra=affirmation_refit,
    unit=MODEL_SCORES, paper="003",
)
AGENTS = ModelSpec(
    key="agents", title="Humans and models in one model",
    formula="correct ~ agent * (modality + argform) + (1 | respondent) + (1 | interpretation)",
    frame=agent_rows, columns=("agent", "respondent", "interpretation", "modality", "argform", "correct"),
    group="interpretation", needs="answers", family="binomial", fast=True, precheck=humans_and_models,
    factors=FACTORS,
    emmeans=(("emmeans_agent", "~ agent"), ("emmeans_agent_by_modality", "~ agent | modality"),
             ("emmeans_agent_by_argform", "~ agent | argform")),
    versus=(("model_vs_human_by_modality", "agent", "modality"), ("model_vs_human_by_argform", "agent", "argform")),
    notes=("Fitted with nAGQ = 0 (fixed effects inside PIRLS; unless separation calls for the safe fit above): with "
           "one fixed effect per agent × level the Laplace fit takes minutes; estimates differ little at this size.",
           "Contrasts are differences in probability correct (model − human); the note on multiple comparisons says "
           "which contrasts each Holm adjustment runs over."),
    unit=("one answer: a person's answer to an item, or a model's decision on it. Answers are clustered by "
          "respondent (a random intercept per participant; each model configuration is one more level) and by "
          "interpretation (a random intercept per interpretation, crossed with respondents)."),
    extra=partial(versus.state_sides, who="respondent"), humans_vs_models=True,
    paper="003",  # an agent always right or always wrong: fit_spec says so and fits it with blme (issue 25)
)
# The report's model sections by key (common.registry: a key declared twice raises), in the
# report's order; AGENTS, the longest fit, runs in a second process where one is worth it.
SECTIONS: Registry[ModelSpec] = Registry("report section")
for _spec in (EQ4, EQ5, EQ6, NECESSITATION, DISTRIBUTION, AGENTS):
    SECTIONS.add(_spec.key, _spec)
SPECS = tuple(SECTIONS.values())


# One call per analysis, for callers that hold the frames separately (tests, benchmarks).
def eq4(scores: pd.DataFrame) -> Section:
    return fit_spec(EQ4, StudyFrames(scores=scores))


def eq5(scores: pd.DataFrame) -> Section:
    return fit_spec(EQ5, StudyFrames(scores=scores))


def eq6(trials: pd.DataFrame) -> Section:
    return fit_spec(EQ6, StudyFrames(scores=pd.DataFrame(), kept=trials))


def necessitation(scores: pd.DataFrame) -> Section:
    return fit_spec(NECESSITATION, StudyFrames(scores=scores))


def distribution(scores: pd.DataFrame) -> Section:
    return fit_spec(DISTRIBUTION, StudyFrames(scores=scores))


def agents(trials: pd.DataFrame, scores: pd.DataFrame) -> Section:
    return fit_spec(AGENTS, StudyFrames(scores=scores, kept=trials))

