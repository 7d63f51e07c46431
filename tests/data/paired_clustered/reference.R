# Reference values for tests/analysis/test_paired_clustered_golden.py (issue 25).
# Run from this folder: Rscript reference.R   (R 4.2.2, geepack 1.3.9 from Debian's r-cran-geepack)
suppressMessages(library(geepack))
out <- function(label, x) cat(label, paste(sprintf("%.17g", x), collapse = " "), "\n")
z <- qnorm(0.975)

# A proportion clustered by unit: geeglm(y ~ 1, binomial, independence), robust (sandwich) SE,
# Wald interval on the logit scale mapped back. geeglm needs a cluster's rows together: sorted.
gee_prop <- function(y, id) {
  d <- data.frame(y = as.numeric(y), id = factor(id))
  d <- d[order(d$id), ]
  fit <- geeglm(y ~ 1, id = id, data = d, family = binomial, corstr = "independence")
  b <- coef(fit)[[1]]; se <- summary(fit)$coefficients[1, "Std.err"]
  c(mean(d$y), plogis(b - z * se), plogis(b + z * se), length(unique(d$id)))
}

# Durkalski et al. (2003) clustered McNemar: d_k = (wrong->right) - (right->wrong) pairs in unit k,
# z = sum(d) / sqrt(sum(d^2)); alternative "n12>n21" (the original right more often): lower tail.
# With at most `exact_max` units having d_k != 0: the exact sign-flip randomisation test of sum(d).
durkalski <- function(original, perturbed, id, exact_max = 10) {
  d <- tapply(as.integer(perturbed) - as.integer(original), id, sum)
  d <- d[d != 0]
  if (length(d) <= exact_max) {
    signs <- as.matrix(expand.grid(rep(list(c(-1, 1)), length(d))))
    sums <- signs %*% abs(d)
    return(c(sum(d), mean(sums <= sum(d) + 1e-9), length(d)))
  }
  zz <- sum(d) / sqrt(sum(d^2))
  c(zz, pnorm(zz), length(d))
}

# pandas writes True/False; as.logical reads them
logicals <- function(d) { for (c in names(d)) if (all(d[[c]] %in% c("True", "False"))) d[[c]] <- as.logical(d[[c]]); d }
rb <- logicals(read.csv("rb_pairs.csv"))
matched <- logicals(read.csv("matched.csv"))
p_models <- c()
for (m in c("fake-a", "fake-b")) {
  r <- rb[rb$respondent == m, ]
  out(paste(m, "tau"), gee_prop(r$rb_correct & r$nrb_correct, r$pair_id))
  out(paste(m, "tau_R"), gee_prop(r$rb_correct, r$pair_id))
  out(paste(m, "tau_N"), gee_prop(r$nrb_correct, r$pair_id))
  # one phrasing: one answer per pair, the Wilson interval (prop.test without continuity correction)
  one <- r[r$variant == "follow/yes-no", ]
  k <- sum(one$rb_correct & one$nrb_correct)
  out(paste(m, "tau follow/yes-no"), c(k / nrow(one), prop.test(k, nrow(one), correct = FALSE)$conf.int, nrow(one)))
  # Pi+ pooled over phrasings: N side minus R side, sandwich SE clustered by pair (GEE gaussian, independence)
  s <- rbind(data.frame(v = r$nrb_p[r$nrb_yes], a = 1, id = r$pair_id[r$nrb_yes]),
             data.frame(v = r$rb_p[r$rb_yes], a = 0, id = r$pair_id[r$rb_yes]))
  s$id <- factor(s$id); s <- s[order(s$id), ]
  fit <- geeglm(v ~ a, id = id, data = s, family = gaussian, corstr = "independence")
  co <- summary(fit)$coefficients["a", ]
  zz <- co[["Estimate"]] / co[["Std.err"]]
  out(paste(m, "pi"), c(mean(s$v[s$a == 1]), mean(s$v[s$a == 0]), zz, 2 * pnorm(-abs(zz))))
  t <- matched[matched$respondent == m, ]
  # the unit is the original's pair (issue 35): both members, their phrasings and perturbed copies are one
  # cluster; item_pair is "<pair id>|<role>", so the pair is what precedes the bar
  pair <- sub("[|].*$", "", t$item_pair)
  res <- durkalski(t$original, t$perturbed, pair)
  out(paste(m, "durkalski z p n"), res)
  out(paste(m, "item pairs"), length(unique(t$item_pair)))
  out(paste(m, "pairs"), length(unique(pair)))
  p_models <- c(p_models, res[2])
}
out("BH", p.adjust(p_models, method = "BH"))

# People, pairs within participants: a person's pairs are one cluster.
people <- logicals(read.csv("people_pairs.csv"))
out("people tau", gee_prop(people$rb_correct & people$nrb_correct, people$participant))
out("people tau_R", gee_prop(people$rb_correct, people$participant))
out("people tau_N", gee_prop(people$nrb_correct, people$participant))
pm <- logicals(read.csv("people_matched.csv"))
out("people durkalski stat p n", durkalski(pm$original, pm$perturbed, pm$participant))
out("people durkalski z (asymptotic)", {d <- tapply(as.integer(pm$perturbed) - as.integer(pm$original),
                                                    pm$participant, sum); z0 <- sum(d) / sqrt(sum(d^2)); c(z0, pnorm(z0))})

# The exact sign-flip test on hand-made unit differences d = (3, -1, 2, 1, -2, 1, 1):
d <- c(3, -1, 2, 1, -2, 1, 1)
signs <- as.matrix(expand.grid(rep(list(c(-1, 1)), length(d)))); sums <- signs %*% abs(d)
out("signflip less greater two", c(mean(sums <= sum(d)), mean(sums >= sum(d)), mean(abs(sums) >= abs(sum(d)))))

# Dual-sided (004): 20 rules × 5 templates; a rule is right when affirmed and denied; clustered by rule.
ds <- logicals(read.csv("ds_rules.csv"))
out("ds all", gee_prop(ds$affirmed & ds$denied, ds$pair_id))
h <- ds[ds$domain == "heat", ]
out("ds all heat", gee_prop(h$affirmed & h$denied, h$pair_id))
