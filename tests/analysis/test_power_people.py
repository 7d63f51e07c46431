"""Power for the people's own effects (issue 47 item 5, analysis/power_people.py): the people's GLMM of accuracy on a
declared factor with the report's random effects, simulated from a pilot's fit or a stated effect, refitted by the
report's rule. A huge effect is detected at a modest N; a null effect is rejected about as often as α says. The
pilots here are drawn in Python from known accuracies (24 answers a person, half on each level, a person's own
random intercept); the tests stay small (one size, 20–30 simulated studies)."""
from __future__ import annotations

import math
import random

import pandas as pd
import pytest

from analysis import people_effects, power_people
from analysis.power_plan import PowerPlan
from analysis.sections import StudyFrames

NO_SCORES = pd.DataFrame(columns=["model", "item_id", "correct", "condition", "design", "variant", "pair_role"])


def pilot(people: int, accuracy: dict[str, float], seed: int, items: int = 24, person_sd: float = 0.4) -> StudyFrames:
    """A pilot of `people` answering every one of `items` items (half rulebreakers), right with the level's
    accuracy shifted by the person's own effect on the logit scale."""
    rng = random.Random(seed)
    rows = []
    for k in range(people):
        u = rng.gauss(0, person_sd)
        for i in range(items):
            role = "rulebreaker" if i % 2 else "non-rulebreaker"
            p = accuracy[role]
            eta = math.log(p / (1 - p)) + u
            rows.append({"participant": f"P{k}", "item_id": i + 1, "pair_role": role, "condition": "real",
                         "design": "rulebreakers", "variant": "",
                         "correct": int(rng.random() < 1 / (1 + math.exp(-eta)))})
    return StudyFrames(scores=NO_SCORES, kept=pd.DataFrame(rows))


def test_the_peoples_model_is_the_reports_random_effects_on_the_peoples_answers():
    frames = pilot(6, {"rulebreaker": 0.35, "non-rulebreaker": 0.95}, seed=1)
    (spec,) = people_effects.specs(frames, ["pair_role", "modality"])  # modality: not in these answers, left out
    assert spec.formula == "correct ~ pair_role + (1 | participant) + (1 | item)"
    data = spec.frame(frames)
    assert len(data) == 6 * 24 and set(data["agent"]) == {"human"}
    assert list(data["pair_role"].cat.categories) == ["non-rulebreaker", "rulebreaker"]  # the reference first
    assert spec.versus == (("pair_role_vs_reference", "pair_role", None),)


def test_a_huge_effect_among_people_has_power_near_one_at_a_modest_n(r_stack):
    frames = pilot(8, {"rulebreaker": 0.35, "non-rulebreaker": 0.95}, seed=1)
    result = power_people.estimate(frames, ["pair_role"], PowerPlan(sizes=(8,), nsim=20, seed=1))
    (row,) = result.pilot["people"]
    # the pilot's own estimate: the built-in effect, sign and size (0.35 − 0.95 for the typical person)
    assert row["contrast"] == "rulebreaker - non-rulebreaker" and row["simulated"] == "pilot"
    assert -0.75 < row["pilot_estimate"] < -0.45 and row["pilot_low"] < row["pilot_estimate"] < row["pilot_high"] < 0
    curve = result.curve.set_index("contrast")
    assert curve.loc["rulebreaker - non-rulebreaker", "factor"] == "pair_role (people)"
    assert curve.loc["rulebreaker - non-rulebreaker", "power"] >= 0.95 and (result.curve["failed"] == 0).all()
    assert set(result.curve["effect"]) == {"people"}
    needed = result.needed.set_index("contrast").loc["rulebreaker - non-rulebreaker"]
    assert needed["needed"] == 8  # 20 of 20: the Wilson lower bound 0.84 reaches the target 0.8


def test_a_stated_null_effect_is_rejected_about_as_often_as_alpha(r_stack):
    frames = pilot(8, {"rulebreaker": 0.35, "non-rulebreaker": 0.95}, seed=1)  # the pilot's effect is replaced
    plan = PowerPlan(sizes=(8,), nsim=30, seed=2, alpha=0.05)
    result = power_people.estimate(frames, ["pair_role"], plan,
                                   stated={"pair_role": {"rulebreaker": 0.8, "non-rulebreaker": 0.8}})
    (row,) = result.curve.itertuples()
    assert result.pilot["people"][0]["simulated"] == "stated" and result.pilot["people"][0]["stated"] == "0.8 vs 0.8"
    assert row.power <= 0.15 and row.low <= plan.alpha <= row.high, row  # about α, well below the huge effect's 1


def test_a_stated_effect_names_every_level_of_a_factor_of_the_peoples_models(r_stack):
    frames = pilot(4, {"rulebreaker": 0.35, "non-rulebreaker": 0.95}, seed=3)
    plan = PowerPlan(sizes=(4,), nsim=10)
    with pytest.raises(ValueError, match=r"names every level .*missing \['non-rulebreaker'\]"):
        power_people.estimate(frames, ["pair_role"], plan, stated={"pair_role": {"rulebreaker": 0.5}})
    with pytest.raises(ValueError, match=r"unknown \['rulebreakr'\]"):
        power_people.estimate(frames, ["pair_role"], plan,
                              stated={"pair_role": {"rulebreakr": 0.5, "rulebreaker": 0.5, "non-rulebreaker": 0.5}})
    with pytest.raises(ValueError, match="A stated effect names modality, not a factor of the people's models"):
        power_people.estimate(frames, ["pair_role"], plan, stated={"modality": {"box": 0.5}})
    with pytest.raises(ValueError, match="between 0 and 1"):
        PowerPlan(stated={"pair_role": {"rulebreaker": 1.5}})
