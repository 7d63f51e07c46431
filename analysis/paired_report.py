"""Report sections of the paired designs (issue 6), one per design present. Pure pandas.

* rulebreakers (000): τ, τ on rulebreakers and on non-rulebreakers with Wilson 95% CIs, overall
  and by rule × entity kind; Π⁺ on each side with Welch's t-test (models: p⁺ is the summed
  probability of the positive answer's variants, Eq. 4, over the prompts answered positively).
* dual-sided (004): a rule is right when the original is affirmed and the flipped one denied;
  accuracy overall and by every descriptive column of the rule bank, with Wilson CIs.
* perturbation (002): per respondent group, the 2×2 table of (original, perturbed) correctness,
  the exact binomial test or McNemar's z on the discordant pairs, BH across models.

Models answer every prompt variant: each table has a row per variant and an "all" row that pools
the variants (every variant holds the same pairs, so its estimate is the mean over variants).
A person's pair is their own two answers (the study presents both members to each person when its
human arm says "within"); answers to the two members by different people are never paired. With
"across" presentation people have no pairs, and analysis.paired_people compares the members with a
participant-clustered model instead; its section says which was done.
"""
from __future__ import annotations

import math

import pandas as pd

from . import paired, paired_people
from .sections import Section
from .paired_frames import PairedInputs

HUMAN = "human"
ALL = "all"
BOOKKEEPING = {"rule_id", "rule", "conclusion", "member"}


def responses(scores: pd.DataFrame, trials: pd.DataFrame, items: pd.DataFrame) -> pd.DataFrame:
    """One row per answer to a linked item: respondent, order (participant for people), correct,
    said_yes, p_pos (models only) and the item's pair columns."""
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


def rulebreaker_pairs(answers: pd.DataFrame, probes: pd.DataFrame, drop_unknown: bool) -> pd.DataFrame:
    """One row per answered pair: respondent, variant, condition, subset, rb/nrb correctness and p⁺."""
    data = answers[answers["design"] == "rulebreakers"]
    joined = pair_up(data[data["pair_role"] == "rulebreaker"], data[data["pair_role"] == "non-rulebreaker"],
                     ["respondent", "pair_id", "variant"])
    columns = ["respondent", "variant", "condition", "pair_id", "subset", "rb_correct", "nrb_correct", "rb_yes",
               "nrb_yes", "rb_p", "nrb_p"]
    if joined.empty:
        return pd.DataFrame(columns=columns)
    attrs = joined["attributes_a"]
    out = pd.DataFrame({
        "respondent": joined["respondent"], "variant": joined["variant"], "condition": joined["condition_a"],
        "pair_id": joined["pair_id"],
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


def rulebreaker_tables(pairs: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    acc_rows, conf_rows = [], []
    for (respondent, condition), group in pairs.groupby(["respondent", "condition"], sort=True):
        for variant, part in _with_all(group):
            subsets = [("overall", part)] + [(s, part[part["subset"] == s]) for s in sorted(set(part["subset"]))]
            for subset, rows in subsets:
                result = paired.rulebreaker_accuracy(zip(rows["rb_correct"], rows["nrb_correct"]))
                acc_rows.append({
                    "respondent": respondent, "condition": condition, "variant": variant, "subset": subset,
                    "pairs": len(rows), **_prop("tau", result.paired), **_prop("tau_R", result.rulebreakers),
                    **_prop("tau_N", result.non_rulebreakers),
                })
            if respondent != HUMAN:
                c = paired.positive_confidence(rulebreakers=list(zip(part["rb_p"], part["rb_yes"])),
                                               non_rulebreakers=list(zip(part["nrb_p"], part["nrb_yes"])))
                conf_rows.append({
                    "respondent": respondent, "condition": condition, "variant": variant,
                    "pi_N": c.pi_non_rulebreakers, "n_N": c.n_non_rulebreakers, "pi_R": c.pi_rulebreakers,
                    "n_R": c.n_rulebreakers, "welch_t": c.welch_t, "welch_df": c.welch_df, "p_value": c.p_value,
                })
    return pd.DataFrame(acc_rows), pd.DataFrame(conf_rows)


def _prop(name: str, p: paired.Proportion) -> dict:
    return {name: p.estimate, f"{name}_low": p.low, f"{name}_high": p.high}


def rulebreakers_section(answers: pd.DataFrame, inputs: PairedInputs) -> Section:
    section = Section("rulebreakers", "RULEBREAKERS (000): paired accuracy τ and confidence in a positive answer Π⁺")
    drop = bool(inputs.options.get("drop_unknown_pairs"))
    pairs = rulebreaker_pairs(answers, inputs.probes, drop)
    if pairs.empty:
        section.absent = "needs answers (model scores or trials) to both members of rulebreaker pairs"
        return section
    accuracy, confidence = rulebreaker_tables(pairs)
    section.tables["accuracy"] = accuracy
    if len(confidence):
        section.tables["confidence"] = confidence
    section.n_obs = len(pairs)
    section.notes += [
        "τ: share of pairs with the rulebreaker answered No and the non-rulebreaker Yes (Eq. 1); τ_R and τ_N: "
        "each side alone (Eq. 2–3); 95% Wilson intervals. Variant 'all' pools the prompt variants.",
        "Π⁺: mean probability of the positive answer (Yes/True, case variants summed) over the prompts the model "
        "answered positively, non-rulebreakers (N) vs rulebreakers (R), with Welch's t-test (Eq. 5–6).",
        "People: a pair is one person's own two answers (within-participant presentation); see the section on "
        "people and paired designs for what was done with people's answers.",
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


def dual_sided_rules(answers: pd.DataFrame) -> pd.DataFrame:
    data = answers[answers["design"] == "dual-sided"]
    joined = pair_up(data[data["pair_role"] == "original"], data[data["pair_role"] == "flipped"],
                     ["respondent", "pair_id", "variant"])
    if joined.empty:
        return pd.DataFrame()
    attrs = pd.DataFrame([{k: v for k, v in a.items() if k not in BOOKKEEPING} for a in joined["attributes_a"]],
                         index=joined.index)
    out = pd.DataFrame({
        "respondent": joined["respondent"], "variant": joined["variant"], "condition": joined["condition_a"],
        "pair_id": joined["pair_id"], "affirmed": joined["said_yes_a"].astype(bool),
        "denied": ~joined["said_yes_b"].astype(bool),
    })
    return pd.concat([out, attrs], axis=1)


def dual_sided_section(answers: pd.DataFrame) -> Section:
    section = Section("dual_sided", "Dual-sided rules (004): a rule is right only if the original is affirmed "
                                    "and the flipped conclusion denied")
    rules = dual_sided_rules(answers)
    if rules.empty:
        section.absent = "needs answers to both the original and the flipped item of some rules"
        return section
    fixed = {"respondent", "variant", "condition", "pair_id", "affirmed", "denied"}
    columns = [c for c in rules.columns if c not in fixed]
    rows = []
    for (respondent, condition), group in rules.groupby(["respondent", "condition"], sort=True):
        for variant, part in _with_all(group):
            slices = [("overall", "", part)]
            for column in columns:
                for value in sorted(set(part[column].dropna().astype(str))):
                    slices.append((column, value, part[part[column].astype(str) == value]))
            for column, value, rows_ in slices:
                p = paired.dual_sided_accuracy(zip(rows_["affirmed"], rows_["denied"]))
                rows.append({"respondent": respondent, "condition": condition, "variant": variant, "column": column,
                             "value": value, "rules": p.n, "correct": p.successes, "accuracy": p.estimate,
                             "low": p.low, "high": p.high})
    section.tables["accuracy"] = pd.DataFrame(rows)
    section.n_obs = len(rules)
    section.notes.append("Accuracy with 95% Wilson intervals, overall and by each descriptive column of the rule bank; "
                         "variant 'all' pools the templates.")
    return section


# --------------------------------------------------------------------------- perturbation (002)


def matched_pairs(answers: pd.DataFrame) -> pd.DataFrame:
    """(respondent, label, original correct, perturbed correct) per matched pair of items."""
    perturbed = answers[answers["original_item_id"].notna()].copy()
    perturbed["link"] = perturbed["original_item_id"].astype(int)
    originals = answers[answers["item_id"].isin(set(perturbed["link"]))].copy()
    originals["link"] = originals["item_id"]
    joined = pair_up(originals, perturbed, ["respondent", "link"])
    if joined.empty:
        return pd.DataFrame(columns=["respondent", "label", "original", "perturbed"])
    return pd.DataFrame({"respondent": joined["respondent"], "label": joined["condition_b"],
                         "original": joined["correct_a"].astype(bool), "perturbed": joined["correct_b"].astype(bool)})


def perturbation_section(answers: pd.DataFrame, options: dict) -> Section:
    section = Section("perturbation", "Matched-pair perturbations (002): 2×2 tables, McNemar / exact binomial, "
                                      "Benjamini–Hochberg across models")
    pairs = matched_pairs(answers)
    if pairs.empty:
        section.absent = "needs answers to perturbed items and to their originals"
        return section
    alternative, alpha = options["alternative"], float(options["alpha"])
    rows = []
    for label, group in pairs.groupby("label", sort=True):
        tests = {}
        for respondent, part in group.groupby("respondent", sort=True):
            table = paired.contingency(zip(part["original"], part["perturbed"]))
            tests[respondent] = paired.matched_pair_test(table, alternative=alternative,
                                                         exact_max=int(options["exact_max"]))
        models = [r for r in tests if r != HUMAN]
        adjusted = dict(zip(models, paired.benjamini_hochberg([tests[m].p_value for m in models], alpha)))
        if HUMAN in tests:
            adjusted[HUMAN] = paired.benjamini_hochberg([tests[HUMAN].p_value], alpha)[0]
        for respondent, test in tests.items():
            t = test.table
            rows.append({"respondent": respondent, "perturbation": label, "n11": t.n11, "n12": t.n12, "n21": t.n21,
                         "n22": t.n22, "n": t.discordant, "method": test.method, "statistic": test.statistic,
                         "p_value": test.p_value, "p_adjusted": adjusted[respondent].adjusted,
                         "reject": adjusted[respondent].reject})
    section.tables["matched_pairs"] = pd.DataFrame(rows)
    section.n_obs = len(pairs)
    section.stats = {"alpha": alpha}
    section.notes.append(
        f"n11/n12/n21/n22: original right/right, right/wrong, wrong/right, wrong/wrong (original first); n = n12 + n21. "
        f"Alternative {alternative}; exact binomial test on n21 when n ≤ {options['exact_max']}, else McNemar's "
        "z = (n21 − n12)/√(n21 + n12). BH adjusts across models at level alpha (people are their own family). "
        "Model rows pool the prompt variants (each variant's original and perturbed item make one pair).")
    return section


def sections(scores: pd.DataFrame, trials: pd.DataFrame, inputs: PairedInputs | None) -> list[Section]:
    """A section per paired design present in the study (none when it has no linked items)."""
    if inputs is None or inputs.items.empty:
        return []
    answers = responses(scores, trials, inputs.items)
    designs = set(inputs.items.loc[inputs.items["pair_id"] != "", "design"])
    out = []
    if "rulebreakers" in designs:
        out.append(rulebreakers_section(answers, inputs))
    if "dual-sided" in designs:
        out.append(dual_sided_section(answers))
    if inputs.items["original_item_id"].notna().any():
        out.append(perturbation_section(answers, inputs.options))
    people = paired_people.people_section(answers, inputs.presentation)
    if people is not None:
        out.append(people)
    return out
