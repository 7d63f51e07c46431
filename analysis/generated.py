"""The report's section on generated answers (issue 28, decision rule 'generated').

For every used run whose configuration generates its answers: how the answers were asked (the
prompt setting, the parser, the sampling), how many samples were read as each answer, and how many
could not be read ("other": unparseable, counted as not correct). Each item's p(Yes) estimate is the
share of yes among its n samples, with a Wilson interval whose unit is one sample of that item;
the items' estimates and intervals are in the table `items` (and the scores CSV's p_yes).
"""
from __future__ import annotations

import pandas as pd

from .proportions import wilson

UNIT = ("one generated sample: an unparseable share is a share of all samples of the run (Wilson interval over "
        "samples; the samples of one item are not independent when n > 1, so read it as descriptive); an item's "
        "p(Yes) estimate is a share of its own n samples (Wilson interval over that item's samples)")


def _rows(run_ids: list[int]) -> tuple[pd.DataFrame, pd.DataFrame]:
    from django.db.models import Count

    from inference.models import GeneratedAnswer, ModelScore

    scores = list(ModelScore.objects.filter(run_id__in=list(run_ids), decision_rule="generated")
                  .order_by("run_id", "item_id")
                  .values_list("run_id", "run__language_model__name", "item__code", "item__gold_answer", "generation",
                               "decision"))
    if not scores:
        return pd.DataFrame(), pd.DataFrame()
    thinking = dict(GeneratedAnswer.objects.filter(score__run_id__in=list(run_ids)).exclude(thinking="")
                    .order_by().values("score__run_id").annotate(n=Count("id")).values_list("score__run_id", "n"))
    items = []
    for run_id, model, code, gold, record, decision in scores:
        counts, n = record.get("counts", {}), record.get("n", 0)
        yes = counts.get("yes", 0)
        interval = wilson(yes, n) if n else None
        low, high = (interval.low, interval.high) if interval else (None, None)
        items.append({"run_id": run_id, "model": model, "item": code, "gold": gold, "n": n, "yes": yes,
                      "no": counts.get("no", 0), "other": record.get("unparsed", 0), "p_yes": yes / n if n else None,
                      "p_yes_low": low, "p_yes_high": high, "decision": decision, "setting": record.get("setting"),
                      "parser": record.get("parser"), "sampling": record.get("sampling"),
                      "max_new_tokens": record.get("max_new_tokens")})
    frame = pd.DataFrame(items)
    runs = []
    for (run_id, model), group in frame.groupby(["run_id", "model"], sort=True):
        samples, other = int(group["n"].sum()), int(group["other"].sum())
        share = wilson(other, samples) if samples else None
        first = group.iloc[0]
        runs.append({"run_id": run_id, "model": model, "items": len(group), "samples_per_item": int(first["n"]),
                     "samples": samples, "unparseable": other,
                     "unparseable_share": other / samples if samples else None,
                     "unparseable_low": share.low if share else None, "unparseable_high": share.high if share else None,
                     "items_with_unparseable": int((group["other"] > 0).sum()),
                     "samples_with_thinking": int(thinking.get(run_id, 0)), "prompt": first["setting"],
                     "parser": first["parser"], "sampling": first["sampling"],
                     "max_new_tokens": int(first["max_new_tokens"] or 0)})
    return pd.DataFrame(runs), frame


def section(run_ids: list[int]):
    """The 'Generated answers' section, or None when no used run generates its answers."""
    from .sections import Section

    runs, items = _rows(run_ids)
    if runs.empty:
        return None
    out = Section("generated", "Generated answers (decision rule 'generated')", unit=UNIT)
    out.tables["runs"] = runs
    if (items["n"] > 1).any():  # each item's p(Yes) estimate with its interval over its own samples
        out.tables["items"] = items
    out.n_obs = int(runs["samples"].sum())
    total, other = int(runs["samples"].sum()), int(runs["unparseable"].sum())
    out.notes += [
        f"Unparseable answers: {other} of {total} samples ({other / total:.1%}); each is counted as 'other', the "
        "model's answer is then neither yes nor no, and it counts as not correct.",
        "Each item's answer is the most frequent answer among its n samples (ties: the one sampled first); its "
        "p(Yes) estimate is the share of yes among them, with a Wilson 95% interval over those samples (table "
        "'items', when n > 1). The raw text of every sample, its thinking (<think>…</think>) kept apart, is stored with the "
        "score (admin: generated answers).",
    ]
    return out
