"""Bonuses exactly once (issue 38 item 5): 003's wage rule or a fixed amount, and the ledger that makes a crash,
a retry, a second run or two runs at once pay each participant at most once (prolific.models.Bonus).

003's rule, once per study (issue 44 item 8). 003 (Appendix A.2, "Participant wage"): "We offer participants an hourly
wage of 1.5 times Prolific's minimum wage. The duration is determined by the median completion time among all
participants." So by default:
* the duration is the median of Prolific's time_taken over **all participants who completed** (Duet's status
  completed, real participants only: COMPLETED_SECONDS below); the study's Prolific record may say approved
  submissions only (ProlificStudy.bonus_median_of);
* the hourly wage is the human arm's Prolific minimum × its multiplier (HumanArm.hourly_rate: 6.00 × 1.5 = 9.00)
  unless the researcher gives another;
* the rule, its duration and the amount each participant gets are fixed at the first payment (prolific.models
  .BonusRule) and every later payment reuses them and says so, so participants approved in different batches are
  paid alike, whatever completes later. A later run given another wage or amount is refused.

Before anything is paid (issue 45 item 3): a bonus over the per-participant ceiling (DUET_PROLIFIC_BONUS_CEILING)
is refused, dry run included; paying needs the researcher's confirmation of the total this run pays
(`confirm_cents`, typed after the dry run showed it) and, in the admin, the permission prolific.pay_bonus; the
CSV sent to Prolific is written by the csv module from ids checked as Prolific's (rules.csv_bonuses)."""
from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import NamedTuple

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from experiments.models import Participant, Study

from . import rules
from .client import Client, ProlificError
from .models import Bonus, BonusKind, BonusMedianOf, BonusRule, BonusState, ProlificStudy, Submission
from .services import ProlificRefused, arm_of, client_for, link_of, rules_id

WHOSE = {BonusMedianOf.COMPLETED: "participants who completed", BonusMedianOf.APPROVED: "approved submissions"}


@dataclass(frozen=True)
class BonusLine:
    submission_id: str
    prolific_pid: str
    participant: Participant | None
    amount_cents: int
    state: str  # the ledger's state, '' when not yet recorded


class BonusPlan(NamedTuple):
    lines: list[BonusLine]
    rule: BonusRule  # stored: fixed at the first payment; unsaved: what a payment now would fix


def completion_seconds(*, study: Study, median_of: str) -> list[int]:
    """The completion times (Prolific's time_taken, seconds) the wage bonus's median is of. COMPLETED: every
    submission of a real participant whose session Duet counts as completed (003's "all participants"), whatever
    Prolific's review made of it; APPROVED: the approved submissions."""
    submissions = Submission.objects.filter(study=study, time_taken__isnull=False)
    if median_of == BonusMedianOf.APPROVED:
        submissions = submissions.filter(status=rules.APPROVED)
    else:  # the real participants who completed: the populations' one definition (experiments/models/participants.py)
        submissions = submissions.filter(participant__in=Participant.objects.filter(study=study).real().completed())
    return list(submissions.order_by("pk").values_list("time_taken", flat=True))


def bonus_median_set(*, study: Study, median_of: str) -> ProlificStudy:
    """The study's setting: whose times the wage bonus's median is of. Refused once the rule is fixed."""
    if median_of not in BonusMedianOf.values:
        raise ProlificRefused(f"'{median_of}' is not one of {', '.join(BonusMedianOf.values)}.")
    link = _link(study)
    if link.bonus_median_of != median_of:
        fixed = BonusRule.objects.filter(study=study).first()
        if fixed is not None:
            raise ProlificRefused(f"The bonus rule is {fixed.described}. Whose times the median is of cannot change "
                                  "now: every participant of the study is paid by the same rule.")
        link.bonus_median_of = median_of
        link.save(update_fields=["bonus_median_of"])
    return link


def _link(study: Study) -> ProlificStudy:
    link = link_of(study)
    if link is None:
        raise ProlificRefused(f"Study '{study.slug}' has not been published on Prolific from Duet.")
    return link


def bonus_rule(*, study: Study, hourly_wage: Decimal | None = None, amount: Decimal | None = None) -> BonusRule:
    """The rule this study's bonuses follow: the one fixed at its first payment, else (unsaved) the one a payment
    now would fix — a fixed `amount`, else 003's rule with `hourly_wage` or, when none is given, the arm's."""
    if hourly_wage is not None and amount is not None:
        raise ProlificRefused("Give either an hourly wage or a fixed amount, not both.")
    for given in (hourly_wage, amount):
        if given is not None and not given.is_finite():
            raise ProlificRefused("The amount must be a number.")
        if given is not None and given <= 0:
            raise ProlificRefused("The hourly wage must be above 0." if given is hourly_wage else
                                  "The amount must be above 0.")
    link = _link(study)
    fixed = BonusRule.objects.filter(study=study).first()
    if fixed is not None:
        other = ((amount is not None and (fixed.kind != BonusKind.FIXED or rules.cents(amount) != fixed.each_cents))
                 or (hourly_wage is not None and (fixed.kind != BonusKind.WAGE or hourly_wage != fixed.hourly_wage)))
        if other:
            raise ProlificRefused(f"This study's bonus rule was {fixed.described}. Every participant of the study is "
                                  "paid by it: leave the wage and the amount empty (or give the same) to pay by it. "
                                  "Nothing was set up or paid.")
        return fixed
    currency = arm_of(study).currency
    if amount is not None:
        each = rules.cents(amount)
        return BonusRule(study=study, kind=BonusKind.FIXED, each_cents=each, reward_cents=link.reward_cents,
                         words=f"a fixed {Decimal(each) / 100:.2f} {currency} each")
    arm = arm_of(study)
    from_arm = hourly_wage is None
    wage = arm.hourly_rate() if from_arm else hourly_wage
    seconds = completion_seconds(study=study, median_of=link.bonus_median_of)
    median = rules.median_seconds(seconds) if seconds else None
    each = 0 if median is None else rules.wage_cents(hourly_wage=wage, median=median, reward_cents=link.reward_cents)
    source = (f" (the human arm's Prolific minimum {arm.prolific_min_hourly} × {arm.pay_multiplier})" if from_arm
              else " (typed)")
    minutes = "— (no completion time yet)" if median is None else f"{median / 60:.2f} min"
    quoted = (' — 003: "the median completion time among all participants"'
              if link.bonus_median_of == BonusMedianOf.COMPLETED else " — approved only, the study's setting")
    words = (f"003's rule: {wage} {currency}/hour{source} × the median completion time {minutes} of all "
             f"{len(seconds)} {WHOSE[link.bonus_median_of]}{quoted} − the reward {link.reward_cents} cents = "
             f"{Decimal(each) / 100:.2f} {currency} each")
    return BonusRule(study=study, kind=BonusKind.WAGE, median_of=link.bonus_median_of, median_seconds=median,
                     counted=len(seconds), hourly_wage=wage, wage_from_arm=from_arm, reward_cents=link.reward_cents,
                     each_cents=each, words=words[:300])


def bonus_plan(*, study: Study, hourly_wage: Decimal | None = None, amount: Decimal | None = None) -> BonusPlan:
    """The bonus of each approved submission and the rule (bonus_rule: the fixed one once a payment was made)."""
    rule = bonus_rule(study=study, hourly_wage=hourly_wage, amount=amount)
    currency = arm_of(study).currency
    ceiling = settings.DUET_PROLIFIC_BONUS_CEILING_CENTS
    each = rule.each_cents
    if each > ceiling:
        raise ProlificRefused(f"The bonus would be {Decimal(each) / 100:.2f} {currency} per participant "
                              f"({rule.words}), over the ceiling of {Decimal(ceiling) / 100:.2f} {currency} "
                              "(DUET_PROLIFIC_BONUS_CEILING): nothing was set up or paid.")
    approved = list(Submission.objects.filter(study=study, status=rules.APPROVED).order_by("pk"))
    ledger = {b.prolific_pid: b for b in Bonus.objects.filter(study=study)}
    lines = [BonusLine(s.submission_id, s.prolific_pid, s.participant,
                       ledger[s.prolific_pid].amount_cents if s.prolific_pid in ledger else each,
                       ledger[s.prolific_pid].state if s.prolific_pid in ledger else "")
             for s in approved if each > 0 or s.prolific_pid in ledger]
    return BonusPlan(lines, rule)


def _fix(rule: BonusRule) -> BonusRule:
    """Store the rule the first payment applies (once: the study's row is unique). A rule another run fixed at the
    same time refuses this run, which has paid nothing."""
    if rule.pk is not None:
        return rule
    try:
        with transaction.atomic():
            rule.save()
    except IntegrityError:
        raise ProlificRefused("Another bonus run fixed this study's bonus rule at the same time; nothing was paid by "
                              "this run. Run the dry run again and confirm its total.") from None
    return rule


PAYABLE = ("", BonusState.PLANNED, BonusState.SET_UP)  # the ledger states a run may pay (never PAYING, PAID, UNKNOWN)


def to_pay_cents(lines: list[BonusLine]) -> int:
    """What a run with these lines pays: the lines not paid, nor being paid, nor of unknown outcome."""
    return sum(line.amount_cents for line in lines if line.state in PAYABLE)


def prolific_bonus(*, study: Study, apply: bool, hourly_wage: Decimal | None = None, amount: Decimal | None = None,
                   confirm_cents: int | None = None, client: Client | None = None) -> BonusPlan:
    """Dry run: the table. With `apply`: each participant's bonus paid exactly once, when `confirm_cents` is the
    total this run pays (to_pay_cents: what the dry run showed); refused otherwise, before anything is sent.

    1. reconcile: a row left PAYING (the pay call's answer was lost) is marked PAID when Prolific's submission
       lists a bonus of its amount, else UNKNOWN (never paid again by Duet: the researcher checks);
    2. a row SET_UP (crashed after the set-up call) is paid with its stored bulk id, once;
    3. new participants get a PLANNED row first, then one set-up call for all of them, then one pay call; the
       first run that records a participant stores the rule (BonusRule) before its rows, and every later run pays
       by that rule, its duration and its amount.
    Each step moves rows by one conditional UPDATE (a claim), so two runs at once never pay a bulk twice.
    """
    lines, rule = plan = bonus_plan(study=study, hourly_wage=hourly_wage, amount=amount)
    if not apply:
        return plan
    total = to_pay_cents(lines)
    if confirm_cents != total:
        currency = arm_of(study).currency
        confirmed = "no total" if confirm_cents is None else f"{Decimal(confirm_cents) / 100:.2f} {currency}"
        raise ProlificRefused(f"This run pays {Decimal(total) / 100:.2f} {currency} in all "
                              f"({sum(1 for line in lines if line.state in PAYABLE)} participants); you confirmed "
                              f"{confirmed}. Nothing was paid: check the table, then confirm its total.")
    link = link_of(study)
    client = client_for(study, client)
    if any(not line.state for line in lines):  # the first payment fixes the rule for the whole study
        rule = _fix(rule)
    for bonus in Bonus.objects.filter(study=study, state=BonusState.PAYING):
        found = client.submission_get(bonus.submission_id).get("bonus_payments") or []
        paid = any(rules.cents(Decimal(str(x)) / 100) == bonus.amount_cents for x in found
                   if isinstance(x, int | float))
        bonus.state = BonusState.PAID if paid else BonusState.UNKNOWN
        bonus.paid_at = timezone.now() if paid else None
        bonus.save(update_fields=["state", "paid_at"])
    for line in lines:
        if not line.state:
            Bonus.objects.get_or_create(study=study, prolific_pid=line.prolific_pid, defaults={
                "participant": line.participant, "submission_id": line.submission_id,
                "amount_cents": line.amount_cents, "rule": rule.words[:200]})
    planned = list(Bonus.objects.filter(study=study, state=BonusState.PLANNED))
    if planned:  # setting up pays nothing: a set-up whose answer was lost is simply set up again
        try:
            text = rules.csv_bonuses([(b.prolific_pid, b.amount_cents) for b in planned])
        except ValueError as exc:  # a row stored before ids were checked: never sent
            raise ProlificRefused(f"A bonus line cannot be sent to Prolific: {exc}. Nothing was set up.") from None
        answer = client.bonus_set_up(link.prolific_id, text)
        bulk, pks = rules_id(answer), [b.pk for b in planned]
        claimed = Bonus.objects.filter(pk__in=pks, state=BonusState.PLANNED).update(
            state=BonusState.SET_UP, bulk_id=bulk, bulk_lines=len(pks))
        if claimed != len(pks):  # another run set some of them up meanwhile: this bulk is never paid
            Bonus.objects.filter(bulk_id=bulk, state=BonusState.SET_UP).update(
                state=BonusState.PLANNED, bulk_id="", bulk_lines=0)
            raise ProlificRefused("Another bonus run set up some of these bonuses at the same time; nothing was "
                                  "paid by this run. Run it again.")
    for bulk, lines in sorted(set(Bonus.objects.filter(study=study, state=BonusState.SET_UP).values_list(
            "bulk_id", "bulk_lines"))):
        # the claim: one UPDATE, so of two runs at once only one gets the rows; a bulk is paid only when every
        # participant it holds is claimed (a bulk some of whose rows were set up again elsewhere is never paid)
        claimed = Bonus.objects.filter(study=study, bulk_id=bulk, state=BonusState.SET_UP).update(
            state=BonusState.PAYING)
        if claimed == 0:
            continue
        if claimed != lines:
            Bonus.objects.filter(study=study, bulk_id=bulk, state=BonusState.PAYING).update(
                state=BonusState.PLANNED, bulk_id="", bulk_lines=0)
            continue
        try:
            client.bonus_pay(bulk)
        except ProlificError as exc:
            if not exc.unknown:  # Prolific refused it (4xx): nothing was paid, set it up again next time
                Bonus.objects.filter(study=study, bulk_id=bulk, state=BonusState.PAYING).update(
                    state=BonusState.PLANNED, bulk_id="", bulk_lines=0)
            raise
        Bonus.objects.filter(study=study, bulk_id=bulk, state__in=[BonusState.PAYING, BonusState.UNKNOWN]).update(
            state=BonusState.PAID, paid_at=timezone.now())  # (UNKNOWN: another run reconciled it meanwhile)
    return bonus_plan(study=study, hourly_wage=hourly_wage, amount=amount)
