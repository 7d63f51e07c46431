# Helpers the analysis calls on fitted lme4 models through rpy2 (analysis/rbridge.py).
# Each takes a fitted model and returns a plain data.frame or list that converts cleanly to pandas.

duet_control <- function(m, optimizer) {
  if (inherits(m, "glmerMod")) glmerControl(optimizer = optimizer) else lmerControl(optimizer = optimizer)
}

# Likelihood-ratio test of the full model against the model without each fixed-effect term
# (both fitted by maximum likelihood; random effects kept).
duet_lrt <- function(m, terms, optimizer) {
  fr <- m@frame
  f <- formula(m)
  ctrl <- duet_control(m, optimizer)
  refit <- function(form) {
    if (inherits(m, "glmerMod")) {
      lme4::glmer(form, data = fr, family = family(m), control = ctrl)
    } else {
      lme4::lmer(form, data = fr, REML = FALSE, control = ctrl)
    }
  }
  full <- if (inherits(m, "glmerMod")) m else refit(f)
  rows <- lapply(terms, function(term) {
    reduced <- refit(update(f, as.formula(paste(". ~ . -", term))))
    l1 <- logLik(full); l0 <- logLik(reduced)
    chisq <- as.numeric(2 * (l1 - l0)); df <- attr(l1, "df") - attr(l0, "df")
    data.frame(term = term, chisq = chisq, df = df, p_value = pchisq(chisq, df, lower.tail = FALSE),
               aic_full = AIC(full), aic_reduced = AIC(reduced))
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

duet_r2 <- function(m) {
  r <- tryCatch(suppressWarnings(performance::r2_nakagawa(m)), error = function(e) NULL)
  if (is.null(r)) return(c(marginal = NA_real_, conditional = NA_real_))
  c(marginal = as.numeric(r$R2_marginal), conditional = as.numeric(r$R2_conditional))
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

# A binomial GLMM with nAGQ = 0 (fixed effects estimated inside PIRLS): for models with many fixed
# effects, where pymer4 0.8.2 (which cannot pass nAGQ) would take minutes. Returns the model and the
# same pieces pymer4 reports: coefficient table with Wald CIs, messages, group sizes, variances.
duet_glmer_fast <- function(formula, data, optimizer) {
  m <- lme4::glmer(as.formula(formula), data = data, family = binomial, nAGQ = 0,
                   control = glmerControl(optimizer = optimizer))
  co <- summary(m)$coefficients
  z <- qnorm(0.975)
  coefs <- data.frame(term = rownames(co), Estimate = co[, 1], `2.5_ci` = co[, 1] - z * co[, 2],
                      `97.5_ci` = co[, 1] + z * co[, 2], SE = co[, 2], `Z-stat` = co[, 3],
                      `P-val` = co[, 4], check.names = FALSE)
  vc <- as.data.frame(lme4::VarCorr(m))
  vc <- vc[is.na(vc$var2), ]
  variances <- data.frame(group = vc$grp, Name = vc$var1, Var = vc$vcov, Std = vc$sdcor)
  msgs <- c(as.character(unlist(m@optinfo$warnings)), as.character(unlist(m@optinfo$conv$lme4$messages)))
  list(model = m, coefs = coefs, messages = msgs, groups = sapply(lme4::ngrps(m), as.integer),
       variances = variances)
}
