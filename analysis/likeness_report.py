"""The report's section "How human-like is each model" (issue 35 item 5): tables/human_likeness.csv, one row
per model configuration, a figure per model, and its recomputation in reproduce.R / reproduce.py.

The people's side is the human rows of the humans-vs-models comparison (metrics.analysed_rows of the trials
kept after the exclusions: what analysis/versus.py and paper 003's agents model read for people); the models'
side is each configuration's scores on the items people could be shown (like_for_like.models_like_people: the
study's items_people_can_be_shown, issue 44 item 2), joined to the people's answers by item id. The maths is
analysis/likeness.py (no Django, no R).
"""
from __future__ import annotations

import pandas as pd

from . import like_for_like, likeness, metrics, plots
from .sections import Section, StudyFrames

KEY = "human_likeness"
TITLE = "How human-like is each model: item choices, errors and the likelihood of people's answers"
FRAME = f"data/model_frames/{KEY}.csv"
SPLITS_FILE = f"data/model_frames/{KEY}_splits.csv"
UNIT = ("choice_r and the ceiling: an item (its share of people giving the target answer), with participants and "
        "items resampled together for the intervals (a participant's copies always fall in one half of a split); "
        "error consistency: a participant (κ per participant, participants resampled); log-likelihoods: an answer, "
        "averaged (a description, no interval).")


def people_rows(frames: StudyFrames) -> pd.DataFrame:
    """The people's answers the section reads: the human rows of the humans-vs-models comparison."""
    return metrics.analysed_rows(frames.kept, frames.analysed)


def sections(frames: StudyFrames, *, splits: int = likeness.SPLITS, resamples: int = likeness.RESAMPLES,
             seed: int = likeness.SEED) -> list[Section]:
    return [section(frames, splits=splits, resamples=resamples, seed=seed)]


def section(frames: StudyFrames, *, splits: int = likeness.SPLITS, resamples: int = likeness.RESAMPLES,
            seed: int = likeness.SEED) -> Section:
    out = Section(KEY, TITLE, unit=UNIT)
    people = people_rows(frames)
    if not len(people) or not len(frames.scores):
        out.absent = "needs both human trials and model scores"
        return out
    frame, left = likeness.answer_frame(people, like_for_like.models_like_people(frames.scores, frames.shown, people))
    if frame.empty:
        out.absent = "no model configuration has a score on the items people answered"
        return out
    halves = likeness.split_halves(frame["participant"], splits=splits, seed=seed)
    table = likeness.table(frame, halves, resamples=resamples, seed=seed)
    out.tables[KEY] = table
    out.data, out.data_files = frame, {"splits": halves}
    out.scripts = {"R": R_SCRIPT, "python": PY_SCRIPT}
    out.notes += _notes(people, table, left, splits=splits, resamples=resamples, seed=seed)
    absent = sorted(set(frames.scores["model"].astype(str)) - set(table["model"]))
    if absent:
        out.notes.append(f"No score on any item people answered, so no row: {', '.join(absent)}.")
    for row in table.itertuples():
        out.figures[f"choice_{row.model}"] = plots.choice_scatter(frame[frame["model"] == row.model], row._asdict())
    return out


def _notes(people: pd.DataFrame, table: pd.DataFrame, left: likeness.Left, *, splits: int, resamples: int,
           seed: int) -> list[str]:
    multiple = "kind" in people and (people["kind"] == likeness.MULTIPLE_CHOICE).any()
    notes = [
        "Over the people's answers to the items the humans-vs-models comparison keeps for people (after the "
        "exclusions), each joined to the model configuration's score on the same item. The target answer is yes"
        + ("; on a multiple-choice item the gold option: its share is the share of people choosing the gold option "
           "and the model's probability its relative probability of the gold letter (over the four letters)."
           if multiple else "."),
        "choice_r: Pearson r across items between the share of people giving the target answer and the model's "
        "relative p(Yes) = p(Yes) / (p(Yes) + p(No)). ceiling: the people's split-half reliability of those shares "
        "(participants split at random into halves, r between the halves' shares over the items both answered, "
        "Spearman–Brown corrected 2r / (1 + r), the mean over the splits): how closely a second group of as many "
        "people would be expected to agree with these shares. A model cannot be expected to exceed it: "
        "choice_r_over_ceiling = choice_r / ceiling near 1 means the model predicts the item shares as well as "
        "people predict each other. Only a model closer to the population's shares than a second sample of people "
        "could pass it, and no predictor can be expected to pass √ceiling, about the correlation of the observed "
        "shares with their population values.",
        "error_consistency (Geirhos et al. 2020): per participant, Cohen's κ between their correct/incorrect and "
        "the model's decision being correct on the same items, κ = (c_obs − c_exp) / (1 − c_exp), c_exp = p·q + "
        "(1 − p)(1 − q) from the two accuracies; 0 means no more shared errors than their accuracies predict, "
        "1 the same errors. The mean over participants.",
        "loglik_per_answer (as Centaur reports it, Binz et al. 2025): the mean natural log of the model's relative "
        "probability of each answer people gave (nats per answer; 0 is perfect, higher is better); loglik_base: "
        "the same under the people's base rate (the share of all answers giving that answer). A model above "
        "loglik_base predicts the answers better than knowing only how often people said yes.",
        f"Randomness: {splits} random splits and {resamples} bootstrap resamples, seed {seed} (numpy "
        f"default_rng); 95% percentile intervals; each resample's ceiling averages the first "
        f"{min(splits, likeness.BOOTSTRAP_SPLITS)} splits. The splits are in {SPLITS_FILE}, the answers in {FRAME}; "
        "reproduce.R and reproduce.py recompute every point estimate of the table from them.",
        "Edge cases: an item everyone answered alike keeps its share (0 or 1); a decision 'other' (neither answer) "
        "counts as an error for error consistency (it is not the gold answer) while choice_r and the "
        "log-likelihoods read the relative probabilities; a participant whose expected agreement is 1 (they and "
        "the model both right on every shared item, or both wrong) has no κ and is left out of the mean and its "
        f"bootstrap (kappa_participants counts those with one); a probability below {likeness.EPS:g} counts as "
        f"{likeness.EPS:g} in the log-likelihood (clipped counts them); a correlation over fewer than 3 items or "
        "with no variance is left blank.",
    ]
    if left.no_choice:
        notes.append(f"Left out: {left.no_choice} answer(s) without a choice (timed out).")
    unscored = {m: n for m, n in (left.unscored or {}).items() if n}
    if unscored:
        notes.append("Left out, per model, people's answers to items it has no score (or no probability) for: "
                     + ", ".join(f"{m}: {n}" for m, n in unscored.items()) + ".")
    return notes


R_SCRIPT = f'''
# ---- {KEY}: {TITLE}
# Point estimates of tables/{KEY}.csv from {FRAME} and the splits in {SPLITS_FILE}; the intervals
# are the report's seeded bootstrap (seed and resamples in the table). Written to reproduced/R/{KEY}.csv.
hl <- read.csv(file.path(here, "{FRAME}"), stringsAsFactors = FALSE)
halves <- read.csv(file.path(here, "{SPLITS_FILE}"), stringsAsFactors = FALSE)
r_or_na <- function(x, y) if (length(x) < 3 || sd(x) == 0 || sd(y) == 0) NA else cor(x, y)
hl_rows <- lapply(sort(unique(hl$model)), function(model) {{
  d <- hl[hl$model == model, ]
  share <- tapply(d$chose_target, d$item_id, mean)
  p <- tapply(d$p_target, d$item_id, function(v) v[1])[names(share)]
  choice_r <- r_or_na(as.numeric(share), as.numeric(p))
  sb <- sapply(sort(unique(halves$split)), function(k) {{
    a <- d$participant %in% halves$participant[halves$split == k & halves$half == "A"]
    sa <- tapply(d$chose_target[a], d$item_id[a], mean); sb_ <- tapply(d$chose_target[!a], d$item_id[!a], mean)
    both <- intersect(names(sa), names(sb_))
    r <- if (length(both)) r_or_na(as.numeric(sa[both]), as.numeric(sb_[both])) else NA
    if (is.na(r) || r <= -1) NA else 2 * r / (1 + r)
  }})
  ceiling <- if (all(is.na(sb))) NA else mean(sb, na.rm = TRUE)
  kappa <- sapply(split(d, d$participant), function(x) {{
    p <- mean(x$correct); q <- mean(x$model_correct); e <- p * q + (1 - p) * (1 - q)
    if (1 - e <= 1e-12) NA else (mean(x$correct == x$model_correct) - e) / (1 - e)
  }})
  base <- ave(seq_len(nrow(d)), d$kind, d$answer, FUN = length) / ave(seq_len(nrow(d)), d$kind, FUN = length)
  data.frame(model = model, items = length(share), answers = nrow(d), participants = length(unique(d$participant)),
             choice_r = choice_r, ceiling = ceiling, choice_r_over_ceiling = choice_r / ceiling,
             error_consistency = mean(kappa, na.rm = TRUE), kappa_participants = sum(!is.na(kappa)),
             loglik_per_answer = mean(log(pmax(d$p_answer, {likeness.EPS!r}))),
             loglik_base = mean(log(base)))
}})
hl_table <- do.call(rbind, hl_rows)
write.csv(hl_table, file.path(out, "{KEY}.csv"), row.names = FALSE)
cat("\\n== {KEY} ==\\n"); print(hl_table)
'''

PY_SCRIPT = f'''

def human_likeness(folder=HERE, out=OUT):
    """Point estimates of tables/{KEY}.csv from {FRAME} and {SPLITS_FILE} (the intervals are the
    report's seeded bootstrap: seed and resamples are in the table), written to reproduced/python/{KEY}.csv."""
    import numpy as np

    hl = pd.read_csv(folder / "{FRAME}", float_precision="round_trip", dtype={{"participant": str}})
    halves = pd.read_csv(folder / "{SPLITS_FILE}", dtype={{"participant": str}})

    def r_or_nan(x, y):
        x, y = np.asarray(x, float), np.asarray(y, float)
        return float(np.corrcoef(x, y)[0, 1]) if len(x) >= 3 and x.std() > 0 and y.std() > 0 else float("nan")

    rows = []
    for model, d in hl.groupby("model", sort=True):
        items = d.groupby("item_id").agg(share=("chose_target", "mean"), p=("p_target", "first"))
        sb = []
        for _, split in halves.groupby("split"):
            a = d["participant"].isin(split.loc[split["half"] == "A", "participant"])
            both = pd.concat([d[a].groupby("item_id")["chose_target"].mean().rename("a"),
                              d[~a].groupby("item_id")["chose_target"].mean().rename("b")], axis=1).dropna()
            r = r_or_nan(both["a"], both["b"])
            sb.append(2 * r / (1 + r) if r > -1 else float("nan"))
        ceiling = float(np.nanmean(sb)) if not np.isnan(sb).all() else float("nan")
        kappas = []
        for _, x in d.groupby("participant"):
            p, q = x["correct"].mean(), x["model_correct"].mean()
            e = p * q + (1 - p) * (1 - q)
            agree = (x["correct"] == x["model_correct"]).mean()
            kappas.append(float("nan") if 1 - e <= 1e-12 else (agree - e) / (1 - e))
        base = d.groupby(["kind", "answer"])["answer"].transform("size") / d.groupby("kind")["answer"].transform("size")
        choice_r = r_or_nan(items["share"], items["p"])
        rows.append({{"model": model, "items": len(items), "answers": len(d),
                     "participants": d["participant"].nunique(),
                     "choice_r": choice_r, "ceiling": ceiling, "choice_r_over_ceiling": choice_r / ceiling,
                     "error_consistency": float(np.nanmean(kappas)) if not np.isnan(kappas).all() else float("nan"),
                     "kappa_participants": int((~np.isnan(kappas)).sum()),
                     "loglik_per_answer": float(np.log(np.maximum(d["p_answer"], {likeness.EPS!r})).mean()),
                     "loglik_base": float(np.log(base).mean())}})
    out.mkdir(parents=True, exist_ok=True)
    table = pd.DataFrame(rows)
    table.to_csv(out / "{KEY}.csv", index=False)
    print("\\n== {KEY} ==")
    print(table.to_string(index=False))


if __name__ == "__main__":
    human_likeness()
'''
