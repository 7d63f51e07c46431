"""The trial save's SQL fast path (fastsave): same rows and answers as the ORM path, one statement on
PostgreSQL (one read and one write elsewhere) for a regular answer, and every unusual case handed to
the locked path. Runs on SQLite and again on PostgreSQL."""
from __future__ import annotations

import os
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from experiments.models import Item, Participant, ParticipantStatus, Trial
from experiments.participation import fastsave, services
from experiments.participation.payload import PayloadError, parse_trial

from .conftest import code_for, trial_data
from .test_services import ready, start

pytestmark = pytest.mark.django_db


def submit(participant, index, **kw):
    data = trial_data(participant, index, **kw)
    return services.trial_submit(slug=participant.study.slug, token=participant.token, data=data, user_agent="ua")


def _save_capturing(study, participant, index, key_id):
    item = Item.objects.get(pk=participant.plan[index])
    data = trial_data(participant, index, code=code_for(participant, item.gold_answer), key_id=key_id)
    with CaptureQueriesContext(connection) as queries:
        receipt = services.trial_submit(slug=study.slug, token=participant.token, data=data, user_agent="ua")
    sql = [q["sql"] for q in queries.captured_queries]
    return receipt, item, sql, [s for s in sql if s.lstrip().upper().startswith(("WITH", "UPDATE", "INSERT"))]


def test_a_regular_answer_is_one_statement_on_postgres_and_one_read_one_write_elsewhere(open_study):
    study = open_study(attention_checks=[])
    participant = ready(start(study, 1)[0])
    long_ago = timezone.now() - timedelta(minutes=10)
    Participant.objects.filter(pk=participant.pk).update(last_seen_at=long_ago)
    receipt, item, sql, writes = _save_capturing(study, participant, 0, "regular-answer-0001")
    assert receipt.created and receipt.participant.status == ParticipantStatus.STARTED
    if connection.vendor == "postgresql":  # read, checks, insert and last-seen refresh: one statement, one round trip
        assert len(sql) == 1 and writes[0].startswith("WITH h (") and "FOR NO KEY UPDATE OF p" in writes[0]
    else:
        assert [s.split()[0].upper() for s in writes] == ["UPDATE", "INSERT"]
    assert not any("FOR UPDATE" in s for s in sql)  # the locked path was not needed
    trial = Trial.objects.get(participant=participant)
    assert receipt.trial.pk == trial.pk
    if connection.vendor == "postgresql":  # the one statement sends no plan back for a written answer
        assert "plan" in receipt.participant.get_deferred_fields()
    assert receipt.participant.plan == participant.plan  # loaded when asked for
    assert (trial.index, trial.item_id, trial.answer, trial.correct, trial.rt_ms, trial.user_agent) == (
        0, item.pk, item.gold_answer, True, 850.0, "ua")
    assert trial.received_at is not None and trial.idempotency_key == "regular-answer-0001"
    participant.refresh_from_db()
    assert participant.last_seen_at == receipt.participant.last_seen_at > long_ago  # refreshed

    # The next answer within fastsave.SEEN_REFRESH: PostgreSQL leaves last_seen_at alone (the share
    # lock on the participant's row guards the insert; no new row version per answer).
    seen = participant.last_seen_at
    receipt, _, sql, writes = _save_capturing(study, participant, 1, "regular-answer-0002")
    assert receipt.created
    if connection.vendor == "postgresql":
        assert len(sql) == 1 and writes[0].startswith("WITH h (")
        participant.refresh_from_db()
        assert participant.last_seen_at == seen
    assert Trial.objects.filter(participant=participant).count() == 2


def test_fast_and_locked_paths_store_the_same_row(open_study):
    """The same answer saved by the SQL path and by the ORM (locked path) gives identical columns."""
    study = open_study(attention_checks=[])
    a, b = ready(start(study, 1)[0]), ready(start(study, 2)[0])
    b.plan = a.plan
    Participant.objects.filter(pk=b.pk).update(plan=a.plan, key_mapping=a.key_mapping)
    b.refresh_from_db()
    extra = dict(viewport_width=1280, viewport_height=800, focus_lost=True, rt=1234.5)
    submit(a, 3, **extra)
    payload = parse_trial(trial_data(b, 3, **extra))
    services._trial_locked(participant=b, payload=payload, user_agent="ua")
    skip = {"id", "participant", "received_at", "idempotency_key"}
    columns = [f.attname for f in Trial._meta.concrete_fields if f.name not in skip]
    fast, locked = (Trial.objects.filter(participant=p).values(*columns).get() for p in (a, b))
    assert fast == locked


def test_the_read_loads_only_what_a_save_needs_and_defers_the_rest(open_study):
    study = open_study(attention_checks=[])
    participant = ready(start(study, 1)[0])
    hot = fastsave.hot(slug=study.slug, token=participant.token, item_id=participant.plan[0])
    assert hot.flow_done and hot.has_arm and not hot.multiple_choice and hot.item.pk == participant.plan[0]
    assert (hot.participant.pk, hot.participant.plan, hot.participant.key_mapping, hot.participant.is_preview) == (
        participant.pk, participant.plan, participant.key_mapping, False)
    assert "prolific_pid" in hot.participant.get_deferred_fields()
    assert hot.participant.prolific_pid == participant.prolific_pid  # loaded on demand, not a wrong default
    assert fastsave.hot(slug=study.slug, token=participant.token + "x", item_id=1) is None
    assert fastsave.hot(slug="another-study", token=participant.token, item_id=1) is None
    for odd in (None, "12", 12.0, True, -1, 0, 2**70):  # not an id: no item, never an error
        assert fastsave.hot(slug=study.slug, token=participant.token, item_id=odd).item is None


def test_the_read_knows_what_is_still_to_do_before_the_trials(open_study):
    study = open_study(attention_checks=[])
    participant = start(study, 1)[0]
    hot = lambda: fastsave.hot(slug=study.slug, token=participant.token, item_id=participant.plan[0])  # noqa: E731
    assert not hot().flow_done
    services.participant_consent(participant=participant, agree=True)
    services.participant_instructions_done(participant=participant)
    assert not hot().flow_done  # the default arm has a practice block
    services.participant_practice_done(participant=participant)
    assert hot().flow_done
    with pytest.raises(services.FlowError) as refused:
        services.trial_submit(slug=study.slug, token="no-such-token", data=trial_data(participant, 0))
    assert refused.value.status == 404


def test_an_item_of_another_study_or_list_goes_to_the_locked_path_and_is_refused(open_study):
    study, other = open_study(attention_checks=[]), open_study(attention_checks=[])
    participant = ready(start(study, 1)[0])
    foreign = other.items.first()
    with pytest.raises(PayloadError, match="not trial 0"):
        submit(participant, 0, item=foreign.pk)
    assert not Trial.objects.exists()


def test_a_participation_ended_after_the_read_gets_no_trial(open_study):
    """The race the write's WHERE status = 'started' (under the row lock) closes: the view read
    'started', then the participation ended (expiry, erasure, another tab's finish) before the write.
    Both writes: with the last-seen refresh, and the share-locked insert alone."""
    study = open_study(attention_checks=[])
    participant = ready(start(study, 1)[0])
    hot = fastsave.hot(slug=study.slug, token=participant.token, item_id=participant.plan[0])
    Participant.objects.filter(pk=participant.pk).update(status=ParticipantStatus.RETURNED)
    for refresh in (True, False):
        trial = Trial(**services._trial_fields(hot.participant, hot.item, parse_trial(trial_data(participant, 0)), ""))
        assert fastsave.insert(trial=trial, now=participant.started_at, refresh_seen=refresh) is False
        assert trial.pk is None and not Trial.objects.exists()
    with pytest.raises(services.FlowError) as refused:  # the locked path says why
        services.trial_record(participant=hot.participant, payload=parse_trial(trial_data(participant, 0)))
    assert refused.value.reason == "ended" and not Trial.objects.exists()


def test_a_resent_answer_is_one_row_and_a_clashing_one_is_refused(open_study):
    study = open_study(attention_checks=[])
    participant = ready(start(study, 1)[0])
    first = submit(participant, 0, key_id="first-try-of-trial-0")
    again = submit(participant, 0, key_id="first-try-of-trial-0")  # same idempotency key: the locked path finds the saved row
    assert first.created and not again.created and again.trial.pk == first.trial.pk
    with pytest.raises(services.FlowError) as clash:  # another key for an answered trial
        submit(participant, 0, key_id="k" * 20)
    assert clash.value.reason == "answered"
    assert Trial.objects.filter(participant=participant).count() == 1


def test_attention_checks_right_and_wrong_are_saved_at_once_and_failures_counted(open_study):
    study = open_study()  # the default arm has attention checks
    participant = ready(start(study, 1)[0])
    checks = {i.pk: i for i in Item.objects.filter(design=services.ATTENTION_DESIGN)}
    first, second = (n for n, pk in enumerate(participant.plan) if pk in checks)
    gold = checks[participant.plan[first]].gold_answer
    data = trial_data(participant, first, code=code_for(participant, gold))
    with CaptureQueriesContext(connection) as queries:  # right: nothing to count, saved like any answer
        receipt = services.trial_submit(slug=study.slug, token=participant.token, data=data)
    assert receipt.created and receipt.trial.is_attention_check and receipt.trial.correct
    if connection.vendor == "postgresql":
        assert len(queries) == 1  # the one statement
    wrong = "no" if checks[participant.plan[second]].gold_answer == "yes" else "yes"
    data = trial_data(participant, second, code=code_for(participant, wrong))
    with CaptureQueriesContext(connection) as queries:  # wrong: saved and counted
        receipt = services.trial_submit(slug=study.slug, token=participant.token, data=data)
    if connection.vendor == "postgresql":
        assert len(queries) == 1  # the same statement counts the failure
    assert receipt.participant.attention_failures == 1 and receipt.participant.status == ParticipantStatus.STARTED
    participant.refresh_from_db()
    assert participant.attention_failures == 1 and participant.status == ParticipantStatus.STARTED
    saved = Trial.objects.filter(participant=participant).order_by("index")
    assert [(t.is_attention_check, t.correct) for t in saved] == [(True, True), (True, False)]


@pytest.mark.parametrize("path", ["trial endpoint", "locked"])
def test_failed_attention_checks_end_the_participation_at_the_arms_limit_on_either_path(open_study, path):
    """The one statement (the endpoint's save on PostgreSQL) and the locked path count wrong answers
    to attention checks alike and end the participation at the second of two allowed."""
    study = open_study(attention_fail_after=2, attention_end_session=True)
    participant = ready(start(study, 1)[0])
    checks = {i.pk: i for i in Item.objects.filter(design=services.ATTENTION_DESIGN)}
    indices = [n for n, pk in enumerate(participant.plan) if pk in checks]
    assert len(indices) == 2
    outcomes = []
    for index in indices:
        wrong = "no" if checks[participant.plan[index]].gold_answer == "yes" else "yes"
        data = trial_data(participant, index, code=code_for(participant, wrong))
        if path == "locked":
            receipt = services._trial_locked(participant=participant, payload=parse_trial(data), user_agent="ua")
        else:
            receipt = services.trial_submit(slug=study.slug, token=participant.token, data=data, user_agent="ua")
        assert receipt.created and receipt.trial.is_attention_check and not receipt.trial.correct
        outcomes.append((receipt.participant.status, receipt.participant.attention_failures))
        stored = Participant.objects.get(pk=participant.pk)
        assert (stored.status, stored.attention_failures) == outcomes[-1]
    assert outcomes == [(ParticipantStatus.STARTED, 1), (ParticipantStatus.FAILED_ATTENTION, 2)]
    assert stored.finished_at is not None and stored.last_seen_at is not None
    assert receipt.participant.finished_at == stored.finished_at
    with pytest.raises(services.FlowError, match="has ended"):
        submit(participant, next(n for n in range(len(participant.plan)) if n not in indices))
    assert Trial.objects.filter(participant=participant).count() == 2


def _require_postgres() -> None:
    """These run in the PostgreSQL pass of scripts/test.sh; there (CI=true) they must never skip."""
    if connection.vendor != "postgresql":
        message = "needs DATABASE_URL on PostgreSQL (the PostgreSQL pass of scripts/test.sh)"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(message, pytrace=False)
        pytest.skip(message)


def _prepared_statements() -> list[str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement FROM pg_prepared_statements")
        return [row[0] for row in cursor.fetchall()]


@pytest.mark.postgres_only
@pytest.mark.django_db(transaction=True)
def test_postgres_prepares_each_statement_once_per_connection(open_study, settings):
    _require_postgres()
    study = open_study(attention_checks=[])
    participant = ready(start(study, 1)[0])
    for index in range(3):
        submit(participant, index)
    prepared = _prepared_statements()
    assert sum(s.startswith("WITH h (") for s in prepared) == 1  # the one statement, once however often it ran
    data = trial_data(participant, 3, timed_out=True, code="", onset_ms=1.0, response_ms=2.0)
    with pytest.raises(PayloadError):  # not one for the one statement: the read and the strict check
        services.trial_submit(slug=study.slug, token=participant.token, data=data)
    assert sum(s.startswith("SELECT p.") for s in _prepared_statements()) == 1
    assert Trial.objects.filter(participant=participant).count() == 3
    connection.close()  # a new connection, with preparing switched off (behind a transaction pooler)
    settings.DUET_PREPARED_STATEMENTS = False
    submit(participant, 3)
    assert _prepared_statements() == [] and Trial.objects.filter(participant=participant).count() == 4


@pytest.mark.postgres_only
@pytest.mark.django_db(transaction=True)
def test_postgres_plans_the_statements_once_and_keeps_one_cursor_per_connection(open_study):
    """The session is told to use generic plans the first time a save runs outside a transaction (a
    rollback would undo the setting); one psycopg cursor serves every save of a connection."""
    from django.db import transaction

    _require_postgres()
    study = open_study(attention_checks=[])
    participant = ready(start(study, 1)[0])

    def plan_mode() -> str:
        with connection.cursor() as cursor:
            cursor.execute("SHOW plan_cache_mode")
            return cursor.fetchone()[0]

    connection.close()
    with transaction.atomic():
        submit(participant, 0)
        assert plan_mode() == "auto"  # not set inside a transaction ...
    assert plan_mode() == "auto"
    submit(participant, 1)  # ... but on the first save outside one
    assert plan_mode() == "force_generic_plan"
    kept = connection._duet_cursor[1]
    submit(participant, 2)
    assert connection._duet_cursor[1] is kept and not kept.closed
    connection.close()  # a new connection gets its own cursor and setting
    submit(participant, 3)
    assert connection._duet_cursor[1] is not kept and plan_mode() == "force_generic_plan"
    assert Trial.objects.filter(participant=participant).count() == 4


@pytest.mark.postgres_only
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("one_statement", [True, False], ids=["one-statement", "share-locked-insert"])
def test_a_save_waits_for_a_finish_holding_the_row_and_then_writes_nothing(open_study, one_statement):
    """Real concurrency on PostgreSQL: another connection ends the participation while holding the
    participant's row (as participant_finish and erasure do under select_for_update); the save (the
    trial endpoint's one statement, or trial_record's share-locked insert) waits for it, re-checks
    the status and inserts nothing."""
    import threading

    from django.db import connections

    _require_postgres()
    study = open_study(attention_checks=[])
    participant = ready(start(study, 1)[0])
    hot = fastsave.hot(slug=study.slug, token=participant.token, item_id=participant.plan[0])
    locked, release, outcome = threading.Event(), threading.Event(), {}

    def finisher():
        from django.db import transaction

        try:
            with transaction.atomic():
                Participant.objects.select_for_update().get(pk=participant.pk)
                locked.set()
                release.wait(10)
                Participant.objects.filter(pk=participant.pk).update(status=ParticipantStatus.RETURNED)
        finally:
            connections.close_all()

    def saver():
        try:
            if one_statement:
                trial = Trial(item_id=participant.plan[0],
                              **services._payload_fields(parse_trial(trial_data(participant, 0)), ""))
                fastsave.save(slug=study.slug, token=participant.token, trial=trial,
                              answers=services._ANSWERS_BY_LETTER["f"], now=timezone.now())
                outcome["saved"] = trial.pk is not None
            else:
                trial = Trial(**services._trial_fields(hot.participant, hot.item,
                                                       parse_trial(trial_data(participant, 0)), ""))
                outcome["saved"] = fastsave.insert(trial=trial, now=timezone.now(), refresh_seen=False)
        finally:
            connections.close_all()

    ending = threading.Thread(target=finisher)
    ending.start()
    assert locked.wait(10)
    saving = threading.Thread(target=saver)
    saving.start()
    saving.join(0.5)
    assert saving.is_alive()  # waiting for the row lock
    release.set()
    ending.join(10)
    saving.join(10)
    assert outcome == {"saved": False} and not Trial.objects.exists()


@pytest.mark.postgres_only
def test_the_one_statement_writes_only_a_regular_answer_and_leaves_the_rest_to_the_locked_path(open_study):
    """Every check of the one statement, against the locked path's verdict for the same answer."""
    _require_postgres()
    study = open_study(attention_checks=[], time_limit_ms=2000)
    participant = ready(start(study, 1)[0])

    def attempt(index, **kw):
        data = trial_data(participant, index, **kw)
        payload = parse_trial(data)
        trial = Trial(item_id=data["item"], **services._payload_fields(payload, "ua"))
        hot = fastsave.save(slug=study.slug, token=participant.token, trial=trial,
                            answers=services._ANSWERS_BY_LETTER[payload.letter], now=timezone.now())
        return hot, trial

    hot, trial = attempt(0, rt=6999.0)  # within the time limit and its 5 s of grace
    assert trial.pk is not None and hot.participant.pk == participant.pk and hot.time_limit_ms == 2000
    hot, trial = attempt(1, rt=7001.0)  # past them: not written, and the strict check says why
    assert trial.pk is None and hot.item is not None
    with pytest.raises(PayloadError, match="longer than the 7000 ms"):
        submit(participant, 1, rt=7001.0)
    hot, trial = attempt(2, item=participant.plan[3])  # another trial's item
    assert trial.pk is None
    with pytest.raises(PayloadError, match="not trial 2"):
        submit(participant, 2, item=participant.plan[3])
    hot, trial = attempt(0)  # answered already (another idempotency key)
    assert trial.pk is None
    with pytest.raises(services.FlowError, match="already been answered"):
        submit(participant, 0)
    late = start(study, 2)[0]  # consent given, instructions not yet read
    services.participant_consent(participant=late, agree=True)
    data = trial_data(late, 0)
    trial = Trial(item_id=data["item"], **services._payload_fields(parse_trial(data), ""))
    fastsave.save(slug=study.slug, token=late.token, trial=trial, answers=services._ANSWERS_BY_LETTER["f"],
                  now=timezone.now())
    assert trial.pk is None
    with pytest.raises(services.FlowError) as early:
        submit(late, 0)
    assert early.value.reason == "out_of_order"
    assert fastsave.save(slug=study.slug, token="no-such-token", trial=trial, answers="{}", now=timezone.now()) is None
    # a timed-out trial (the arm has a time limit) is saved by the locked path, blank and incorrect
    receipt = submit(participant, 4, timed_out=True, code="", rt=2100.0)
    assert receipt.created and (receipt.trial.answer, receipt.trial.correct, receipt.trial.timed_out) == ("", False, True)
    assert sorted(Trial.objects.filter(participant=participant).values_list("index", flat=True)) == [0, 4]
