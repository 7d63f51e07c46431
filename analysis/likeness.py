"""How human-like is each model (issue 35 item 5): pure maths over tidy frames (numpy/pandas, no Django).

The frame (`answer_frame`) has one row per person's answer and model configuration, on the items the
people answered that the model scored. For each item the *target* answer is "yes" (a multiple-choice
item: its gold letter); `chose_target` says whether the person gave it and `p_target` is the model's
relative probability of it (relative p(Yes) = p(Yes) / (p(Yes) + p(No)); a multiple-choice item: the
gold letter's probability relative to the four letters).

* choice_r: Pearson r across items between the people's share choosing the target and p_target.
* ceiling: split-half reliability of those item shares: participants split at random into two halves
  (the first ⌊n/2⌋ of a permutation, the rest), r between the halves' shares over the items both halves
  answered, Spearman–Brown corrected, 2r / (1 + r), and averaged over the splits. A split whose halves
  correlate negatively enters the mean uncorrected (Spearman–Brown assumes halves that measure the same
  thing; applied to r < 0 it would exaggerate the disagreement, and at r = −1 divide by zero); those splits
  are counted (`negative_splits`).
* error_consistency (Geirhos et al. 2020): per participant, Cohen's κ between their correct/incorrect and
  the model's on the same answers, κ = (c_obs − c_exp) / (1 − c_exp), c_obs the share of answers where
  both are right or both wrong, c_exp = p·q + (1 − p)(1 − q) from their accuracies p and q; the mean over
  participants. A model with no errors (or no correct answers) on the items has none: every κ is 0 or
  undefined by construction, so the cell is blank with its reason.
* loglik_per_answer: mean natural log of the model's relative probability of each person's answer
  (Binz et al. 2025, Centaur); loglik_base: the same under the people's base rate (the share of all
  answers of that kind giving that answer).

Edge cases, each said in the report: an item everyone answered alike keeps its share (0 or 1); a model
decision 'other' counts as incorrect (it is not the gold answer); a participant whose expected agreement
is 1 (they and the model both all right or both all wrong) has no κ and is left out of the mean and its
bootstrap (counted in `kappa_left_out`); a probability below EPS counts as EPS in the log-likelihood
(counted in `clipped`); a statistic without enough data (under 3 items, constant shares) is NaN.
`choice_r_over_ceiling` is blank when the ceiling is not above 0 or its interval reaches 0 (a ratio over a
denominator that may be 0 or negative says nothing). Every blank or qualified cell has its reason in
`reasons`.

Intervals (issue 44 item 5). choice_r and the ceiling: the items are the units (each item one column of
answers, independent of the others given the people), the people's splits stay fixed, so each half holds
distinct people, the same ones as in the point estimate. The interval is the delete-one jackknife over
items on Fisher's z scale (atanh): each item left out in turn, the statistic recomputed (the ceiling over
the same splits), its jackknife bias removed from the centre and z ± 1.96 jackknife SEs mapped back by tanh.
It is deterministic (no seed). Why this and not a bootstrap of participants: resampling participants with
replacement puts copies of one person in a half, so the halves hold fewer distinct people and both
statistics come out attenuated (the old intervals missed their own estimates). Why not the percentile
bootstrap of items: in bench/likeness_coverage.py's simulations it tends to under-cover (0.925–0.935 in half
the cells, 0.90–0.93 with 24–40 items at moderate reliability), while this interval covered 0.940–0.975.
Error consistency is a mean of per-participant κ: a percentile bootstrap of participants (seeded), the κ of
each drawn participant as it is.
"""
from __future__ import annotations

from dataclasses import dataclass
from statistics import NormalDist

import numpy as np
import pandas as pd

LETTERS = ("A", "B", "C", "D")
YES_NO = ("yes", "no")
MULTIPLE_CHOICE = "multiple_choice"
EPS = 1e-6  # probabilities below this count as EPS in the log-likelihood
SPLITS = 100
RESAMPLES = 2000  # bootstrap resamples of participants for error consistency's interval
SEED = 35
LEVEL = 0.95
TINY = 1e-12  # a variance (or 1 − expected agreement) at most this is taken as zero
EDGE = 1 - 1e-9  # a correlation-scale value is clipped to ±EDGE before atanh
FRAME_COLUMNS = ("model", "participant", "item_id", "kind", "answer", "target", "chose_target", "correct",
                 "p_target", "p_answer", "model_decision", "model_correct")
TABLE_COLUMNS = ("model", "items", "answers", "participants", "choice_r", "choice_r_low", "choice_r_high",
                 "ceiling", "ceiling_low", "ceiling_high", "choice_r_over_ceiling", "error_consistency",
                 "error_consistency_low", "error_consistency_high", "kappa_participants", "kappa_left_out",
                 "loglik_per_answer", "loglik_base", "clipped", "negative_splits", "splits", "resamples", "seed",
                 "reasons")


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
    """2r / (1 + r) for r ≥ 0; a negative r as it is (not corrected: see the module's docstring)."""
    r = np.asarray(r, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(r >= 0, 2.0 * r / (1.0 + r), r)


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


def _leave_one_out_r(x: np.ndarray, y: np.ndarray, w: np.ndarray) -> np.ndarray:
    """`_weighted_r` of each row without each item in turn: entry [..., i] is the r with item i's weight set to
    0 (the same rules: NaN without variance or under 3 items). From the weighted sums less item i's terms,
    centred on the full means so nothing large cancels."""
    x, y, w = np.broadcast_arrays(np.asarray(x, float), np.asarray(y, float), np.asarray(w, float))
    x, y = np.where(w > 0, x, 0.0), np.where(w > 0, y, 0.0)
    total = w.sum(axis=-1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        dx = np.where(w > 0, x - (w * x).sum(axis=-1, keepdims=True) / total, 0.0)
        dy = np.where(w > 0, y - (w * y).sum(axis=-1, keepdims=True) / total, 0.0)
        rest = total - w

        def less(v):
            return (w * v).sum(axis=-1, keepdims=True) - w * v

        sx, sy = less(dx), less(dy)
        vx, vy = less(dx * dx) - sx * sx / rest, less(dy * dy) - sy * sy / rest
        r = (less(dx * dy) - sx * sy / rest) / np.sqrt(vx * vy)
    count = (w > 0).sum(axis=-1, keepdims=True) - (w > 0)
    bad = ~(rest > 0) | (vx <= TINY * rest) | (vy <= TINY * rest) | (count < 3)
    return np.where(bad, np.nan, np.clip(r, -1.0, 1.0))


def _jackknife_z(point: float, leave_one_out: np.ndarray, level: float = LEVEL) -> tuple[float, float]:
    """The delete-one jackknife interval of a correlation-scale statistic on Fisher's z scale: the centre
    atanh(point) less the jackknife bias (k − 1)(mean z₋ᵢ − z), ± the normal quantile × the jackknife SE
    √((k − 1)/k · Σ(z₋ᵢ − mean)²), mapped back by tanh. NaN when the point or any leave-one-out value is
    undefined."""
    values = np.asarray(leave_one_out, dtype=float)
    k = len(values)
    if k < 2 or np.isnan(point) or np.isnan(values).any():
        return float("nan"), float("nan")
    z, z_point = np.arctanh(np.clip(values, -EDGE, EDGE)), float(np.arctanh(np.clip(point, -EDGE, EDGE)))
    mean = z.mean()
    centre = z_point - (k - 1) * (mean - z_point)
    se = float(np.sqrt((k - 1) / k * np.sum((z - mean) ** 2)))
    q = NormalDist().inv_cdf(1 - (1 - level) / 2)
    return float(np.tanh(centre - q * se)), float(np.tanh(centre + q * se))


def item_shares(mat: Matrices) -> np.ndarray:
    """Each item's share of answers giving the target (all participants)."""
    return _shares(mat.Y.sum(axis=0), mat.N.sum(axis=0))


def half_shares(mat: Matrices) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per split (rows) and item (columns): half A's share, half B's share, and 1.0 where both halves answered
    the item (0.0 elsewhere). Each half holds distinct participants. Half B's counts are the totals less half
    A's (exact: counts)."""
    Sa, Da = mat.H @ mat.Y, mat.H @ mat.N
    Sb, Db = mat.Y.sum(axis=0) - Sa, mat.N.sum(axis=0) - Da
    return _shares(Sa, Da), _shares(Sb, Db), ((Da > 0) & (Db > 0)).astype(float)


def choice_r(frame: pd.DataFrame) -> float:
    """Pearson r across items between the share choosing the target and the model's p_target."""
    items = frame.groupby("item_id").agg(share=("chose_target", "mean"), p=("p_target", "first"))
    return float(_weighted_r(items["share"].to_numpy(), items["p"].to_numpy(), np.ones(len(items))))


def choice_r_interval(mat: Matrices, point: float, level: float = LEVEL) -> tuple[float, float]:
    """choice_r's interval: the jackknife over items (`_jackknife_z`)."""
    return _jackknife_z(point, _leave_one_out_r(item_shares(mat), mat.m, np.ones(len(mat.items))), level)


def split_rs(mat: Matrices) -> np.ndarray:
    """r between the halves' shares, per split, over the items both halves answered (NaN: undefined)."""
    a, b, both = half_shares(mat)
    return _weighted_r(a, b, both)


def ceiling_summary(mat: Matrices, level: float = LEVEL) -> dict:
    """The ceiling (the mean over the splits of each split's r, Spearman–Brown corrected when r ≥ 0), its
    jackknife interval over items (the same splits, each item left out in turn) and the count of splits with
    a negative r, and of splits with an r at all."""
    a, b, both = half_shares(mat)
    rs = _weighted_r(a, b, both)
    point = float(_mean_defined(_spearman_brown(rs)))
    leave_one_out = _mean_defined(_spearman_brown(_leave_one_out_r(a, b, both)), axis=0)
    low, high = _jackknife_z(point, leave_one_out, level)
    return {"ceiling": point, "ceiling_low": low, "ceiling_high": high,
            "negative_splits": int(np.sum(rs < 0)), "defined_splits": int(np.sum(~np.isnan(rs)))}


def ceiling(frame: pd.DataFrame, halves: pd.DataFrame) -> float:
    """Split-half reliability of the item shares, Spearman–Brown corrected, averaged over the splits."""
    return ceiling_summary(matrices(frame, halves))["ceiling"]


def kappas(frame: pd.DataFrame) -> pd.Series:
    """Cohen's κ of each participant's correct/incorrect against the model's on the same answers (NaN
    where the expected agreement is 1)."""
    grouped = frame.assign(agree=(frame["correct"] == frame["model_correct"]).astype(float)).groupby("participant")
    p, q, observed = grouped["correct"].mean(), grouped["model_correct"].mean(), grouped["agree"].mean()
    expected = p * q + (1 - p) * (1 - q)
    with np.errstate(invalid="ignore", divide="ignore"):
        kappa = (observed - expected) / (1 - expected)
    return kappa.where(1 - expected > TINY).astype(float)


def model_without_errors(frame: pd.DataFrame) -> str:
    """Why error consistency cannot be assessed for this model on these items ("" when it can): a model that
    is right on every item (or wrong on every one) makes every participant's κ 0 or undefined by construction."""
    correct = frame.groupby("item_id")["model_correct"].first()
    if len(correct) and (correct == 1).all():
        return "the model made no errors on these items"
    if len(correct) and (correct == 0).all():
        return "the model answered none of these items correctly"
    return ""


def error_consistency(frame: pd.DataFrame) -> float:
    """The mean κ over the participants who have one; NaN for a model without errors (or correct answers)."""
    if model_without_errors(frame):
        return float("nan")
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


def _ratio(point_r: float, people: dict) -> tuple[float, str]:
    """choice_r / ceiling, or blank with the reason: no ceiling, a ceiling not above 0, or an interval that
    does not exclude 0 (a ratio over a denominator that may be 0 or negative says nothing)."""
    value, low, high = people["ceiling"], people["ceiling_low"], people["ceiling_high"]
    if np.isnan(point_r):
        return float("nan"), "no choice_r"
    if np.isnan(value):
        return float("nan"), "no ceiling"
    if value <= 0:
        return float("nan"), f"the ceiling ({value:.3f}) is not above 0: the people's halves do not agree"
    if np.isnan(low):
        return float("nan"), "the ceiling has no interval, so it is not known to be above 0"
    if low <= 0:
        return float("nan"), f"the ceiling's interval [{low:.3f}, {high:.3f}] reaches 0"
    return point_r / value, ""


def _reasons(point_r: float, r_interval: tuple[float, float], people: dict, ratio_reason: str, kappa_reason: str,
             splits: int) -> str:
    """Why a cell is blank or qualified, one clause per statistic ("" when none is)."""
    out = []
    if np.isnan(point_r):
        out.append("choice_r: fewer than 3 items, or the shares or the model's probabilities do not vary")
    elif np.isnan(r_interval[0]):
        out.append("choice_r interval: leaving an item out leaves r undefined (too few items, or one item "
                   "carries all the variance)")
    if np.isnan(people["ceiling"]):
        out.append("ceiling: no split has 3 items answered in both halves with shares that vary")
    elif np.isnan(people["ceiling_low"]):
        out.append("ceiling interval: leaving an item out leaves it undefined")
    if people["negative_splits"]:
        out.append(f"ceiling: {people['negative_splits']} of {splits} splits had a negative half-to-half r, "
                   "averaged uncorrected (Spearman–Brown is for r ≥ 0)")
    if ratio_reason:
        out.append(f"choice_r_over_ceiling: {ratio_reason}")
    if kappa_reason:
        out.append(f"error_consistency: {kappa_reason}")
    return "; ".join(out)


def summarise(frame: pd.DataFrame, halves: pd.DataFrame, *, resamples: int = RESAMPLES, seed: int = SEED,
              ceilings: dict | None = None) -> dict:
    """One model's row of the table (its frame: one model's rows of `answer_frame`). The ceiling depends only
    on the people's answers to the model's items: `ceilings` keeps it for the next model with the same items."""
    mat = matrices(frame, halves)
    point_r = choice_r(frame)
    r_interval = choice_r_interval(mat, point_r)
    ceilings = {} if ceilings is None else ceilings
    key = (tuple(mat.participants), tuple(mat.items))
    if key not in ceilings:
        ceilings[key] = ceiling_summary(mat)
    people = ceilings[key]
    ratio, ratio_reason = _ratio(point_r, people)
    kappa = kappas(frame).reindex(mat.participants).to_numpy()
    left_out = np.isnan(kappa)
    kappa_reason = model_without_errors(frame)
    defined = ~left_out if not kappa_reason else np.zeros(len(kappa), dtype=bool)
    if not kappa_reason and not defined.any():
        kappa_reason = "every participant's expected agreement with the model is 1 (no κ)"
    ec, ec_interval = float("nan"), (float("nan"), float("nan"))
    if defined.any():
        Wp = _draws(np.random.default_rng(seed), len(mat.participants), resamples)
        with np.errstate(invalid="ignore", divide="ignore"):
            draws = (Wp[:, defined] @ kappa[defined]) / Wp[:, defined].sum(axis=1)
        ec, ec_interval = float(kappa[defined].mean()), _interval(draws)
    model_ll, base_ll, clipped = loglik(frame)
    splits = int(halves["split"].nunique())
    return {
        "items": len(mat.items), "answers": len(frame), "participants": len(mat.participants),
        "choice_r": point_r, "choice_r_low": r_interval[0], "choice_r_high": r_interval[1],
        "ceiling": people["ceiling"], "ceiling_low": people["ceiling_low"], "ceiling_high": people["ceiling_high"],
        "choice_r_over_ceiling": ratio, "error_consistency": ec,
        "error_consistency_low": ec_interval[0], "error_consistency_high": ec_interval[1],
        "kappa_participants": int(defined.sum()), "kappa_left_out": int(left_out.sum()),
        "loglik_per_answer": model_ll, "loglik_base": base_ll, "clipped": clipped,
        "negative_splits": people["negative_splits"], "splits": splits, "resamples": resamples, "seed": seed,
        "reasons": _reasons(point_r, r_interval, people, ratio_reason, kappa_reason, splits),
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
    "choice_r_low": ("number", "", "lower bound of choice_r's 95% interval: the delete-one jackknife over items on "
                     "Fisher's z scale, bias-corrected (deterministic)"),
    "choice_r_high": ("number", "", "upper bound of choice_r's 95% interval"),
    "ceiling": ("number", "", "the people's split-half reliability of the item shares (random halves of distinct "
                "participants, Spearman–Brown corrected where the halves' r ≥ 0, a negative r uncorrected, mean over "
                "the splits): what a model cannot be expected to exceed"),
    "ceiling_low": ("number", "", "lower bound of the ceiling's 95% interval: the delete-one jackknife over items "
                    "on Fisher's z scale, bias-corrected, the same splits of distinct participants"),
    "ceiling_high": ("number", "", "upper bound of the ceiling's 95% interval"),
    "choice_r_over_ceiling": ("number", "", "choice_r / ceiling; blank (reason in reasons) when the ceiling is not "
                              "above 0 or its interval reaches 0"),
    "error_consistency": ("number", "", "Cohen's κ between each participant's correct/incorrect and the model's on "
                          "the same items, beyond what their accuracies predict (Geirhos et al. 2020), averaged over "
                          "participants; blank (reason in reasons) for a model with no errors or no correct answers"),
    "error_consistency_low": ("number", "", "lower bound of error_consistency's 95% percentile bootstrap interval "
                              "(participants resampled, seeded)"),
    "error_consistency_high": ("number", "", "upper bound of error_consistency's 95% bootstrap interval"),
    "kappa_participants": ("integer", "", "participants whose κ enters error_consistency"),
    "kappa_left_out": ("integer", "", "participants left out of error_consistency because their expected agreement "
                       "with the model is 1 (both right on every shared item, or both wrong): κ undefined"),
    "loglik_per_answer": ("number", _LL, "mean natural log of the model's relative probability of each answer "
                          "people gave (Centaur, Binz et al. 2025)"),
    "loglik_base": ("number", _LL, "the same under the people's base rate (the share of all answers giving that "
                    "answer)"),
    "clipped": ("integer", "", f"answers whose model probability was below {EPS:g}, counted as {EPS:g}"),
    "negative_splits": ("integer", "", "splits whose halves' r was negative: averaged into the ceiling uncorrected"),
    "splits": ("integer", "", "random split-halves averaged for the ceiling"),
    "resamples": ("integer", "", "bootstrap resamples of error_consistency's interval"),
    "seed": ("integer", "", "the seed of the splits and of error_consistency's bootstrap (numpy default_rng)"),
    "reasons": ("string", "", "why a cell of the row is blank or qualified, one clause per statistic (blank: none)"),
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
