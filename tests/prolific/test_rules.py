"""The pure rules (prolific/rules.py): what review does with each kind of submission, 003's wage bonus by hand,
Prolific's minimum reward, the bonus CSV."""
from __future__ import annotations

from decimal import Decimal

import pytest

from experiments.models.attention import AttentionRule
from prolific import rules
from prolific.rules import Seen

pytestmark = pytest.mark.db_independent
DONE = {"in_duet": True, "duet_status": "completed", "completed": True, "answers": 26, "code_given": "C0MPLETE",
        "codes_expected": ("C0MPLETE",)}
FAILED = {"failed_attention": True, "told_rule": True}


@pytest.mark.parametrize("seen,minutes,action", [
    (Seen(**DONE), 8, "approve"),
    (Seen(in_duet=False), 8, "leave"),
    (Seen(**{**DONE, "code_given": "WRONG"}), 8, "leave"),  # a code Duet did not give
    (Seen(**{**DONE, "duet_status": "started", "completed": False}), 8, "leave"),
    (Seen(**{**DONE, "answers": 0}), 8, "return"),
    (Seen(**{**DONE, "duet_status": "no_consent", "completed": False, "declined_consent": True, "answers": 0}), 8,
     "return"),
    (Seen(**{**DONE, "duet_status": "no_consent", "completed": False, "declined_consent": True}), 8, "return"),
    (Seen(**{**DONE, **FAILED, "wrong_checks": 1}), 8, "leave"),  # policy: 2 needed from 5 min
    (Seen(**{**DONE, **FAILED, "wrong_checks": 1}), 4, "reject"),  # under 5 min: 1 is enough
    (Seen(**{**DONE, **FAILED, "wrong_checks": 2}), 8, "reject"),
    # not told the rule (agreed to a consent page that did not state it as it stands): never rejected for it
    (Seen(**{**DONE, **FAILED, "told_rule": False, "wrong_checks": 2}), 8, "leave"),
    (Seen(**{**DONE, **FAILED, "told_rule": False, "wrong_checks": 1}), 4, "leave"),
])
def test_review_decides_by_the_study_rule_and_prolifics_policy(seen, minutes, action):
    assert rules.review(seen, study_minutes=minutes).action == action


def test_the_rejection_message_is_long_enough_and_quotes_what_participants_were_told():
    told = AttentionRule(fail_after=2, end_session=True).told()
    text = rules.rejection_message(wrong=2, told=told)
    assert len(text) >= 100 and "answered 2 attention checks wrongly" in text and f'said: "{told}"' in text
    assert "if you answer two of them wrongly" in told and "the study ends there" in told
    assert "you still go on to the end" in AttentionRule(fail_after=1).told()


def test_the_wage_bonus_by_hand():
    # four approved times 540, 600, 660, 1200 s: median (600 + 660) / 2 = 630 s = 10.5 min;
    # 9.00/hour × 10.5 min = 1.575 → 1.58 (half up); minus a 1.00 reward: 0.58
    assert rules.wage_bonus_cents(hourly_wage=Decimal("9.00"), seconds=[1200, 540, 660, 600], reward_cents=100) == 58
    assert rules.wage_bonus_cents(hourly_wage=Decimal("9.00"), seconds=[600], reward_cents=150) == 0  # 1.50: none
    assert rules.wage_bonus_cents(hourly_wage=Decimal("9.00"), seconds=[], reward_cents=0) == 0


def test_the_minimum_reward_and_the_bonus_csv():
    assert rules.minimum_reward_problem(reward_cents=120, minutes=8, min_hourly=Decimal("9.00"), currency="GBP") == ""
    said = rules.minimum_reward_problem(reward_cents=119, minutes=8, min_hourly=Decimal("9.00"), currency="GBP")
    assert "8.92 GBP/hour" in said  # 8.925, rounded down: never more than it pays and "at least 120 cents" in said
    a, b = "5a9d64f5f6dfdd0001eaa73d", "644aaabfaf6bbc363b9d47c6"
    assert rules.csv_bonuses([(a, 50), (b, 125)]) == f"{a},0.50\n{b},1.25\n"


@pytest.mark.parametrize("pid,amount", [
    ("a,9999.00\nOTHERPID", 50),  # a participant id that would add a paid line
    ("5a9d64f5f6dfdd0001eaa73d\n", 50), ("5a9d64f5f6dfdd0001eaa73", 50), ('"5a9d64f5f6dfdd0001eaa73d"', 50),
    ("5a9d64f5f6dfdd0001eaa73g", 50), ("", 50), (None, 50),
    ("5a9d64f5f6dfdd0001eaa73d", 0), ("5a9d64f5f6dfdd0001eaa73d", -5), ("5a9d64f5f6dfdd0001eaa73d", 2**31),
    ("5a9d64f5f6dfdd0001eaa73d", 1.5), ("5a9d64f5f6dfdd0001eaa73d", True),
])
def test_the_bonus_csv_is_written_from_checked_ids_and_amounts_only(pid, amount):
    with pytest.raises(ValueError):
        rules.csv_bonuses([("644aaabfaf6bbc363b9d47c6", 50), (pid, amount)])


def test_ids_and_statuses_from_prolific_are_checked():
    assert rules.is_prolific_id("5a9d64f5f6dfdd0001eaa73d") and rules.is_prolific_id("644AAABFAF6BBC363B9D47C6")
    for bad in ("a,9999.00\nOTHERPID", "5a9d64f5f6dfdd0001eaa73d ", "x" * 24, "1" * 25, 123, None, ["a"]):
        assert not rules.is_prolific_id(bad)
    assert rules.is_status("AWAITING REVIEW") and rules.is_status("TIMED-OUT") and rules.is_status("SCREENED_OUT")
    for bad in ("approved", "APPROVED\n", "<b>APPROVED</b>", "A" * 25, "", 7):
        assert not rules.is_status(bad)
