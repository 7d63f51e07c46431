# Simulation-based power for the human-vs-model contrasts (analysis/power.py, issues 18, 25 and 35):
# draw a study of n participants from the pilot's lists and simulate every answer, people's and the
# models', from the report's human-vs-model GLMM fitted on the pilot. The fit and the test of each
# simulated study are not here: analysis/power.py fits it by the report's own rule
# (rbridge.fit_r: separation by cells and by linear programming, glmer with the Nelder-Mead retry,
# blme::bglmer where the report would use it) and tests it with the report's duet_vs_reference.
# Needs analysis/r/helpers.R.

# The pilot's rows with n participants: each new participant takes the trials (items, order) of a
# pilot participant drawn at random; the models' rows (every item a configuration answered) stay.
duet_power_design <- function(data, n, people) {
  humans <- data[data$agent == "human", ]
  others <- data[data$agent != "human", ]
  who <- as.character(humans[[people]])
  rows <- split(seq_len(nrow(humans)), factor(who, levels = unique(who)))
  picks <- sample(names(rows), n, replace = TRUE)
  taken <- rows[picks]
  out <- humans[unlist(taken, use.names = FALSE), ]
  out[[people]] <- rep(sprintf("sim%04d", seq_len(n)), lengths(taken))
  others[[people]] <- as.character(others[[people]])
  out <- rbind(out, others)
  out[[people]] <- factor(out[[people]])
  rownames(out) <- NULL
  out
}

# One simulated study's answers, the way the report's model treats them (the model is
# correct ~ agent * (...) + (1 | people) + (1 | items), with + (1 | families) where items come in families):
# - logit = the fixed effects (the pilot fit's, or `beta`) + a person's effect + an item's effect (+ its
#   family's effect);
# - new participants: each a new draw of the people's random intercept (sd from the fit, or `theta`);
#   a model configuration is the same configuration in every study: it keeps its own conditional mode;
# - items: their random intercepts drawn anew in each study and shared by people and models (the report
#   treats the items as a sample of the sentences one could ask, one effect per item for every agent);
# - families (`families`: the grouping factor, NULL where the model has none): their random intercepts drawn
#   anew in each study too, shared by every member and every agent, each item's own effect added to its
#   family's (items nested in families, as (1 | family) + (1 | item) treats them);
# - every answer, the models' included, a Bernoulli draw (the report's binomial model of a decision).
# `beta` and `theta`: named vectors (fixef and getME(m, "theta") names) that replace the fit's.
duet_power_simulate <- function(m, data, n, seed, people, items, beta = NULL, theta = NULL, families = NULL) {
  bars <- vapply(lme4::findbars(formula(m)), function(b) paste(deparse(b), collapse = ""), character(1))
  wanted <- c(paste("1 |", people), paste("1 |", items), if (!is.null(families)) paste("1 |", families))
  if (!setequal(bars, wanted)) {
    stop("the power simulation handles random intercepts by ", paste(wanted, collapse = ", "),
         " only; the model has ", paste(bars, collapse = ", "))
  }
  set.seed(seed)
  design <- duet_power_design(data, n, people)
  fixed <- lme4::fixef(m)
  if (!is.null(beta)) fixed <- beta[names(fixed)]
  sds <- lme4::getME(m, "theta")
  if (!is.null(theta)) sds <- theta[names(sds)]
  X <- stats::model.matrix(stats::delete.response(stats::terms(lme4::nobars(formula(m)))), design,
                           contrasts.arg = attr(lme4::getME(m, "X"), "contrasts"))
  eta <- drop(X[, names(fixed), drop = FALSE] %*% fixed)
  modes <- lme4::ranef(m)[[people]]
  own <- stats::setNames(modes[, 1], rownames(modes))
  who <- as.character(design[[people]])
  new <- design$agent == "human"
  fresh <- unique(who[new])
  drawn <- stats::setNames(stats::rnorm(length(fresh), 0, sds[[paste0(people, ".(Intercept)")]]), fresh)
  person <- ifelse(new, drawn[who], own[who])
  person[is.na(person)] <- 0  # a configuration the pilot fit has no mode for (none in practice)
  level <- unique(as.character(design[[items]]))
  item <- stats::setNames(stats::rnorm(length(level), 0, sds[[paste0(items, ".(Intercept)")]]), level)
  eta <- eta + person + item[as.character(design[[items]])]
  if (!is.null(families)) {
    group <- unique(as.character(design[[families]]))
    family <- stats::setNames(stats::rnorm(length(group), 0, sds[[paste0(families, ".(Intercept)")]]), group)
    eta <- eta + family[as.character(design[[families]])]
  }
  design$correct <- stats::rbinom(nrow(design), 1, stats::plogis(eta))
  design
}
