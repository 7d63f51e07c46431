"""Bonuses exactly once (issue 38 item 5): 003's wage rule or a fixed amount, and the ledger that makes a crash,
a retry, a second run or two runs at once pay each participant at most once (prolific.models.Bonus).

Before anything is paid (issue 45 item 3): a bonus over the per-participant ceiling (DUET_PROLIFIC_BONUS_CEILING)
is refused, dry run included; paying needs the researcher's confirmation of the total this run pays
(`confirm_cents`, typed after the dry run showed it) and, in the admin, the permission prolific.pay_bonus; the
CSV sent to Prolific is written by the csv module from ids checked as Prolific's (rules.csv_bonuses)."""
from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from django.conf import settings
from django.utils import timezone

from experiments.models import Participant, Study

from . import rules
from .client import Client, ProlificError
from .models import Bonus, BonusState, Submission
from .services import ProlificRefused, arm_of, client_for, link_of, rules_id


@dataclass(frozen=True)
class BonusLine:
    submission_id: str
    prolific_pid: str
    participant: Participant | None
    amount_cents: int
    state: str  # the ledger's state, '' when not yet recorded


def bonus_plan(*, study: Study, hourly_wage: Decimal | None = None, amount: Decimal | None = None
               ) -> tuple[list[BonusLine], str]:
    """The bonus of each approved submission and the rule in words. Exactly one of hourly_wage and amount."""
    if (hourly_wage is None) == (amount is None):
        raise ProlificRefused("Give either --hourly-wage or --amount.")
    link = link_of(study)
    if link is None:
        raise ProlificRefused(f"Study '{study.slug}' has not been published on Prolific from Duet.")
    approved = list(Submission.objects.filter(study=study, status=rules.APPROVED).order_by("pk"))
    currency = arm_of(study).currency
    ceiling = settings.DUET_PROLIFIC_BONUS_CEILING_CENTS
    if not (hourly_wage if amount is None else amount).is_finite():
        raise ProlificRefused("The amount must be a number.")
    if hourly_wage is not None:
        if hourly_wage <= 0:
            raise ProlificRefused("The hourly wage must be above 0.")
        seconds = [s.time_taken for s in approved if s.time_taken is not None]
        each = rules.wage_bonus_cents(hourly_wage=hourly_wage, seconds=seconds, reward_cents=link.reward_cents)
        median = f"{rules.median_minutes(seconds):.2f}" if seconds else "—"
        rule = (f"{hourly_wage} {currency}/hour × median {median} min of {len(seconds)} approved submissions − "
                f"reward {link.reward_cents} cents")
    else:
        if amount <= 0:
            raise ProlificRefused("The amount must be above 0.")
        each, rule = rules.cents(amount), f"a fixed {amount} {currency}"
    if each > ceiling:
        raise ProlificRefused(f"The bonus would be {Decimal(each) / 100:.2f} {currency} per participant ({rule}), over "
                              f"the ceiling of {Decimal(ceiling) / 100:.2f} {currency} (DUET_PROLIFIC_BONUS_CEILING): "
                              "nothing was set up or paid.")
    ledger = {b.prolific_pid: b for b in Bonus.objects.filter(study=study)}
    lines = [BonusLine(s.submission_id, s.prolific_pid, s.participant,
                       ledger[s.prolific_pid].amount_cents if s.prolific_pid in ledger else each,
                       ledger[s.prolific_pid].state if s.prolific_pid in ledger else "")
             for s in approved if each > 0 or s.prolific_pid in ledger]
    return lines, rule


PAYABLE = ("", BonusState.PLANNED, BonusState.SET_UP)  # the ledger states a run may pay (never PAYING, PAID, UNKNOWN)


def to_pay_cents(lines: list[BonusLine]) -> int:
    """What a run with these lines pays: the lines not paid, nor being paid, nor of unknown outcome."""
    return sum(line.amount_cents for line in lines if line.state in PAYABLE)


def prolific_bonus(*, study: Study, apply: bool, hourly_wage: Decimal | None = None, amount: Decimal | None = None,
                   confirm_cents: int | None = None, client: Client | None = None) -> tuple[list[BonusLine], str]:
    """Dry run: the table. With `apply`: each participant's bonus paid exactly once, when `confirm_cents` is the
    total this run pays (to_pay_cents: what the dry run showed); refused otherwise, before anything is sent.

    1. reconcile: a row left PAYING (the pay call's answer was lost) is marked PAID when Prolific's submission
       lists a bonus of its amount, else UNKNOWN (never paid again by Duet: the researcher checks);
    2. a row SET_UP (crashed after the set-up call) is paid with its stored bulk id, once;
    3. new participants get a PLANNED row first, then one set-up call for all of them, then one pay call.
    Each step moves rows by one conditional UPDATE (a claim), so two runs at once never pay a bulk twice.
    """
    lines, rule = bonus_plan(study=study, hourly_wage=hourly_wage, amount=amount)
    if not apply:
        return lines, rule
    total = to_pay_cents(lines)
    if confirm_cents != total:
        currency = arm_of(study).currency
        confirmed = "no total" if confirm_cents is None else f"{Decimal(confirm_cents) / 100:.2f} {currency}"
        raise ProlificRefused(f"This run pays {Decimal(total) / 100:.2f} {currency} in all "
                              f"({sum(1 for line in lines if line.state in PAYABLE)} participants); you confirmed "
                              f"{confirmed}. Nothing was paid: check the table, then confirm its total.")
    link = link_of(study)
    client = client_for(study, client)
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
                "amount_cents": line.amount_cents, "rule": rule[:200]})
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
