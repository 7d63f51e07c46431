"""A launch's burst arrives before anyone consents, and only consented participants count for the list
balance (issue 17 hole 3). Without a tie-break every arrival of the burst was given the least-used list,
the same one, so the first wave's lists were not counterbalanced at all (issue 38 item 7): arrivals
that tie on the balance now spread over the lists fewest pending entries were given."""
from __future__ import annotations

from collections import Counter

import pytest

from experiments.participation import lists, services

from .conftest import make_open_study

pytestmark = pytest.mark.django_db


def test_least_used_breaks_ties_by_the_pending_entries_then_the_number():
    assert lists.least_used({}, 4) == 0
    assert lists.least_used({}, 4, then={0: 1, 1: 1}) == 2
    assert lists.least_used({0: 1, 1: 1, 2: 1}, 4, then={3: 5}) == 3  # the balance first
    assert lists.least_used({0: 1}, 3, then={1: 2, 2: 1}) == 2


def test_a_burst_before_anyone_consents_spreads_over_the_lists_and_consent_still_balances():
    study = make_open_study(interpretations=24, attention_checks=[])
    total = services._stored(study, services.human_arm_ensure(study=study)).total
    assert total >= 8
    burst = [services.participant_start(study=study, prolific_pid=f"pid{n:021d}", prolific_session_id=f"s{n}")[0]
             for n in range(8)]
    assert len({p.list_number for p in burst}) == 8  # before: all eight on list 0
    for person in burst[:3]:
        services.participant_consent(participant=person, agree=True)
    later = [services.participant_start(study=study, prolific_pid=f"pid{n:021d}", prolific_session_id=f"s{n}")[0]
             for n in range(8, 8 + total)]
    given = Counter(p.list_number for p in burst + later)
    held = {p.list_number for p in burst[:3]}
    # the consented lists are given last: every other list once more before any of them again
    assert not held & {p.list_number for p in later[: total - 3]}
    assert max(given.values()) - min(given[m] for m in range(total)) <= 1
