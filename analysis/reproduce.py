"""The scripts a report ships so an analyst can refit its models: reproduce.R (lme4, lmerTest) and
reproduce.py (pymer4's Lmer, the Python bridge to lme4 the project's design names).

Each refits every model section the report fitted (Section.fitted: formula, family, nAGQ, optimizer,
factor levels and the likelihood-ratio terms) from the exact frame it was fitted on
(data/model_frames/<key>.csv), prints the fixed effects and the likelihood-ratio χ², and writes them
to reproduced/R/ or reproduced/python/ (<key>_coefficients.csv, <key>_lrt.csv). The report's own
tables are tables/<key>_coefficients.csv and tables/<key>_lrt.csv; tests/analysis/test_reproduce.py
runs both scripts and matches them (fixed effects to 1e-6, χ² to 1e-4).

pymer4 0.8.2 cannot pass glmer's nAGQ, so a model fitted with nAGQ = 0 (the human-vs-model model) is
refitted in R from reproduce.py too (through rpy2, which pymer4 itself runs on); the script says so
where it does it. Written by us; the model code is generated from the specs, so what the scripts fit
is what the report fitted.
"""
from __future__ import annotations

import json
from pathlib import Path

from .sections import Section

FOLDER = "data/model_frames"


def write_scripts(sections: list[Section], out_dir: Path) -> list[Path]:
    """Write reproduce.R and reproduce.py into out_dir (none when no section fitted a model)."""
    fitted = [s for s in sections if s.fitted is not None and s.data is not None]
    own = [s for s in sections if s.scripts and not s.absent]  # sections that bring their own recomputation
    if not fitted and not own:
        return []
    r_path, py_path = Path(out_dir) / "reproduce.R", Path(out_dir) / "reproduce.py"
    r_path.write_text(_r_script(fitted) + "".join(s.scripts.get("R", "") for s in own), encoding="utf-8")
    py_path.write_text(_py_script(fitted) + "".join(s.scripts.get("python", "") for s in own), encoding="utf-8")
    return [r_path, py_path]


def _r_string(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)  # a double-quoted string R reads the same way


def _r_levels(levels: dict[str, list[str]]) -> str:
    parts = [f"{name} = c({', '.join(_r_string(v) for v in values)})" for name, values in levels.items()]
    return f"list({', '.join(parts)})"


# bglmer as the report fits it (analysis/r/helpers.R duet_bglmer): from lme4's default start, and where
# PIRLS stops there, with the fixed effects starting from brglm2's bias-reduced estimates; a model with one
# fixed effect gets its prior as a variance (blme's normal(sd = ) stops on it).
BGLMER_R = (
    "bglmer_fit <- function(formula, d, family, optimizer) {",
    "  # one fixed effect (the intercept alone: a likelihood-ratio test's reduced model): its prior as a variance",
    "  fixed <- lme4::nobars(formula)",
    "  one <- prior_sd[if (attr(terms(fixed), 'intercept') == 1L) 1L else 2L]^2",
    "  prior <- if (ncol(model.matrix(fixed, d)) == 1L) bquote(normal(cov = .(one))) else quote(normal(sd = prior_sd))",
    "  fit <- function(start) eval(bquote(blme::bglmer(formula, data = d, family = family, nAGQ = 1L,",
    "    control = glmerControl(optimizer = optimizer), fixef.prior = .(prior), cov.prior = NULL, start = start)))",
    "  tryCatch(fit(NULL), error = function(e) {",
    "    b <- coef(glm(lme4::nobars(formula), data = d, family = family, method = brglm2::brglmFit, type = 'AS_mean'))",
    "    fit(list(fixef = b[!is.na(b)]))",
    "  })",
    "}",
)
BGLMER_PY = "prior_sd <- c(10, 2.5)\n" + "\n".join(BGLMER_R)


def _r_script(sections: list[Section]) -> str:
    lines = [
        "# Refit every model of this Duet report from its model frame (data/model_frames/) with lme4/lmerTest.",
        "# Run it from anywhere: Rscript reproduce.R. Needs R with lme4 and lmerTest. It prints each model's",
        "# fixed effects and likelihood-ratio chi-squares and writes them to reproduced/R/.",
        "suppressPackageStartupMessages({library(lme4); library(lmerTest)})",
        "# A model with separation (a cell of the fixed effects all 0 or all 1) is refitted as the report fitted it:",
        "# blme::bglmer with normal(0, sd) priors on the fixed effects (sd 10 on the intercept, 2.5 on the others),",
        "# or brglm2's bias-reduced glm when it has no random effects (the report's section says which).",
        "prior_sd <- c(10, 2.5)",
        "here <- local({ f <- grep('^--file=', commandArgs(FALSE), value = TRUE)",
        "  if (length(f)) dirname(normalizePath(sub('^--file=', '', f[1]))) else getwd() })",
        "out <- file.path(here, 'reproduced', 'R'); dir.create(out, recursive = TRUE, showWarnings = FALSE)",
        "frame <- function(key, levels) {",
        f"  d <- read.csv(file.path(here, {_r_string(FOLDER)}, paste0(key, '.csv')))",
        "  for (f in names(levels)) d[[f]] <- factor(d[[f]], levels = levels[[f]])  # the first level is the reference",
        "  d",
        "}",
        *BGLMER_R,
        "fit <- function(formula, d, family, nagq, optimizer, reml = TRUE, method = 'ml') {",
        "  mixed <- !is.null(lme4::findbars(formula))",
        "  if (family == 'gaussian') {",
        "    lmerTest::lmer(formula, data = d, REML = reml, control = lmerControl(optimizer = optimizer))",
        "  } else if (method == 'bglmer') {",
        "    bglmer_fit(formula, d, family, optimizer)",
        "  } else if (method == 'brglm') {",
        "    glm(formula, data = d, family = family, method = brglm2::brglmFit, type = 'AS_mean')",
        "  } else if (!mixed) {",
        "    glm(formula, data = d, family = family)",
        "  } else {",
        "    lme4::glmer(formula, data = d, family = family, nAGQ = nagq, control = glmerControl(optimizer = optimizer))",
        "  }",
        "}",
        "# Likelihood-ratio test of each term: the model without it against the full model, both by maximum",
        "# likelihood (a linear mixed model is refitted by ML; a GLMM is already an ML fit), or both by the",
        "# separation-safe method the model used.",
        "lrt <- function(m, formula, d, family, nagq, optimizer, terms, optimizers, method = 'ml') {",
        "  full <- if (family == 'gaussian') fit(formula, d, family, nagq, optimizer, reml = FALSE) else m",
        "  rows <- lapply(seq_along(terms), function(i) {",
        "    reduced <- fit(update(formula, as.formula(paste('. ~ . -', terms[i]))), d, family, nagq, optimizers[i],",
        "                   reml = FALSE, method = method)",
        "    chisq <- as.numeric(2 * (logLik(full) - logLik(reduced)))",
        "    df <- attr(logLik(full), 'df') - attr(logLik(reduced), 'df')",
        "    data.frame(term = terms[i], chisq = chisq, df = df, p_value = pchisq(chisq, df, lower.tail = FALSE))",
        "  })",
        "  do.call(rbind, rows)",
        "}",
        "report <- function(key, m) {",
        "  co <- summary(m)$coefficients",
        "  table <- data.frame(term = rownames(co), Estimate = co[, 'Estimate'], SE = co[, 'Std. Error'])",
        "  write.csv(table, file.path(out, paste0(key, '_coefficients.csv')), row.names = FALSE)",
        "  cat('\\n==', key, '==\\n'); print(co)",
        "}",
    ]
    for section in sections:
        f = section.fitted
        lines += [
            "",
            f"# ---- {section.key}: {section.title}",
            f"d <- frame({_r_string(section.key)}, {_r_levels(f.levels)})",
            f"formula <- as.formula({_r_string(f.formula)})",
            f"m <- fit(formula, d, {_r_string(f.family)}, {f.nagq}L, {_r_string(f.optimizer)}, "
            f"method = {_r_string(f.method)})",
            f"report({_r_string(section.key)}, m)",
        ]
        if f.lrt_terms:
            terms = ", ".join(_r_string(t) for t in f.lrt_terms)
            optimizers = ", ".join(_r_string(f.lrt_optimizers.get(t, f.optimizer)) for t in f.lrt_terms)
            lines += [
                f"lr <- lrt(m, formula, d, {_r_string(f.family)}, {f.nagq}L, {_r_string(f.optimizer)}, c({terms}), "
                f"c({optimizers}), method = {_r_string(f.method)})",
                f"write.csv(lr, file.path(out, {_r_string(section.key + '_lrt.csv')}), row.names = FALSE); print(lr)",
            ]
    return "\n".join(lines) + "\n"


def _py_script(sections: list[Section]) -> str:
    models = [{"key": s.key, "title": s.title, "formula": s.fitted.formula, "family": s.fitted.family,
               "nagq": s.fitted.nagq, "optimizer": s.fitted.optimizer, "levels": s.fitted.levels,
               "method": s.fitted.method,
               "lrt": [[t, s.fitted.lrt_optimizers.get(t, s.fitted.optimizer)] for t in s.fitted.lrt_terms]}
              for s in sections]
    return f'''"""Refit every model of this Duet report from its model frame (data/model_frames/) with pymer4.

Run it from anywhere: python reproduce.py. Needs pandas and pymer4 (which needs R with lme4 and
lmerTest). It prints each model's fixed effects and likelihood-ratio chi-squares and writes them to
reproduced/python/. pymer4 0.8.2 cannot pass glmer's nAGQ: a model fitted with nAGQ = 0 is refitted
with R's glmer through rpy2 (pymer4's own bridge to R), as this script says when it does so.
"""
import re
from pathlib import Path

import pandas as pd

HERE = Path(__file__).resolve().parent
OUT = HERE / "reproduced" / "python"
MODELS = {json.dumps(models, ensure_ascii=False, indent=1)}


def frame(key):
    # round_trip: pandas' default fast float parser can miss the last bit of a number, and a mixed
    # model's optimum moves by ~1e-6 when its data move by one ulp
    return pd.read_csv(HERE / {FOLDER!r} / f"{{key}}.csv", float_precision="round_trip")


def without(formula, term):
    """The formula with one fixed-effect term dropped (R's update(formula, . ~ . - term))."""
    import rpy2.robjects as ro

    reduced = ro.r(f"update(as.formula('{{formula}}'), . ~ . - {{term}})")
    return re.sub(r"\\s+", " ", " ".join(ro.r["deparse"](reduced, width_cutoff=500)))


def with_levels(spec, data):
    """Factors as R factors with the report's level order (the first is the reference; R's default
    treatment coding names the coefficients as the report does, the factor's name then the level, e.g. agentm1)."""
    data = data.copy()
    for name, levels in spec["levels"].items():
        data[name] = pd.Categorical(data[name].astype(str), categories=levels)
    return data


def pymer4_fit(spec, data, formula, reml):
    from pymer4.models import Lmer  # here, not at the top: a report without models to refit never needs it

    model = Lmer(formula, data=with_levels(spec, data), family=spec["family"])
    model.fit(REML=reml, control=f"optimizer='{{spec['optimizer']}}'", summarize=False)
    return model


def r_glmer_nagq(spec, data, formula, optimizer):
    """glmer with nAGQ (pymer4 0.8.2 has no such argument), or the separation-safe fit the report used
    (blme::bglmer, brglm2): R through rpy2."""
    import rpy2.robjects as ro
    from rpy2.robjects import pandas2ri
    from rpy2.robjects.conversion import localconverter

    data = with_levels(spec, data)
    ro.r("suppressPackageStartupMessages(library(lme4))")
    with localconverter(ro.default_converter + pandas2ri.converter):
        ro.globalenv["d"] = ro.conversion.get_conversion().py2rpy(data)
    if spec["method"] == "bglmer":
        ro.r({BGLMER_PY!r})
        ro.r(f"m <- bglmer_fit({{formula}}, d, {{spec['family']}}, '{{optimizer}}')")
    elif spec["method"] == "brglm":
        ro.r(f"m <- glm({{formula}}, data = d, family = {{spec['family']}}, method = brglm2::brglmFit, type = 'AS_mean')")
    else:
        ro.r(f"m <- lme4::glmer({{formula}}, data = d, family = {{spec['family']}}, nAGQ = {{spec['nagq']}}, "
             f"control = glmerControl(optimizer = '{{optimizer}}'))")
    co = ro.r("summary(m)$coefficients")
    names = list(ro.r("rownames(summary(m)$coefficients)"))
    table = pd.DataFrame({{"term": names, "Estimate": list(co.rx(True, 1)), "SE": list(co.rx(True, 2))}})
    return table, float(ro.r("as.numeric(logLik(m))")[0])


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    for spec in MODELS:
        data = frame(spec["key"])
        print(f"\\n== {{spec['key']}}: {{spec['title']}} ==")
        if spec["family"] != "gaussian" and (spec["nagq"] != 1 or spec["method"] != "ml"):
            if spec["method"] != "ml":
                print(f"The report fitted this model by {{spec['method']}} (separation), which pymer4 cannot: it is "
                      "refitted the same way in R through rpy2.")
            else:
                print(f"pymer4 0.8.2 cannot fit glmer with nAGQ = {{spec['nagq']}}: this model is refitted with R's "
                      "glmer through rpy2.")
            table, full_ll = r_glmer_nagq(spec, data, spec["formula"], spec["optimizer"])
            rows = []
            for term, optimizer in spec["lrt"]:
                _, reduced_ll = r_glmer_nagq(spec, data, without(spec["formula"], term), optimizer)
                rows.append({{"term": term, "chisq": 2 * (full_ll - reduced_ll)}})
        else:
            model = pymer4_fit(spec, data, spec["formula"], reml=spec["family"] == "gaussian")
            table = pd.DataFrame({{"term": model.coefs.index, "Estimate": model.coefs["Estimate"].to_numpy(),
                                   "SE": model.coefs["SE"].to_numpy()}})
            rows = []
            if spec["lrt"]:
                full = model if spec["family"] != "gaussian" else pymer4_fit(spec, data, spec["formula"], reml=False)
                from pymer4.stats import lrt

                for term, optimizer in spec["lrt"]:
                    reduced = pymer4_fit({{**spec, "optimizer": optimizer}}, data, without(spec["formula"], term), reml=False)
                    result = lrt([full, reduced], refit=False)
                    rows.append({{"term": term, "chisq": float(result["Chisq"].iloc[-1])}})
        table.to_csv(OUT / f"{{spec['key']}}_coefficients.csv", index=False)
        print(table.to_string(index=False))
        if rows:
            pd.DataFrame(rows).to_csv(OUT / f"{{spec['key']}}_lrt.csv", index=False)
            print(pd.DataFrame(rows).to_string(index=False))


if __name__ == "__main__":
    main()
'''
