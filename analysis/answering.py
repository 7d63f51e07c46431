"""People's answers split by how they answered (issue 47 item 3): the device (desktop, phone, tablet) and the
answer channel (key, click, touch) each trial records (experiments/schema.py TRIAL). One small table, written as
tables/answering.csv and shown under the report's "What went in": per device and channel, the participants, the
trials, the proportion correct and the median response time of the kept trials (catch items left out). A study
whose every answer came by key on a desktop has one row. The trial columns themselves are in data/trials.csv,
for any model a researcher fits by them."""
from __future__ import annotations

import pandas as pd

NAME = "answering"
SPLIT = ("device", "answer_channel")
GLOSSARY = {
    "device": ("string", "", "the kind of device the trials were answered on (desktop, phone, tablet; 'not "
               "reported' for trials saved before it was recorded)"),
    "answer_channel": ("string", "", "how the answers were given: key, click or touch ('timed out': no answer; "
                       "'not reported': trials saved without one)"),
    "participants": ("integer", "", "distinct participants with a kept trial in this row"),
    "trials": ("integer", "", "kept trials in this row (catch items left out)"),
    "proportion_correct": ("number", "proportion", "the row's trials answered correctly"),
    "median_rt_ms": ("number", "ms", "the median response time of the row's answered trials"),
}


def table(kept: pd.DataFrame) -> pd.DataFrame:
    """The kept trials split by device and answer channel (GLOSSARY's columns; no rows without trials)."""
    columns = list(GLOSSARY)
    if not len(kept) or not set(SPLIT) <= set(kept.columns):
        return pd.DataFrame(columns=columns)
    trials = kept[~kept["is_attention_check"].astype(bool)] if "is_attention_check" in kept else kept
    split = pd.DataFrame({
        "device": trials["device"].fillna("").replace("", "not reported"),
        "answer_channel": trials["answer_channel"].fillna("").mask(
            trials["answer_channel"].fillna("").eq(""),
            trials["timed_out"].astype(bool).map({True: "timed out", False: "not reported"})),
        "participant": trials["participant"], "correct": trials["correct"].astype(float),
        "rt_ms": trials["rt_ms"].where(~trials["timed_out"].astype(bool)),
    })
    grouped = split.groupby(list(SPLIT), sort=True)
    out = pd.DataFrame({
        "participants": grouped["participant"].nunique(), "trials": grouped.size(),
        "proportion_correct": grouped["correct"].mean().round(4), "median_rt_ms": grouped["rt_ms"].median().round(1),
    }).reset_index()
    return out[columns]
