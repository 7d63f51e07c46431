"""The one door to R. rpy2 is imported here only, lazily, on first use.

R is single-threaded and rpy2's converters are process-global, so every R call goes through
`r_session()`: a process-wide lock, and conversions inside `localconverter` blocks. Fits call
lmerTest::lmer / lme4::glmer through the helpers in analysis/r/helpers.R and return the summary
pymer4 0.8.2's Lmer gave (coefficients with Wald CIs, group sizes, variances, warnings); marginal
means, Nakagawa R², likelihood-ratio tests and random effects are helpers called on the fitted R
object. pymer4 itself is not imported here: its package pulls in seaborn and scikit-learn and wraps
every function of R's base and stats packages at import (5–6 s of every report's start-up), and
each of its fits converts the design matrix, fitted values and residuals back to Python, none of
which the report uses. On the benchmark's data the Eq. 4-6 tables came out identical to pymer4's.
"""
from __future__ import annotations

import logging
import os
import threading
import warnings
from collections import deque
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace

import pandas as pd

_LOCK = threading.RLock()
_STATE: dict[str, SimpleNamespace] = {}
HELPERS = Path(__file__).with_name("r") / "helpers.R"
OPTIMIZERS = ("bobyqa", "Nelder_Mead")
_CONVERGENCE_WORDS = ("converge", "failed", "hessian", "eigenvalue", "degenerate")


class RUnavailable(RuntimeError):
    """R, its packages or rpy2 cannot be loaded (the analysis dependency group is not installed)."""


def _load() -> SimpleNamespace:
    if "r" in _STATE:
        return _STATE["r"]
    os.environ.setdefault("TZ", "UTC")
    # rpy2 prepends R's library folders to LD_LIBRARY_PATH when R starts; child processes started
    # later (workers, browsers, another Python) must not inherit that, so it is put back afterwards.
    saved_ld_path = os.environ.get("LD_LIBRARY_PATH")
    logging.getLogger("rpy2").setLevel(logging.WARNING)  # its at-exit INFO line hits closed streams
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            import rpy2.robjects as ro
            from rpy2.rinterface_lib import callbacks
            from rpy2.robjects import pandas2ri
            from rpy2.robjects.conversion import localconverter

            messages: deque[str] = deque(maxlen=200)  # R's console output; bounded for long-lived workers
            callbacks.consolewrite_warnerror = messages.append
            callbacks.consolewrite_print = messages.append
    except Exception as error:  # ImportError, or rpy2 failing to find R
        raise RUnavailable(
            "The statistics stack is not available: install R (scripts/apt/analysis.txt) and the "
            f"'analysis' dependency group (pip install --group analysis). Cause: {error}"
        ) from error
    ro.r("suppressPackageStartupMessages({library(lme4); library(lmerTest); library(emmeans); "
         "library(performance)}); emm_options(lmer.df = \"satterthwaite\", msg.interaction = FALSE, "
         "msg.nesting.d = FALSE)")
    ro.r(f"source('{HELPERS.as_posix()}')")
    if saved_ld_path is None:
        os.environ.pop("LD_LIBRARY_PATH", None)
    else:
        os.environ["LD_LIBRARY_PATH"] = saved_ld_path
    state = SimpleNamespace(
        ro=ro, callbacks=callbacks, pandas2ri=pandas2ri, localconverter=localconverter, messages=messages,
    )
    _STATE["r"] = state
    return state


@contextmanager
def r_session():
    """Hold the R lock; yield the loaded bridge with rpy2's default conversion rules set. Those rules
    live in a ContextVar that rpy2 sets only in the thread that first imported it, so an R call from
    any other thread (a report built in a server thread, DUET_TASK_MODE=eager) would find none.
    Re-entrant within one thread."""
    with _LOCK:
        r = _load()
        with r.localconverter(r.ro.default_converter):
            yield r


def available() -> bool:
    try:
        with r_session():
            return True
    except RUnavailable:
        return False


def to_pandas(r, obj) -> pd.DataFrame:
    with r.localconverter(r.ro.default_converter + r.pandas2ri.converter):
        frame = r.ro.conversion.get_conversion().rpy2py(obj)
    frame = pd.DataFrame(frame).reset_index(drop=True)
    for column in frame.columns:  # R factors arrive as categoricals; plain strings read better
        if isinstance(frame[column].dtype, pd.CategoricalDtype):
            frame[column] = frame[column].astype(str)
    return frame


def to_r(r, frame: pd.DataFrame):
    """A pandas frame as an R data.frame, column by column from numpy buffers.

    rpy2's pandas2ri sends every column with the frame's index as string names (one Python string
    per cell, seconds for 24,000 rows); here numbers go as numpy arrays and categoricals as factor
    codes with their levels. Object columns become factors; NaN/NA stay missing."""
    import numpy as np

    ri, ro = r.ro.rinterface, r.ro
    columns = []
    for name in frame.columns:
        column = frame[name]
        if column.dtype == object or isinstance(column.dtype, pd.StringDtype):
            column = column.astype("category")
        if isinstance(column.dtype, pd.CategoricalDtype):
            codes = column.cat.codes.to_numpy().astype(np.int32) + 1
            vector = ro.baseenv["structure"](
                ri.IntSexpVector(np.where(codes == 0, ri.NA_Integer, codes).tolist()),
                levels=ri.StrSexpVector([str(c) for c in column.cat.categories]), **{"class": "factor"})
        elif column.dtype == bool:
            vector = ri.BoolSexpVector(column.tolist())
        elif pd.api.types.is_integer_dtype(column.dtype) and not column.isna().any():
            vector = ri.IntSexpVector(column.to_numpy().astype(np.int32).tolist())
        else:
            values = pd.to_numeric(column, errors="raise").astype(float).to_numpy()
            vector = ri.FloatSexpVector(np.where(np.isnan(values), ri.NA_Real, values).tolist())
        columns.append(vector)
    listed = ri.ListSexpVector(columns)
    listed.do_slot_assign("names", ri.StrSexpVector([str(c) for c in frame.columns]))
    return ro.baseenv["list2DF"](listed, nrow=len(frame))


def call(name: str, *args, **kwargs):
    """Call one of the helpers.R functions; returns the raw R object (caller holds the lock)."""
    with r_session() as r:
        return r.ro.globalenv[name](*args, **kwargs)


# A coefficient whose standard error passes this (on the logit scale: a 95% interval wider than
# ±196) is not estimated at all: the mark of separation, never printed as a number (issue 25).
SE_LIMIT = 100.0
# The separation-safe fits (R's duet_model, analysis/r/helpers.R): what the report and the
# reproduce scripts say about them.
PRIOR_SD = (10.0, 2.5)
SAFE_METHODS = {
    "bglmer": ("blme::bglmer with weakly informative normal priors on the fixed effects (Chung et al. 2013's "
               f"blme; sd {PRIOR_SD[0]:g} on the intercept, {PRIOR_SD[1]:g} on every other coefficient, on the "
               "logit scale; random-effect variances unpenalised, as lme4 estimates them), fitted by Laplace "
               "(nAGQ = 1)"),
    "brglm": "bias-reduced logistic regression (brglm2::brglmFit, type AS_mean: Firth's penalty)",
}


@dataclass(frozen=True)
class SeparatedCell:
    """A cell of the fixed effects whose answers are all 0 or all 1 (R's duet_separation)."""

    term: str
    factors: tuple[str, ...]
    levels: tuple[str, ...]
    n: int
    ones: int

    def covers(self, other: "SeparatedCell") -> bool:
        """This cell holds `other` (its factors are a subset, at the same levels) and says it first."""
        mine = dict(zip(self.factors, self.levels))
        theirs = dict(zip(other.factors, other.levels))
        return self != other and all(theirs.get(k) == v for k, v in mine.items())

    def words(self, response: str) -> str:
        where = ", ".join(f"{factor} {level}" for factor, level in zip(self.factors, self.levels))
        what = "correct" if response == "correct" else f"with {response} = 1"
        if self.ones == self.n:
            return f"{where}: all {self.n} answers {what}"
        return f"{where}: none of {self.n} answers {what}"


@dataclass
class Fit:
    """A fitted mixed model: the coefficient table, the R object, and what happened."""

    formula: str
    family: str
    coefs: pd.DataFrame  # term, Estimate, 2.5_ci, 97.5_ci, SE, (DF, T-stat | OR…, Z-stat), P-val, Sig
    model: object  # the R lme4 object
    optimizer: str
    n_obs: int
    groups: dict[str, int]
    variances: pd.DataFrame  # random-effect variances and SDs: group, Name, Var, Std
    warnings: list[str] = field(default_factory=list)
    attempts: list[str] = field(default_factory=list)
    method: str = "ml"  # "ml", or a separation-safe fit: "bglmer" (GLMM) or "brglm" (no random effects)
    separation: list[SeparatedCell] = field(default_factory=list)  # the cells that called for it
    ml_se_max: float | None = None  # an ML fit's largest SE when that (not a cell) called for the safe fit
    ml_error: str | None = None  # or the error the ML fit stopped with
    perfectly_predicted: int = 0  # answers a combination of fixed effects predicts perfectly (no cell shows it)

    @property
    def converged(self) -> bool:
        return not _convergence_problems(self.warnings)

    @property
    def separated(self) -> bool:
        return self.method != "ml"

    @property
    def nagq(self) -> int:
        return 1 if self.method == "bglmer" else 0 if "nAGQ = 0" in self.family else 1


def _convergence_problems(messages: list[str]) -> list[str]:
    return [m for m in messages if any(word in m.lower() for word in _CONVERGENCE_WORDS)]


def separation(formula: str, data: pd.DataFrame) -> list[SeparatedCell]:
    """The cells of the formula's fixed effects (every combination of the levels of a factors-only
    term) whose answers are all 0 or all 1, each once: a cell inside a listed one is left out (an
    agent always right is not listed again per modality)."""
    with r_session() as r:
        return _separation_r(r, formula, to_r(r, _factors_for_r(data)))


def _separation_r(r, formula: str, frame) -> list[SeparatedCell]:
    table = to_pandas(r, call("duet_separation", formula, frame))
    cells = [SeparatedCell(term=row.term, factors=tuple(row.vars.split("\r")), levels=tuple(row.values.split("\r")),
                           n=int(row.n), ones=int(row.ones)) for row in table.itertuples()]
    return [c for c in cells if not any(other.covers(c) for other in cells)]


def _lp_separation_r(r, formula: str, frame) -> int:
    """How many answers some direction of the fixed effects predicts perfectly: 0 when the fixed part
    does not separate the answers. The linear program of Konis (2007): with s = 2y − 1 and A = s·X,
    separation (complete or quasi-complete) is a β with Aβ ≥ 0 and Aβ ≠ 0; maximise Σ Aβ over
    −1 ≤ β ≤ 1 (rows with equal (x, y) merged in R and weighted). Catches what no single cell shows (an
    additive model's "staircase", a covariate that splits the answers)."""
    import numpy as np
    from scipy.optimize import linprog

    result = call("duet_model_matrix", formula, frame)
    if result is r.ro.NULL or result is r.ro.rinterface.NULL:
        return 0
    table = to_pandas(r, result)
    counts = table.pop(".n").to_numpy(dtype=float)
    rows = table.to_numpy(dtype=float)
    scale = np.maximum(np.abs(rows).max(axis=0), 1e-12)  # columns on one scale: the tolerance means the same
    rows = rows / scale
    found = linprog(-(counts @ rows), A_ub=-rows, b_ub=np.zeros(len(rows)), bounds=[(-1, 1)] * rows.shape[1],
                    method="highs")
    if found.status != 0 or -found.fun <= 1e-7 * counts.sum():
        return 0
    return int(counts[rows @ found.x > 1e-7].sum())


def fit(formula: str, data: pd.DataFrame, *, family: str = "gaussian", fast: bool = False) -> Fit:
    """Fit with bobyqa; on a convergence warning refit with Nelder_Mead and keep the better try.

    lmerTest::lmer (REML) for gaussian, lme4::glmer otherwise (glm for a binomial formula without
    random effects); `fast=True` (binomial only) fits glmer with nAGQ = 0, for models with many
    fixed effects. A binomial model is checked for separation first: a fixed-effect cell at 0 % or
    100 % (`separation`), else a linear-programming check of the fixed effects' design
    (`_lp_separation_r`); with either, or when the ML fit stops with an error or gives a coefficient
    an SE over SE_LIMIT, it is fitted by a method that stays finite (SAFE_METHODS: blme::bglmer, or
    brglm2 without random effects).
    Every warning and message of every attempt is kept, tagged with its optimizer (the report shows
    them); nothing is silenced.
    """
    if fast and family != "binomial":
        raise ValueError("fast=True (nAGQ = 0) is for binomial models only")
    data = _factors_for_r(data)
    with r_session() as r:
        return fit_r(r, formula, to_r(r, data), n_obs=len(data), family=family, fast=fast)


def fit_r(r, formula: str, frame, *, n_obs: int, family: str = "gaussian", fast: bool = False,
          start=None) -> Fit:
    """`fit`'s rule on a data.frame already in R (the caller holds the R session): the one place the
    report's fitting rule is written; the power analysis fits each simulated study through it
    (analysis/power.py). `start` (an R list(theta, fixef)) is where a separation-safe fit starts from:
    the same optimum in fewer evaluations (the power analysis starts from its pilot's safe fit)."""
    cells = _separation_r(r, formula, frame) if family == "binomial" else []
    perfect = _lp_separation_r(r, formula, frame) if family == "binomial" and not cells else 0
    cells_or_lp = bool(cells) or perfect > 0
    try:
        chosen = _fit_tries(r, formula, frame, n_obs, family, fast, safe=cells_or_lp, start=start)
    except Exception as error:  # glmer stops outright on some separations ("pwrssUpdate did not converge")
        if type(error).__name__ != "RRuntimeError" or family != "binomial" or cells_or_lp:
            raise
        chosen = _fit_tries(r, formula, frame, n_obs, family, fast, safe=True, start=start)
        chosen.ml_error = " ".join(str(error).split())
    if family == "binomial" and not cells and chosen.method == "ml" and "SE" in chosen.coefs:
        se = pd.to_numeric(chosen.coefs["SE"], errors="coerce")
        if (se > SE_LIMIT).any():  # separation that no single cell shows
            chosen = _fit_tries(r, formula, frame, n_obs, family, fast, safe=True, start=start)
            chosen.ml_se_max = float(se.max())
    chosen.separation = cells
    chosen.perfectly_predicted = perfect
    return chosen


def _fit_tries(r, formula: str, frame, n_obs: int, family: str, fast: bool, *, safe: bool, start=None) -> Fit:
    tries: list[Fit] = []
    for optimizer in OPTIMIZERS:
        result = _fit_r(r, formula, frame, family, optimizer, nagq=0 if fast else 1, n_obs=n_obs, safe=safe,
                        start=start if safe else None)
        tries.append(result)
        if result.converged or not result.groups:  # a glm has no optimizer to change
            break
    chosen = next((t for t in tries if t.converged), tries[-1])
    chosen.attempts = [t.optimizer for t in tries]
    chosen.warnings = [w for t in tries for w in t.warnings]
    return chosen


def _factors_for_r(data: pd.DataFrame) -> pd.DataFrame:
    """String columns become categoricals: they go to R as factor codes, not one string per row."""
    data = data.copy()
    for column in data.columns:
        if data[column].dtype == object:
            data[column] = data[column].astype("category")
    return data


def _fit_r(r, formula: str, frame, family: str, optimizer: str, *, nagq: int, n_obs: int, safe: bool = False,
           start=None) -> Fit:
    extra = () if start is None else (start,)
    result = call("duet_fit", formula, frame, family, optimizer, nagq, "safe" if safe else "ml", *extra)
    parts = dict(zip(result.names, result))
    groups = parts["groups"]
    coefs = to_pandas(r, parts["coefs"])
    if "P-val" in coefs:
        coefs["Sig"] = coefs["P-val"].map(_stars)
    mixed = len(groups) > 0
    method = ("bglmer" if mixed else "brglm") if safe else "ml"
    label = f"{family} (nAGQ = 0)" if (mixed and not safe and not nagq) else family
    optimizer = optimizer if mixed else "glm"  # a glm has no optimizer to choose
    return Fit(
        formula=formula, family=label, coefs=coefs, model=parts["model"], optimizer=optimizer, n_obs=n_obs,
        groups={str(k): int(v) for k, v in zip(groups.names, groups)} if mixed else {},
        variances=to_pandas(r, parts["variances"]),
        warnings=[f"[{optimizer}] {m}" for m in parts["messages"]], method=method,
    )


def _stars(p: float) -> str:
    """Significance stars as lme4's summary (and pymer4) print them."""
    if pd.isna(p):
        return ""
    return "***" if p < 0.001 else "**" if p < 0.01 else "*" if p < 0.05 else "." if p < 0.1 else ""


def lrt(fit_: Fit, terms: list[str]) -> pd.DataFrame:
    """Likelihood-ratio test of the fit against the model without each term (both by ML).

    Every refit tries the fit's optimizer first and the others after a convergence warning, like
    `fit`; the `warnings` column holds each refit's warnings and messages (one per line, labelled
    with the refit and the optimizer): `lrt_warnings` lists them for the report."""
    order = [fit_.optimizer, *[o for o in OPTIMIZERS if o != fit_.optimizer]]
    with r_session() as r:
        result = call("duet_lrt", fit_.model, r.ro.StrVector(terms), r.ro.StrVector(order),
                      "|".join(_CONVERGENCE_WORDS))
        table = to_pandas(r, result)
    table["warnings"] = table["warnings"].fillna("").astype(str)
    return table


def lrt_warnings(table: pd.DataFrame) -> list[str]:
    """The warnings of an `lrt` table's refits, each once, in order ("LRT, model without …")."""
    found = [line for cell in table.get("warnings", []) for line in str(cell).splitlines() if line.strip()]
    return [f"LRT, {line}" for line in dict.fromkeys(found)]


def emmeans(fit_: Fit, spec: str, *, response: bool = False, level: float = 0.95) -> pd.DataFrame:
    """Marginal means with CIs; response=True gives the probability scale for a binomial model."""
    with r_session() as r:
        kind = "response" if response else "link"
        frame = to_pandas(r, call("duet_emmeans", fit_.model, spec, kind, level))
        return _tidy_emmeans(frame)


def hypotheses(fit_: Fit, factor: str, pairs: list[tuple[str, str]], *, adjust: str = "holm") -> pd.DataFrame:
    """One-sided tests of `low < high` for each (low, high) pair of a factor's levels."""
    with r_session() as r:
        ro = r.ro
        labels = [f"{low} < {high}" for low, high in pairs]
        frame = to_pandas(r, call(
            "duet_hypotheses", fit_.model, factor, ro.StrVector([p[0] for p in pairs]),
            ro.StrVector([p[1] for p in pairs]), ro.StrVector(labels), adjust,
        ))
        return _tidy_emmeans(frame).rename(columns={"contrast": "hypothesis"})


def versus_reference(fit_: Fit, factor: str, by: str | None, *, adjust: str = "holm") -> pd.DataFrame:
    with r_session() as r:
        by_arg = by if by is not None else r.ro.NULL
        return _tidy_emmeans(to_pandas(r, call("duet_vs_reference", fit_.model, factor, by_arg, adjust)))


def pairs(fit_: Fit, spec: str, *, adjust: str = "holm") -> pd.DataFrame:
    """Every pairwise difference (later level minus earlier) of the marginal means in `spec`."""
    with r_session() as r:
        return _tidy_emmeans(to_pandas(r, call("duet_pairs", fit_.model, spec, adjust)))


def random_effects(fit_: Fit) -> pd.DataFrame:
    """Conditional modes and their conditional SDs (grpvar, term, grp, condval, condsd)."""
    with r_session() as r:
        return to_pandas(r, call("duet_ranef", fit_.model))


def r2(fit_: Fit) -> dict[str, float]:
    """Nakagawa's marginal and conditional R², and whether they leave out the random effects (their
    variances could not be estimated: performance's 'Random effect variances not available')."""
    if not fit_.groups:  # no random effects (glm): Nakagawa's R² is for mixed models
        return {}
    with r_session():
        values = list(call("duet_r2", fit_.model))
        return {"marginal": float(values[0]), "conditional": float(values[1]),
                "random_effects_omitted": bool(values[2])}


def versions() -> dict[str, str]:
    with r_session():
        result = call("duet_versions")
        return dict(zip(result.names, [str(v) for v in result]))


_RENAMES = {
    "emmean": "estimate", "prob": "estimate", "response": "estimate", "rate": "estimate",
    "lower.CL": "ci_low", "upper.CL": "ci_high", "asymp.LCL": "ci_low", "asymp.UCL": "ci_high",
    "t.ratio": "statistic", "z.ratio": "statistic", "p.value": "p_value", "SE": "se",
}


def _tidy_emmeans(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.rename(columns=_RENAMES)
