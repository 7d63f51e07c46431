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
  if (!isS4(m)) return(if (isTRUE(m$converged)) character(0) else "the glm iterations failed to converge")
  found <- c(as.character(unlist(m@optinfo$warnings)), as.character(unlist(m@optinfo$conv$lme4$messages)))
  gsub("\\s+", " ", trimws(found))
}

# Fit one model with each optimizer in turn until one converges (no note matches `pattern`). The notes
# of the attempt kept (`kept_notes`) and of the attempts discarded (`discarded_notes`) come back apart,
# each tagged with its optimizer: a warning of a discarded attempt says nothing about the fit kept.
# `fitter(optimizer)` returns the fitted model.
duet_try <- function(fitter, optimizers, pattern) {
  tries <- list()
  for (optimizer in optimizers) {
    got <- duet_capture(fitter(optimizer))
    notes <- unique(c(got$notes, duet_optinfo(got$value)))
    tries[[length(tries) + 1]] <- list(model = got$value, optimizer = optimizer, notes = notes)
    if (!any(grepl(pattern, notes, ignore.case = TRUE))) break
  }
  ok <- which(vapply(tries, function(t) !any(grepl(pattern, t$notes, ignore.case = TRUE)), logical(1)))
  kept <- if (length(ok)) ok[1] else length(tries)
  tag <- function(t) if (length(t$notes)) sprintf("[%s] %s", t$optimizer, t$notes) else character(0)
  chosen <- tries[[kept]]
  chosen$kept_notes <- tag(chosen)
  chosen$discarded_notes <- unlist(lapply(tries[-kept], tag))
  chosen
}

# How a model was fitted: "safe" (blme::bglmer or brglm2's bias reduction) or "ml".
duet_method <- function(m) {
  if (inherits(m, "bglmerMod") || (!isS4(m) && identical(m$method, "brglmFit"))) "safe" else "ml"
}

# Likelihood-ratio test of the full model against the model without each fixed-effect term (both
# fitted by maximum likelihood, or both by the separation-safe method the full model used; random
# effects kept). Each refit tries the optimizers in turn like the main fit; the warnings and
# messages of each refit kept come back in the `warnings` column, those of its discarded attempts in
# `discarded`.
duet_lrt <- function(m, terms, optimizers, pattern) {
  glmm <- inherits(m, "glmerMod")
  method <- duet_method(m)
  if (!isS4(m)) {  # glm or brglm2: one fit, no optimizer choice
    fr <- m$data
    family_ <- family(m)
    refit <- function(form) function(optimizer) duet_model(form, fr, family_, optimizer, 1L, method)
    f <- formula(m)
  } else {
    fr <- m@frame
    f <- formula(m)
    refit <- function(form) function(optimizer) {
      if (glmm) {
        duet_model(form, fr, family(m), optimizer, m@devcomp$dims[["nAGQ"]], method)
      } else {
        lme4::lmer(form, data = fr, REML = FALSE, control = lmerControl(optimizer = optimizer))
      }
    }
  }
  full_notes <- character(0); full_discarded <- character(0)
  full <- m
  if (isS4(m) && !glmm) {
    got <- duet_try(refit(f), optimizers, pattern)
    full <- got$model
    if (length(got$kept_notes)) full_notes <- paste("full model refitted by ML", got$kept_notes)
    if (length(got$discarded_notes)) full_discarded <- paste("full model refitted by ML", got$discarded_notes)
  }
  rows <- lapply(terms, function(term) {
    got <- duet_try(refit(update(f, as.formula(paste(". ~ . -", term)))), if (isS4(m)) optimizers else "glm", pattern)
    reduced <- got$model
    l1 <- logLik(full); l0 <- logLik(reduced)
    chisq <- as.numeric(2 * (l1 - l0)); df <- attr(l1, "df") - attr(l0, "df")
    notes <- c(full_notes, if (length(got$kept_notes)) paste("model without", term, got$kept_notes))
    discarded <- c(full_discarded, if (length(got$discarded_notes)) paste("model without", term, got$discarded_notes))
    data.frame(term = term, chisq = chisq, df = df, p_value = pchisq(chisq, df, lower.tail = FALSE),
               aic_full = AIC(full), aic_reduced = AIC(reduced), optimizer = got$optimizer,
               warnings = paste(notes, collapse = "\n"), discarded = paste(discarded, collapse = "\n"))
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
  pk <- c("lme4", "lmerTest", "emmeans", "performance", "pbkrtest", "Matrix", "blme", "brglm2")
  c(R = R.version.string, sapply(pk, function(p) as.character(utils::packageVersion(p))))
}

# All pairwise differences of `spec`'s levels (e.g. "~ a | b": of a within each level of b), p-values adjusted.
duet_pairs <- function(m, spec, adjust) {
  emm <- emmeans::emmeans(m, as.formula(spec))
  as.data.frame(summary(pairs(emm, reverse = TRUE), infer = c(TRUE, TRUE), adjust = adjust))
}

# The weakly informative prior of a separation-safe GLMM: normal(0, 10^2) on the intercept and
# normal(0, 2.5^2) on every other fixed effect (blme's normal prior; Gelman et al. 2008's scales),
# random-effect variances left as lme4 estimates them (cov.prior = NULL).
DUET_PRIOR_SD <- c(10, 2.5)

# Fit one model. "gaussian": lmerTest::lmer (REML). Otherwise, with random effects, lme4::glmer
# (nagq = 0 puts the fixed effects inside PIRLS, for models with many of them) or, with
# method = "safe" (separation), blme::bglmer with DUET_PRIOR_SD on the fixed effects (by Laplace:
# blme cannot put a prior on fixed effects estimated inside PIRLS); without random effects, glm or,
# with method = "safe", brglm2's bias-reduced fit (Firth-type, type "AS_mean"), which stays finite.
# blme::bglmer with DUET_PRIOR_SD on the fixed effects. From lme4's default start PIRLS can fail on a
# separated design ("Downdated VtV is not positive definite", seen on the demo's pilot); then the fit
# starts its fixed effects from brglm2's bias-reduced fit of the fixed part (finite under separation),
# and says so in a message the report shows. The same rule is in the reproduce scripts.
# A model with one fixed effect (the intercept alone: the reduced model of a likelihood-ratio test of a
# single factor) gets that coefficient's prior as a variance (normal(cov = )): blme's normal(sd = ) stops
# on it ("'nrow' or 'ncol' cannot be specified when 'x' is a matrix").
duet_bglmer <- function(f, data, family, optimizer, start = NULL) {
  fixed <- lme4::nobars(f)
  single <- ncol(stats::model.matrix(fixed, data)) == 1L
  single_var <- DUET_PRIOR_SD[if (attr(stats::terms(fixed), "intercept") == 1L) 1L else 2L]^2
  # blme reads the prior's arguments as written, outside this function: the variance goes in as a number
  prior <- if (single) bquote(normal(cov = .(single_var))) else quote(normal(sd = DUET_PRIOR_SD))
  fit <- function(start) eval(bquote(blme::bglmer(f, data = data, family = family, nAGQ = 1L,
                                                  control = glmerControl(optimizer = optimizer),
                                                  fixef.prior = .(prior), cov.prior = NULL, start = start)))
  if (!is.null(start)) {  # a start that does not fit this design (another set of fixed effects): the default path
    got <- tryCatch(fit(start), error = function(e) NULL)
    if (!is.null(got)) return(got)
  }
  tryCatch(fit(NULL), error = function(e) {
    b <- stats::coef(stats::glm(lme4::nobars(f), data = data, family = family, method = brglm2::brglmFit,
                                type = "AS_mean"))
    message("bglmer stopped from lme4's default start (", conditionMessage(e), "); refitted with the fixed ",
            "effects starting from brglm2's bias-reduced estimates")
    fit(list(fixef = b[!is.na(b)]))
  })
}

duet_model <- function(f, data, family, optimizer, nagq = 1L, method = "ml", start = NULL) {
  mixed <- !is.null(lme4::findbars(f))
  if (is.character(family) && family == "gaussian") {
    lmerTest::lmer(f, data = data, REML = TRUE, control = lmerControl(optimizer = optimizer))
  } else if (!mixed && method == "safe") {
    stats::glm(f, data = data, family = family, method = brglm2::brglmFit, type = "AS_mean")
  } else if (!mixed) {
    stats::glm(f, data = data, family = family)
  } else if (method == "safe") {
    duet_bglmer(f, data, family, optimizer, start)
  } else {
    lme4::glmer(f, data = data, family = family, nAGQ = nagq, control = glmerControl(optimizer = optimizer))
  }
}

# Cells of the fixed effects where every answer is the same (complete or quasi-complete separation):
# for each term of the formula's fixed part made of factors only, every combination of its factors'
# levels present in the data whose response is all 0 or all 1. Each such cell's indicator lies in
# the span of the model matrix (treatment coding, a hierarchical formula), so maximum likelihood
# sends a coefficient to infinity. One row per cell: term, the factors, their levels ("\r" between),
# the answers in the cell and how many have response 1.
duet_separation <- function(formula, data) {
  f <- lme4::nobars(as.formula(formula))
  out <- data.frame(term = character(0), vars = character(0), values = character(0), n = integer(0),
                    ones = integer(0))
  if (length(f) < 3 || !is.name(f[[2]])) return(out)  # a cbind() response: not checked by cells
  y <- as.numeric(data[[as.character(f[[2]])]])
  for (term in attr(terms(f), "term.labels")) {
    vars <- all.vars(as.formula(paste("~", term)))
    if (!all(vapply(vars, function(v) is.factor(data[[v]]) || is.character(data[[v]]) || is.logical(data[[v]]),
                    logical(1)))) next  # a numeric covariate: no cells
    cells <- interaction(lapply(vars, function(v) as.character(data[[v]])), drop = TRUE, sep = "\r")
    n <- tapply(y, cells, length)
    ones <- tapply(y, cells, sum)
    bad <- names(n)[!is.na(n) & (ones == 0 | ones == n)]
    if (length(bad)) {
      out <- rbind(out, data.frame(term = term, vars = paste(vars, collapse = "\r"), values = bad,
                                   n = as.integer(n[bad]), ones = as.integer(ones[bad])))
    }
  }
  rownames(out) <- NULL
  out
}

# Fit one model (duet_model) and return it with its summary pieces in the layout pymer4 0.8.2 used:
# coefficients with Wald 95% CIs (plus odds ratios and probabilities for binomial), group sizes,
# random-effect variances, and every warning and message R raised.
duet_fit <- function(formula, data, family, optimizer, nagq = 1L, method = "ml", start = NULL) {
  f <- as.formula(formula)
  got <- duet_capture(duet_model(f, data, family, optimizer, nagq, method, start))
  m <- got$value
  table <- duet_capture(duet_coefs(m, family))
  if (isS4(m)) {
    vc <- as.data.frame(lme4::VarCorr(m))
    vc <- vc[is.na(vc$var2), ]
    variances <- data.frame(group = vc$grp, Name = ifelse(is.na(vc$var1), "", vc$var1), Var = vc$vcov,
                            Std = vc$sdcor)
    groups <- sapply(lme4::ngrps(m), as.integer)
    optinfo <- duet_optinfo(m)
  } else {  # glm: no random effects
    variances <- data.frame(group = character(0), Name = character(0), Var = numeric(0), Std = numeric(0))
    groups <- integer(0)
    optinfo <- if (isTRUE(m$converged)) character(0) else "the glm iterations failed to converge"
  }
  list(model = m, coefs = table$value, messages = unique(c(got$notes, optinfo, table$notes)),
       groups = groups, variances = variances)
}

duet_coefs <- function(m, family) {
  co <- summary(m)$coefficients
  ci <- if (isS4(m)) confint(m, method = "Wald", parm = "beta_") else stats::confint.default(m)
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

# The rows of the fixed part's model matrix signed by the answer, A = (2y - 1) * X, each distinct row
# once with its count `.n` (for the linear-programming check of separation in analysis/rbridge.py;
# a factors-only design has a handful); NULL for a cbind() or non-0/1 response.
duet_model_matrix <- function(formula, data) {
  f <- lme4::nobars(as.formula(formula))
  if (length(f) < 3 || !is.name(f[[2]])) return(NULL)
  X <- stats::model.matrix(f, data)
  y <- as.numeric(data[[as.character(f[[2]])]])[as.integer(rownames(X))]
  if (!all(y %in% c(0, 1))) return(NULL)
  A <- X * (2 * y - 1)
  # a row's key: its projection on the square roots of the first primes (linearly independent over the
  # rationals, so distinct rows of small integers never share one); pasting the rows is 50 times slower
  primes <- Filter(function(k) k < 4 || all(k %% 2:floor(sqrt(k)) != 0), 2:(20 * ncol(A) + 20))[seq_len(ncol(A))]
  key <- as.vector(A %*% sqrt(primes))
  first <- !duplicated(key)
  out <- as.data.frame(A[first, , drop = FALSE])
  names(out) <- sprintf("x%d", seq_len(ncol(A)))
  out$.n <- tabulate(match(key, key[first]), nbins = sum(first))
  out
}
