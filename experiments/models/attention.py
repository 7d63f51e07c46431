"""The one definition of a failed attention check.

A participant has failed the attention checks once they have answered `fail_after` catch items
wrongly (HumanArm.attention_fail_after, 1 by default). What happens then is a separate choice:
with HumanArm.attention_end_session the session ends at once (status "failed_attention", the
failed-attention code); without it the participant goes on and can complete, but has failed all the
same. Every count of failed participants reads this rule and nothing else:

- the study page's "failed attention check" count and the participants list's column and filter
  (`failed_q`, a queryset filter reading each participant's own study's arm);
- the trial save, on both of its paths (`ends`; the PostgreSQL one-statement save writes the same
  rule in SQL with `end_limit_sql` and `ends_sql`, defined here beside it);
- the report, whose trials frame carries a `failed_attention` column computed by `failed` and whose
  exclusion step "failed attention check" removes exactly those participants.

What participants are told of it is `told`, one sentence from the same two settings: the consent page
and the instructions show it, and a rejection on Prolific for failed checks quotes it word for word
(prolific/rules.py, rejection_message), so a rejection never cites a rule participants were not shown.

A session that already ended as "failed_attention" counts as failed whatever the rule says now, so
a later change of the arm's settings cannot un-fail an ended session.
"""
from __future__ import annotations

from dataclasses import dataclass

FAILED_STATUS = "failed_attention"  # ParticipantStatus.FAILED_ATTENTION (no model import here)


@dataclass(frozen=True)
class AttentionRule:
    fail_after: int = 1
    end_session: bool = False

    def __post_init__(self) -> None:
        if self.fail_after < 1:
            raise ValueError("A participant fails the attention checks after at least one wrong answer.")

    def failed(self, *, failures: int, status: str = "") -> bool:
        """Has a participant with this many wrong catch answers (and this status) failed?"""
        return status == FAILED_STATUS or failures >= self.fail_after

    def ends(self, *, failures: int) -> bool:
        """Does the session end now that the participant has this many wrong catch answers?"""
        return self.end_session and failures >= self.fail_after

    @property
    def end_limit(self) -> int:
        """The failures at which a session ends, 0 for never (the one-statement save's parameter)."""
        return self.fail_after if self.end_session else 0

    @staticmethod
    def end_limit_sql(fail_after: str, end_session: str) -> str:
        """`end_limit` as an SQL expression over the arm's two columns (column expressions)."""
        return f"CASE WHEN {end_session} THEN {fail_after} ELSE 0 END"

    @staticmethod
    def ends_sql(failures: str, end_limit: str) -> str:
        """`ends` as an SQL predicate: `failures` the participant's count after this answer,
        `end_limit` the arm's (end_limit_sql)."""
        return f"(COALESCE({end_limit}, 0) > 0 AND {failures} >= {end_limit})"

    def describe(self) -> str:
        wrong = "one attention check" if self.fail_after == 1 else f"{self.fail_after} attention checks"
        then = ("the session ends there" if self.end_session
                else "the participant goes on to the end, and is counted as failed")
        return f"a participant who answers {wrong} wrongly has failed the attention checks; {then}"

    def told(self) -> str:
        """The rule as participants read it (the consent page, the instructions), one sentence without
        quotation marks or apostrophes, so that it reads the same in a page and quoted in a message."""
        wrong = "one of them" if self.fail_after == 1 else f"{_WORDS.get(self.fail_after, self.fail_after)} of them"
        then = "the study ends there" if self.end_session else "you still go on to the end of the study"
        return (f"Some questions are attention checks with one clearly correct answer: if you answer {wrong} "
                f"wrongly, you have failed the attention checks ({then}), and your submission may be rejected "
                f"on Prolific.")


_WORDS = {2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven", 8: "eight", 9: "nine", 10: "ten"}


def failed_q(prefix: str = ""):
    """A queryset filter selecting the participants who failed, each by its own study's rule: the
    database form of AttentionRule.failed (prefix: the lookup path from the queried model to them)."""
    from django.db.models import F, Q

    return Q(**{f"{prefix}status": FAILED_STATUS}) | Q(
        **{f"{prefix}attention_failures__gte": F(f"{prefix}study__human_arm__attention_fail_after")}
    )
