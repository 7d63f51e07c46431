# Reference for bench/analysis.py: plain R fitting the same models, with the same follow-ups, on the
# exact model frames the report exported (data/model_frames/*.csv).  Rscript bench/analysis_reference.R DIR
suppressPackageStartupMessages({library(lme4); library(lmerTest); library(emmeans); library(performance)})
emm_options(lmer.df = "satterthwaite")
dir <- commandArgs(trailingOnly = TRUE)[1]
forms <- c("DS", "MP", "MT", "AD", "AC", "DA", "NEC", "base", "theorem", "spurious")
load_frame <- function(name) {
  d <- read.csv(file.path(dir, paste0(name, ".csv")))
  d$modality <- factor(d$modality, levels = intersect(c("none", "box", "dia"), unique(d$modality)))
  if (!is.null(d$argform)) d$argform <- factor(d$argform, levels = intersect(forms, unique(d$argform)))
  if (!is.null(d$agent)) d$agent <- factor(d$agent, levels = c("human", sort(setdiff(unique(d$agent), "human"))))
  d
}
lrt <- function(full, data, terms, glmm) {
  f <- formula(full)
  ml <- if (glmm) full else lme4::lmer(f, data = data, REML = FALSE, control = lmerControl(optimizer = "bobyqa"))
  sapply(terms, function(term) {
    f0 <- update(f, as.formula(paste(". ~ . -", term)))
    m0 <- if (glmm) glmer(f0, data = data, family = binomial, control = glmerControl(optimizer = "bobyqa"))
          else lme4::lmer(f0, data = data, REML = FALSE, control = lmerControl(optimizer = "bobyqa"))
    2 * as.numeric(logLik(ml) - logLik(m0))
  })
}
hyp <- function(m, factor, lows, highs) {
  emm <- emmeans(m, factor); lv <- levels(emm)[[factor]]
  L <- lapply(seq_along(lows), function(i) { v <- numeric(length(lv)); v[lv == highs[i]] <- 1; v[lv == lows[i]] <- -1; v })
  summary(contrast(emm, method = L), infer = TRUE, side = ">", adjust = "holm")
}
report <- function(m) { s <- summary(m); ci <- confint(m, method = "Wald"); r2 <- r2_nakagawa(m); list(s, ci, r2) }
# The separation checks the report runs before every binomial fit (issue 25): each factor term's cells at
# 0 % or 100 %, and the fixed effects' signed design rows merged for the linear program (the LP itself runs
# in scipy on the report's side, a few ms)
separation_check <- function(f, d) {
  fixed <- lme4::nobars(f); y <- as.numeric(d[[all.vars(fixed)[1]]])
  cells <- lapply(attr(terms(fixed), "term.labels"), function(term) {
    vars <- all.vars(as.formula(paste("~", term)))
    if (!all(vapply(vars, function(v) is.factor(d[[v]]) || is.character(d[[v]]), logical(1)))) return(NULL)
    key <- interaction(lapply(vars, function(v) as.character(d[[v]])), drop = TRUE)
    ones <- tapply(y, key, sum); n <- tapply(y, key, length); names(n)[ones == 0 | ones == n]
  })
  A <- model.matrix(fixed, d) * (2 * y - 1)
  primes <- Filter(function(k) k < 4 || all(k %% 2:floor(sqrt(k)) != 0), 2:(20 * ncol(A) + 20))[seq_len(ncol(A))]
  key <- as.vector(A %*% sqrt(primes))
  list(cells, A[!duplicated(key), , drop = FALSE])
}
t0 <- proc.time()
laps <- numeric(0)
lap <- function(name) { laps[name] <<- (proc.time() - t0)[["elapsed"]] - sum(laps) }
d <- load_frame("eq4")
m4 <- lmerTest::lmer(soft_acc ~ modality + argform + perplexity_z + (1 + perplexity_z | model), d, control = lmerControl(optimizer = "bobyqa"))
out4 <- list(report(m4), lrt(m4, d, c("modality", "argform", "perplexity_z"), FALSE), emmeans(m4, ~modality), emmeans(m4, ~argform),
             hyp(m4, "modality", c("none", "box", "box"), c("dia", "none", "dia")), hyp(m4, "argform", c("DS", "MT", "MT"), c("MP", "MP", "DS")),
             ranef(m4, condVar = TRUE), cor.test(d$soft_acc, d$perplexity_z))
lap("eq4")
d <- load_frame("eq5")
m5 <- lmerTest::lmer(rel_p_yes ~ modality + argform + perplexity_z + (1 + perplexity_z | model), d, control = lmerControl(optimizer = "bobyqa"))
out5 <- list(report(m5), emmeans(m5, ~modality), emmeans(m5, ~argform))
lap("eq5")
d <- load_frame("eq6")
sep6 <- separation_check(correct ~ modality + argform + rt_z + (1 + rt_z | participant), d)
m6 <- glmer(correct ~ modality + argform + rt_z + (1 + rt_z | participant), d, family = binomial, control = glmerControl(optimizer = "bobyqa"))
out6 <- list(report(m6), lrt(m6, d, c("modality", "argform", "rt_z"), TRUE), emmeans(m6, ~modality, type = "response"),
             emmeans(m6, ~argform, type = "response"), hyp(m6, "modality", c("none", "box", "box"), c("dia", "none", "dia")),
             hyp(m6, "argform", c("DS", "MT", "MT"), c("MP", "MP", "DS")))
lap("eq6")
d <- load_frame("agents")
sepa <- separation_check(correct ~ agent * (modality + argform) + (1 | respondent) + (1 | interpretation), d)
ma <- glmer(correct ~ agent * (modality + argform) + (1 | respondent) + (1 | interpretation), d, family = binomial, nAGQ = 0,
            control = glmerControl(optimizer = "bobyqa"))
outa <- list(summary(ma), r2_nakagawa(ma), emmeans(ma, ~agent, type = "response"), emmeans(ma, ~agent | modality, type = "response"),
             emmeans(ma, ~agent | argform, type = "response"),
             contrast(regrid(emmeans(ma, ~agent | modality)), "trt.vs.ctrl", ref = 1, adjust = "holm"),
             contrast(regrid(emmeans(ma, ~agent | argform)), "trt.vs.ctrl", ref = 1, adjust = "holm"))
lap("agents")
cat(sprintf("R per section: %s\n", paste(sprintf("%s %.1f s", names(laps), laps), collapse = ", ")))
cat(sprintf("R fits done in %.1f s (after loading packages)\n", (proc.time() - t0)[["elapsed"]]))
cat(sprintf("eq4 fixef: %s\n", paste(round(fixef(m4), 5), collapse = " ")))
