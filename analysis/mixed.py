"""The mixed-effects analyses of paper 003 (Eq. 4–6, Appendix C) and the human-vs-model model.

Each analysis is a function of tidy frames returning a `Section`: formula, tables, fit statistics,
warnings and notes. A section without enough data says why (`absent`) instead of failing.
R is reached only through analysis.rbridge.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field

import pandas as pd
from scipy import stats

from . import metrics, prep
from . import rbridge as rb

Z_999 = float(stats.norm.ppf(0.9995))
MODALITY_HYPOTHESES = [("none", "dia"), ("box", "none"), ("box", "dia")]  # Table 2: a < b
ARGFORM_HYPOTHESES = [("DS", "MP"), ("MT", "MP"), ("MT", "DS")]


@dataclass
class Section:
    key: str
    title: str
    formula: str = ""
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    stats: dict[str, float] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    absent: str = ""
    n_obs: int = 0
    data: pd.DataFrame | None = None  # the exact frame the main model was fitted on
    figures: dict[str, bytes] = field(default_factory=dict)


def run_section(function, *args) -> Section:
    """Run one analysis; an R failure becomes the section's stated reason, not a crash."""
    try:
        return function(*args)
    except rb.RUnavailable as error:  # R missing: the section says so; the rest of the report goes on
        return Section(function.__name__, function.__doc__.splitlines()[0], absent=str(error))
    except Exception as error:  # an R error inside a fit: reported, the rest of the report goes on
        if type(error).__name__ != "RRuntimeError":
            raise
        return Section(function.__name__, function.__doc__.splitlines()[0],
                       absent=f"R stopped with an error: {str(error).strip()}")


# Below this many rows (trials + scores) the human-vs-model fit takes less than a second process
# costs to start (Python's imports and R's packages: 3–5 s of CPU), so it runs in the caller.
PARALLEL_MIN_ROWS = 5_000


def processes_default() -> int:
    """DUET_ANALYSIS_PROCESSES, else 2 on a machine with two or more CPUs (one R per process)."""
    text = os.environ.get("DUET_ANALYSIS_PROCESSES", "").strip()
    if text:
        if not text.isdigit() or int(text) < 1:
            raise ValueError(f"DUET_ANALYSIS_PROCESSES must be a whole number ≥ 1, not '{text}'.")
        return int(text)
    return 2 if (os.cpu_count() or 1) >= 2 else 1


class RProcess:
    """A second process with its own R, for an analysis run beside the caller's work (R and threads
    do not mix, so parallel fits mean processes). Started as early as possible: the process is
    spawned — never forked, a forked embedded R is not safe — and loads R while the caller reads its
    data. With fewer than two `processes` (default processes_default()), or where no child process
    can be started (e.g. inside a daemonic worker), nothing starts and `submit` runs the analysis
    in the caller when its result is asked for. Same Section either way."""

    @classmethod
    def for_rows(cls, n_trials: int, n_scores: int) -> "RProcess":
        """The helper for a study of this size: a second process only when there are both humans and
        models and at least PARALLEL_MIN_ROWS rows between them."""
        worth = n_trials > 0 and n_scores > 0 and n_trials + n_scores >= PARALLEL_MIN_ROWS
        return cls(processes=None if worth else 1)

    def __init__(self, *, processes: int | None = None):
        self._pool = None
        if (processes or processes_default()) < 2:
            return
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        try:
            self._pool = ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn"))
            self._pool.submit(rb.available)  # loads R there now; a failure shows in the analysis later
        except (AssertionError, OSError, RuntimeError):  # no child processes here
            self.close()

    @property
    def where(self) -> str:
        return "second process" if self._pool is not None else "this process"

    def submit(self, function, *args) -> "Pending":
        future = self._pool.submit(run_section, function, *args) if self._pool is not None else None
        return Pending(function, args, future)

    def __enter__(self) -> "RProcess":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
        self._pool = None


@dataclass
class Pending:
    function: object
    args: tuple
    future: object = None

    def result(self) -> Section:
        if self.future is not None:
            from concurrent.futures.process import BrokenProcessPool

            try:
                return self.future.result()
            except BrokenProcessPool:  # the process died (killed, out of memory): once more, here
                pass
        return run_section(self.function, *self.args)


def _lacks(frame: pd.DataFrame, group: str, minimum: int, what: str) -> str:
    count = frame[group].nunique() if len(frame) else 0
    if count < minimum:
        return f"needs {what} from at least {minimum} {group}s (random effects by {group}); found {count}"
    return ""


def _levels_missing(frame: pd.DataFrame, factors: list[str]) -> str:
    for factor in factors:
        present = frame[factor].nunique() if len(frame) else 0
        if present < 2:
            return f"the factor '{factor}' has {present} level(s) in the data; it needs at least 2"
    return ""


def _record_fit(section: Section, fit: rb.Fit, data: pd.DataFrame) -> None:
    section.data = data
    section.n_obs = fit.n_obs
    section.warnings += fit.warnings
    if len(fit.attempts) > 1:
        section.notes.append(f"Optimizers tried: {', '.join(fit.attempts)}; kept {fit.optimizer}.")
    section.tables["coefficients"] = fit.coefs
    section.tables["random_variances"] = fit.variances
    section.stats.update({f"r2_{k}": v for k, v in rb.r2(fit).items()})
    section.stats["n_obs"] = fit.n_obs
    for group, count in fit.groups.items():
        section.stats[f"n_{group}"] = count


def _record_lrt(section: Section, fit: rb.Fit, terms: list[str]) -> None:
    """The likelihood-ratio tests; warnings of their refits join the section's warnings."""
    table = rb.lrt(fit, terms)
    section.tables["lrt"] = table
    section.warnings += rb.lrt_warnings(table)


def _hypotheses(fit: rb.Fit, frame: pd.DataFrame, factor: str, pairs) -> pd.DataFrame | None:
    present = set(frame[factor].astype(str))
    usable = [(a, b) for a, b in pairs if a in present and b in present]
    if not usable:
        return None
    table = rb.hypotheses(fit, factor, usable)
    table.insert(0, "factor", factor)
    return table


def random_effects_table(fit: rb.Fit, level_z: float = Z_999) -> pd.DataFrame:
    """Per-group conditional modes with CIs (default 99.9%) and the mixed effect (fixed + random)."""
    table = rb.random_effects(fit)
    fixed = dict(zip(fit.coefs["term"], fit.coefs["Estimate"]))
    table["fixed"] = table["term"].map(fixed).astype(float)
    table["ci_low"] = table["condval"] - level_z * table["condsd"]
    table["ci_high"] = table["condval"] + level_z * table["condsd"]
    table["mixed"] = table["fixed"] + table["condval"]
    table["mixed_ci_low"] = table["fixed"] + table["ci_low"]
    table["mixed_ci_high"] = table["fixed"] + table["ci_high"]
    return table.rename(columns={"condval": "random", "condsd": "random_sd"})


def eq4(scores: pd.DataFrame, *, outcome: str = "soft_acc") -> Section:
    """Eq. (4): soft accuracy on valid items by modality, argument form and perplexity."""
    title = "Eq. (4): soft accuracy of the models on valid items"
    formula = f"{outcome} ~ modality + argform + perplexity_z + (1 + perplexity_z | model)"
    section = Section("eq4", title, formula)
    frame = prep.syllogism_scores(scores, valid_only=True) if len(scores) else scores
    section.absent = (_lacks(frame, "model", 2, "valid modal-syllogism scores")
                      or _levels_missing(frame, ["modality", "argform"]))
    if section.absent:
        return section
    data = frame[[outcome, "modality", "argform", "perplexity_z", "model"]]
    fit = rb.fit(formula, data)
    _record_fit(section, fit, data)
    _record_lrt(section, fit, ["modality", "argform", "perplexity_z"])
    section.tables["emmeans_modality"] = rb.emmeans(fit, "~ modality")
    section.tables["emmeans_argform"] = rb.emmeans(fit, "~ argform")
    found = [t for t in (_hypotheses(fit, frame, "modality", MODALITY_HYPOTHESES),
                         _hypotheses(fit, frame, "argform", ARGFORM_HYPOTHESES)) if t is not None]
    if found:
        section.tables["hypotheses"] = pd.concat(found, ignore_index=True)
    section.tables["random_effects"] = random_effects_table(fit)
    corr = metrics.correlation(frame["perplexity"], frame[outcome])
    section.tables["correlation"] = pd.DataFrame([corr])
    section.notes.append("Perplexity enters as perplexity_z (z-scored over all scores in the fit). "
                         "Table 2 hypotheses are one-sided tests of the marginal means, Holm-adjusted "
                         "within each factor; random effects carry 99.9% CIs from their conditional SDs.")
    return section


def eq5(scores: pd.DataFrame) -> Section:
    """Eq. (5): relative p(Yes) on all modal-syllogism items (affirmation bias)."""
    formula = "rel_p_yes ~ modality + argform + perplexity_z + (1 + perplexity_z | model)"
    section = Section("eq5", "Eq. (5): affirmation bias (relative p(Yes)), all items", formula)
    frame = prep.syllogism_scores(scores, valid_only=False) if len(scores) else scores
    section.absent = (_lacks(frame, "model", 2, "modal-syllogism scores")
                      or _levels_missing(frame, ["modality", "argform"]))
    if section.absent:
        return section
    data = frame[["rel_p_yes", "modality", "argform", "perplexity_z", "model"]]
    fit = rb.fit(formula, data)
    _record_fit(section, fit, data)
    section.tables["emmeans_modality"] = rb.emmeans(fit, "~ modality")
    section.tables["emmeans_argform"] = rb.emmeans(fit, "~ argform")
    section.notes.append("Fitted on valid and invalid items alike (on valid items alone relative "
                         "p(Yes) equals soft accuracy); 0.5 marks no bias.")
    return section


def eq6(trials: pd.DataFrame) -> Section:
    """Eq. (6): human accuracy on valid items, binomial GLMM with log-RT slopes per participant."""
    formula = "correct ~ modality + argform + rt_z + (1 + rt_z | participant)"
    section = Section("eq6", "Eq. (6): human accuracy on valid items (binomial GLMM)", formula)
    frame = prep.syllogism_trials(trials, valid_only=True) if len(trials) else trials
    section.absent = (_lacks(frame, "participant", 2, "kept valid modal-syllogism trials")
                      or _levels_missing(frame, ["modality", "argform"]))
    if section.absent:
        return section
    data = frame[["correct", "modality", "argform", "rt_z", "participant"]]
    fit = rb.fit(formula, data, family="binomial")
    _record_fit(section, fit, data)
    _record_lrt(section, fit, ["modality", "argform", "rt_z"])
    section.tables["emmeans_modality"] = rb.emmeans(fit, "~ modality", response=True)
    section.tables["emmeans_argform"] = rb.emmeans(fit, "~ argform", response=True)
    found = [t for t in (_hypotheses(fit, frame, "modality", MODALITY_HYPOTHESES),
                         _hypotheses(fit, frame, "argform", ARGFORM_HYPOTHESES)) if t is not None]
    if found:
        section.tables["hypotheses"] = pd.concat(found, ignore_index=True)
    section.notes.append("RT enters as rt_z: log(RT in ms), z-scored over the kept trials. Marginal "
                         "means are on the probability scale; hypotheses on the logit scale.")
    return section


def _design_scores(scores: pd.DataFrame, design: str) -> pd.DataFrame:
    frame = scores[(scores["design"] == design) & (scores["condition"] == "real")] if len(scores) else scores
    if not len(frame):
        return frame
    frame = prep.code_factors(frame.dropna(subset=["soft_acc", "perplexity"]))
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


def necessitation(scores: pd.DataFrame) -> Section:
    """Appendix C.1: {φ} ⊢ Mφ by modality (argument form constant)."""
    formula = "soft_acc ~ modality + perplexity_z + (1 + perplexity_z | model)"
    section = Section("necessitation", "Appendix C.1: necessitation", formula)
    frame = _design_scores(scores, "necessitation")
    section.absent = (_lacks(frame, "model", 2, "necessitation scores")
                      or _levels_missing(frame, ["modality"]))
    if section.absent:
        return section
    section.notes += _keys_note(frame)
    data = frame[["soft_acc", "modality", "perplexity_z", "model"]]
    fit = rb.fit(formula, data)
    _record_fit(section, fit, data)
    section.tables["emmeans_modality"] = rb.emmeans(fit, "~ modality")
    section.tables["pairs_modality"] = rb.pairs(fit, "~ modality")
    other = _other_key(frame)
    if other is not None:
        relation = "local" if set(frame.get("consequence", [])) == {"global"} else "global"
        changed = sorted(frame.loc[frame["gold_other"] != frame["gold"], "form_id"].unique())
        refit = rb.fit(formula, other[["soft_acc", "modality", "perplexity_z", "model"]])
        section.warnings += [f"(keyed by {relation} consequence) {w}" for w in refit.warnings]
        section.tables[f"emmeans_modality_{relation}_key"] = rb.emmeans(refit, "~ modality")
        section.tables[f"pairs_modality_{relation}_key"] = rb.pairs(refit, "~ modality")
        section.notes.append(
            f"The two consequence relations key {', '.join(changed)} differently, so the model is fitted "
            f"under both keys: the tables above use the items' key, the '{relation}_key' tables re-key those "
            f"forms by {relation} consequence (soft accuracy becomes 1 − soft accuracy there). Under local "
            "consequence {p} ⊢ □p is invalid, so □'s soft accuracy reverses.")
    return section


def distribution(scores: pd.DataFrame) -> Section:
    """Appendix C.2: distribution forms (base/theorem/spurious) × modality (□, ◇), with interaction."""
    formula = "soft_acc ~ modality * argform + perplexity_z + (1 + perplexity_z | model)"
    section = Section("distribution", "Appendix C.2: distribution of modalities", formula)
    frame = _design_scores(scores, "modal-distribution")
    if len(frame):
        frame = frame[frame["modality"].isin(["box", "dia"])]
        frame["modality"] = frame["modality"].cat.remove_unused_categories()
    section.absent = (_lacks(frame, "model", 2, "modal-distribution scores")
                      or _levels_missing(frame, ["modality", "argform"]))
    if section.absent:
        return section
    data = frame[["soft_acc", "rel_p_yes", "modality", "argform", "perplexity_z", "model"]]
    fit = rb.fit(formula, data)
    _record_fit(section, fit, data)
    section.tables["emmeans"] = rb.emmeans(fit, "~ argform | modality")
    section.tables["pairs_argform_by_modality"] = rb.pairs(fit, "~ argform | modality")
    section.tables["pairs_modality_by_argform"] = rb.pairs(fit, "~ modality | argform")
    yes = rb.fit(formula.replace("soft_acc", "rel_p_yes", 1), data)
    section.warnings += [f"(relative p(Yes) model) {w}" for w in yes.warnings]
    section.tables["rel_p_yes_pairs_argform_by_modality"] = rb.pairs(yes, "~ argform | modality")
    section.notes.append("The ∅ base form has no theorem/spurious counterpart, so the interaction "
                         "model uses □ and ◇ items; the second table set refits with relative p(Yes).")
    section.notes += _keys_note(frame)
    theorem = frame[(frame["modality"] == "dia") & (frame["argform"] == "theorem")]
    if len(theorem) and (theorem["gold"] == "no").all():
        section.notes.append(
            "Departure from the paper: Table A3 states the ◇ 'theorem' ◇(¬p→q), ◇¬p ⊢ ◇q valid, but it is "
            "invalid under local and global consequence alike (the checker's key here is 'no'), so the ◇ "
            "theorem-vs-base contrast compares an invalid form with a valid one, not two valid forms.")
    return section


def agents(trials: pd.DataFrame, scores: pd.DataFrame) -> Section:
    """Beyond the paper: humans and models in one binomial GLMM (a model answers greedily)."""
    formula = "correct ~ agent * (modality + argform) + (1 | respondent) + (1 | interpretation)"
    section = Section("agents", "Humans and models in one model", formula)
    if not len(trials) or not len(scores):
        section.absent = "needs both human trials and model scores on the modal syllogisms"
        return section
    frame = prep.agent_frame(trials, scores)
    if frame["agent"].nunique() < 2 or (frame["agent"] == "human").sum() == 0:
        section.absent = "needs both human trials and model scores on the modal syllogisms"
        return section
    section.absent = (_levels_missing(frame, ["modality", "argform"])
                      or _lacks(frame, "interpretation", 2, "answers"))
    if section.absent:
        return section
    data = frame
    fit = rb.fit(formula, data, family="binomial", fast=True)
    _record_fit(section, fit, data)
    section.tables["emmeans_agent"] = rb.emmeans(fit, "~ agent", response=True)
    section.tables["emmeans_agent_by_modality"] = rb.emmeans(fit, "~ agent | modality", response=True)
    section.tables["emmeans_agent_by_argform"] = rb.emmeans(fit, "~ agent | argform", response=True)
    section.tables["model_vs_human_by_modality"] = rb.versus_reference(fit, "agent", "modality")
    section.tables["model_vs_human_by_argform"] = rb.versus_reference(fit, "agent", "argform")
    section.notes.append("Fitted with nAGQ = 0 (fixed effects inside PIRLS): with one fixed effect per "
                         "agent × level the Laplace fit takes minutes; estimates differ little at this size.")
    section.notes.append("Contrasts are differences in probability correct (model − human), "
                         "Holm-adjusted within each modality / argument form.")
    rates = frame.groupby("agent", observed=True)["correct"].mean()
    if rates.isin([0.0, 1.0]).any():
        section.notes.append("Some agent is always or never correct: its estimates sit on the boundary.")
    return section
