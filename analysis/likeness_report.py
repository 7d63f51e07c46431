"""The report's section "How human-like is each model" (issue 35 item 5): tables/human_likeness.csv, one row
per model configuration, a figure per model, and its recomputation in reproduce.R / reproduce.py.

The people's side is the human rows of the humans-vs-models comparison (metrics.analysed_rows of the trials
kept after the exclusions: what analysis/versus.py and a registered humans-vs-models model read for people); the
models' side is each configuration's scores on the items people could be shown (like_for_like.models_like_people: the
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
UNIT = ("choice_r and the ceiling: an item (its share of people giving the target answer); their intervals leave "
        "out one item at a time, the people's random halves fixed (each half distinct people); error consistency: a "
        "participant (κ per participant, participants resampled); log-likelihoods: an answer, averaged (a "
        "description, no interval).")


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
    models = like_for_like.models_like_people(frames.scores, frames.shown, people)
    frame, left = likeness.answer_frame(people, models)
    if frame.empty:
        out.absent = "no model configuration has a score on the items people answered"
        return out
    # what each side holds (issue 44 item 3): the people's answers and each model's scores the statistics read
    sides = like_for_like.sides(people[people["item_id"].isin(frame["item_id"])],
                                models[models["item_id"].isin(frame["item_id"])])
    out.tables["sides"] = sides
    out.notes.insert(0, "What each side holds: " + "; ".join(like_for_like.side_words(r) for r in sides.itertuples())
                     + ".")
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
        "A split whose halves correlate negatively is not Spearman–Brown corrected (the correction assumes halves "
        "that measure the same thing; applied to r < 0 it would exaggerate the disagreement): its r enters the "
        "mean as it is, and negative_splits counts those splits. choice_r_over_ceiling is left blank, with the "
        "reason in the reasons column, when the ceiling is not above 0 or its interval reaches 0: a ratio over a "
        "denominator that may be 0 or negative says nothing.",
        "error_consistency (Geirhos et al. 2020): per participant, Cohen's κ between their correct/incorrect and "
        "the model's decision being correct on the same items, κ = (c_obs − c_exp) / (1 − c_exp), c_obs the share "
        "of items both got right or both wrong, c_exp = p·q + (1 − p)(1 − q) from the two accuracies; 0 means no "
        "more shared errors than their accuracies predict, 1 the same errors. The mean over participants. A model "
        "with no errors on the items (or no correct answer) leaves it blank, with the reason: every participant's κ "
        "is then 0 or undefined by construction, so shared errors cannot be assessed, not 'no more than chance'.",
        "loglik_per_answer (as Centaur reports it, Binz et al. 2025): the mean natural log of the model's relative "
        "probability of each answer people gave (nats per answer; 0 is perfect, higher is better); loglik_base: "
        "the same under the people's base rate (the share of all answers giving that answer). A model above "
        "loglik_base predicts the answers better than knowing only how often people said yes.",
        "Intervals (95%). choice_r and the ceiling: the delete-one jackknife over items on Fisher's z scale — each "
        "item left out in turn and the statistic recomputed (the ceiling over the same splits), the centre "
        "atanh(estimate) less the jackknife bias, ± 1.96 jackknife standard errors, mapped back by tanh. The items "
        "are the units; the people's halves stay fixed, so each half holds distinct people, as in the estimate "
        "(resampling participants with replacement would put copies of one person in a half and bias both "
        "statistics down). Deterministic. In simulated studies with a known true value (bench/likeness_coverage.py) "
        "these intervals covered it at about their nominal rate. error_consistency: a percentile bootstrap of "
        "participants.",
        f"Randomness: {splits} random splits, and {resamples} bootstrap resamples for error_consistency's interval, "
        f"seed {seed} (numpy default_rng). The splits are in {SPLITS_FILE}, the answers in {FRAME}; reproduce.R "
        "and reproduce.py recompute every point estimate of the table and the intervals of choice_r and the ceiling "
        "from them.",
        "Edge cases: an item everyone answered alike keeps its share (0 or 1); a decision 'other' (neither answer) "
        "counts as an error for error consistency (it is not the gold answer) while choice_r and the "
        "log-likelihoods read the relative probabilities; a participant whose expected agreement is 1 (they and "
        "the model both right on every shared item, or both wrong) has no κ and is left out of the mean and its "
        "bootstrap (kappa_left_out counts them, kappa_participants those with one); a probability below "
        f"{likeness.EPS:g} counts as {likeness.EPS:g} in the log-likelihood (clipped counts them); a correlation "
        "over fewer than 3 items or with no variance is left blank. Every blank or qualified cell says why in the "
        "reasons column.",
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
# tables/{KEY}.csv from {FRAME} and the splits in {SPLITS_FILE}: every point estimate, and the
# jackknife intervals of choice_r and the ceiling (deterministic); error consistency's interval is the report's
# seeded bootstrap (seed and resamples in the table). Written to reproduced/R/{KEY}.csv.
hl <- read.csv(file.path(here, "{FRAME}"), stringsAsFactors = FALSE)
halves <- read.csv(file.path(here, "{SPLITS_FILE}"), stringsAsFactors = FALSE)
r_or_na <- function(x, y) if (length(x) < 3 || sd(x) == 0 || sd(y) == 0) NA else cor(x, y)
sb_or_r <- function(r) if (is.na(r)) NA else if (r < 0) r else 2 * r / (1 + r)  # a negative r uncorrected
mean_or_na <- function(v) if (all(is.na(v))) NA else mean(v, na.rm = TRUE)
jack_z <- function(point, loo, level = {likeness.LEVEL!r}) {{  # delete-one jackknife on Fisher's z, bias-corrected
  k <- length(loo); edge <- 1 - 1e-9
  if (k < 2 || is.na(point) || any(is.na(loo))) return(c(NA, NA))
  z <- atanh(pmin(pmax(loo, -edge), edge)); z0 <- atanh(min(max(point, -edge), edge))
  centre <- z0 - (k - 1) * (mean(z) - z0); se <- sqrt((k - 1) / k * sum((z - mean(z))^2))
  tanh(centre + c(-1, 1) * qnorm(1 - (1 - level) / 2) * se)
}}
hl_rows <- lapply(sort(unique(hl$model)), function(model) {{
  d <- hl[hl$model == model, ]
  share <- tapply(d$chose_target, d$item_id, mean)
  p <- tapply(d$p_target, d$item_id, function(v) v[1])[names(share)]
  choice_r <- r_or_na(as.numeric(share), as.numeric(p))
  choice_ci <- jack_z(choice_r, sapply(seq_along(share), function(i) r_or_na(as.numeric(share[-i]), as.numeric(p[-i]))))
  parts <- lapply(sort(unique(halves$split)), function(k) {{
    a <- d$participant %in% halves$participant[halves$split == k & halves$half == "A"]
    sa <- tapply(d$chose_target[a], d$item_id[a], mean); sb_ <- tapply(d$chose_target[!a], d$item_id[!a], mean)
    both <- intersect(names(sa), names(sb_))
    r <- if (length(both)) r_or_na(as.numeric(sa[both]), as.numeric(sb_[both])) else NA
    loo <- sapply(names(share), function(i) {{ keep <- setdiff(both, i)
      sb_or_r(if (length(keep)) r_or_na(as.numeric(sa[keep]), as.numeric(sb_[keep])) else NA) }})
    list(r = r, loo = loo)
  }})
  rs <- sapply(parts, function(x) x$r)
  ceiling <- mean_or_na(sapply(rs, sb_or_r))
  ceiling_ci <- jack_z(ceiling, apply(sapply(parts, function(x) x$loo), 1, mean_or_na))
  ratio <- if (is.na(choice_r) || is.na(ceiling) || ceiling <= 0 || is.na(ceiling_ci[1]) || ceiling_ci[1] <= 0) NA
           else choice_r / ceiling
  kappa <- sapply(split(d, d$participant), function(x) {{
    p <- mean(x$correct); q <- mean(x$model_correct); e <- p * q + (1 - p) * (1 - q)
    if (1 - e <= 1e-12) NA else (mean(x$correct == x$model_correct) - e) / (1 - e)
  }})
  model_right <- tapply(d$model_correct, d$item_id, function(v) v[1])
  assessable <- any(model_right == 1) && any(model_right == 0)  # a model with no errors (or none right): no κ
  base <- ave(seq_len(nrow(d)), d$kind, d$answer, FUN = length) / ave(seq_len(nrow(d)), d$kind, FUN = length)
  data.frame(model = model, items = length(share), answers = nrow(d), participants = length(unique(d$participant)),
             choice_r = choice_r, choice_r_low = choice_ci[1], choice_r_high = choice_ci[2],
             ceiling = ceiling, ceiling_low = ceiling_ci[1], ceiling_high = ceiling_ci[2],
             choice_r_over_ceiling = ratio,
             error_consistency = if (assessable) mean_or_na(kappa) else NA,
             kappa_participants = if (assessable) sum(!is.na(kappa)) else 0, kappa_left_out = sum(is.na(kappa)),
             loglik_per_answer = mean(log(pmax(d$p_answer, {likeness.EPS!r}))),
             loglik_base = mean(log(base)), negative_splits = sum(rs < 0, na.rm = TRUE))
}})
hl_table <- do.call(rbind, hl_rows)
write.csv(hl_table, file.path(out, "{KEY}.csv"), row.names = FALSE)
cat("\\n== {KEY} ==\\n"); print(hl_table)
'''

PY_SCRIPT = f'''

def human_likeness(folder=HERE, out=OUT):
    \"\"\"tables/{KEY}.csv from {FRAME} and {SPLITS_FILE}: every point estimate, and the jackknife
    intervals of choice_r and the ceiling (deterministic); error consistency's interval is the report's seeded
    bootstrap (seed and resamples in the table). Written to reproduced/python/{KEY}.csv.\"\"\"
    import math
    from statistics import NormalDist

    import numpy as np

    hl = pd.read_csv(folder / "{FRAME}", float_precision="round_trip", dtype={{"participant": str}})
    halves = pd.read_csv(folder / "{SPLITS_FILE}", dtype={{"participant": str}})

    def r_or_nan(x, y):
        x, y = np.asarray(x, float), np.asarray(y, float)
        return float(np.corrcoef(x, y)[0, 1]) if len(x) >= 3 and x.std() > 0 and y.std() > 0 else float("nan")

    def sb_or_r(r):  # a negative r uncorrected
        return r if math.isnan(r) or r < 0 else 2 * r / (1 + r)

    def mean_or_nan(values):
        values = [v for v in values if not math.isnan(v)]
        return sum(values) / len(values) if values else float("nan")

    def jack_z(point, loo, level={likeness.LEVEL!r}):  # delete-one jackknife on Fisher's z, bias-corrected
        k, edge = len(loo), 1 - 1e-9
        if k < 2 or math.isnan(point) or any(math.isnan(v) for v in loo):
            return float("nan"), float("nan")
        z, z0 = np.arctanh(np.clip(loo, -edge, edge)), math.atanh(min(max(point, -edge), edge))
        centre = z0 - (k - 1) * (z.mean() - z0)
        se = math.sqrt((k - 1) / k * float(((z - z.mean()) ** 2).sum()))
        q = NormalDist().inv_cdf(1 - (1 - level) / 2)
        return math.tanh(centre - q * se), math.tanh(centre + q * se)

    rows = []
    for model, d in hl.groupby("model", sort=True):
        items = d.groupby("item_id").agg(share=("chose_target", "mean"), p=("p_target", "first"))
        choice_r = r_or_nan(items["share"], items["p"])
        choice_ci = jack_z(choice_r, [r_or_nan(items["share"].drop(i), items["p"].drop(i)) for i in items.index])
        rs, loo = [], []
        for _, split in halves.groupby("split"):
            a = d["participant"].isin(split.loc[split["half"] == "A", "participant"])
            both = pd.concat([d[a].groupby("item_id")["chose_target"].mean().rename("a"),
                              d[~a].groupby("item_id")["chose_target"].mean().rename("b")], axis=1).dropna()
            rs.append(r_or_nan(both["a"], both["b"]))
            loo.append([sb_or_r(r_or_nan(both["a"].drop(i, errors="ignore"), both["b"].drop(i, errors="ignore")))
                        for i in items.index])
        ceiling = mean_or_nan([sb_or_r(r) for r in rs])
        ceiling_ci = jack_z(ceiling, [mean_or_nan(column) for column in zip(*loo)])
        ratio = (choice_r / ceiling if not (math.isnan(choice_r) or math.isnan(ceiling) or ceiling <= 0
                                            or math.isnan(ceiling_ci[0]) or ceiling_ci[0] <= 0) else float("nan"))
        kappas = []
        for _, x in d.groupby("participant"):
            p, q = x["correct"].mean(), x["model_correct"].mean()
            e = p * q + (1 - p) * (1 - q)
            agree = (x["correct"] == x["model_correct"]).mean()
            kappas.append(float("nan") if 1 - e <= 1e-12 else (agree - e) / (1 - e))
        model_right = d.groupby("item_id")["model_correct"].first()
        assessable = (model_right == 1).any() and (model_right == 0).any()  # no errors (or none right): no κ
        base = d.groupby(["kind", "answer"])["answer"].transform("size") / d.groupby("kind")["answer"].transform("size")
        rows.append({{"model": model, "items": len(items), "answers": len(d),
                     "participants": d["participant"].nunique(),
                     "choice_r": choice_r, "choice_r_low": choice_ci[0], "choice_r_high": choice_ci[1],
                     "ceiling": ceiling, "ceiling_low": ceiling_ci[0], "ceiling_high": ceiling_ci[1],
                     "choice_r_over_ceiling": ratio,
                     "error_consistency": mean_or_nan(kappas) if assessable else float("nan"),
                     "kappa_participants": sum(not math.isnan(k) for k in kappas) if assessable else 0,
                     "kappa_left_out": sum(math.isnan(k) for k in kappas),
                     "loglik_per_answer": float(np.log(np.maximum(d["p_answer"], {likeness.EPS!r})).mean()),
                     "loglik_base": float(np.log(base).mean()), "negative_splits": sum(r < 0 for r in rs)}})
    out.mkdir(parents=True, exist_ok=True)
    table = pd.DataFrame(rows)
    table.to_csv(out / "{KEY}.csv", index=False)
    print("\\n== {KEY} ==")
    print(table.to_string(index=False))


if __name__ == "__main__":
    human_likeness()
'''
