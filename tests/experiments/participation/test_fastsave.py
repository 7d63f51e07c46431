"""The two save paths of an answer: PostgreSQL's one statement (fastsave) writes exactly what the
locked ORM path (trials.trial_record) would and leaves every unusual case to it. Runs on SQLite
(where the locked path is the only one) and again on PostgreSQL. The state-machine comparison of
the two paths is test_save_rulebook.py."""
from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from experiments.models import Item, Participant, ParticipantStatus, Trial
from experiments.participation import fastsave, services, trials
from experiments.participation.payload import KEYS, PayloadError, parse_trial

from tests.postgres import require_postgres

from .conftest import code_for, trial_data
from .test_services import ready, start

pytestmark = pytest.mark.django_db


def submit(participant, index, **kw):
    payload = parse_trial(trial_data(participant, index, **kw))
    return trials.trial_submit(slug=participant.study.slug, token=participant.token, payload=payload, user_agent="ua")


def one_statement(participant, index, *, token=None, **kw):
    """fastsave.save called as trial_submit calls it (PostgreSQL)."""
    data = trial_data(participant, index, **kw)
    payload = parse_trial(data)
    trial = Trial(item_id=payload.item, **trials._from_browser(replace(payload, key=KEYS[payload.code]), "ua"))
    return fastsave.save(slug=participant.study.slug, token=token or participant.token, trial=trial, index=index,
                         answers=trials._ANSWERS_BY_CODE[payload.code], now=timezone.now())


def _save_capturing(study, participant, index, key_id):
    item = Item.objects.get(pk=participant.plan[index])
    data = trial_data(participant, index, code=code_for(participant, item.gold_answer), key_id=key_id)
    with CaptureQueriesContext(connection) as queries:
        receipt = trials.trial_submit(slug=study.slug, token=participant.token, payload=parse_trial(data),
                                      user_agent="ua")
    sql = [q["sql"] for q in queries.captured_queries]
    return receipt, item, sql


def test_a_regular_answer_is_one_statement_on_postgres_and_the_locked_path_elsewhere(open_study):
    study = open_study(attention_checks=[])
    participant = ready(start(study, 1)[0])
    long_ago = timezone.now() - timedelta(minutes=10)
    Participant.objects.filter(pk=participant.pk).update(last_seen_at=long_ago)
    receipt, item, sql = _save_capturing(study, participant, 0, "regular-answer-0001")
    assert receipt.created and receipt.participant.status == ParticipantStatus.STARTED
    if connection.vendor == "postgresql":  # read, checks, insert and last-seen refresh: one statement, one round trip
        assert len(sql) == 1 and sql[0].startswith("WITH h (") and "FOR NO KEY UPDATE OF p" in sql[0]
        assert "plan" in receipt.participant.get_deferred_fields()  # the statement sends no plan back
    else:
        assert any("INSERT INTO" in s for s in sql)
    trial = Trial.objects.get(participant=participant)
    assert receipt.trial.pk == trial.pk and receipt.trial.answer == trial.answer and receipt.trial.index == 0
    assert receipt.participant.plan == participant.plan  # loaded when asked for
    assert (trial.index, trial.item_id, trial.answer, trial.correct, trial.rt_ms, trial.user_agent) == (
        0, item.pk, item.gold_answer, True, 850.0, "ua")
    assert trial.received_at is not None and trial.idempotency_key == "regular-answer-0001"
    assert trial.key == KEYS[trial.key_code]
    participant.refresh_from_db()
    assert participant.last_seen_at == receipt.participant.last_seen_at > long_ago  # refreshed

    # The next answer within fastsave.SEEN_REFRESH: the one statement leaves last_seen_at alone (no new
    # version of the participant's row per answer).
    seen = participant.last_seen_at
    receipt, _, sql = _save_capturing(study, participant, 1, "regular-answer-0002")
    assert receipt.created
    if connection.vendor == "postgresql":
        assert len(sql) == 1 and sql[0].startswith("WITH h (")
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
    extra = dict(viewport_width=1280, viewport_height=800, focus_lost=True, rt=1234.5, channel="key", device="desktop")
    submit(a, 3, **extra)
    payload = parse_trial(trial_data(b, 3, **extra))
    trials.trial_record(participant=b, payload=payload, user_agent="ua")
    skip = {"id", "participant", "received_at", "idempotency_key"}
    columns = [f.attname for f in Trial._meta.concrete_fields if f.name not in skip]
    fast, locked = (Trial.objects.filter(participant=p).values(*columns).get() for p in (a, b))
    assert fast == locked


def test_an_unknown_session_is_a_404_and_trials_wait_for_every_page_before_them(open_study):
    study = open_study(attention_checks=[])
    participant = start(study, 1)[0]
    with pytest.raises(services.FlowError) as refused:
        trials.trial_submit(slug=study.slug, token="no-such-token", payload=parse_trial(trial_data(participant, 0)))
    assert refused.value.status == 404
    services.participant_consent(participant=participant, agree=True)
    services.participant_instructions_done(participant=participant)
    with pytest.raises(services.FlowError) as early:  # the default arm has a practice block
        submit(participant, 0)
    assert early.value.reason == "out_of_order" and not Trial.objects.exists()
    services.participant_practice_done(participant=participant)
    assert submit(participant, 0).created


def test_an_item_of_another_study_or_list_goes_to_the_locked_path_and_is_refused(open_study):
    study, other = open_study(attention_checks=[]), open_study(attention_checks=[])
    participant = ready(start(study, 1)[0])
    foreign = other.items.first()
    with pytest.raises(PayloadError, match="not trial 0"):
        submit(participant, 0, item=foreign.pk)
    assert not Trial.objects.exists()


def test_an_ended_participation_gets_no_trial_on_either_path(open_study):
    study = open_study(attention_checks=[])
    participant = ready(start(study, 1)[0])
    Participant.objects.filter(pk=participant.pk).update(status=ParticipantStatus.RETURNED)
    if connection.vendor == "postgresql":
        assert one_statement(participant, 0) is fastsave.NOT_WRITTEN and not Trial.objects.exists()
    with pytest.raises(services.FlowError) as refused:  # the locked path says why
        submit(participant, 0)
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
    checks = {i.pk: i for i in Item.objects.filter(design=fastsave.ATTENTION_DESIGN)}
    first, second = (n for n, pk in enumerate(participant.plan) if pk in checks)
    gold = checks[participant.plan[first]].gold_answer
    data = trial_data(participant, first, code=code_for(participant, gold))
    with CaptureQueriesContext(connection) as queries:  # right: nothing to count, saved like any answer
        receipt = trials.trial_submit(slug=study.slug, token=participant.token, payload=parse_trial(data))
    assert receipt.created and receipt.trial.is_attention_check and receipt.trial.correct
    if connection.vendor == "postgresql":
        assert len(queries) == 1  # the one statement
    wrong = "no" if checks[participant.plan[second]].gold_answer == "yes" else "yes"
    data = trial_data(participant, second, code=code_for(participant, wrong))
    with CaptureQueriesContext(connection) as queries:  # wrong: saved and counted
        receipt = trials.trial_submit(slug=study.slug, token=participant.token, payload=parse_trial(data))
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
    checks = {i.pk: i for i in Item.objects.filter(design=fastsave.ATTENTION_DESIGN)}
    indices = [n for n, pk in enumerate(participant.plan) if pk in checks]
    assert len(indices) == 2
    outcomes = []
    for index in indices:
        wrong = "no" if checks[participant.plan[index]].gold_answer == "yes" else "yes"
        data = trial_data(participant, index, code=code_for(participant, wrong))
        if path == "locked":
            receipt = trials.trial_record(participant=participant, payload=parse_trial(data), user_agent="ua")
        else:
            receipt = trials.trial_submit(slug=study.slug, token=participant.token, payload=parse_trial(data),
                                          user_agent="ua")
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


def _prepared_statements() -> list[str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement FROM pg_prepared_statements")
        return [row[0] for row in cursor.fetchall()]


@pytest.mark.postgres_only
@pytest.mark.django_db(transaction=True)
def test_postgres_prepares_the_statement_once_per_connection_and_plans_it_generically(open_study):
    require_postgres()
    study = open_study(attention_checks=[])
    participant = ready(start(study, 1)[0])
    connection.close()
    for index in range(3):
        submit(participant, index)
    prepared = _prepared_statements()
    assert sum(s.startswith("WITH h (") for s in prepared) == 1  # the one statement, once however often it ran
    assert len(prepared) == 1  # Django's own queries bind on the client and are never prepared
    with connection.cursor() as cursor:
        cursor.execute("SHOW plan_cache_mode")
        assert cursor.fetchone()[0] == "force_generic_plan"
    connection.close()  # a connection opened without preparing (behind a transaction pooler)
    options = connection.settings_dict["OPTIONS"]
    saved = dict(options)
    try:
        options.pop("prepare_threshold")
        submit(participant, 3)
        assert _prepared_statements() == []
    finally:
        connection.close()
        options.clear()
        options.update(saved)
    assert Trial.objects.filter(participant=participant).count() == 4


@pytest.mark.db_independent
def test_prepared_statements_are_connection_options_that_a_setting_turns_off(monkeypatch):
    from common import env

    monkeypatch.setenv("DATABASE_URL", "postgres://duet@localhost:5432/duet?options=-c%20statement_timeout%3D5000")
    options = env.database()["OPTIONS"]
    assert options["prepare_threshold"] == 0
    assert options["options"] == "-c statement_timeout=5000 -c plan_cache_mode=force_generic_plan"
    monkeypatch.setenv("DUET_PREPARED_STATEMENTS", "false")
    options = env.database().get("OPTIONS", {})
    assert "prepare_threshold" not in options and "plan_cache_mode" not in options.get("options", "")


@pytest.mark.postgres_only
@pytest.mark.django_db(transaction=True)
def test_a_save_waits_for_a_finish_holding_the_row_and_then_writes_nothing(open_study):
    """Real concurrency on PostgreSQL: another connection ends the participation while holding the
    participant's row (as participant_finish and erasure do under select_for_update); the one
    statement waits for it, re-checks the status and inserts nothing."""
    import threading

    from django.db import connections

    require_postgres()
    study = open_study(attention_checks=[])
    participant = ready(start(study, 1)[0])
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
            outcome["saved"] = one_statement(participant, 0) is not fastsave.NOT_WRITTEN
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
    require_postgres()
    study = open_study(attention_checks=[], time_limit_ms=2000)
    participant = ready(start(study, 1)[0])

    written = one_statement(participant, 0, rt=6999.0)  # within the time limit and its 5 s of grace
    assert isinstance(written, fastsave.Written) and written.participant.pk == participant.pk
    assert one_statement(participant, 1, rt=7001.0) is fastsave.NOT_WRITTEN  # past them
    with pytest.raises(PayloadError, match="longer than the 7000 ms"):  # and the locked path says why
        submit(participant, 1, rt=7001.0)
    assert one_statement(participant, 2, item=participant.plan[3]) is fastsave.NOT_WRITTEN  # another trial's item
    with pytest.raises(PayloadError, match="not trial 2"):
        submit(participant, 2, item=participant.plan[3])
    assert one_statement(participant, 0) is fastsave.NOT_WRITTEN  # answered already (another idempotency key)
    with pytest.raises(services.FlowError, match="already been answered"):
        submit(participant, 0)
    late = start(study, 2)[0]  # consent given, instructions not yet read
    services.participant_consent(participant=late, agree=True)
    assert one_statement(late, 0) is fastsave.NOT_WRITTEN
    with pytest.raises(services.FlowError) as early:
        submit(late, 0)
    assert early.value.reason == "out_of_order"
    assert one_statement(participant, 3, token="no-such-token") is None
    # a timed-out trial (the arm has a time limit) is saved by the locked path, blank and incorrect
    receipt = submit(participant, 4, timed_out=True, code="", rt=2100.0)
    assert receipt.created and (receipt.trial.answer, receipt.trial.correct, receipt.trial.timed_out) == ("", False, True)
    assert sorted(Trial.objects.filter(participant=participant).values_list("index", flat=True)) == [0, 4]


@pytest.mark.db_independent
def test_every_trial_column_is_either_decided_by_the_rules_or_sent_by_the_browser():
    """The trial's columns are the model's; a field added to Trial must be given a source here (the
    one mapping from payload to row, trials._from_browser) or decided by the rules (fastsave._DECIDED)
    — the one statement's column list is generated from the model and would otherwise write NULL."""
    payload = parse_trial({"index": 0, "item": 1, "code": "KeyF", "key": "f", "idempotency_key": "k" * 16,
                           "onset_ms": 1.0, "response_ms": 2.0, "timed_out": False})
    sources = set(trials._from_browser(payload, "")) | set(fastsave._DECIDED) | {"id", "received_at"}
    assert sources == {f.name for f in Trial._meta.concrete_fields}
