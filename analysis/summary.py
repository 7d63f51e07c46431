"""The report's opening summary (issue 47 item 6): a few plain sentences per model and for people, written from
the numbers the report's own sections computed — Table 1, the humans-vs-models model's contrasts and
coefficients, the human-likeness table, the models' decisions — with no fit or resampling of its own. Each
sentence carries its interval, and an interval that reaches past zero (or an odds ratio's past 1) is said as
"no clear difference", never as a direction. Pure pandas: no Django, no R.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from . import factors as declared
from .prep import LABELS

KEY = "summary"  # tables/summary.csv
NEARLY = 0.9  # a model giving one answer to at least this share of its items "nearly always" gives it
BASIS = ("Written from the report's own numbers, each with its 95% interval: Table 1 (accuracy on the items people "
         "could be shown), the humans-vs-models model (differences in probability correct, model − human; people's "
         "effects as its coefficients for people), and the human-likeness table. An interval that includes no "
         "difference is said as \"no clear difference\". The sections below give the details and the caveats.")


@dataclass(frozen=True)
class Summary:
    people: tuple[str, ...]
    models: tuple[tuple[str, tuple[str, ...]], ...]  # (model configuration, its sentences), in Table 1's order
    basis: str = BASIS

    def frame(self) -> pd.DataFrame:
        """tables/summary.csv: one row per sentence (about: human or the model configuration). Its rows are sentences,
        not measures: each quotes a table that states both sides (Table 1's, the humans-vs-models model's)."""
        rows = [("human", s) for s in self.people] + [(m, s) for m, said in self.models for s in said]
        return pd.DataFrame(rows, columns=["about", "sentence"])


def _num(value: float, digits: int = 2, sign: bool = False) -> str:
    text = f"{value:+.{digits}f}" if sign else f"{value:.{digits}f}"
    return text.replace("-", "−")


def _interval(low: float, high: float, digits: int = 2) -> str:
    return f"95% CI {_num(low, digits)} to {_num(high, digits)}"


def _blank(*values) -> bool:
    return any(v is None or (isinstance(v, float) and math.isnan(v)) or pd.isna(v) for v in values)


def _label(level) -> str:
    return LABELS.get(str(level), str(level))


def _factor(name: str) -> str:
    return declared.spoken(name)


def _answer(decision: str) -> str:
    return {"yes": "Yes", "no": "No", "other": "neither answer ('other')"}.get(decision, str(decision))


def _overall(table1: pd.DataFrame, respondent: str, measure: str):
    rows = table1[(table1["respondent"] == respondent) & (table1["factor"] == "overall")
                  & (table1["measure"] == measure)] if len(table1) else table1
    return rows.iloc[0] if len(rows) else None


def comparison(sections) -> object | None:
    """The like-for-like humans-vs-models section the report fitted (the one whose tables hold the agents' marginal
    means and the model − human contrasts; not the all-items sensitivity analysis), or None."""
    from .versus import ALL_ITEMS_KEY

    for section in sections:
        if section.absent or section.key == ALL_ITEMS_KEY or "emmeans_agent" not in section.tables:
            continue
        if any(name.startswith("model_vs_human") for name in section.tables):
            return section
    return None


def _likeness(sections):
    from .likeness_report import KEY as LIKENESS

    return next((s for s in sections if s.key == LIKENESS and not s.absent and LIKENESS in s.tables), None)


def _contrasts(table: pd.DataFrame, model: str) -> pd.DataFrame:
    """A model's rows of a model − human contrast table (emmeans writes "lm-1 - human", or "(lm 1) - human")."""
    first = table["contrast"].astype(str).str.rsplit(" - ", n=1).str[0].str.strip().str.strip("()")
    return table[first == model]


def _unclear(levels: list[str], clear: bool, other: str = "") -> str:
    """The levels with no clear difference: named when few, counted when many ("in the other 5 levels")."""
    if len(levels) <= 2:
        return f"no clear difference in {', '.join(levels)}"
    return f"no clear difference in {'the' if clear else 'any of the'} {len(levels)} {other}levels"


def _direction(estimate: float, low: float, high: float, better: str, worse: str) -> str:
    if low > 0:
        return better
    if high < 0:
        return worse
    return "no clear difference"


def _decisions(scores: pd.DataFrame, model: str) -> str:
    """Always (or nearly always) the same answer, said plainly; '' otherwise."""
    if not len(scores) or "decision" not in scores or "model" not in scores:
        return ""
    per_item = scores[scores["model"].astype(str) == model]
    per_item = per_item.drop_duplicates("item_id") if "item_id" in per_item else per_item
    counts = per_item["decision"].astype(str).value_counts()
    if not len(counts):
        return ""
    top, n, total = str(counts.index[0]), int(counts.iloc[0]), int(counts.sum())
    if n == total and total > 1:
        return (f"Answers {_answer(top)} to every item it was asked ({total} items): its accuracy is the share of "
                f"items whose answer is {_answer(top)}, not a sign of reasoning.")
    if n / total >= NEARLY:
        return f"Answers {_answer(top)} to nearly every item it was asked ({n} of {total})."
    return ""


def _accuracy(table1: pd.DataFrame, model: str, people) -> str:
    row = _overall(table1, model, "decision accuracy")
    if row is None:
        return ""
    items = f"the {int(row['n_items'])} items people could be shown" if people is not None and "n_items" in row \
        and not _blank(row["n_items"]) else "the items it answered"
    said = (f"On {items}, {_num(row['accuracy'])} of its decisions are correct "
            f"({_interval(row['ci_low'], row['ci_high'])})")
    if people is not None:
        said += (f"; people: {_num(people['accuracy'])} correct ({_interval(people['ci_low'], people['ci_high'])}), "
                 "Table 1")
    return said + "."


def _versus(section, model: str) -> str:
    """The model − human difference in probability correct: overall, or per level of each factor (a registered
    humans-vs-models model's)."""
    if section is None:
        return ""
    safe = (" (fitted by a separation-safe method, as its section explains)"
            if "separated_cells" in section.stats else "")
    overall = section.tables.get("model_vs_human")
    if overall is not None:
        rows = _contrasts(overall, model)
        if not len(rows):
            return ""
        r = rows.iloc[0]
        if _blank(r["estimate"], r["ci_low"], r["ci_high"]):
            return f"The humans-vs-models model gives no estimate of its difference from people{safe}."
        word = _direction(r["estimate"], r["ci_low"], r["ci_high"], "more accurate than people",
                          "less accurate than people")
        if word == "no clear difference":
            word = "no clear difference from people"
        return (f"Against people, in the humans-vs-models model: {word}, {_num(r['estimate'], sign=True)} in "
                f"probability correct ({_interval(r['ci_low'], r['ci_high'])}){safe}.")
    parts = []
    for name, table in section.tables.items():
        if not name.startswith("model_vs_human_by_"):
            continue
        factor = name.removeprefix("model_vs_human_by_")
        rows = _contrasts(table, model)
        if not len(rows) or factor not in rows:
            continue
        groups = {"higher": [], "lower": [], "no clear difference": []}
        for r in rows.to_dict("records"):  # records: a factor's R name need not be an identifier
            if _blank(r["estimate"], r["ci_low"], r["ci_high"]):
                continue
            word = _direction(r["estimate"], r["ci_low"], r["ci_high"], "higher", "lower")
            groups[word].append(f"{_label(r[factor])} ({_num(r['estimate'], sign=True)}, "
                                f"{_interval(r['ci_low'], r['ci_high'])})" if word != "no clear difference"
                                else _label(r[factor]))
        said = [f"{word} in {', '.join(levels)}" for word, levels in groups.items()
                if levels and word in ("higher", "lower")]
        if groups["no clear difference"]:
            said.append(_unclear(groups["no clear difference"], bool(said), "other " if said else ""))
        if said:
            parts.append(f"by {_factor(factor)}: " + "; ".join(said))
    if not parts:
        return ""
    return ("Against people, in probability correct (model − human, humans-vs-models model), "
            + "; ".join(parts) + f"{safe}.")


def _human_likeness(table: pd.DataFrame | None, model: str) -> list[str]:
    if table is None:
        return []
    rows = table[table["model"].astype(str) == model]
    if not len(rows):
        return []
    r = rows.iloc[0]
    said = []
    if not _blank(r["choice_r"]):
        follow = (f"Item by item, its probability of the target answer follows the share of people giving it at "
                  f"r = {_num(r['choice_r'])}")
        follow += f" ({_interval(r['choice_r_low'], r['choice_r_high'])})" if not _blank(
            r["choice_r_low"], r["choice_r_high"]) else " (no interval)"
        if not _blank(r["ceiling"]):
            follow += f", against the people's own split-half agreement, the ceiling, of {_num(r['ceiling'])}"
            if not _blank(r["choice_r_over_ceiling"]):
                follow += f" ({_num(r['choice_r_over_ceiling'])} of the ceiling)"
        said.append(follow + ".")
    else:
        said.append("Its choices cannot be correlated with people's item by item: "
                    + _reason(r.get("reasons", ""), "choice_r", "the shares or its probabilities do not vary") + ".")
    if not _blank(r["loglik_per_answer"], r["loglik_base"]):
        model_ll, base_ll = float(r["loglik_per_answer"]), float(r["loglik_base"])
        word = ("better than" if round(model_ll, 3) > round(base_ll, 3) else "worse than"
                if round(model_ll, 3) < round(base_ll, 3) else "as well as")
        said.append(f"It predicts people's answers {word} the base rate (how often people gave each answer): "
                    f"{_num(model_ll, 3)} vs {_num(base_ll, 3)} nats per answer (higher is better).")
    if not _blank(r["error_consistency"], r["error_consistency_low"], r["error_consistency_high"]):
        word = _direction(r["error_consistency"], r["error_consistency_low"], r["error_consistency_high"],
                          "more than", "fewer than")
        words = {"more than": "its errors fall on the same items as people's more than their accuracies predict",
                 "fewer than": "its errors fall on the same items as people's less than their accuracies predict",
                 "no clear difference": "no clear difference between how often its errors fall on the same items "
                                        "as people's and what their accuracies predict"}[word]
        said.append(f"Error consistency: {words} (κ = {_num(r['error_consistency'])}, "
                    f"{_interval(r['error_consistency_low'], r['error_consistency_high'])}).")
    return said


def _reason(reasons, name: str, default: str) -> str:
    for clause in str(reasons or "").split("; "):
        if clause.startswith(f"{name}:"):
            return clause.split(":", 1)[1].strip()
    return default


def _people_effects(section, factors) -> list[str]:
    """The people's effect of each declared factor as the humans-vs-models model fits it: with people the reference
    agent and treatment coding, the factor's coefficients are its effect among people (odds ratios against its
    first level), beside the people's marginal P(correct) per level."""
    if section is None or section.fitted is None or "coefficients" not in section.tables:
        return []
    levels = section.fitted.levels
    if not levels.get("agent") or levels["agent"][0] != "human":
        return []
    coefs = section.tables["coefficients"].set_index("term")
    said = []
    for factor in factors:
        name = declared.r_name(factor)
        if name not in levels or len(levels[name]) < 2:
            continue
        reference, others = levels[name][0], levels[name][1:]
        groups = {"higher": [], "lower": [], "no clear difference": [], "not estimated": []}
        for level in others:
            term = f"{name}{level}"
            if term not in coefs.index:
                continue
            row = coefs.loc[term]
            low, high, estimate = row.get("2.5_ci"), row.get("97.5_ci"), row.get("Estimate")
            if _blank(estimate, low, high):
                groups["not estimated"].append(_label(level))
                continue
            word = _direction(estimate, low, high, "higher", "lower")
            groups[word].append(_label(level) if word == "no clear difference" else
                                f"{_label(level)} (odds ratio {_num(math.exp(estimate))}, "
                                f"{_interval(math.exp(low), math.exp(high))})")
        if not any(groups.values()):
            continue
        parts = [f"{word} odds of a correct answer than {_label(reference)}: {', '.join(items)}"
                 for word, items in groups.items() if items and word in ("higher", "lower")]
        unclear = groups["no clear difference"]
        if unclear:
            parts.append(f"no clear difference from {_label(reference)}: {', '.join(unclear)}" if len(unclear) <= 2
                         else f"no clear difference from {_label(reference)} in {'the' if parts else 'any of the'} "
                              f"{len(unclear)} other levels")
        if groups["not estimated"]:
            parts.append(f"not estimated (separation): {', '.join(groups['not estimated'])}")
        means = section.tables.get(f"emmeans_agent_by_{name}")
        if means is not None and name in means:
            humans = means[means["agent"].astype(str) == "human"]
            shown = ", ".join(f"{_label(r[name])} {_num(r['estimate'])}" for r in humans.to_dict("records"))
            if shown:
                parts.append(f"people's P(correct): {shown}")
        said.append(f"By {_factor(factor)} (the humans-vs-models model's effect among people): " + "; ".join(parts)
                    + ".")
    return said


def _people_by_table1(table1: pd.DataFrame, factors) -> list[str]:
    """Without a fitted model for people: their accuracy per level of each factor (Table 1, described, not tested)."""
    said = []
    for factor in factors:
        rows = table1[(table1["respondent"] == "human") & (table1["factor"] == factor)] if len(table1) else table1
        if len(rows) < 2:
            continue
        shown = ", ".join(f"{_label(r.level)} {_num(r.accuracy)} ({_num(r.ci_low)} to {_num(r.ci_high)})"
                          for r in rows.itertuples())
        said.append(f"By {_factor(factor)} (Table 1, proportion correct with bootstrap 95% intervals; no model "
                    f"fitted): {shown}.")
    return said


def summarise(*, sections, table1: pd.DataFrame, scores: pd.DataFrame, factors=()) -> Summary:
    """The summary of a report from what its sections and Table 1 hold (`scores`: every score of the runs used, for
    the models' decisions)."""
    versus_section = comparison(sections)
    likeness = _likeness(sections)
    likeness_table = likeness.tables[likeness.key] if likeness is not None else None
    people = _overall(table1, "human", "proportion correct")
    said_people: list[str] = []
    if people is not None:
        said_people.append(f"People ({int(people['n_clusters'])} participants, {int(people['n'])} answers kept) "
                           f"answered {_num(people['accuracy'])} correctly "
                           f"({_interval(people['ci_low'], people['ci_high'])}).")
        effects = _people_effects(versus_section, factors)
        said_people += effects or _people_by_table1(table1, factors)
    else:
        said_people.append("No answers from people are kept: the models are described alone, with no comparison.")
    models = []
    names = list(dict.fromkeys(table1.loc[table1["respondent"] != "human", "respondent"].astype(str))) \
        if len(table1) else []
    for model in names:
        said = [s for s in (_decisions(scores, model), _accuracy(table1, model, people),
                            _versus(versus_section, model)) if s]
        said += _human_likeness(likeness_table, model)
        models.append((model, tuple(said)))
    return Summary(people=tuple(said_people), models=tuple(models))
