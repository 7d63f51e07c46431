"""The one fitting rule of the analysis, and what the report asks of a fitted model, through R.

Fits call lmerTest::lmer / lme4::glmer through the helpers in analysis/r/helpers.R and return the
summary pymer4 0.8.2's Lmer gave (coefficients with Wald CIs, group sizes, variances, warnings);
marginal means, Nakagawa R², likelihood-ratio tests and random effects are helpers called on the
fitted R object. pymer4 itself is not imported here: its package pulls in seaborn and scikit-learn
and wraps every function of R's base and stats packages at import (5–6 s of every report's
start-up), and each of its fits converts the design matrix, fitted values and residuals back to
Python, none of which the report uses. On the benchmark's data the Eq. 4-6 tables came out identical
to pymer4's.

Where the pieces live: this process's R (its lock, loading, conversions) in analysis/rsession.py; the
separation checks in analysis/separation.py; the fitting rule (`fit_r`, with its fallback routes,
docs/analysis.md "How a model is fitted") and the questions asked of a fit here. The names of
rsession and separation that callers use are available from here too.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from .rsession import HELPERS, RUnavailable, available, call, factors_for_r, r_session, to_pandas, to_r
from .separation import SeparatedCell, cells_r, perfectly_predicted_r, separation

__all__ = [
    "HELPERS", "OPTIMIZERS", "PRIOR_SD", "SAFE_METHODS", "SE_LIMIT", "Fit", "RUnavailable", "SeparatedCell",
    "available", "call", "emmeans", "factors_for_r", "fit", "fit_r", "hypotheses", "lrt", "lrt_discarded",
    "lrt_warnings", "pairs", "r2", "r_session", "random_effects", "separation", "to_pandas", "to_r", "versions",
    "versus_reference",
]

OPTIMIZERS = ("bobyqa", "Nelder_Mead")
_CONVERGENCE_WORDS = ("converge", "failed", "hessian", "eigenvalue", "degenerate")
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
    # whether the fit reported converged: its own warnings only, not those of the attempts before it
    converged: bool = True
    warnings: list[str] = field(default_factory=list)  # the kept fit's own, tagged "[optimizer]" (the report shows)
    attempts: list[str] = field(default_factory=list)
    # the warnings of the attempts not kept (an optimizer that did not converge, or the maximum-likelihood fit the
    # separation-safe fit replaced), tagged; the report lists them apart, as discarded
    discarded: list[str] = field(default_factory=list)
    method: str = "ml"  # "ml", or a separation-safe fit: "bglmer" (GLMM) or "brglm" (no random effects)
    separation: list[SeparatedCell] = field(default_factory=list)  # the cells that called for it
    ml_se_max: float | None = None  # an ML fit's largest SE when that (not a cell) called for the safe fit
    ml_error: str | None = None  # or the error the ML fit stopped with
    perfectly_predicted: int = 0  # answers a combination of fixed effects predicts perfectly (no cell shows it)

    @property
    def separated(self) -> bool:
        return self.method != "ml"

    @property
    def nagq(self) -> int:
        return 1 if self.method == "bglmer" else 0 if "nAGQ = 0" in self.family else 1


def _convergence_problems(messages: list[str]) -> list[str]:
    return [m for m in messages if any(word in m.lower() for word in _CONVERGENCE_WORDS)]


def fit(formula: str, data: pd.DataFrame, *, family: str = "gaussian", fast: bool = False) -> Fit:
    """Fit `formula` to a pandas frame by the one rule (`fit_r`).

    lmerTest::lmer (REML) for gaussian, lme4::glmer otherwise (glm for a binomial formula without
    random effects); `fast=True` (binomial only) fits glmer with nAGQ = 0, for models with many
    fixed effects."""
    if fast and family != "binomial":
        raise ValueError("fast=True (nAGQ = 0) is for binomial models only")
    data = factors_for_r(data)
    with r_session() as r:
        return fit_r(r, formula, to_r(r, data), n_obs=len(data), family=family, fast=fast)


def fit_r(r, formula: str, frame, *, n_obs: int, family: str = "gaussian", fast: bool = False,
          start=None) -> Fit:
    """The one place the fitting rule is written, on a data.frame already in R (the caller holds the R
    session): the report's every model and every study the power analysis simulates (analysis/power.py)
    are fitted here. Its routes, in order (docs/analysis.md, "How a model is fitted"):

    1. a binomial model is checked for separation before it is fitted: a fixed-effect cell at 0 % or
       100 % (separation.cells_r), else the linear-programming check (separation.perfectly_predicted_r);
       with either it is fitted by a method that stays finite (SAFE_METHODS: blme::bglmer, or brglm2
       without random effects) and never by maximum likelihood;
    2. otherwise by maximum likelihood; a binomial ML fit that stops with an R error (glmer's
       "pwrssUpdate did not converge" on some separations) is fitted by the safe method instead;
    3. a binomial ML fit with a coefficient's SE over SE_LIMIT (separation no cell shows) is refitted
       by the safe method;
    4. every fit, ML or safe, is tried with bobyqa first and, on a convergence warning, again with
       Nelder_Mead (`_fit_tries`); the first that converges is kept, else the last.
    `warnings` holds the kept attempt's own warnings and messages, tagged with its optimizer; `discarded`
    those of every attempt not kept (the other optimizer's, and a maximum-likelihood fit that route 3
    replaced), so the report never shows a discarded attempt's warning as the kept fit's; `converged`
    is the kept attempt's own. `start` (an R list(theta, fixef)) is
    where a separation-safe fit starts from: the same optimum in fewer evaluations (the power analysis
    starts from its pilot's safe fit)."""
    binomial = family == "binomial"
    cells = cells_r(r, formula, frame) if binomial else []
    perfect = perfectly_predicted_r(r, formula, frame) if binomial and not cells else 0
    separated = bool(cells) or perfect > 0

    def tries(safe: bool) -> Fit:
        return _fit_tries(r, formula, frame, n_obs, family, fast, safe=safe, start=start)

    try:
        chosen = tries(safe=separated)  # route 1 (safe) or 2 (ML)
    except Exception as error:
        if type(error).__name__ != "RRuntimeError" or not binomial or separated:
            raise
        chosen = tries(safe=True)  # route 2: ML stopped with an error
        chosen.ml_error = " ".join(str(error).split())
    if binomial and not cells and chosen.method == "ml" and "SE" in chosen.coefs:
        se = pd.to_numeric(chosen.coefs["SE"], errors="coerce")
        if (se > SE_LIMIT).any():  # route 3: separation that no single cell shows
            replaced = chosen
            chosen = tries(safe=True)
            chosen.ml_se_max = float(se.max())
            chosen.discarded = [f"{w} (maximum-likelihood fit, replaced by the separation-safe fit)"
                                for w in replaced.discarded + replaced.warnings] + chosen.discarded
    chosen.separation = cells
    chosen.perfectly_predicted = perfect
    return chosen


def _fit_tries(r, formula: str, frame, n_obs: int, family: str, fast: bool, *, safe: bool, start=None) -> Fit:
    """Route 4 of `fit_r`: each optimizer in turn until one converges; the kept fit carries its own
    warnings and `converged`, the optimizers tried, and the discarded attempts' warnings apart."""
    tries: list[Fit] = []
    for optimizer in OPTIMIZERS:
        result = _fit_r(r, formula, frame, family, optimizer, nagq=0 if fast else 1, n_obs=n_obs, safe=safe,
                        start=start if safe else None)
        tries.append(result)
        if result.converged or not result.groups:  # a glm has no optimizer to change
            break
    chosen = next((t for t in tries if t.converged), tries[-1])
    chosen.attempts = [t.optimizer for t in tries]
    chosen.discarded = [w for t in tries if t is not chosen for w in t.warnings]
    return chosen


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
    messages = [f"[{optimizer}] {m}" for m in parts["messages"]]
    return Fit(
        formula=formula, family=label, coefs=coefs, model=parts["model"], optimizer=optimizer, n_obs=n_obs,
        groups={str(k): int(v) for k, v in zip(groups.names, groups)} if mixed else {},
        variances=to_pandas(r, parts["variances"]), converged=not _convergence_problems(messages),
        warnings=messages, method=method,
    )


def _stars(p: float) -> str:
    """Significance stars as lme4's summary (and pymer4) print them."""
    if pd.isna(p):
        return ""
    return "***" if p < 0.001 else "**" if p < 0.01 else "*" if p < 0.05 else "." if p < 0.1 else ""


def lrt(fit_: Fit, terms: list[str]) -> pd.DataFrame:
    """Likelihood-ratio test of the fit against the model without each term (both by ML).

    Every refit tries the fit's optimizer first and the others after a convergence warning, like
    `fit`; the `warnings` column holds the warnings and messages of each refit kept (one per line,
    labelled with the refit and the optimizer), `discarded` those of its attempts not kept:
    `lrt_warnings` and `lrt_discarded` list them for the report."""
    order = [fit_.optimizer, *[o for o in OPTIMIZERS if o != fit_.optimizer]]
    with r_session() as r:
        result = call("duet_lrt", fit_.model, r.ro.StrVector(terms), r.ro.StrVector(order),
                      "|".join(_CONVERGENCE_WORDS))
        table = to_pandas(r, result)
    for column in ("warnings", "discarded"):
        table[column] = table[column].fillna("").astype(str)
    return table


def lrt_warnings(table: pd.DataFrame, column: str = "warnings") -> list[str]:
    """The warnings of an `lrt` table's kept refits, each once, in order ("LRT, model without …")."""
    found = [line for cell in table.get(column, []) for line in str(cell).splitlines() if line.strip()]
    return [f"LRT, {line}" for line in dict.fromkeys(found)]


def lrt_discarded(table: pd.DataFrame) -> list[str]:
    """The warnings of the refit attempts an `lrt` table did not keep, each once, in order."""
    return lrt_warnings(table, "discarded")


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
