"""Figure 4 of paper 003: perplexity vs confidence per logical sequent, real and nonsense side by side
(a descriptive section that follows Eq. 6 in the report)."""
from __future__ import annotations

import pandas as pd

from analysis import plots
from analysis.sections import Section, SectionBuilder, StudyFrames

from .frames import sequent_means

SEQUENTS_TITLE = "Figure 4: perplexity vs confidence per logical sequent"


def sequent_section(frames: StudyFrames, given=None) -> list[Section]:
    scores = frames.scores
    section = Section("sequents", SEQUENTS_TITLE, unit=(
        "one logical sequent (form) of one model: the mean of its scores on the items of that form, real and "
        "nonsense apart; a descriptive figure, no interval or test."))
    table = sequent_means(scores) if len(scores) else pd.DataFrame()
    needed = {"perplexity_real", "perplexity_nonsense"}
    if table.empty or not needed <= set(table.columns):
        section.absent = "needs model scores on both real items and their nonsense mirror"
        return [section]
    table = table.dropna(subset=["perplexity_real", "perplexity_nonsense"])
    section.tables["sequent_means"] = table
    section.figures["sequents"] = plots.sequents(table)
    section.notes.append("Each point averages the scores sharing one logical sequent; a grey line "
                         "joins a sequent's real and nonsense versions.")
    return [section]


SEQUENTS = SectionBuilder(key="sequents", title=SEQUENTS_TITLE, build=sequent_section, elsewhere=SEQUENTS_TITLE)
