"""The rules, as pure functions (no Django, no network): what review does with a submission, 003's wage
bonus, Prolific's minimum reward, what an id or a status from Prolific must look like before Duet stores it,
and the bonus CSV. prolific/services.py feeds them what Duet and Prolific hold."""
from __future__ import annotations

import csv
import io
import re
import statistics
from dataclasses import dataclass
from decimal import ROUND_DOWN, ROUND_HALF_UP, Decimal

AWAITING_REVIEW = "AWAITING REVIEW"
APPROVED = "APPROVED"

# Prolific's attention-check policy: a submission may be rejected for failed attention checks when it failed
# one (a study under 5 minutes) or at least two (5 minutes or longer).
SHORT_STUDY_MINUTES = 5
# Prolific's ids (participants, studies, submissions, bulk bonus payments) are 24 hexadecimal digits, as every
# example in its API reference shows (5a9d64f5f6dfdd0001eaa73d): anything else from Prolific is not stored.
PROLIFIC_ID = re.compile(r"[0-9a-fA-F]{24}")
STATUS = re.compile(r"[A-Z][A-Z _-]{0,23}")  # AWAITING REVIEW, TIMED-OUT, SCREENED_OUT…
MAX_CENTS = 2_147_483_647  # the largest amount an amount_cents, reward_cents, places or minutes field holds
REJECTION_CATEGORY = "FAILED_CHECK"
MESSAGE_MIN = 100  # Prolific refuses a rejection message shorter than this


@dataclass(frozen=True)
class Seen:
    """What Duet knows of one submission awaiting review."""
    in_duet: bool  # a participant with this Prolific id (and session id, when Prolific gave one)
    duet_status: str = ""  # ParticipantStatus value, for the words of a decision
    # what the status means, decided by prolific/services.py from ParticipantStatus (no status is spelled here)
    completed: bool = False  # ParticipantStatus.COMPLETED
    declined_consent: bool = False  # ParticipantStatus.NO_CONSENT
    failed_attention: bool = False  # the arm's AttentionRule says so
    told_rule: bool = False  # the participant agreed to a consent page stating that rule (consent.attention_rule_shown)
    wrong_checks: int = 0  # catch items answered wrongly
    answers: int = 0  # trials saved
    code_given: str = ""  # the completion code the participant gave Prolific
    codes_expected: tuple[str, ...] = ()  # the codes Duet redirects with for that status ('' none)


@dataclass(frozen=True)
class Decision:
    action: str  # approve, reject, return, leave (prolific.models.ReviewDecision)
    why: str


def review(seen: Seen, *, study_minutes: int) -> Decision:
    """What Duet does with one submission awaiting review, and why (in words a researcher reads)."""
    if not seen.in_duet:
        return Decision("leave", "Duet has no record of this participant: look at it in Prolific's web app")
    if seen.answers == 0 or seen.declined_consent:
        return Decision("return", "no data in Duet (declined consent or answered nothing): ask for a return")
    if seen.failed_attention:
        needed = 1 if study_minutes < SHORT_STUDY_MINUTES else 2
        if seen.wrong_checks >= needed and not seen.told_rule:
            return Decision("leave", f"failed {seen.wrong_checks} attention check(s), but agreed to a consent page "
                                     "that did not state the attention rule as it now stands (agreed before its "
                                     "review, or the rule changed since): decide in Prolific's web app")
        if seen.wrong_checks >= needed:
            return Decision("reject", f"failed {seen.wrong_checks} attention check(s); Prolific's policy allows a "
                                      f"rejection from {needed} for a {study_minutes}-minute study")
        return Decision("leave", f"failed the study's attention rule with {seen.wrong_checks} wrong check(s), fewer "
                                 f"than the {needed} Prolific's policy needs to reject: decide in Prolific's web app")
    if not seen.completed:
        return Decision("leave", f"Duet's status is '{seen.duet_status}', not completed")
    if seen.codes_expected and seen.code_given and seen.code_given not in seen.codes_expected:
        return Decision("leave", "the completion code given on Prolific is not the one Duet gave")
    return Decision("approve", "completed in Duet and passed the attention rule")


def rejection_message(*, wrong: int, told: str) -> str:
    """The message Prolific shows the participant (≥ 100 characters): how many checks were answered wrongly, and
    the attention rule quoted exactly as the consent page and the instructions showed it (`told`,
    AttentionRule.told) — never a rule in other words."""
    text = (f"Thank you for taking part. Your submission answered {wrong} attention check"
            f"{'' if wrong == 1 else 's'} wrongly. The consent page you agreed to before the study started, and its "
            f"instructions, said: \"{told}\" For this reason the submission is rejected.")
    assert len(text) >= MESSAGE_MIN
    return text


def is_prolific_id(value) -> bool:
    return isinstance(value, str) and PROLIFIC_ID.fullmatch(value) is not None


def is_status(value) -> bool:
    return isinstance(value, str) and STATUS.fullmatch(value) is not None


def cents(amount: Decimal) -> int:
    return int((amount * 100).quantize(Decimal("1"), rounding=ROUND_HALF_UP))


def median_seconds(seconds: list[int]) -> Decimal:
    """The median of completion times in seconds (the mean of the middle two for an even count: x.5 at most)."""
    return Decimal(str(statistics.median(seconds)))


def median_minutes(seconds: list[int]) -> Decimal:
    return median_seconds(seconds) / 60


def wage_cents(*, hourly_wage: Decimal, median: Decimal, reward_cents: int) -> int:
    """003's rule for one participant: the hourly wage × the median completion time (`median`, seconds), minus the
    reward already paid; 0 when that is not positive. Rounded to the nearest cent."""
    return max(0, cents(hourly_wage * median / 3600) - reward_cents)


def wage_bonus_cents(*, hourly_wage: Decimal, seconds: list[int], reward_cents: int) -> int:
    """003's rule over the completion times `seconds` (whose: prolific/bonuses.py decides); 0 without any."""
    if not seconds:
        return 0
    return wage_cents(hourly_wage=hourly_wage, median=median_seconds(seconds), reward_cents=reward_cents)


def minimum_reward_problem(*, reward_cents: int, minutes: int, min_hourly: Decimal, currency: str) -> str:
    """'' when the reward meets Prolific's minimum hourly rate for `minutes`, else the refusal with the numbers."""
    if minutes <= 0:
        return "The estimated time must be at least 1 minute."
    least = cents(min_hourly * minutes / 60)
    if reward_cents < least:
        hourly = (Decimal(reward_cents) * 60 / minutes / 100).quantize(Decimal("0.01"), rounding=ROUND_DOWN)
        return (f"A reward of {reward_cents} cents for {minutes} minutes is {hourly} {currency}/hour, under "
                f"Prolific's minimum of {min_hourly} {currency}/hour: give at least {least} cents.")
    return ""


def csv_bonuses(rows: list[tuple[str, int]]) -> str:
    """Prolific's csv_bonuses: 'participant_id,amount' lines, the amount in the study's currency (0.50), written
    by the csv module from checked values only: a participant id that is not a Prolific id, or an amount not from
    1 cent to MAX_CENTS, is a ValueError (nothing is written), so no value can add a line or a field."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    for pid, amount in rows:
        if not is_prolific_id(pid):
            raise ValueError(f"{str(pid)[:40]!r} is not a Prolific participant id (24 hexadecimal digits)")
        if not isinstance(amount, int) or isinstance(amount, bool) or not 0 < amount <= MAX_CENTS:
            raise ValueError(f"{amount!r} cents is not an amount from 1 to {MAX_CENTS}")
        writer.writerow([pid, f"{Decimal(amount) / 100:.2f}"])
    return out.getvalue()
