"""The notes say what was done (issue 44 item 7): Holm's families as emmeans applies them (within each level of a
table's `by` factor), read from the tables as fitted and checked against p-values adjusted by hand; R's warnings
of the fit kept shown as the fit's, those of discarded optimizer attempts listed apart, as discarded."""
from __future__ import annotations

import random

import pandas as pd
import pytest
from scipy import stats

from analysis import html, versus
from analysis.sections import ModelSpec, Section, StudyFrames, adjustment_notes, fit_spec, record_fit

MODELS = {"m1": 0.9, "m2": -0.4, "m3": 0.1}
LEVELS = {"a": 0.0, "b": 0.5, "c": -0.3}


def answers() -> pd.DataFrame:
    """20 people and three models answer 12 items at each of three levels of f (seeded)."""
    rng = random.Random(44)
    rows = []
    for who, agent, shift in [(f"P{k}", "human", rng.gauss(0, 0.4)) for k in range(20)] + [
            (m, m, effect) for m, effect in MODELS.items()]:
        for level, effect in LEVELS.items():
            for item in range(12):
                p = 1 / (1 + pow(2.718281828, -(0.4 + shift + effect)))
                rows.append((agent, who, level, int(rng.random() < p)))
    frame = pd.DataFrame(rows, columns=["agent", "participant", "f", "correct"])
    frame["agent"] = pd.Categorical(frame["agent"], ["human", *MODELS])
    frame["f"] = pd.Categorical(frame["f"], list(LEVELS))
    frame["participant"] = pd.Categorical(frame["participant"])
    return frame


def _answers(frames: StudyFrames) -> pd.DataFrame:
    return answers()


SPEC = ModelSpec(
    key="holm", title="Humans vs models by f", formula="correct ~ agent * f + (1 | participant)", frame=_answers,
    columns=("correct", "agent", "f", "participant"), group="participant", needs="answers", factors=("agent", "f"),
    family="binomial", versus=(("model_vs_human", "agent", None), ("model_vs_human_by_f", "agent", "f")))


def holm(p: list[float]) -> list[float]:
    """Holm's step-down adjustment written out: the k-th smallest p times (m − k + 1), made monotone, capped at 1."""
    order = sorted(range(len(p)), key=lambda i: p[i])
    out, running = [0.0] * len(p), 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (len(p) - rank) * p[i]))
        out[i] = running
    return out


def test_holm_runs_within_each_level_of_the_by_factor_and_the_note_names_each_family(r_stack):
    section = fit_spec(SPEC, StudyFrames(scores=pd.DataFrame()))
    assert not section.absent, section.absent
    fit = r_stack.fit(SPEC.formula, answers()[list(SPEC.columns)], family="binomial")
    raw_by = r_stack.versus_reference(fit, "agent", "f", adjust="none")
    by = section.tables["model_vs_human_by_f"]
    assert list(by["contrast"]) == list(raw_by["contrast"]) and list(by["f"]) == list(raw_by["f"])
    within = [q for level in LEVELS for q in holm(list(raw_by.loc[raw_by["f"] == level, "p_value"]))]
    assert list(by["p_value"]) == pytest.approx(within, rel=1e-9)  # one family per level of f
    across = holm(list(raw_by["p_value"]))  # what "within each table" would have meant: one family of 9
    assert list(by["p_value"]) != pytest.approx(across, rel=1e-6)
    raw_overall = r_stack.versus_reference(fit, "agent", None, adjust="none")
    overall = section.tables["model_vs_human"]
    assert list(overall["p_value"]) == pytest.approx(holm(list(raw_overall["p_value"])), rel=1e-9)
    # the intervals: Bonferroni within the same family (3 contrasts), as the note says
    z = (by["ci_high"] - by["estimate"]) / by["se"]
    assert list(z) == pytest.approx([stats.norm.ppf(1 - 0.025 / 3)] * len(by), rel=1e-6)
    note = next(n for n in section.notes if n.startswith("Multiple comparisons"))
    assert ("model_vs_human: one family, the table's 3 contrasts; model_vs_human_by_f: a family per level of f "
            "(3 levels, 3 contrasts each), levels not adjusted against each other") in note
    assert "Bonferroni-adjusted within the same families" in note and "No adjustment runs across" in note
    assert not any("within each table" in n for n in section.notes)


def test_the_family_note_reads_the_tables_and_says_nothing_without_contrast_tables():
    spec = ModelSpec(key="k", title="t", formula="y ~ x", frame=_answers, columns=(), group="g", needs="n",
                     versus=(("vs", "agent", "level"),), pairs=(("pairs_x", "~ x"), ("pairs_x_by_z", "~ x | z")))
    tables = {"vs": pd.DataFrame({"contrast": ["m1 - human"] * 3, "level": ["p", "q", "r"]}),
              "pairs_x": pd.DataFrame({"contrast": ["b - a", "c - a", "c - b"]}),
              "pairs_x_by_z": pd.DataFrame({"contrast": ["b - a", "b - a", "c - a"], "z": ["u", "v", "v"]})}
    note = adjustment_notes(spec, tables)[0]
    assert "vs: a family per level of level (3 levels, 1 contrast each)" in note and "a family of one" in note
    assert "pairs_x: one family, the table's 3 contrasts" in note
    assert "pairs_x_by_z: a family per level of z (2 levels, of 1 (u), 2 (v) contrasts)" in note
    assert adjustment_notes(ModelSpec(key="k", title="t", formula="y ~ x", frame=_answers, columns=(), group="g",
                                      needs="n"), {}) == []
    assert not any("within each table" in n for n in versus.NOTES)  # the old claim is gone; the note above says it


def test_the_kept_fits_warnings_are_the_fits_and_a_discarded_attempts_are_listed_as_discarded(r_stack):
    """sleepstudy with Days in units of 1/34 day: bobyqa stops short, Nelder_Mead converges and is kept. The section
    shows no warning for the fit it reports, and bobyqa's under the discarded attempts."""
    with r_stack.r_session() as r:
        data = r_stack.to_pandas(r, r.ro.r("lme4::sleepstudy"))
    data["D"] = data["Days"] * 34
    fit = r_stack.fit("Reaction ~ D + (D | Subject)", data)
    section = Section("sleep", "Sleep")
    record_fit(section, fit, data[["Reaction", "D", "Subject"]])
    assert section.warnings == [] and [w.split(" with ")[0] for w in section.discarded] == [
        "[bobyqa] Model failed to converge"]
    page = html._section(section)
    assert "Warnings from R" not in page
    assert "Discarded fitting attempts (not the fits reported" in page and "[bobyqa] Model failed to converge" in page
    assert "Optimizers tried: bobyqa, Nelder_Mead; kept Nelder_Mead." in section.notes
    shown = Section("s", "S", warnings=["[Nelder_Mead] kept"], discarded=["[bobyqa] dropped"])
    page = html._section(shown)
    assert page.index("Warnings from R (the fits reported)") < page.index("[Nelder_Mead] kept") < page.index(
        "Discarded fitting attempts") < page.index("[bobyqa] dropped")
