# Helpers the analysis calls on fitted lme4 models through rpy2 (analysis/rbridge.py).
# Each takes a fitted model and returns a plain data.frame or list that converts cleanly to pandas.

duet_control <- function(m, optimizer) {
  if (inherits(m, "glmerMod")) glmerControl(optimizer = optimizer) else lmerControl(optimizer = optimizer)
}

# Evaluate `expr`, muffling and keeping every warning and message R raises on the way (the report
# shows them; nothing goes to the console). Returns list(value, notes).
duet_capture <- function(expr) {
  notes <- character(0)
  keep <- function(condition) notes <<- c(notes, gsub("\\s+", " ", trimws(conditionMessage(condition))))
  value <- withCallingHandlers(expr,
    warning = function(w) { keep(w); invokeRestart("muffleWarning") },
    message = function(m) { keep(m); invokeRestart("muffleMessage") })
  list(value = value, notes = notes)
}

# What lme4 recorded about the optimisation (convergence checks, singular fits, optimizer warnings).
duet_optinfo <- function(m) {
  found <- c(as.character(unlist(m@optinfo$warnings)), as.character(unlist(m@optinfo$conv$lme4$messages)))
  gsub("\\s+", " ", trimws(found))
}

# Fit one model with each optimizer in turn until one converges (no note matches `pattern`); keep
# the notes of every attempt. `fitter(optimizer)` returns the fitted model.
duet_try <- function(fitter, optimizers, pattern) {
  tries <- list()
  for (optimizer in optimizers) {
    got <- duet_capture(fitter(optimizer))
    notes <- unique(c(got$notes, duet_optinfo(got$value)))
    tries[[length(tries) + 1]] <- list(model = got$value, optimizer = optimizer, notes = notes)
    if (!any(grepl(pattern, notes, ignore.case = TRUE))) break
  }
  converged <- Filter(function(t) !any(grepl(pattern, t$notes, ignore.case = TRUE)), tries)
  chosen <- if (length(converged)) converged[[1]] else tries[[length(tries)]]
  chosen$all_notes <- unlist(lapply(tries, function(t) if (length(t$notes)) sprintf("[%s] %s", t$optimizer, t$notes)))
  chosen
}

# Likelihood-ratio test of the full model against the model without each fixed-effect term (both
# fitted by maximum likelihood; random effects kept). Each refit tries the optimizers in turn like
# the main fit; the warnings and messages of every refit come back in the `warnings` column.
duet_lrt <- function(m, terms, optimizers, pattern) {
  fr <- m@frame
  f <- formula(m)
  glmm <- inherits(m, "glmerMod")
  refit <- function(form) function(optimizer) {
    if (glmm) {
      lme4::glmer(form, data = fr, family = family(m), nAGQ = m@devcomp$dims[["nAGQ"]],
                  control = glmerControl(optimizer = optimizer))
    } else {
      lme4::lmer(form, data = fr, REML = FALSE, control = lmerControl(optimizer = optimizer))
    }
  }
  full_notes <- character(0)
  full <- m
  if (!glmm) {
    got <- duet_try(refit(f), optimizers, pattern)
    full <- got$model
    if (length(got$all_notes)) full_notes <- paste("full model refitted by ML", got$all_notes)
  }
  rows <- lapply(terms, function(term) {
    got <- duet_try(refit(update(f, as.formula(paste(". ~ . -", term)))), optimizers, pattern)
    reduced <- got$model
    l1 <- logLik(full); l0 <- logLik(reduced)
    chisq <- as.numeric(2 * (l1 - l0)); df <- attr(l1, "df") - attr(l0, "df")
    notes <- c(full_notes, if (length(got$all_notes)) paste("model without", term, got$all_notes))
    data.frame(term = term, chisq = chisq, df = df, p_value = pchisq(chisq, df, lower.tail = FALSE),
               aic_full = AIC(full), aic_reduced = AIC(reduced), optimizer = got$optimizer,
               warnings = paste(notes, collapse = "\n"))
  })
  do.call(rbind, rows)
}

duet_emmeans <- function(m, spec, type, level) {
  emm <- emmeans::emmeans(m, as.formula(spec), type = type)
  as.data.frame(summary(emm, level = level, infer = c(TRUE, TRUE)))
}

# One-sided tests of "low < high" hypotheses between levels of one factor, p-values adjusted.
duet_hypotheses <- function(m, factor, lows, highs, labels, adjust) {
  emm <- emmeans::emmeans(m, factor)
  lv <- levels(emm)[[factor]]
  L <- lapply(seq_along(lows), function(i) {
    v <- numeric(length(lv)); v[lv == highs[i]] <- 1; v[lv == lows[i]] <- -1; v
  })
  names(L) <- labels
  as.data.frame(summary(emmeans::contrast(emm, method = L), infer = c(TRUE, TRUE),
                        side = ">", adjust = adjust))
}

# Contrasts of every level of `factor` against its reference level, within levels of `by`,
# on the response (probability) scale.
duet_vs_reference <- function(m, factor, by, adjust) {
  spec <- if (is.null(by)) as.formula(paste("~", factor)) else as.formula(paste("~", factor, "|", by))
  emm <- emmeans::regrid(emmeans::emmeans(m, spec))
  as.data.frame(summary(emmeans::contrast(emm, method = "trt.vs.ctrl", ref = 1),
                        infer = c(TRUE, TRUE), adjust = adjust))
}

duet_ranef <- function(m) {
  as.data.frame(lme4::ranef(m, condVar = TRUE))
}

# Nakagawa's R2, and whether it leaves out the random effects: when performance cannot estimate
# their variances (a singular fit) it warns "Can't compute random effect variances", prints "Random
# effect variances not available. Returned R2 does not account for random effects" and returns no
# conditional R2. What it says is kept here (the report explains it), not printed.
duet_r2 <- function(m) {
  said <- character(0)
  said <- c(said, utils::capture.output(r <- tryCatch(withCallingHandlers(performance::r2_nakagawa(m),
    warning = function(w) { said <<- c(said, conditionMessage(w)); invokeRestart("muffleWarning") },
    message = function(msg) { said <<- c(said, conditionMessage(msg)); invokeRestart("muffleMessage") }),
    error = function(e) NULL)))
  if (is.null(r)) return(c(marginal = NA_real_, conditional = NA_real_, omitted = 1))
  omitted <- is.na(r$R2_conditional) || any(grepl("random effect variances", said, ignore.case = TRUE))
  c(marginal = as.numeric(r$R2_marginal), conditional = as.numeric(r$R2_conditional), omitted = as.numeric(omitted))
}

duet_versions <- function() {
  pk <- c("lme4", "lmerTest", "emmeans", "performance", "pbkrtest", "Matrix")
  c(R = R.version.string, sapply(pk, function(p) as.character(utils::packageVersion(p))))
}

# All pairwise differences of `spec`'s levels (e.g. "~ argform | modality"), p-values adjusted.
duet_pairs <- function(m, spec, adjust) {
  emm <- emmeans::emmeans(m, as.formula(spec))
  as.data.frame(summary(pairs(emm, reverse = TRUE), infer = c(TRUE, TRUE), adjust = adjust))
}

# Fit one mixed model: lmerTest::lmer (REML) for "gaussian", lme4::glmer otherwise (nagq = 0 puts the
# fixed effects inside PIRLS, for models with many of them). Returns the model and its summary pieces
# in the layout pymer4 0.8.2 used: coefficients with Wald 95% CIs (plus odds ratios and probabilities
# for binomial), group sizes, random-effect variances, and every warning and message R raised.
duet_fit <- function(formula, data, family, optimizer, nagq = 1L) {
  f <- as.formula(formula)
  got <- duet_capture(
    if (family == "gaussian") {
      lmerTest::lmer(f, data = data, REML = TRUE, control = lmerControl(optimizer = optimizer))
    } else {
      lme4::glmer(f, data = data, family = family, nAGQ = nagq, control = glmerControl(optimizer = optimizer))
    })
  m <- got$value
  table <- duet_capture(duet_coefs(m, family))
  vc <- as.data.frame(lme4::VarCorr(m))
  vc <- vc[is.na(vc$var2), ]
  variances <- data.frame(group = vc$grp, Name = ifelse(is.na(vc$var1), "", vc$var1), Var = vc$vcov,
                          Std = vc$sdcor)
  list(model = m, coefs = table$value, messages = unique(c(got$notes, duet_optinfo(m), table$notes)),
       groups = sapply(lme4::ngrps(m), as.integer), variances = variances)
}

duet_coefs <- function(m, family) {
  co <- summary(m)$coefficients
  ci <- confint(m, method = "Wald", parm = "beta_")
  names <- c(Estimate = "Estimate", `Std. Error` = "SE", df = "DF", `t value` = "T-stat",
             `z value` = "Z-stat", `Pr(>|t|)` = "P-val", `Pr(>|z|)` = "P-val")
  out <- data.frame(term = rownames(co), Estimate = co[, "Estimate"], `2.5_ci` = ci[, 1],
                    `97.5_ci` = ci[, 2], SE = co[, "Std. Error"], check.names = FALSE)
  if (family == "binomial") {
    odds <- exp(cbind(co[, "Estimate"], ci))
    probs <- odds / (1 + odds)
    out <- cbind(out, data.frame(OR = odds[, 1], `OR_2.5_ci` = odds[, 2], `OR_97.5_ci` = odds[, 3],
                                 Prob = probs[, 1], `Prob_2.5_ci` = probs[, 2],
                                 `Prob_97.5_ci` = probs[, 3], check.names = FALSE))
  }
  rest <- setdiff(colnames(co), c("Estimate", "Std. Error"))
  for (column in rest) out[[names[[column]]]] <- co[, column]
  rownames(out) <- NULL
  out
}
