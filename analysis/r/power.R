# Simulation-based power for the human-vs-model contrasts (analysis/power.py, issue 18): draw a
# study of n participants from the pilot's lists, simulate their answers from a fitted GLMM (new
# participants and re-drawn random effects: lme4's simulate with allow.new.levels; a model's answers
# are its own, the same in every study, so they stay as observed), refit the same model, and test
# each model against the humans within each modality and argument form.

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

# One simulated study: p-values of every model-vs-human contrast (link scale, unadjusted: each
# contrast's own power), by modality and by argument form.
duet_power_once <- function(m, data, n, seed, newparams = NULL) {
  set.seed(seed)
  design <- duet_power_design(data, n)
  args <- list(m, nsim = 1, newdata = design, allow.new.levels = TRUE)
  if (!is.null(newparams)) args$newparams <- newparams
  people <- design$agent == "human"
  design$correct[people] <- do.call(simulate, args)[[1]][people]  # the models' answers stay as they were
  fit <- suppressWarnings(suppressMessages(lme4::glmer(
    formula(m), data = design, family = binomial, nAGQ = m@devcomp$dims[["nAGQ"]],
    control = glmerControl(optimizer = "bobyqa"))))
  pick <- function(by) {
    s <- summary(emmeans::contrast(emmeans::emmeans(fit, as.formula(paste("~ agent |", by))),
                                   method = "trt.vs.ctrl", ref = 1), adjust = "none")
    contrast <- gsub("^\\((.*)\\) - ", "\\1 - ", as.character(s$contrast))  # emmeans brackets "lm-1"
    data.frame(factor = by, level = as.character(s[[by]]), contrast = contrast,
               estimate = s$estimate, p_value = s$p.value)
  }
  rbind(pick("modality"), pick("argform"))
}
