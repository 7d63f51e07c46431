"""Report sections of the paired designs (issues 6 and 25), one per design present. Pure pandas.

Every interval and test names its sampling unit (Section.unit) and respects it (analysis.clustered):

* rulebreakers (000): τ, τ on rulebreakers and on non-rulebreakers, overall and by rule × entity
  kind, with 95% intervals resting on pairs (all phrasings of one pair are one cluster); Π⁺ on each
  side (models: p⁺ is the summed probability of the positive answer's variants, Eq. 4, over the
  prompts answered positively), Welch's t-test on one variant, a pair-clustered test pooling them.
* dual-sided (004): a rule is right when the original is affirmed and the flipped one denied;
  accuracy overall and by the study's declared factors, with intervals resting on rules.
* perturbation (002): per respondent group, the 2×2 table of (original, perturbed) correctness,
  002's exact binomial test or McNemar's z with one matched observation per item pair, the clustered
  McNemar test (Durkalski 2003) where an item has several phrasings; BH across models.

Models answer every prompt variant: each table has a row per variant (one answer per unit: Wilson)
and an "all" row that pools the variants (a GEE interval clustered by the unit, n = units). A
person's pair is their own two answers (the study presents both members to each person when its
human arm says "within"), and a person's pairs are one cluster; answers to the two members by
different people are never paired. With "across" presentation people have no pairs, and
designs.paired.people compares the members with a participant-clustered model instead; its section
says which was done. Each respondent gets its own table, so the page's row cap never hides a model.
"""
from __future__ import annotations

import math

import pandas as pd

from analysis import clustered, like_for_like, proportions
from analysis.sections import Section, per_respondent

from . import dual_sided, metrics, rulebreakers
from . import people as paired_people
from .frames import PERTURBED_LINKS, PairedInputs, perturbed, with_link_kinds

HUMAN = "human"
ALL = "all"
BOOKKEEPING = {"rule_id", "rule", "conclusion", "member"}


def responses(scores: pd.DataFrame, trials: pd.DataFrame, items: pd.DataFrame) -> pd.DataFrame:
    """One row per answer to a linked item: respondent, order (participant for people), correct,
    said_yes, p_pos (models only) and the item's pair columns (with its link's kind)."""
    items = with_link_kinds(items)
    frames = []
    if len(scores):
        s = scores[scores["item_id"].isin(items["item_id"])]
        frames.append(pd.DataFrame({
            "respondent": s["model"], "order": "", "item_id": s["item_id"], "correct": s["correct"].astype(bool),
            "said_yes": s["decision"] == "yes", "p_pos": s["p_yes"].astype(float),
        }))
    if len(trials):
        t = trials[trials["item_id"].isin(items["item_id"])]
        frames.append(pd.DataFrame({
            "respondent": HUMAN, "order": t["participant"], "item_id": t["item_id"],
            "correct": t["correct"].astype(bool), "said_yes": t["answer"] == "yes", "p_pos": math.nan,
        }))
    if not frames:
        # item_id once (items has it too): a duplicate column broke every later filter (issue 25's crash)
        return pd.DataFrame(columns=["respondent", "order", "item_id", "correct", "said_yes", "p_pos",
                                     *(c for c in items.columns if c != "item_id")])
    return pd.concat(frames, ignore_index=True).merge(items, on="item_id", how="inner")


def pair_up(first: pd.DataFrame, second: pd.DataFrame, on: list[str]) -> pd.DataFrame:
    """Answers to the first and second member side by side (columns suffixed _a and _b): one
    respondent's own two answers, joined on ``on`` and the participant (`order`, blank for a model,
    which answers each item once). Two different people's answers are never a pair."""
    return first.merge(second, on=[*on, "order"], suffixes=("_a", "_b"))


def unit_of(respondent: str, model_unit: str) -> tuple[str, str]:
    """(the unit's name, the column that holds it): a person's answers are one cluster; for a model,
    `model_unit` (its phrasings of one pair, or of one rule, are one cluster)."""
    return ("participant", "order") if respondent == HUMAN else (model_unit, "pair_id")


def _order(frame: pd.DataFrame) -> pd.DataFrame:
    """People last, models in name order; within a respondent the rows pooling the variants first, the
    real items before their perturbations (a long table is cut on the page, never these)."""
    if frame.empty:
        return frame
    keys = frame.assign(_h=frame["respondent"] == HUMAN,
                        _v=frame["variant"] != ALL if "variant" in frame else False,
                        _c=frame["condition"] != "real" if "condition" in frame else False)
    return keys.sort_values(["_h", "respondent", "_v", "_c"], kind="stable").drop(columns=["_h", "_v", "_c"])


# The paired designs each section reads (this package's own: a new paired design adds its name here and, in
# report_parts.py, to the part's designs); a section is keyed by its design's name.
TAU_DESIGNS = (rulebreakers.DESIGN,)  # 000: τ and Π⁺ over rulebreaker pairs
DUAL_SIDED_DESIGNS = (dual_sided.DESIGN,)  # 004: a rule is right when both sides are


def _design_for(section: tuple[str, ...], design: str | None) -> tuple[str, tuple[str, ...]]:
    """(design name, its pair roles) of a paired section: `design`, or the first design it reads."""
    from experiments import design_registry as registry

    name = design or section[0]
    return name, registry.get(name).pair_roles


def rulebreaker_pairs(answers: pd.DataFrame, probes: pd.DataFrame, drop_unknown: bool,
                      design: str | None = None) -> pd.DataFrame:
    """One row per answered pair: respondent, participant (order), variant, condition, subset, rb/nrb
    correctness and p⁺."""
    name, (breaker, counterpart) = _design_for(TAU_DESIGNS, design)
    data = answers[answers["design"] == name]
    joined = pair_up(data[data["pair_role"] == breaker], data[data["pair_role"] == counterpart],
                     ["respondent", "pair_id", "variant"])
    columns = ["respondent", "order", "variant", "condition", "pair_id", "subset", "rb_correct", "nrb_correct",
               "rb_yes", "nrb_yes", "rb_p", "nrb_p"]
    if joined.empty:
        return pd.DataFrame(columns=columns)
    attrs = joined["attributes_a"]
    out = pd.DataFrame({
        "respondent": joined["respondent"], "order": joined["order"], "variant": joined["variant"],
        "condition": joined["condition_a"], "pair_id": joined["pair_id"],
        "subset": [f"{a.get('rule')} × {a.get('entity_kind')}" for a in attrs],
        "rb_correct": joined["correct_a"].astype(bool), "nrb_correct": joined["correct_b"].astype(bool),
        "rb_yes": joined["said_yes_a"].astype(bool), "nrb_yes": joined["said_yes_b"].astype(bool),
        "rb_p": joined["p_pos_a"].astype(float), "nrb_p": joined["p_pos_b"].astype(float),
    })
    if drop_unknown and len(probes):
        keys = pd.Series([f"{a.get('entity_kind')}:{a.get('part')}" for a in attrs], index=out.index)
        unknown = set(zip(probes.loc[~probes["known"].astype(bool), "model"],
                          probes.loc[~probes["known"].astype(bool), "probe_key"]))
        drop = [(r, k) in unknown for r, k in zip(out["respondent"], keys)]
        out = out[~pd.Series(drop, index=out.index)]
    return out[columns].reset_index(drop=True)


def _with_all(frame: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    parts = [(ALL, frame)]
    variants = sorted(set(frame["variant"]))
    if len(variants) > 1:
        parts += [(v, frame[frame["variant"] == v]) for v in variants]
    return parts


def _clustered_row(measures: dict[str, tuple[pd.Series, pd.Series]], unit: str) -> dict:
    """name → (right?, cluster) per answer: the estimates with clustered intervals, the method of the
    first measure and a note for every measure that departs from it."""
    row, notes, method = {}, [], ""
    for name, (values, clusters) in measures.items():
        p = clustered.proportion(list(values), list(clusters), unit=unit)
        row.update({name: p.estimate, f"{name}_low": p.low, f"{name}_high": p.high})
        method = method or p.method
        if p.method != method or p.note:
            notes.append(f"{name}: {p.note or p.method}")
        row["n"] = p.n
    row["method"] = method
    row["note"] = "; ".join(dict.fromkeys(notes))
    return row


def rulebreaker_tables(pairs: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    acc_rows, conf_rows = [], []
    for (respondent, condition), group in pairs.groupby(["respondent", "condition"], sort=True):
        unit, column = unit_of(respondent, "pair")
        for variant, part in _with_all(group):
            subsets = [("overall", part)] + [(s, part[part["subset"] == s]) for s in sorted(set(part["subset"]))]
            for subset, rows in subsets:
                clusters = rows[column]
                stats = _clustered_row({
                    "tau": (rows["rb_correct"] & rows["nrb_correct"], clusters),
                    "tau_R": (rows["rb_correct"], clusters), "tau_N": (rows["nrb_correct"], clusters)}, unit)
                acc_rows.append({
                    "respondent": respondent, "condition": condition, "variant": variant, "subset": subset,
                    "unit": unit, "n": stats.pop("n"), "pairs": int(rows["pair_id"].nunique()),
                    "answered_pairs": len(rows), **stats,
                })
            if respondent != HUMAN:
                conf_rows.append({"respondent": respondent, "condition": condition, "variant": variant,
                                  **_confidence(part)})
    return _order(pd.DataFrame(acc_rows)), _order(pd.DataFrame(conf_rows))


def _confidence(part: pd.DataFrame) -> dict:
    """Π⁺ on each side. One answer per pair and side (one variant): Welch's t-test as 000 Eq. 5–6. Several
    phrasings of each pair: the difference with the sandwich variance clustered by pair (GEE)."""
    n_side = part.loc[part["nrb_yes"], ["nrb_p", "pair_id"]]
    r_side = part.loc[part["rb_yes"], ["rb_p", "pair_id"]]
    empty = []
    for label, side in (("N", n_side), ("R", r_side)):
        if side.empty:
            empty.append(f"Π⁺_{label} empty: no positive answer (Yes/True) on the "
                         f"{'non-rulebreaker' if label == 'N' else 'rulebreaker'} side, and Π⁺ averages over those")
    row = {"pairs": int(part["pair_id"].nunique())}
    if part["pair_id"].is_unique:
        c = metrics.positive_confidence(rulebreakers=list(zip(part["rb_p"], part["rb_yes"])),
                                       non_rulebreakers=list(zip(part["nrb_p"], part["nrb_yes"])))
        row.update(pi_N=c.pi_non_rulebreakers, n_N=c.n_non_rulebreakers, pi_R=c.pi_rulebreakers, n_R=c.n_rulebreakers,
                   test="Welch t (000 Eq. 5–6)", statistic=c.welch_t, df=c.welch_df, p_value=c.p_value)
        if not empty and math.isnan(c.p_value):
            empty.append("no test: a side has fewer than two positive answers or both are constant")
    else:
        d = clustered.mean_difference([*n_side["nrb_p"], *r_side["rb_p"]],
                                      [False] * len(n_side) + [True] * len(r_side),
                                      [*n_side["pair_id"], *r_side["pair_id"]], unit="pair")
        row.update(pi_N=d.mean_a, n_N=d.n_a, pi_R=d.mean_b, n_R=d.n_b,
                   test="z, Π⁺_N − Π⁺_R with sandwich SE clustered by pair (GEE)", statistic=d.z, df=math.nan,
                   p_value=d.p_value)
        if d.note and not empty:
            empty.append(d.note)
    row["note"] = "; ".join(empty)
    return row


RB_UNIT = ("a pair. Model rows: all phrasings (prompt variants) of one pair are one cluster; a row on one variant "
           "holds one answer per pair (Wilson interval, n = pairs); a row pooling variants ('all') has a GEE "
           "logistic interval (intercept only, independence working correlation, sandwich SE clustered by pair, "
           "Wald on the logit scale; geepack's geeglm the same), n = the number of distinct pairs. People's rows: a "
           "person's pairs are one cluster (the same GEE clustered by participant, n = participants).")


def rulebreakers_section(answers: pd.DataFrame, inputs: PairedInputs, design: str | None = None) -> Section:
    name, _ = _design_for(TAU_DESIGNS, design)
    section = Section(name, "RULEBREAKERS (000): paired accuracy τ and confidence in a positive answer Π⁺")
    section.unit = RB_UNIT
    drop = bool(inputs.options.get("drop_unknown_pairs"))
    pairs = rulebreaker_pairs(answers, inputs.probes, drop, name)
    if pairs.empty:
        section.absent = "needs answers (model scores or trials) to both members of rulebreaker pairs"
        return section
    accuracy, confidence = rulebreaker_tables(pairs)
    per_respondent(section, "accuracy", accuracy)
    per_respondent(section, "confidence", confidence)
    section.n_obs = len(pairs)
    section.notes += [
        "τ: share of pairs with the rulebreaker answered No and the non-rulebreaker Yes (Eq. 1); τ_R and τ_N: "
        "each side alone (Eq. 2–3); 95% intervals. n: the independent units the interval rests on (unit); pairs: "
        "distinct pairs; answered_pairs: the pair answers counted (pairs × phrasings, or a person's pairs). "
        "Variant 'all' pools the prompt variants, its estimate the share of every pair answer, its interval "
        "clustered by pair. Where every answer in a row is right (or wrong) the logit is infinite: the row then "
        "shows the Wilson interval over its units, each counted once, and its note says so.",
        "Π⁺: mean probability of the positive answer (Yes/True, case variants summed) over the prompts the model "
        "answered positively, non-rulebreakers (N) vs rulebreakers (R). One variant: Welch's t-test as the paper "
        "(Eq. 5–6); 'all': the difference tested with a sandwich SE clustered by pair (phrasings of a pair are not "
        "independent). An empty Π⁺ cell (n = 0) means the model never answered positively on that side.",
        "People: a pair is one person's own two answers (within-participant presentation), and a person's pairs are "
        "one cluster; see the section on people and paired designs for what was done with people's answers.",
        "Departures from 000: the paper averages over the ten phrasings (§4.2) without intervals and runs Welch's "
        "t-test over every prompt answered positively, each prompt as if independent; here the pooled rows' intervals "
        "and the pooled Π⁺ test are clustered by pair (a pair's phrasings are one unit), and Welch's test is kept "
        "for single-phrasing rows, where each pair gives one answer per side.",
    ]
    models = sorted(set(pairs["respondent"]) - {HUMAN})
    if drop:
        missing = [m for m in models if m not in set(inputs.probes["model"])]
        section.notes.append("Pairs about a city or instance the model does not know (knowledge probe, §4.1) are left out"
                             + (f"; no probe run for {', '.join(missing)}, so nothing was dropped for them." if missing else "."))
    if len(inputs.probes):
        section.tables["knowledge_probe"] = (inputs.probes.groupby("model").agg(
            probes=("probe_key", "size"), known=("known", "sum"), mean_p_target=("p_target", "mean")).reset_index())
    return section


# --------------------------------------------------------------------------- dual-sided (004)


def dual_sided_rules(answers: pd.DataFrame, design: str | None = None) -> pd.DataFrame:
    name, (original, flipped) = _design_for(DUAL_SIDED_DESIGNS, design)
    data = answers[answers["design"] == name]
    joined = pair_up(data[data["pair_role"] == original], data[data["pair_role"] == flipped],
                     ["respondent", "pair_id", "variant"])
    if joined.empty:
        return pd.DataFrame()
    attrs = pd.DataFrame([{k: v for k, v in a.items() if k not in BOOKKEEPING} for a in joined["attributes_a"]],
                         index=joined.index)
    out = pd.DataFrame({
        "respondent": joined["respondent"], "order": joined["order"], "variant": joined["variant"],
        "condition": joined["condition_a"], "pair_id": joined["pair_id"],
        "affirmed": joined["said_yes_a"].astype(bool), "denied": ~joined["said_yes_b"].astype(bool),
    })
    return pd.concat([out, attrs.drop(columns=[c for c in attrs.columns if c in out.columns])], axis=1)


DS_UNIT = ("a rule (pair_id). Model rows: the templates (prompt variants) of one rule are one cluster; a row on one "
           "template holds one answer per rule (Wilson interval, n = rules); 'all' pools the templates with a GEE "
           "logistic interval clustered by rule (independence working correlation, sandwich SE, Wald on the logit "
           "scale), n = the number of distinct rules. People's rows: a person's rules are one cluster (n = "
           "participants).")


def dual_sided_section(answers: pd.DataFrame, factors: list[str] | tuple[str, ...] = (),
                       design: str | None = None) -> Section:
    section = Section("dual_sided", "Dual-sided rules (004): a rule is right only if the original is affirmed "
                                    "and the flipped conclusion denied")
    section.unit = DS_UNIT
    rules = dual_sided_rules(answers, design)
    if rules.empty:
        section.absent = "needs answers to both the original and the flipped item of some rules"
        return section
    columns = [c for c in factors if c in rules.columns]
    missing = [c for c in factors if c not in rules.columns]
    rows = []
    for (respondent, condition), group in rules.groupby(["respondent", "condition"], sort=True):
        unit, cluster = unit_of(respondent, "rule")
        for variant, part in _with_all(group):
            slices = [("overall", "", part)]
            for column in columns:
                for value in sorted(set(part[column].dropna().astype(str))):
                    slices.append((column, value, part[part[column].astype(str) == value]))
            for column, value, rows_ in slices:
                right = rows_["affirmed"] & rows_["denied"]
                p = clustered.proportion(list(right), list(rows_[cluster]), unit=unit)
                rows.append({"respondent": respondent, "condition": condition, "variant": variant, "column": column,
                             "value": value, "unit": unit, "n": p.n, "rules": int(rows_["pair_id"].nunique()),
                             "answers": p.answers, "correct": p.successes, "accuracy": p.estimate, "low": p.low,
                             "high": p.high, "method": p.method, "note": p.note})
    per_respondent(section, "accuracy", _order(pd.DataFrame(rows)))
    section.n_obs = len(rules)
    section.notes.append(
        "Accuracy with 95% intervals, overall" + (f" and by the study's declared factors ({', '.join(columns)})"
                                                  if columns else " (the study declares no factors to slice by)")
        + "; variant 'all' pools the templates. n: the independent units of the interval (unit); rules: distinct "
        "rules; answers: rule answers counted (rules × templates, or a person's rules); correct: right answers.")
    if missing:
        section.notes.append(f"Declared factor(s) not among the rule bank's columns: {', '.join(missing)}.")
    return section


# --------------------------------------------------------------------------- perturbation (002)


def matched_pairs(answers: pd.DataFrame) -> pd.DataFrame:
    """(respondent, participant, label, item pair, cluster, original correct, perturbed correct) per matched
    pair, over the perturbed copies only (links of PERTURBED_LINKS' kinds: never a multiple-choice option order).

    The item pair is the original item regardless of phrasing: a linked item's pair and role (every
    prompt variant of one RULEBREAKERS member is one item), else the item itself. The cluster is the
    original's pair (both members and all their phrasings, issue 35), else the original item."""
    kinds = answers["link_kind"] if "link_kind" in answers else pd.Series("perturbation", index=answers.index)
    perturbed = answers[answers["original_item_id"].notna() & kinds.isin(PERTURBED_LINKS)].copy()
    perturbed["link"] = perturbed["original_item_id"].astype(int)
    originals = answers[answers["item_id"].isin(set(perturbed["link"]))].copy()
    originals["link"] = originals["item_id"]
    joined = pair_up(originals, perturbed, ["respondent", "link"])
    columns = ["respondent", "order", "label", "item_pair", "cluster", "original", "perturbed"]
    if joined.empty:
        return pd.DataFrame(columns=columns)
    item_pair = [f"{p}|{r}" if p else f"item {i}" for p, r, i in
                 zip(joined["pair_id_a"], joined["pair_role_a"], joined["link"])]
    cluster = [p if p else f"item {i}" for p, i in zip(joined["pair_id_a"], joined["link"])]
    return pd.DataFrame({"respondent": joined["respondent"], "order": joined["order"], "label": joined["condition_b"],
                         "item_pair": item_pair, "cluster": cluster, "original": joined["correct_a"].astype(bool),
                         "perturbed": joined["correct_b"].astype(bool)})[columns]


PT_UNIT = ("a pair where the items are linked in pairs (rulebreakers, dual-sided rules: both members and all their "
           "phrasings, and their perturbed copies, are one cluster), else an item pair (an original item and its "
           "perturbation); one matched observation per item pair, phrasing and perturbation (002). Where a cluster "
           "holds several matched observations the clustered test runs; a person's pairs are one cluster.")


def perturbation_section(answers: pd.DataFrame, options: dict) -> Section:
    section = Section("perturbation", "Matched-pair perturbations (002): 2×2 tables, McNemar / exact binomial, "
                                      "Benjamini–Hochberg across models")
    section.unit = PT_UNIT
    pairs = matched_pairs(answers)
    if pairs.empty:
        section.absent = "needs answers to perturbed items and to their originals"
        return section
    alternative, alpha, exact_max = options["alternative"], float(options["alpha"]), int(options["exact_max"])
    rows = []
    for label, group in pairs.groupby("label", sort=True):
        tests = {}
        for respondent, part in group.groupby("respondent", sort=True):
            unit, column = ("participant", "order") if respondent == HUMAN else (
                ("pair" if (part["cluster"] != part["item_pair"]).any() else "item pair"), "cluster")
            test = clustered.matched_pair_test(list(zip(part["original"], part["perturbed"])), list(part[column]),
                                               alternative=alternative, exact_max=exact_max)
            tests[respondent] = (unit, int(part["item_pair"].nunique()), len(part), test)
        models = [r for r in tests if r != HUMAN]
        adjusted = dict(zip(models, proportions.benjamini_hochberg([tests[m][3].p_value for m in models], alpha)))
        if HUMAN in tests:
            adjusted[HUMAN] = proportions.benjamini_hochberg([tests[HUMAN][3].p_value], alpha)[0]
        for respondent, (unit, item_pairs, observations, test) in tests.items():
            t = test.table
            rows.append({"respondent": respondent, "perturbation": label, "unit": unit, "clusters": test.clusters,
                         "item_pairs": item_pairs, "matched": observations, "n11": t.n11, "n12": t.n12, "n21": t.n21,
                         "n22": t.n22, "n": test.n, "method": test.method, "statistic": test.statistic,
                         "p_value": test.p_value, "p_adjusted": adjusted[respondent].adjusted,
                         "reject": adjusted[respondent].reject})
    per_respondent(section, "matched_pairs", _order(pd.DataFrame(rows)))
    section.n_obs = len(pairs)
    section.stats = {"alpha": alpha}
    clustered_rows = [r for r in rows if "paper 002" not in r["method"] and r["method"] != "no net discordance in any unit"]
    section.notes += [
        f"n11/n12/n21/n22: matched observations original right/right, right/wrong, wrong/right, wrong/wrong "
        f"(original first); matched: their count; item_pairs: distinct item pairs; clusters: the units. Alternative "
        f"{alternative}; BH adjusts across models at level alpha (people are their own family).",
        f"Which test: with one matched observation per unit (one phrasing of each item) exactly 002's test — the "
        f"exact binomial test on n21 when n = n12 + n21 ≤ {exact_max}, else McNemar's z = (n21 − n12)/√(n21 + n12). "
        "With several phrasings of an item (or several pairs of one person) the observations of a unit are not "
        "independent, and the clustered McNemar test of Durkalski et al. (2003) runs instead: z = Σ(c_k − b_k)/"
        "√Σ(c_k − b_k)² over units k (c_k, b_k: the unit's wrong→right and right→wrong pairs); when at most "
        f"{exact_max} units have c_k ≠ b_k, the exact randomisation test that flips each unit's sign. n is then the "
        "units with c_k ≠ b_k, at most the clusters (units). Both reduce to 002's test with one pair per unit.",
    ]
    if clustered_rows:
        section.notes.append(
            "Departure from 002: the paper assumes independent matched pairs; "
            f"{len(clustered_rows)} row(s) here have several phrasings (or pairs) per unit and use the clustered test.")
    return section


def _matched_items(answers: pd.DataFrame) -> set:
    """The items 002's matched pairs read: the perturbed copies and their originals."""
    copies = answers[answers["original_item_id"].notna() & answers["link_kind"].isin(PERTURBED_LINKS)]
    return set(copies["item_id"]) | set(copies["original_item_id"].astype(int))


def sections(scores: pd.DataFrame, trials: pd.DataFrame, inputs: PairedInputs | None) -> list[Section]:
    """A section per paired design present in the study (none when it has no linked items)."""
    if inputs is None or not (inputs.linked[2] if inputs.linked else len(inputs.items)):
        return []
    answers = responses(scores, trials, inputs.items)
    designs, any_perturbed = (inputs.linked[:2] if inputs.linked else (
        set(inputs.items.loc[inputs.items["pair_id"] != "", "design"]), bool(perturbed(inputs.items).any())))
    out = []
    for name in TAU_DESIGNS:
        if name in designs:
            out.append(rulebreakers_section(answers, inputs, name))
            like_for_like.state_paired_sides(out[-1], answers, inputs.shown, name)
    for name in DUAL_SIDED_DESIGNS:
        if name in designs:
            out.append(dual_sided_section(answers, inputs.factors, name))
            like_for_like.state_paired_sides(out[-1], answers, inputs.shown, name)
    if any_perturbed:  # perturbed copies only: a question's option orders are no perturbation
        out.append(perturbation_section(answers, inputs.options))
        matched = answers[answers["item_id"].isin(_matched_items(answers))]
        like_for_like.state_paired_sides(out[-1], matched, inputs.shown)
    people = paired_people.people_section(answers, inputs.presentation)
    if people is not None:
        out.append(people)
    return out
