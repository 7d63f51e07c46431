"""A chat configuration has no perplexity (no prompt log-probabilities; issue 28): the models with a
perplexity term (003's Eq. 4–6) leave its scores out and say so, never silently."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from designs.modal import mixed, simulate
from analysis.sections import StudyFrames, fit_spec, models_without_perplexity


def _scores() -> pd.DataFrame:
    scores = simulate.scores(n_models=4, n_interpretations=6, seed=5)
    chat = sorted(scores["model"].unique())[-1]
    scores.loc[scores["model"] == chat, "perplexity"] = np.nan
    return scores


def test_models_without_perplexity_are_named():
    scores = _scores()
    chat = sorted(scores["model"].unique())[-1]
    assert models_without_perplexity(scores) == [chat]
    assert models_without_perplexity(simulate.scores(n_models=2, n_interpretations=2)) == []
    assert models_without_perplexity(pd.DataFrame()) == []


def test_eq4_leaves_the_chat_model_out_and_says_so_with_the_fit_of_the_others(r_stack):
    scores = _scores()
    chat = models_without_perplexity(scores)[0]
    section = fit_spec(mixed.EQ4, StudyFrames(scores=scores))
    assert not section.absent
    said = " ".join(section.notes)
    assert f"Left out of this fit: {chat}" in said and "Departure from 003" in said
    # the same fit as on the other configurations alone (nothing else changed by leaving it out)
    others = fit_spec(mixed.EQ4, StudyFrames(scores=scores[scores["model"] != chat].reset_index(drop=True)))
    assert not any("Left out of this fit" in note for note in others.notes)
    got = section.tables["coefficients"].set_index("term")["Estimate"]
    want = others.tables["coefficients"].set_index("term")["Estimate"]
    assert got.to_dict() == pytest.approx(want.to_dict(), abs=1e-9)
