"""Entries at the same moment on PostgreSQL (issue 38 item 7): participant_start runs its lookups,
checks and expiry outside the study's lock and keeps only the balance read, the plan and the insert
under it. Threads here each hold a database connection of their own and are released together by a
barrier, so their transactions really overlap on the server: the same Prolific id never makes two
participants, a full study admits nobody, and the list and key balance is what one-at-a-time entries
would give."""
from __future__ import annotations

import re
import threading
from collections import Counter
from datetime import timedelta

import pytest
from django.db import close_old_connections, connection, connections
from django.utils import timezone

from experiments.models import Item, Participant, ParticipantStatus
from experiments.participation import services

from tests.postgres import require_postgres

from .conftest import make_open_study

pytestmark = [pytest.mark.postgres_only, pytest.mark.django_db(transaction=True)]


def together(calls: list) -> list:
    """Run each call in a thread of its own (its own connection), all released at once; returns each
    call's result, or the exception it raised."""
    barrier, results = threading.Barrier(len(calls)), [None] * len(calls)

    def run(n: int, call) -> None:
        close_old_connections()
        try:
            barrier.wait(10)
            results[n] = call()
        except Exception as exc:  # noqa: BLE001 - the refusal is the result
            results[n] = exc
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(n, call)) for n, call in enumerate(calls)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert not any(thread.is_alive() for thread in threads), "an entry never came back (a deadlock?)"
    return results


def entry(study, pid: str, session: str):
    return lambda: services.participant_start(study=study, prolific_pid=pid, prolific_study_id="st",
                                              prolific_session_id=session)


def test_one_prolific_id_arriving_eight_times_at_once_is_one_participant():
    require_postgres()
    study = make_open_study(interpretations=24, attention_checks=[])
    same = together([entry(study, f"pid{1:021d}", "sess1") for _ in range(8)])
    assert not [r for r in same if isinstance(r, Exception)], same
    assert Participant.objects.filter(study=study).count() == 1
    assert {p.pk for p, _ in same} == {Participant.objects.get(study=study).pk}
    assert sum(created for _, created in same) == 1
    # four ids, each twice and from another Prolific session the second time: one participant each, and
    # the other session is refused (never given the first one's participation)
    calls = [entry(study, f"pid{n:021d}", f"s{n}-{k}") for n in range(2, 6) for k in range(2)]
    mixed = together(calls)
    people = Participant.objects.filter(study=study).exclude(prolific_pid=f"pid{1:021d}")
    assert people.count() == 4 and Counter(people.values_list("prolific_pid", flat=True)).most_common(1)[0][1] == 1
    for n in range(2, 6):
        pair = mixed[2 * (n - 2): 2 * (n - 1)]
        won = [r for r in pair if not isinstance(r, Exception)]
        lost = [r for r in pair if isinstance(r, Exception)]
        assert len(won) == 1 and len(lost) == 1, pair
        assert isinstance(lost[0], services.FlowError) and lost[0].reason in {"other_session", "duplicate"}
        assert won[0][0].prolific_session_id == people.get(prolific_pid=f"pid{n:021d}").prolific_session_id
    # one Prolific session used by two ids at once: one participant holds it
    taken = together([entry(study, f"pid{n:021d}", "shared") for n in (7, 8)])
    assert Participant.objects.filter(study=study, prolific_session_id="shared").count() == 1
    assert sum(isinstance(r, services.FlowError) for r in taken) == 1


def test_the_first_entries_at_once_make_the_catch_items_once():
    """The catch items are made by the first entry that needs them, outside the lock: eight first entries
    at once all get in, with the same catch items in their plans (the bench's burst met a 500 here)."""
    from experiments.models import Item
    from experiments.participation.fastsave import ATTENTION_DESIGN

    require_postgres()
    study = make_open_study(interpretations=24)
    checks = len(services.human_arm_ensure(study=study).attention_checks)
    assert checks and not Item.objects.filter(study=study, design=ATTENTION_DESIGN).exists()
    results = together([entry(study, f"pid{n:021d}", f"s{n}") for n in range(8)])
    assert not [r for r in results if isinstance(r, Exception)], results
    catch = set(Item.objects.filter(study=study, design=ATTENTION_DESIGN).values_list("pk", flat=True))
    assert len(catch) == checks
    assert all(catch <= set(p.plan) for p, _ in results)


def test_entries_at_once_keep_the_list_and_key_balance():
    """Simulated participants hold their place from the start (no consent), so twelve at once must get
    twelve different lists of the study's 24 and six of each key mapping: only a count and insert made
    one entry at a time gives that (without the lock, entries read the same counts and share lists)."""
    require_postgres()
    study = make_open_study(interpretations=24, attention_checks=[])
    calls = []
    for _ in range(12):
        pid, session = services.simulated_ids()
        calls.append(lambda pid=pid, session=session: services.participant_start(
            study=study, prolific_pid=pid, prolific_session_id=session, simulated=True))
    results = together(calls)
    assert not [r for r in results if isinstance(r, Exception)], results
    bots = Participant.objects.filter(study=study, is_simulated=True)
    assert bots.count() == 12
    assert sorted(bots.values_list("list_number", flat=True)) == list(range(12))
    assert Counter(bots.values_list("key_mapping", flat=True)) == {"f_yes": 6, "j_yes": 6}


def test_a_full_study_admits_nobody_at_once_and_a_silent_place_is_freed():
    require_postgres()
    study = make_open_study(interpretations=24, attention_checks=[], target_sample_size=3)
    for n in range(3):
        person, _ = services.participant_start(study=study, prolific_pid=f"pid{n:021d}", prolific_session_id=f"s{n}")
        services.participant_consent(participant=person, agree=True)
    refused = together([entry(study, f"pid{n:021d}", f"s{n}") for n in range(10, 16)])
    assert all(isinstance(r, services.FlowError) and r.reason == "full" for r in refused), refused
    assert Participant.objects.filter(study=study).count() == 3
    # one of the three falls silent: its place is freed by the next entries (expired under the lock when
    # the study looks full), and each of the six arrivals is admitted once, none twice
    Participant.objects.filter(study=study, prolific_pid=f"pid{0:021d}").update(
        last_seen_at=timezone.now() - timedelta(hours=2))
    admitted = together([entry(study, f"pid{n:021d}", f"s{n}") for n in range(10, 16)])
    assert not [r for r in admitted if isinstance(r, Exception)], admitted
    assert Participant.objects.get(study=study, prolific_pid=f"pid{0:021d}").status == ParticipantStatus.RETURNED
    assert Participant.objects.filter(study=study, status=ParticipantStatus.STARTED).count() == 2 + 6
    pids = Counter(Participant.objects.filter(study=study).values_list("prolific_pid", flat=True))
    assert pids.most_common(1)[0][1] == 1


def test_an_entrys_transaction_holds_the_status_the_balance_read_the_list_and_the_insert():
    """What an entry does while it holds the study's row (shared, FOR SHARE): the balance read (one row per
    list and key mapping, however many participants hold a place), the one stored list it is given, the
    insert; and the whole entry's statements, lookups and expiry included, are few."""
    from django.test.utils import CaptureQueriesContext

    require_postgres()
    study = make_open_study(interpretations=24, attention_checks=[])
    for n in range(30):
        person, _ = services.participant_start(study=study, prolific_pid=f"pid{n:021d}", prolific_session_id=f"s{n}")
        services.participant_consent(participant=person, agree=True)
    with CaptureQueriesContext(connection) as seen:
        services.participant_start(study=study, prolific_pid=f"pid{99:021d}", prolific_session_id="s99")
    sql = [q["sql"] for q in seen.captured_queries]
    lock = next(n for n, q in enumerate(sql) if "FOR SHARE" in q)
    insert = next(n for n, q in enumerate(sql) if q.startswith('INSERT INTO "experiments_participant"'))
    held = sql[lock + 1: insert]
    assert len(held) == 2, held
    assert "GROUP BY" in held[0] and 'FROM "experiments_participant"' in held[0]
    assert 'FROM "experiments_storedlist"' in held[1]
    assert '"experiments_study"' in sql[lock] and not any("FOR UPDATE" in q for q in sql)
    assert len(sql) <= 11, sql  # the whole entry, lookups, expiry and the pending entries' tie-break included


def _hold_the_study_row(study, clause: str, held: threading.Event, release: threading.Event) -> None:
    from django.db import transaction

    try:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(f"SELECT id FROM experiments_study WHERE id = %s {clause}", [study.pk])
            held.set()
            release.wait(20)
    finally:
        connections.close_all()


def test_entries_do_not_wait_for_each_other_and_a_close_waits_for_them():
    """An entry in flight holds the study's row shared: another entry goes through at once, a change of
    the study's status waits for it. A simulated entry, or an item generation, holds it exclusively:
    entries wait for it."""
    import time

    from django.db import transaction

    require_postgres()
    study = make_open_study(interpretations=24, attention_checks=[])
    held, release = threading.Event(), threading.Event()
    holder = threading.Thread(target=_hold_the_study_row, args=(study, "FOR SHARE", held, release))
    holder.start()
    try:
        assert held.wait(10)
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("SET LOCAL lock_timeout = '2s'")
            person, created = services.participant_start(study=study, prolific_pid=f"pid{1:021d}",
                                                         prolific_session_id="s1")
        assert created
        closing = together([lambda: _timed_close(study)])[0]
        assert closing == "waited"
    finally:
        release.set()
        holder.join(30)
    held, release = threading.Event(), threading.Event()
    holder = threading.Thread(target=_hold_the_study_row, args=(study, "FOR UPDATE", held, release))
    holder.start()
    try:
        assert held.wait(10)
        started = time.monotonic()
        threading.Timer(1.0, release.set).start()
        services.participant_start(study=study, prolific_pid=f"pid{2:021d}", prolific_session_id="s2")
        assert time.monotonic() - started >= 0.9  # it waited for the exclusive holder
    finally:
        release.set()
        holder.join(30)


def _timed_close(study) -> str:
    """Pause the study with a short lock timeout: 'waited' when the row was held (nothing changed)."""
    from django.db import OperationalError, transaction

    from experiments.models import Study, StudyStatus

    try:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("SET LOCAL lock_timeout = '500ms'")
            Study.objects.filter(pk=study.pk).update(status=StudyStatus.PAUSED)
    except OperationalError:
        return "waited"
    return "went through"


def test_the_lists_header_read_takes_one_step_down_an_index_at_any_study_size():
    """The stored lists' header comes with the study's highest item id (has an item been added since the
    lists were built?): PostgreSQL reads it from the end of item_study_newest, never sorting the study's
    items (it sorted every one before the index: 6.7 ms at 9,600 items, about 20 ms of the database's CPU
    per entry at the burst's 48,000)."""
    from django.test.utils import CaptureQueriesContext

    require_postgres()
    study = make_open_study(interpretations=100, include_nonsense=True, attention_checks=[])  # 4,800 items
    make_open_study(interpretations=24)  # another study's items are the newest
    with CaptureQueriesContext(connection) as seen:
        services.participant_start(study=study, prolific_pid=f"pid{1:021d}", prolific_session_id="s1")
    header = next(q["sql"] for q in seen.captured_queries if 'FROM "experiments_storedlists"' in q["sql"])
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN (ANALYZE) " + header)
        plan = "\n".join(row[0] for row in cursor.fetchall())
    item_read = plan.split("SubPlan")[1]  # the highest item id's read: an index walked from its end, no sort
    assert "Index Scan Backward" in item_read and "Sort" not in item_read and "Seq Scan" not in item_read, plan
    # down item_study_newest, or (the planner's choice when the study holds most of the table) the primary
    # key past the newer study's items only: never a read that grows with this study's 4,800 items
    removed = [int(n) for n in re.findall(r"Rows Removed by Filter: (\d+)", item_read)]
    newer = Item.objects.exclude(study=study).count()
    assert "rows=1 loops=1" in item_read and sum(removed) <= newer, plan
