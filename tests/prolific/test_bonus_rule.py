"""The bonus by 003's rule, once per study (issue 44 item 8). 003: "We offer participants an hourly wage of 1.5
times Prolific's minimum wage. The duration is determined by the median completion time among all participants."
The median is of all participants who completed (a study may say approved only), the wage is the arm's minimum ×
multiplier unless given, the rule is fixed at the first payment and reused, and the admin says it before paying.

The study throughout: the arm's 6.00 × 1.5 = 9.00 GBP/hour, a 1.00 reward; completed in Duet: a 600 s, b 720 s,
c 900 s (a and b approved, c awaiting review); d failed its attention checks (300 s) and a stranger Duet has no
record of (200 s) did not complete. By hand:
* all who completed: median of 600, 720, 900 = 720 s = 12 min; 9.00 × 12 / 60 = 1.80 − 1.00 = 0.80 each;
* approved only (the stranger's approved submission too): median of 200, 600, 720 = 600 s = 10 min;
  9.00 × 10 / 60 = 1.50 − 1.00 = 0.50 each."""
from __future__ import annotations

import html
import io
import re
from decimal import Decimal

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command

from experiments.models import ParticipantStatus
from prolific import bonuses, rules
from prolific.models import Bonus, BonusKind, BonusMedianOf, BonusRule, BonusState, ProlificStudy
from prolific.services import ProlificRefused, arm_of, prolific_publish
from prolific.sync import prolific_sync
from tests.factories import ParticipantFactory
from tests.prolific.standin import pid as P

pytestmark = pytest.mark.django_db
ORIGIN = "https://duet.example.org"
QUOTE = '003: "the median completion time among all participants"'


@pytest.fixture
def study(standin, ready_study):
    arm = arm_of(ready_study)
    arm.prolific_min_hourly, arm.pay_multiplier = Decimal("6.00"), Decimal("1.50")
    arm.save()
    link = prolific_publish(study=ready_study, origin=ORIGIN, reward_cents=100, places=10, minutes=8)
    for name, seconds, status, duet in (
            ("a", 600, "APPROVED", ParticipantStatus.COMPLETED), ("b", 720, "APPROVED", ParticipantStatus.COMPLETED),
            ("c", 900, "AWAITING REVIEW", ParticipantStatus.COMPLETED),
            ("d", 300, "AWAITING REVIEW", ParticipantStatus.FAILED_ATTENTION), ("stranger", 200, "APPROVED", None)):
        standin.add_submission(link.prolific_id, P(name), status=status, time_taken=seconds)
        if duet is not None:
            ParticipantFactory(study=ready_study, prolific_pid=P(name), status=duet)
    prolific_sync(study=ready_study)
    return ready_study


def _approve(standin, *names):
    for s in standin.state.submissions.values():
        if s["participant_id"] in {P(n) for n in names}:
            s["status"] = "APPROVED"


def _dry(study, *rule) -> str:
    out = io.StringIO()
    call_command("prolific", "bonus", study.slug, *rule, stdout=out)
    return out.getvalue()


def _pay(study, *rule) -> str:
    """A dry run, then --apply confirming the total it printed: what a researcher does."""
    total = re.search(r"To pay by this run: (\d+\.\d\d)", _dry(study, *rule)).group(1)
    out = io.StringIO()
    call_command("prolific", "bonus", study.slug, *rule, "--apply", "--confirm-total", total, stdout=out)
    return total


def test_the_wage_by_hand():
    assert rules.wage_cents(hourly_wage=Decimal("9.00"), median=Decimal("720"), reward_cents=100) == 80
    assert rules.wage_cents(hourly_wage=Decimal("9.00"), median=Decimal("660"), reward_cents=100) == 65
    assert rules.wage_cents(hourly_wage=Decimal("9.00"), median=Decimal("400"), reward_cents=100) == 0
    assert rules.median_seconds([600, 720, 900, 3000]) == Decimal("810")


def test_by_default_the_median_is_of_all_who_completed_and_the_wage_is_the_arms(standin, study):
    assert sorted(bonuses.completion_seconds(study=study, median_of=BonusMedianOf.COMPLETED)) == [600, 720, 900]
    assert sorted(bonuses.completion_seconds(study=study, median_of=BonusMedianOf.APPROVED)) == [200, 600, 720]
    out = _dry(study)  # neither a wage nor an amount: 003's rule at the arm's wage
    assert "9.00 GBP/hour (the human arm's Prolific minimum 6.00 × 1.50)" in out
    assert "the median completion time 12.00 min of all 3 participants who completed" in out and QUOTE in out
    assert "= 0.80 GBP each" in out and "(fixed for the whole study at its first payment)" in out
    assert "Each participant: 0.80 GBP." in out
    # the approved submissions are paid (the stranger too: approved on Prolific), at the same amount each
    assert f"{P('a')}\t0.80\tnot paid" in out and f"{P('stranger')}\t0.80\tnot paid" in out
    assert "To pay by this run: 2.40 (3 participants)" in out
    assert not BonusRule.objects.exists() and not Bonus.objects.exists()  # a dry run fixes nothing


def test_the_rule_is_fixed_at_the_first_payment_and_reused_by_the_next(standin, study):
    assert _pay(study) == "2.40"
    rule = BonusRule.objects.get(study=study)
    assert (rule.kind, rule.median_of, rule.median_seconds, rule.counted) == (
        BonusKind.WAGE, BonusMedianOf.COMPLETED, Decimal("720.0"), 3)
    assert (rule.hourly_wage, rule.wage_from_arm, rule.reward_cents, rule.each_cents) == (
        Decimal("9.00"), True, 100, 80)
    # a second batch: c approved, e completes in 3000 s and is approved; recomputed, the median of
    # 600, 720, 900, 3000 would be 810 s (9.00 × 13.5 min = 2.03 − 1.00 = 1.03): the fixed rule keeps 0.80
    link = ProlificStudy.objects.get(study=study)
    standin.add_submission(link.prolific_id, P("e"), status="APPROVED", time_taken=3000)
    ParticipantFactory(study=study, prolific_pid=P("e"), status=ParticipantStatus.COMPLETED)
    _approve(standin, "c")
    out = _dry(study)
    assert "Rule: fixed at the first payment on " in out and "reused for every payment" in out
    assert "12.00 min of all 3 participants who completed" in out and "To pay by this run: 1.60 (2 participants)" in out
    assert _pay(study) == "1.60"
    assert sorted(c for _, c in standin.state.payments) == [80] * 5
    assert set(Bonus.objects.values_list("amount_cents", flat=True)) == {80}
    assert set(Bonus.objects.values_list("state", flat=True)) == {BonusState.PAID}
    assert BonusRule.objects.count() == 1 and BonusRule.objects.get().each_cents == 80
    # another wage, a fixed amount or another median is refused once the rule is fixed; the same wage is not
    with pytest.raises(CommandError, match="bonus rule was fixed at the first payment on .* leave the wage"):
        _dry(study, "--hourly-wage", "12.00")
    with pytest.raises(CommandError, match="bonus rule was fixed at the first payment"):
        _dry(study, "--amount", "0.80")
    with pytest.raises(CommandError, match="cannot change now"):
        _dry(study, "--median-of", "approved")
    assert "5 bonuses, total 4.00. To pay by this run: 0.00" in _dry(study, "--hourly-wage", "9")


def test_a_study_may_take_the_median_of_the_approved_only(standin, study):
    out = _dry(study, "--median-of", "approved")
    assert ProlificStudy.objects.get(study=study).bonus_median_of == BonusMedianOf.APPROVED
    assert "the median completion time 10.00 min of all 3 approved submissions" in out
    assert "approved only, the study's setting" in out and QUOTE not in out and "= 0.50 GBP each" in out
    assert _pay(study) == "1.50"
    rule = BonusRule.objects.get(study=study)
    assert rule.median_of == BonusMedianOf.APPROVED and rule.median_seconds == Decimal("600.0")


def test_a_given_wage_replaces_the_arms(standin, study):
    out = _dry(study, "--hourly-wage", "12.00")
    # 12.00 × 12 min = 2.40 − 1.00 = 1.40 each
    assert "12.00 GBP/hour (typed)" in out and "= 1.40 GBP each" in out
    _pay(study, "--hourly-wage", "12.00")
    rule = BonusRule.objects.get(study=study)
    assert rule.hourly_wage == Decimal("12.00") and not rule.wage_from_arm and rule.each_cents == 140
    assert "To pay by this run: 0.00" in _dry(study)  # the fixed rule, with no wage given


def test_the_admin_says_the_rule_and_the_total_before_paying(standin, study, client):
    client.force_login(get_user_model().objects.create_superuser("owner", password="x-" * 8))
    url = f"/admin/prolific/{study.pk}/"

    def page(response) -> str:
        return html.unescape(response.content.decode())

    opened = page(client.get(url))
    said = re.search(r'id="prolific-bonus-rule-now">(.*?)</p>', opened, re.S).group(1)
    assert "9.00 GBP/hour (the human arm's Prolific minimum 6.00 × 1.50)" in said and QUOTE in said
    assert "of all 3 participants who completed" in said and "fixed for the whole study at its first payment" in said
    assert 'placeholder="9.00"' in opened  # the wage left empty is the arm's
    assert '<option value="completed" selected>all participants who completed (003\'s rule)</option>' in opened
    dry = page(client.post(url, {"do": "bonus", "median_of": "completed", "apply": "no"}))
    assert 'id="prolific-bonus-each">0.80 GBP<' in dry and "Total 2.40." in dry
    assert 'To pay by this run (3 participants): <strong id="prolific-bonus-to-pay">2.40<' in dry
    assert not standin.state.payments and not BonusRule.objects.exists()
    paid = page(client.post(url, {"do": "bonus", "median_of": "completed", "apply": "yes", "confirm_total": "2.40"}))
    assert "Bonuses paid" in paid and sorted(c for _, c in standin.state.payments) == [80, 80, 80]
    assert re.search(r'<input[^>]*name="hourly_wage"[^>]*disabled', paid)  # the rule is the study's now
    said = re.search(r'id="prolific-bonus-rule-now">(.*?)</p>', page(client.get(url)), re.S).group(1)
    assert "fixed at the first payment on " in said and "reused for every payment" in said and "0.80 GBP each" in said
    # once fixed the form's choices are disabled: what is typed is ignored, the fixed rule is used
    again = page(client.post(url, {"do": "bonus", "median_of": "approved", "hourly_wage": "50.00", "apply": "no"}))
    assert 'id="prolific-bonus-each">0.80 GBP<' in again and "To pay by this run (0 participants)" in again
    assert ProlificStudy.objects.get(study=study).bonus_median_of == BonusMedianOf.COMPLETED


def test_the_admin_setting_approved_only(standin, study, client):
    client.force_login(get_user_model().objects.create_superuser("owner", password="x-" * 8))
    url = f"/admin/prolific/{study.pk}/"
    dry = html.unescape(client.post(url, {"do": "bonus", "median_of": "approved", "apply": "no"}).content.decode())
    assert ProlificStudy.objects.get(study=study).bonus_median_of == BonusMedianOf.APPROVED
    assert "of all 3 approved submissions — approved only, the study's setting" in dry


def test_the_setting_service_refuses_an_unknown_choice_and_a_change_once_fixed(standin, study):
    with pytest.raises(ProlificRefused, match="'fastest' is not one of completed, approved"):
        bonuses.bonus_median_set(study=study, median_of="fastest")
    _pay(study)
    bonuses.bonus_median_set(study=study, median_of="completed")  # the same: nothing to change
    with pytest.raises(ProlificRefused, match="cannot change now"):
        bonuses.bonus_median_set(study=study, median_of="approved")


def test_two_runs_fixing_the_rule_at_once_refuse_the_second(standin, study):
    """Both runs worked out the rule before either stored it: the study's row is unique, so the second run is
    refused before it records or pays anything, and the first run's rule stands."""
    first, second = (bonuses.bonus_rule(study=study) for _ in range(2))
    assert first.pk is None and second.pk is None
    bonuses._fix(first)
    with pytest.raises(ProlificRefused, match="Another bonus run fixed this study's bonus rule at the same time"):
        bonuses._fix(second)
    assert BonusRule.objects.get(study=study).pk == first.pk and not Bonus.objects.exists()
