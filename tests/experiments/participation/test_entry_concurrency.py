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

from experiments.models import Participant, ParticipantStatus
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


PLANNERS = {  # the planner's choices the header's read is explained under: its own, and each kind of scan barred
    "the planner's own": [],
    "no index scans": ["enable_indexscan", "enable_indexonlyscan", "enable_bitmapscan"],
    "no sequential scans": ["enable_seqscan"],
    "no sorts, no nested loops": ["enable_sort", "enable_nestloop"],
}


def test_the_lists_header_read_reads_no_item_whatever_plan_the_database_picks():
    """Whether the study's items changed since its lists were built: the header is read with the study's
    items version, a row of its own found by the study's primary key. The study's highest item id, read
    there before, cost whatever the planner chose: one step down the (study, id) index, or (once in four
    bursts of bench/participants.py) the primary key walked backwards past every newer study's items, 21.8 ms
    of PostgreSQL's CPU per arrival. Here the study holds most of the items table (the case the planner
    misjudged) and the read is explained under each of PLANNERS: no plan reads the items table at all."""
    from django.db import transaction
    from django.test.utils import CaptureQueriesContext

    from experiments.models.items_version import items_version

    require_postgres()
    study = make_open_study(interpretations=100, include_nonsense=True, attention_checks=[])  # 4,800 items
    make_open_study(interpretations=24)  # another study's items are the newest
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE experiments_item")
    with CaptureQueriesContext(connection) as seen:
        services.participant_start(study=study, prolific_pid=f"pid{1:021d}", prolific_session_id="s1")
    header = next(q["sql"] for q in seen.captured_queries if 'FROM "experiments_storedlists"' in q["sql"])
    for name, barred in PLANNERS.items():
        with transaction.atomic(), connection.cursor() as cursor:
            for setting in barred:
                cursor.execute(f"SET LOCAL {setting} = off")
            cursor.execute("EXPLAIN (ANALYZE, COSTS OFF) " + header)
            plan = "\n".join(row[0] for row in cursor.fetchall())
            cursor.execute(header)
            row = cursor.fetchone()
        assert not re.search(r"\bexperiments_item(\b|_)|item_study_newest", plan), (name, plan)
        version_read = plan.split("SubPlan")[1]  # one row of the versions table, by the study's id
        assert "on experiments_studyitemsversion" in version_read and "rows=1 loops=1" in version_read, (name, plan)
        assert row[-1] == items_version(study) > 0, (name, row)  # the version, as its one reader reads it
