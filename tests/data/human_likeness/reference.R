# Independent R computation of the human-likeness table's point estimates (issue 35 item 5) from
# people.csv, scores.csv and splits.csv in this folder: Rscript reference.R > reference.out
# Written without the project's Python code: the join, the targets, cor() for choice_r, Spearman-Brown by
# hand over the stored splits, Cohen's kappa by hand per participant (Geirhos et al. 2020), log-likelihoods.
here <- local({ f <- grep('^--file=', commandArgs(FALSE), value = TRUE)
  dirname(normalizePath(sub('^--file=', '', f[1]))) })
people <- read.csv(file.path(here, "people.csv"), stringsAsFactors = FALSE, na.strings = character(0))
scores <- read.csv(file.path(here, "scores.csv"), stringsAsFactors = FALSE)
splits <- read.csv(file.path(here, "splits.csv"), stringsAsFactors = FALSE)
mc <- people$kind == "multiple_choice"
people <- people[ifelse(mc, people$answer %in% c("A", "B", "C", "D"), people$answer %in% c("yes", "no")), ]
people$target <- ifelse(people$kind == "multiple_choice", people$gold, "yes")
people$chose <- as.integer(people$answer == people$target)
letter_p <- function(s, letter) {
  out <- rep(NA_real_, nrow(s))
  for (x in c("A", "B", "C", "D")) out[letter == x] <- s[[paste0("p_", x)]][letter == x]
  out
}
options(digits = 17)
for (model in sort(unique(scores$model))) {
  s <- scores[scores$model == model, ]
  s$p_target <- ifelse(s$kind == "multiple_choice", letter_p(s, s$gold), s$rel_p_yes)
  s$model_correct <- as.integer(s$decision == s$gold)
  d <- merge(people, s[, c("item_id", "p_target", "model_correct", "rel_p_yes", "p_A", "p_B", "p_C", "p_D")],
             by = "item_id")
  d$p_answer <- ifelse(d$kind == "multiple_choice", letter_p(d, d$answer),
                       ifelse(d$answer == "yes", d$rel_p_yes, 1 - d$rel_p_yes))
  d <- d[!is.na(d$p_target) & !is.na(d$p_answer), ]
  # choice_r: item shares against the model's p(target)
  share <- tapply(d$chose, d$item_id, mean)
  pt <- tapply(d$p_target, d$item_id, function(v) v[1])
  choice_r <- cor(as.numeric(share), as.numeric(pt[names(share)]))
  # ceiling: per split, r between the halves' item shares (items both halves answered), Spearman-Brown
  # when r >= 0
  sb <- c()
  for (k in sort(unique(splits$split))) {
    a <- splits$participant[splits$split == k & splits$half == "A"]
    in_a <- d$participant %in% a
    sa <- tapply(d$chose[in_a], d$item_id[in_a], mean)
    sb_ <- tapply(d$chose[!in_a], d$item_id[!in_a], mean)
    both <- intersect(names(sa), names(sb_))
    r <- cor(as.numeric(sa[both]), as.numeric(sb_[both]))
    if (!is.na(r)) sb <- c(sb, if (r < 0) r else 2 * r / (1 + r))  # a negative r uncorrected (issue 44)
  }
  ceiling <- mean(sb)
  # error consistency: Cohen's kappa per participant, beyond the agreement their accuracies predict
  kappas <- c()
  for (p in sort(unique(d$participant))) {
    x <- d[d$participant == p, ]
    obs <- mean(x$correct == x$model_correct)
    pp <- mean(x$correct); q <- mean(x$model_correct)
    expected <- pp * q + (1 - pp) * (1 - q)
    if (expected < 1) kappas <- c(kappas, (obs - expected) / (1 - expected))
  }
  # log-likelihood of the people's answers: under the model (floored at 1e-6), under the base rate
  loglik <- mean(log(pmax(d$p_answer, 1e-6)))
  base <- ave(seq_len(nrow(d)), d$kind, d$answer, FUN = length) / ave(seq_len(nrow(d)), d$kind, FUN = length)
  cat(model, "items", length(share), "answers", nrow(d), "\n")
  cat(model, "choice_r", format(choice_r, digits = 17), "\n")
  cat(model, "ceiling", format(ceiling, digits = 17), "splits", length(sb), "\n")
  cat(model, "error_consistency", format(mean(kappas), digits = 17), "participants", length(kappas), "\n")
  cat(model, "loglik_per_answer", format(loglik, digits = 17), "\n")
  cat(model, "loglik_base", format(mean(log(base)), digits = 17), "\n")
}
