"""How human-like is each model (issue 35 item 5): pure maths over tidy frames (numpy/pandas, no Django).

The frame (`answer_frame`) has one row per person's answer and model configuration, on the items the
people answered that the model scored. For each item the *target* answer is "yes" (a multiple-choice
item: its gold letter); `chose_target` says whether the person gave it and `p_target` is the model's
relative probability of it (relative p(Yes) = p(Yes) / (p(Yes) + p(No)); a multiple-choice item: the
gold letter's probability relative to the four letters).

* choice_r: Pearson r across items between the people's share choosing the target and p_target.
* ceiling: split-half reliability of those item shares: participants split at random into two halves
  (the first ⌊n/2⌋ of a permutation, the rest), r between the halves' shares over the items both halves
  answered, Spearman–Brown corrected, 2r / (1 + r), and averaged over the splits.
* error_consistency (Geirhos et al. 2020): per participant, Cohen's κ between their correct/incorrect and
  the model's on the same answers, κ = (c_obs − c_exp) / (1 − c_exp), c_obs the share of answers where
  both are right or both wrong, c_exp = p·q + (1 − p)(1 − q) from their accuracies p and q; the mean over
  participants.
* loglik_per_answer: mean natural log of the model's relative probability of each person's answer
  (Binz et al. 2025, Centaur); loglik_base: the same under the people's base rate (the share of all
  answers of that kind giving that answer).

Edge cases, each said in the report: an item everyone answered alike keeps its share (0 or 1); a model
decision 'other' counts as incorrect (it is not the gold answer); a participant whose expected agreement
is 1 (they and the model both all right or both all wrong) has no κ and is left out of the mean and its
bootstrap (counted in `kappa_participants`); a probability below EPS counts as EPS in the log-likelihood
(counted in `clipped`); a statistic without enough data (under 3 items, constant shares) is NaN.

Intervals: 95% percentile bootstrap, seeded. choice_r and the ceiling resample participants and items
together (a participant's copies always fall in the same half); error consistency resamples
participants (the same participant draws). Each resample's ceiling averages the first BOOTSTRAP_SPLITS splits
(the point estimate all SPLITS); the ceiling depends only on the people, so models scored on the same items
share it.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

LETTERS = ("A", "B", "C", "D")
YES_NO = ("yes", "no")
MULTIPLE_CHOICE = "multiple_choice"
EPS = 1e-6  # probabilities below this count as EPS in the log-likelihood
SPLITS = 100
BOOTSTRAP_SPLITS = 20  # each bootstrap resample of the ceiling averages the first 20 of the splits
RESAMPLES = 2000
SEED = 35
LEVEL = 0.95
TINY = 1e-12  # a variance (or 1 − expected agreement) at most this is taken as zero
FRAME_COLUMNS = ("model", "participant", "item_id", "kind", "answer", "target", "chose_target", "correct",
                 "p_target", "p_answer", "model_decision", "model_correct")
TABLE_COLUMNS = ("model", "items", "answers", "participants", "choice_r", "choice_r_low", "choice_r_high",
                 "ceiling", "ceiling_low", "ceiling_high", "choice_r_over_ceiling", "error_consistency",
                 "error_consistency_low", "error_consistency_high", "kappa_participants", "loglik_per_answer",
                 "loglik_base", "clipped", "splits", "resamples", "seed")


@dataclass(frozen=True)
class Left:
    """What `answer_frame` left out, counted for the report's notes."""

    no_choice: int = 0  # people's rows without a yes/no or letter answer (timed out)
    unscored: dict | None = None  # model → people's answers on items it did not score (or scored without p)
    duplicates: int = 0  # extra scores of one model on one item (the last kept)


def _kind(frame: pd.DataFrame) -> pd.Series:
    if "kind" not in frame:
        return pd.Series("yes_no", index=frame.index)
    return frame["kind"].where(frame["kind"] == MULTIPLE_CHOICE, "yes_no")


def _letter_p(scores: pd.DataFrame, letters: pd.Series) -> np.ndarray:
    out = np.full(len(scores), np.nan)
    for letter in LETTERS:
        column = f"p_{letter}"
        if column in scores:
            here = (letters == letter).to_numpy()
            out[here] = scores.loc[here, column].to_numpy(dtype=float)
    return out


def answer_frame(people: pd.DataFrame, scores: pd.DataFrame) -> tuple[pd.DataFrame, Left]:
    """One row per (model, person's answer) on the items people answered that the model scored.

    people: participant, item_id, answer, gold, correct (and kind); scores: model, item_id, rel_p_yes,
    p_A…p_D, decision, gold (and kind)."""
    people = people.assign(kind=_kind(people))
    valid = np.where(people["kind"] == MULTIPLE_CHOICE, people["answer"].isin(LETTERS), people["answer"].isin(YES_NO))
    no_choice = int((~valid).sum())
    people = people[valid]
    people = people.assign(target=np.where(people["kind"] == MULTIPLE_CHOICE, people["gold"], "yes"))
    people = people.assign(chose_target=(people["answer"] == people["target"]).astype(int))
    scores = scores[scores["item_id"].isin(set(people["item_id"]))]
    before = len(scores)
    scores = scores.drop_duplicates(["model", "item_id"], keep="last")
    duplicates = before - len(scores)
    multiple = (_kind(scores) == MULTIPLE_CHOICE).to_numpy()
    rel = scores["rel_p_yes"].to_numpy(dtype=float) if "rel_p_yes" in scores else np.full(len(scores), np.nan)
    gold_p = _letter_p(scores, scores["gold"])
    model = pd.DataFrame({
        "model": scores["model"].astype(str).to_numpy(), "item_id": scores["item_id"].to_numpy(),
        "p_target": np.where(multiple, gold_p, rel),
        "model_decision": scores["decision"].fillna("other").astype(str).to_numpy(),
        "model_correct": (scores["decision"] == scores["gold"]).astype(int).to_numpy(),
        "rel_p_yes": rel,
        **{f"p_{x}": scores[f"p_{x}"].to_numpy(dtype=float) if f"p_{x}" in scores else np.nan for x in LETTERS},
    })
    columns = ["participant", "item_id", "kind", "answer", "target", "chose_target", "correct"]
    joined = people[columns].merge(model, on="item_id", how="inner")
    multiple = (joined["kind"] == MULTIPLE_CHOICE).to_numpy()
    yes = (joined["answer"] == "yes").to_numpy()
    joined["p_answer"] = np.where(multiple, _letter_p(joined, joined["answer"]),
                                  np.where(yes, joined["rel_p_yes"], 1.0 - joined["rel_p_yes"]))
    missing = joined["p_target"].isna() | joined["p_answer"].isna()
    kept = joined.loc[~missing, "model"].value_counts()
    unscored = {name: len(people) - int(kept.get(name, 0)) for name in sorted(set(model["model"]))}
    joined = joined[~missing]
    joined["participant"] = joined["participant"].astype(str)
    joined["correct"] = joined["correct"].astype(int)
    frame = joined[list(FRAME_COLUMNS)].sort_values(["model", "participant", "item_id"], kind="stable")
    return frame.reset_index(drop=True), Left(no_choice=no_choice, unscored=unscored, duplicates=duplicates)


def split_halves(participants, *, splits: int = SPLITS, seed: int = SEED) -> pd.DataFrame:
    """Random halves of the participants (sorted by label), one per split: participant, split (1…), half
    (A: the first ⌊n/2⌋ of a permutation drawn from default_rng(seed), B: the rest)."""
    names = sorted({str(p) for p in participants})
    rng = np.random.default_rng(seed)
    rows = []
    for split in range(1, splits + 1):
        order = rng.permutation(len(names))
        first = set(order[: len(names) // 2].tolist())
        rows += [(name, split, "A" if i in first else "B") for i, name in enumerate(names)]
    return pd.DataFrame(rows, columns=["participant", "split", "half"])


def _weighted_r(x: np.ndarray, y: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Pearson r of each row of x against y (a row, or rows) with weights w (row-wise); NaN where a
    side has no variance or fewer than 3 items carry weight."""
    x, y, w = np.broadcast_arrays(np.asarray(x, float), np.asarray(y, float), np.asarray(w, float))
    x, y = np.where(w > 0, x, 0.0), np.where(w > 0, y, 0.0)
    total = w.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        mx = (w * x).sum(axis=-1) / total
        my = (w * y).sum(axis=-1) / total
        dx, dy = x - mx[..., None], y - my[..., None]
        vx, vy = (w * dx * dx).sum(axis=-1), (w * dy * dy).sum(axis=-1)
        r = (w * dx * dy).sum(axis=-1) / np.sqrt(vx * vy)
    bad = (vx <= TINY * total) | (vy <= TINY * total) | ((w > 0).sum(axis=-1) < 3)
    return np.where(bad, np.nan, np.clip(r, -1.0, 1.0))


def _spearman_brown(r: np.ndarray) -> np.ndarray:
    r = np.asarray(r, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(r > -1.0, 2.0 * r / (1.0 + r), np.nan)


def _mean_defined(values: np.ndarray, axis=None) -> np.ndarray | float:
    values = np.asarray(values, dtype=float)
    count = np.sum(~np.isnan(values), axis=axis)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, np.nansum(values, axis=axis) / np.maximum(count, 1), np.nan)


@dataclass(frozen=True)
class Matrices:
    """One model's frame as participants × items counts: Y (target chosen), N (answers); m: p_target by
    item; H: splits × participants, 1 for half A."""

    participants: list[str]
    items: list
    Y: np.ndarray
    N: np.ndarray
    m: np.ndarray
    H: np.ndarray


def matrices(frame: pd.DataFrame, halves: pd.DataFrame) -> Matrices:
    participants = sorted(set(frame["participant"]))
    items = sorted(set(frame["item_id"]))
    p_index = pd.Index(participants).get_indexer(frame["participant"])
    i_index = pd.Index(items).get_indexer(frame["item_id"])
    Y, N = np.zeros((len(participants), len(items))), np.zeros((len(participants), len(items)))
    np.add.at(Y, (p_index, i_index), frame["chose_target"].to_numpy(dtype=float))
    np.add.at(N, (p_index, i_index), 1.0)
    m = frame.groupby("item_id")["p_target"].first().reindex(items).to_numpy(dtype=float)
    wide = halves.assign(a=(halves["half"] == "A").astype(float)).pivot(index="split", columns="participant",
                                                                         values="a")
    H = wide.reindex(columns=participants).to_numpy(dtype=float)
    if np.isnan(H).any():
        raise ValueError("the split table leaves out participants of the frame")
    return Matrices(participants, items, Y, N, m, H)


def _shares(S: np.ndarray, D: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(D > 0, S / np.where(D > 0, D, 1.0), 0.0)


def choice_r(frame: pd.DataFrame) -> float:
    """Pearson r across items between the share choosing the target and the model's p_target."""
    items = frame.groupby("item_id").agg(share=("chose_target", "mean"), p=("p_target", "first"))
    return float(_weighted_r(items["share"].to_numpy(), items["p"].to_numpy(), np.ones(len(items))))


def _ceiling_rows(mat: Matrices, Wp: np.ndarray, Wi: np.ndarray, splits: int | None = None) -> np.ndarray:
    """The ceiling for each row of participant weights Wp (and item weights Wi): the mean over the first
    `splits` splits (all by default). Half B's counts are the totals less half A's (exact: counts)."""
    H = mat.H[:splits]
    out = np.empty((len(H), len(Wp)))
    S, D = Wp @ mat.Y, Wp @ mat.N
    for s, half in enumerate(H):
        a = Wp * half
        Sa, Da = a @ mat.Y, a @ mat.N
        Sb, Db = S - Sa, D - Da
        w = Wi * ((Da > 0) & (Db > 0))
        out[s] = _spearman_brown(_weighted_r(_shares(Sa, Da), _shares(Sb, Db), w))
    return _mean_defined(out, axis=0)


def ceiling(frame: pd.DataFrame, halves: pd.DataFrame) -> float:
    """Split-half reliability of the item shares, Spearman–Brown corrected, averaged over the splits."""
    mat = matrices(frame, halves)
    return float(_ceiling_rows(mat, np.ones((1, len(mat.participants))), np.ones((1, len(mat.items))))[0])


def kappas(frame: pd.DataFrame) -> pd.Series:
    """Cohen's κ of each participant's correct/incorrect against the model's on the same answers (NaN
    where the expected agreement is 1)."""
    grouped = frame.assign(agree=(frame["correct"] == frame["model_correct"]).astype(float)).groupby("participant")
    p, q, observed = grouped["correct"].mean(), grouped["model_correct"].mean(), grouped["agree"].mean()
    expected = p * q + (1 - p) * (1 - q)
    with np.errstate(invalid="ignore", divide="ignore"):
        kappa = (observed - expected) / (1 - expected)
    return kappa.where(1 - expected > TINY).astype(float)


def error_consistency(frame: pd.DataFrame) -> float:
    return float(_mean_defined(kappas(frame).to_numpy()))


def loglik(frame: pd.DataFrame) -> tuple[float, float, int]:
    """(mean log-likelihood of the people's answers under the model, the same under the people's base
    rate, how many model probabilities were below EPS)."""
    if not len(frame):
        return float("nan"), float("nan"), 0
    p = frame["p_answer"].to_numpy(dtype=float)
    counts = frame.groupby(["kind", "answer"])["answer"].transform("size")
    totals = frame.groupby("kind")["answer"].transform("size")
    base = (counts / totals).to_numpy(dtype=float)
    return float(np.mean(np.log(np.maximum(p, EPS)))), float(np.mean(np.log(base))), int((p < EPS).sum())


def _draws(rng: np.random.Generator, k: int, samples: int) -> np.ndarray:
    """samples × k multiplicities: how often each of k units is drawn in each resample."""
    picks = rng.integers(0, k, size=(samples, k))
    flat = picks + np.arange(samples)[:, None] * k
    return np.bincount(flat.ravel(), minlength=samples * k).reshape(samples, k).astype(float)


def _interval(values: np.ndarray, level: float = LEVEL) -> tuple[float, float]:
    values = np.asarray(values, dtype=float)
    values = values[~np.isnan(values)]
    if not len(values):
        return float("nan"), float("nan")
    alpha = (1 - level) / 2
    low, high = np.quantile(values, [alpha, 1 - alpha])
    return float(low), float(high)


def summarise(frame: pd.DataFrame, halves: pd.DataFrame, *, resamples: int = RESAMPLES, seed: int = SEED,
              ceilings: dict | None = None) -> dict:
    """One model's row of the table (its frame: one model's rows of `answer_frame`). The ceiling depends only
    on the people's answers to the model's items: `ceilings` keeps it for the next model with the same items."""
    mat = matrices(frame, halves)
    kappa = kappas(frame).reindex(mat.participants).to_numpy()
    point_r = choice_r(frame)
    rng_people, rng_items = (np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(2))
    Wp, Wi = _draws(rng_people, len(mat.participants), resamples), _draws(rng_items, len(mat.items), resamples)
    r_draws = _weighted_r(_shares(Wp @ mat.Y, Wp @ mat.N), mat.m, Wi * ((Wp @ mat.N) > 0))
    ceilings = {} if ceilings is None else ceilings
    key = (tuple(mat.participants), tuple(mat.items))
    if key not in ceilings:
        ceilings[key] = (ceiling(frame, halves), _ceiling_rows(mat, Wp, Wi, BOOTSTRAP_SPLITS))
    point_ceiling, ceiling_draws = ceilings[key]
    defined = ~np.isnan(kappa)
    with np.errstate(invalid="ignore", divide="ignore"):
        kappa_draws = (Wp[:, defined] @ kappa[defined]) / Wp[:, defined].sum(axis=1)
    model_ll, base_ll, clipped = loglik(frame)
    ec = float(kappa[defined].mean()) if defined.any() else float("nan")
    return {
        "items": len(mat.items), "answers": len(frame), "participants": len(mat.participants),
        "choice_r": point_r, **dict(zip(("choice_r_low", "choice_r_high"), _interval(r_draws))),
        "ceiling": point_ceiling, **dict(zip(("ceiling_low", "ceiling_high"), _interval(ceiling_draws))),
        "choice_r_over_ceiling": point_r / point_ceiling if point_ceiling and not np.isnan(point_ceiling) else np.nan,
        "error_consistency": ec,
        **dict(zip(("error_consistency_low", "error_consistency_high"), _interval(kappa_draws))),
        "kappa_participants": int(defined.sum()), "loglik_per_answer": model_ll, "loglik_base": base_ll,
        "clipped": clipped, "splits": int(halves["split"].nunique()), "resamples": resamples, "seed": seed,
    }


def table(frame: pd.DataFrame, halves: pd.DataFrame, *, resamples: int = RESAMPLES, seed: int = SEED) -> pd.DataFrame:
    """One row per model configuration (TABLE_COLUMNS)."""
    ceilings: dict = {}
    rows = [{"model": model, **summarise(part, halves, resamples=resamples, seed=seed, ceilings=ceilings)}
            for model, part in frame.groupby("model", sort=True)]
    return pd.DataFrame(rows, columns=list(TABLE_COLUMNS))


_P, _LL = "probability", "nats per answer"
# The codebook's entries for the section's files (analysis/codebook.py FILES): column → (type, unit, description).
TABLE_GLOSSARY = {
    "model": ("string", "", "the model configuration"),
    "items": ("integer", "", "items people answered that the model scored (the units of choice_r and the ceiling)"),
    "answers": ("integer", "", "people's answers to those items (after the report's exclusions; timed-out left out)"),
    "participants": ("integer", "", "participants with at least one of those answers"),
    "choice_r": ("number", "", "Pearson r across items between the share of people giving the target answer (yes; "
                 "the gold option for multiple choice) and the model's relative probability of it"),
    "choice_r_low": ("number", "", "lower bound of choice_r's 95% bootstrap interval (participants and items "
                     "resampled)"),
    "choice_r_high": ("number", "", "upper bound of choice_r's 95% bootstrap interval"),
    "ceiling": ("number", "", "the people's split-half reliability of the item shares (random halves of "
                "participants, Spearman–Brown corrected, mean over the splits): what a model cannot be expected to "
                "exceed"),
    "ceiling_low": ("number", "", "lower bound of the ceiling's 95% bootstrap interval (participants and items "
                    "resampled, the splits kept)"),
    "ceiling_high": ("number", "", "upper bound of the ceiling's 95% bootstrap interval"),
    "choice_r_over_ceiling": ("number", "", "choice_r / ceiling"),
    "error_consistency": ("number", "", "Cohen's κ between each participant's correct/incorrect and the model's on "
                          "the same items, beyond what their accuracies predict (Geirhos et al. 2020), averaged over "
                          "participants"),
    "error_consistency_low": ("number", "", "lower bound of error_consistency's 95% bootstrap interval "
                              "(participants resampled)"),
    "error_consistency_high": ("number", "", "upper bound of error_consistency's 95% bootstrap interval"),
    "kappa_participants": ("integer", "", "participants with a κ (expected agreement below 1)"),
    "loglik_per_answer": ("number", _LL, "mean natural log of the model's relative probability of each answer "
                          "people gave (Centaur, Binz et al. 2025)"),
    "loglik_base": ("number", _LL, "the same under the people's base rate (the share of all answers giving that "
                    "answer)"),
    "clipped": ("integer", "", f"answers whose model probability was below {EPS:g}, counted as {EPS:g}"),
    "splits": ("integer", "", "random split-halves averaged for the ceiling"),
    "resamples": ("integer", "", "bootstrap resamples of the intervals"),
    "seed": ("integer", "", "the seed of the splits and the bootstrap (numpy default_rng)"),
}
FRAME_GLOSSARY = {
    "target": ("string", "", "the answer whose share is correlated: yes, or the gold letter for multiple choice"),
    "chose_target": ("integer", "", "1 when the person gave the target answer, else 0"),
    "p_target": ("number", _P, "the model's relative probability of the target answer (relative p(Yes); the gold "
                 "letter's probability relative to the four letters)"),
    "p_answer": ("number", _P, "the model's relative probability of the answer the person gave"),
    "model_decision": ("string", "", "the model's decision on the item (yes/no, A–D, or other)"),
    "model_correct": ("integer", "", "1 when the model's decision is the gold answer ('other' never is), else 0"),
}
SPLITS_GLOSSARY = {
    "participant": ("string", "", "pseudonymous participant label"),
    "split": ("integer", "", "the random split (1, 2, …)"),
    "half": ("string", "", "the half of that split the participant is in (A: the first ⌊n/2⌋ of a random "
             "permutation of the participants in label order, B: the rest)"),
}
