"""The report's multiple-choice section (issue 7, seed 001): Accuracy, Circular, PartialCircular and
PC_α by question type for humans and each model, position bias, and variation across repeated runs.

A function of tidy frames (analysis.frames): `scores` (the runs analysis.runs uses), `trials` (after
exclusions) and `runs` (the multiple-choice scores of every done, complete run of each configuration in
use, frames.mc_runs_frame: several complete runs of one configuration are the point of Table 2).
"""
from __future__ import annotations

import pandas as pd

from analysis import like_for_like
from analysis.metrics import bootstrap_mean
from analysis.sections import Section, per_respondent

from . import metrics as mc

ALPHAS = (0.5,)  # Appendix F's α shown beside PartialCircular (α = 1) and plain c/4 (α = 0 is not needed)
COLUMNS = ["respondent", "type", "measure", "n", "estimate", "ci_low", "ci_high"]


def _mc(frame: pd.DataFrame) -> pd.DataFrame:
    if frame is None or frame.empty or "kind" not in frame:
        return pd.DataFrame(columns=[] if frame is None else frame.columns)
    part = frame[(frame["kind"] == "multiple_choice") & frame["pair_role"].map(lambda r: mc.shift_of(r) is not None)]
    return part.assign(qtype=part["form_id"].fillna("").astype(str))


def _rows(respondent: str, found: list[mc.Instance], cluster: bool) -> list[tuple]:
    return [(respondent, qtype, e.measure, e.n, e.estimate, e.low, e.high)
            for qtype, e in mc.by_type(found, alphas=ALPHAS, cluster=cluster)]


def model_metrics(scores: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    rows, notes = [], []
    for model, part in scores.groupby("model", sort=True):
        found, incomplete = mc.instances(part, answer="decision", respondent="run_id")
        rows += _rows(model, found, cluster=False)
        if incomplete:
            notes.append(f"{model}: {incomplete} question(s) without a score for every mutant were left out.")
    return pd.DataFrame(rows, columns=COLUMNS), notes


def human_metrics(trials: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """Accuracy on the original order (rot0 trials) and on every order shown (participants resampled);
    Circular and PartialCircular where a participant answered all four mutants of a question."""
    if trials.empty:
        return pd.DataFrame(columns=COLUMNS), []
    answered = trials[trials["answer"].isin(mc.LETTERS)]
    rows = []
    for qtype, part in [("all", answered), *((t, g) for t, g in answered.groupby("qtype", sort=True) if t)]:
        for measure, subset in (("accuracy", part[part["pair_role"] == "rot0"]), ("accuracy_any_order", part)):
            if len(subset):
                mean, low, high = bootstrap_mean(subset["correct"], subset["participant"])
                rows.append(("human", qtype, measure, len(subset), mean, low, high))
    found, _ = mc.instances(answered, answer="answer", respondent="participant")
    notes = []
    if found:
        rows += [r for r in _rows("human", found, cluster=True) if r[2] != "accuracy"]
    else:
        notes.append("Humans: Circular and PartialCircular need one participant's answers to all four mutants of "
                     'a question (study setting multiple_choice.all_mutants); participants saw one mutant each.')
    return pd.DataFrame(rows, columns=COLUMNS), notes


def position_bias(scores: pd.DataFrame, trials: pd.DataFrame) -> pd.DataFrame:
    """How often each letter is chosen, and accuracy by the gold letter's position (every mutant)."""
    parts = [(model, part, "decision") for model, part in scores.groupby("model", sort=True)] if len(scores) else []
    if len(trials):
        parts.append(("human", trials[trials["answer"].isin(mc.LETTERS)], "answer"))
    rows = []
    for who, part, column in parts:
        for letter in mc.LETTERS:
            chosen = float((part[column] == letter).mean()) if len(part) else float("nan")
            gold = part[part["gold"] == letter]
            rows.append((who, letter, chosen, len(gold), float((gold[column] == letter).mean()) if len(gold) else float("nan")))
    return pd.DataFrame(rows, columns=["respondent", "letter", "share_chosen", "n_gold_here", "accuracy_gold_here"])


def run_table(runs: pd.DataFrame) -> pd.DataFrame:
    """Per run: overall Accuracy, Circular and PartialCircular; then the CV across runs (Table 2)."""
    per_run = []
    for (model, run_id), part in runs.groupby(["model", "run_id"], sort=True):
        found, _ = mc.instances(part, answer="decision", respondent="run_id")
        for e in mc.summarise(found, alphas=()):
            per_run.append((model, run_id, e.measure, e.estimate))
    return mc.run_variation(pd.DataFrame(per_run, columns=["model", "run_id", "measure", "estimate"]))


def state_sides(section: Section, scores: pd.DataFrame, trials: pd.DataFrame) -> None:
    """What each side of the section holds (issue 44 item 3): people's and each model's questions' option orders,
    answers and participants (analysis/like_for_like.py `sides`, the one wording). Circular and PartialCircular
    need a question's four orders, so the models' side here holds every order they answered, not only the
    orders people were shown: Table 1 and the humans-vs-models model are the like-for-like comparisons."""
    if scores.empty or trials.empty or "item_id" not in scores or "item_id" not in trials:
        return
    table = like_for_like.sides(trials, scores)
    section.tables["sides"] = table
    said = "; ".join(like_for_like.side_words(r) for r in table.itertuples())
    section.notes.insert(0, f"What each side holds (items are option orders of a question): {said}. The models' side "
                            "holds every order they answered (Circular and PartialCircular need all four), people's "
                            "the orders they were shown: the two sides answered different items here; Table 1 and the "
                            "humans-vs-models comparison put models on the items people could be shown.")


def sections(scores: pd.DataFrame, trials: pd.DataFrame, runs: pd.DataFrame | None = None) -> list[Section]:
    """[] for a study without multiple-choice items; else the one section."""
    scores, trials, runs = _mc(scores), _mc(trials), _mc(runs)
    if scores.empty and trials.empty:
        return []
    section = Section("multiple_choice", "Multiple choice (001): Accuracy, Circular, PartialCircular")
    models, notes = model_metrics(scores) if len(scores) else (pd.DataFrame(columns=COLUMNS), [])
    humans, human_notes = human_metrics(trials)
    section.unit = ("a question for models (95% percentile-bootstrap intervals resampling questions; Circular and "
                    "PartialCircular score a question's four mutants together); a participant for people (participants "
                    "resampled, so a person's answers stay together).")
    metrics = pd.concat([t for t in (models, humans) if len(t)] or [models], ignore_index=True)
    per_respondent(section, "metrics", metrics)  # one table per respondent: the page's row cap never hides a model
    section.tables["position_bias"] = position_bias(scores, trials)
    state_sides(section, scores, trials)
    variation = run_table(runs) if len(runs) else pd.DataFrame()
    if len(variation):
        section.tables["run_variation"] = variation
    section.notes += [
        "Accuracy: correct on the original option order. Circular: correct on all four circular mutants. "
        "PartialCircular (001 Eq. 2): c/4 · (1 + Σ p(o) log₄ p(o)), c the mutants answered correctly, p the "
        f"frequency of each predicted option over the four mutants; pc_alpha_α (Appendix F) with α = "
        f"{', '.join(f'{a:g}' for a in ALPHAS)}. 95% percentile-bootstrap CIs (questions resampled; "
        "participants resampled for humans). A model's answer is its likeliest letter.",
        *notes, *human_notes,
    ]
    if len(variation):
        section.notes.append("run_variation: coefficient of variation (SD with divisor n / mean × 100) of each "
                             "measure across every done, complete run of a configuration (001 Table 2; partial "
                             "(item-limited) runs never; 'What went in' marks these runs run_variation).")
    return [section]
