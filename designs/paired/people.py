"""People on the paired designs: how their answers to the two members of a pair are compared.

A study presents pairs to people one of two ways (HumanArm.paired_presentation):

* within participants: a person answers both members, so their two answers are a true pair and the
  paired quantities (000's τ, 004's dual-sided accuracy, 002's McNemar test) are computed from those
  pairs, as for a model (paired_report.pair_up joins a person's answers on the participant), with
  intervals and tests clustered by participant: a person's pairs are one unit (analysis.clustered);
* across participants: a person answers one member of each pair. There is then no pair of answers
  to form — pairing the k-th answer to one member with the k-th to the other would make McNemar's
  p-value depend on the participants' label order and τ a quantity of nobody — so people get no row
  in the paired tables. Instead each member's accuracy is estimated and the members are compared by a
  logistic model clustered on the participant (statsmodels GEE, exchangeable working correlation,
  robust sandwich errors): a person answers both kinds of member over different pairs, so the
  contrast is estimated within people, with their correlation accounted for.

Pure pandas and statsmodels; the report says which was done.
"""
from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd

from analysis.sections import Section

HUMAN = "human"
ACROSS, WITHIN = "across", "within"
METHOD = "GEE logit, participant clusters (exchangeable), robust SE"
COLUMNS = ["design", "comparison", "member_a", "member_b", "participants", "answers_a", "answers_b", "accuracy_a",
           "accuracy_b", "log_odds_b_vs_a", "se", "ci_low", "ci_high", "odds_ratio", "p_value", "method", "note"]


def member_answers(answers: pd.DataFrame) -> list[tuple[str, str, pd.DataFrame, tuple[str, str]]]:
    """(design, comparison, people's answers with a `member` column: the reference member first)."""
    from experiments import design_registry as registry
    from logic.pairs import gold_by_role

    people = answers[answers["respondent"] == HUMAN]
    out = []
    gold = gold_by_role()
    # each paired design's members (its registry entry), the member the paper expects a Yes to first;
    # in the order of the papers (000's rulebreakers before 004's dual-sided rules)
    for design in sorted((d for d in registry.all_designs() if d.pair_roles), key=lambda d: (d.paper, d.name)):
        part = people[people["design"] == design.name]
        if len(part):
            reference, other = sorted(design.pair_roles, key=lambda role: gold.get(role) != "yes")
            out.append((design.name, f"{other} vs {reference}", part.assign(member=part["pair_role"]),
                        (reference, other)))
    from .frames import PERTURBED_LINKS

    kinds = people["link_kind"] if "link_kind" in people else pd.Series("perturbation", index=people.index)
    perturbed = people[people["original_item_id"].notna() & kinds.isin(PERTURBED_LINKS)]
    originals = people[people["item_id"].isin(set(perturbed["original_item_id"].astype(int)))]
    for label in sorted(set(perturbed["condition"])):
        part = pd.concat([originals.assign(member="original"),
                          perturbed[perturbed["condition"] == label].assign(member=label)], ignore_index=True)
        out.append(("perturbation", f"{label} vs original", part, ("original", label)))
    return out


def compare_members(frame: pd.DataFrame, members: tuple[str, str]) -> dict:
    """Accuracy of each member and the GEE contrast of the second against the first."""
    a, b = members
    frame = frame[frame["member"].isin(members)]
    row = {"member_a": a, "member_b": b, "participants": int(frame["order"].nunique()),
           "answers_a": int((frame["member"] == a).sum()), "answers_b": int((frame["member"] == b).sum()),
           "accuracy_a": _mean(frame.loc[frame["member"] == a, "correct"]),
           "accuracy_b": _mean(frame.loc[frame["member"] == b, "correct"]),
           "log_odds_b_vs_a": math.nan, "se": math.nan, "ci_low": math.nan, "ci_high": math.nan,
           "odds_ratio": math.nan, "p_value": math.nan, "method": METHOD, "note": ""}
    problem = _not_estimable(frame, members)
    if problem:
        row["note"] = problem
        return row
    import statsmodels.api as sm
    import statsmodels.formula.api as smf

    data = pd.DataFrame({"y": frame["correct"].astype(float).to_numpy(),
                         "b": (frame["member"] == b).astype(float).to_numpy(),
                         "participant": frame["order"].astype(str).to_numpy()})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = smf.gee("y ~ b", groups="participant", data=data, family=sm.families.Binomial(),
                      cov_struct=sm.cov_struct.Exchangeable()).fit()
    estimate, se = float(fit.params["b"]), float(fit.bse["b"])
    low, high = (float(v) for v in fit.conf_int().loc["b"])
    row.update(log_odds_b_vs_a=estimate, se=se, ci_low=low, ci_high=high, odds_ratio=math.exp(estimate),
               p_value=float(fit.pvalues["b"]))
    return row


def _mean(values: pd.Series) -> float:
    return float(values.astype(float).mean()) if len(values) else math.nan


def _not_estimable(frame: pd.DataFrame, members: tuple[str, str]) -> str:
    if frame["order"].nunique() < 2:
        return "needs answers from at least two participants"
    for member in members:
        values = frame.loc[frame["member"] == member, "correct"].astype(bool)
        if values.empty:
            return f"no answers to the {member} member"
        if values.all() or not values.any():
            return f"every answer to the {member} member is {'right' if values.all() else 'wrong'}: the odds ratio is not finite"
    return ""


def people_section(answers: pd.DataFrame, presentation: str) -> Section | None:
    """What the report did with people's answers to paired designs (None when there are none)."""
    comparisons = member_answers(answers)
    if not comparisons:
        return None
    section = Section("paired_people", "People on the paired designs: "
                      + ("pairs within participants" if presentation == WITHIN else "members compared across participants"))
    people = answers[answers["respondent"] == HUMAN]
    if presentation == WITHIN:
        section.unit = ("a participant: a person's pairs are one cluster. τ and dual-sided accuracy have GEE logistic "
                        "intervals clustered by participant (independence, sandwich SE; Wilson when each person has "
                        "one pair), and 002's matched-pair test is the clustered McNemar test over participants (002's own test "
                        "when each person gives one pair).")
        section.notes.append(
            "Within-participant presentation: each person answered both members of the pairs in their list (at least "
            "the study's gap apart, which member first counterbalanced), so the paired tables above use each person's "
            "own two answers, as for a model; a pair counts only when the same person answered both. A person's "
            "pairs are not independent of each other, so people's intervals and tests there rest on the "
            "participants (n = participants), not on the pairs.")
        section.n_obs = len(people)
        return section
    section.unit = ("a participant: the members are compared by a logistic GEE clustered by participant "
                    "(exchangeable working correlation, robust sandwich SE).")
    rows = [{"design": design, "comparison": comparison, **compare_members(frame, members)}
            for design, comparison, frame, members in comparisons]
    section.tables["members"] = pd.DataFrame(rows, columns=COLUMNS)
    section.n_obs = len(people)
    section.notes += [
        "Across-participant presentation: each person answered one member of a pair, so people have no pairs and no "
        "row in the paired tables (τ, dual-sided accuracy and McNemar need a respondent's own two answers). Instead "
        "each member's accuracy is shown and the second member is compared with the first by a logistic model "
        f"clustered on the participant ({METHOD}); log_odds_b_vs_a > 0: the second member is answered right more often.",
        "To measure the paired quantities for people, present the pairs within participants (human arm: paired "
        "presentation).",
    ]
    if np.isnan(section.tables["members"]["p_value"]).all():
        section.notes.append("No comparison was estimable (see each row's note).")
    return section
