# Simulation-based power for the human-vs-model contrasts (analysis/power.py, issues 18 and 25):
# draw a study of n participants from the pilot's lists, simulate their answers from a fitted GLMM
# (new participants and re-drawn random effects: lme4's simulate with allow.new.levels; a model's
# answers are its own, the same in every study, so they stay as observed), refit the same model the
# way the report fits it, and run the report's own test of each model against the humans within each
# modality and argument form. Needs analysis/r/helpers.R (duet_model, duet_separation,
# duet_vs_reference, duet_capture).

# The pilot's rows with n participants: each new participant takes the trials (items, order) of a
# pilot participant drawn at random; the models' rows stay as they are.
duet_power_design <- function(data, n) {
  data$respondent <- as.character(data$respondent)
  humans <- data[data$agent == "human", ]
  others <- data[data$agent != "human", ]
  ids <- unique(as.character(humans$respondent))
  picks <- sample(ids, n, replace = TRUE)
  people <- do.call(rbind, lapply(seq_len(n), function(k) {
    rows <- humans[as.character(humans$respondent) == picks[k], ]
    rows$respondent <- sprintf("sim%04d", k)
    rows
  }))
  out <- rbind(people, others)
  out$respondent <- factor(as.character(out$respondent))
  out
}

# One simulated study, tested as the report tests it (analysis/mixed.py AGENTS, duet_vs_reference):
# the refit is checked for separation (duet_separation; a model always right or always wrong in
# some cell) and then fitted by the report's own rule: maximum likelihood (glmer, nagq), or
# blme::bglmer when a cell separates or an ML coefficient's SE passes se_limit (the report's
# linear-programming check for separations no cell shows is not repeated per study). Each model is
# compared with the humans on the probability scale (emmeans regrid, trt.vs.ctrl), Holm-adjusted
# across the models within each modality and each argument form. Nothing is suppressed: a refit
# that stops with an error is "failed" (its p-values NA), one whose notes match `pattern` (lme4's
# convergence messages, as rbridge reads them) is "not converged".
duet_power_once <- function(m, data, n, seed, newparams = NULL, nagq = 0L, pattern = "converge",
                            se_limit = 100, adjust = "holm") {
  set.seed(seed)
  design <- duet_power_design(data, n)
  args <- list(m, nsim = 1, newdata = design, allow.new.levels = TRUE)
  if (!is.null(newparams)) args$newparams <- newparams
  people <- design$agent == "human"
  design$correct[people] <- do.call(simulate, args)[[1]][people]  # the models' answers stay as they were
  f <- formula(m)
  formula_text <- paste(deparse(f, width.cutoff = 500L), collapse = " ")
  safe <- nrow(duet_separation(formula_text, design)) > 0
  # a safe refit starts from the pilot's safe fit (same parameters, same order): about half the
  # evaluations of blme's Laplace optimisation, the same optimum
  start <- if (inherits(m, "bglmerMod")) list(theta = lme4::getME(m, "theta"), fixef = lme4::fixef(m)) else NULL
  attempt <- function(method) tryCatch(
    duet_capture(duet_model(f, design, "binomial", "bobyqa", nagq, method, if (method == "safe") start else NULL)),
    error = function(e) list(error = conditionMessage(e)))
  got <- attempt(if (safe) "safe" else "ml")
  if (is.null(got$error) && !safe && any(summary(got$value)$coefficients[, "Std. Error"] > se_limit)) {
    safe <- TRUE  # separation that no single cell shows: the report refits it safely too
    got <- attempt("safe")
  }
  models <- setdiff(levels(design$agent), levels(design$agent)[1])
  blank <- function(by) {
    levels_ <- levels(droplevels(design[[by]]))
    data.frame(factor = by, level = rep(levels_, each = length(models)),
               contrast = rep(paste(models, "-", levels(design$agent)[1]), times = length(levels_)),
               estimate = NA_real_, p_value = NA_real_)
  }
  if (!is.null(got$error)) {
    out <- rbind(blank("modality"), blank("argform"))
    out$status <- "failed"
  } else {
    notes <- unique(c(got$notes, duet_optinfo(got$value)))
    pick <- function(by) {
      s <- duet_vs_reference(got$value, "agent", by, adjust)
      contrast <- gsub("^\\((.*)\\) - ", "\\1 - ", as.character(s$contrast))  # emmeans brackets "lm-1"
      data.frame(factor = by, level = as.character(s[[by]]), contrast = contrast, estimate = s$estimate,
                 p_value = s$p.value)
    }
    out <- tryCatch(rbind(pick("modality"), pick("argform")), error = function(e) NULL)
    if (is.null(out)) {
      out <- rbind(blank("modality"), blank("argform"))
      out$status <- "failed"
    } else {
      out$status <- if (any(grepl(pattern, notes, ignore.case = TRUE))) "not converged" else "ok"
    }
  }
  out$safe <- safe
  out
}
