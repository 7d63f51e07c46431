"""Participants through the real gunicorn server (PostgreSQL behind it), across faults."""
from __future__ import annotations

import time
import urllib.error

import pytest

from .browser import Browser
from .conftest import ITEMS_PER_PARTICIPANT, SLUG
from .servers import wait_for


def trials_of(stack, token: str) -> list[tuple]:
    return stack.db.query(
        "SELECT t.index, t.idempotency_key, t.id FROM experiments_trial t JOIN experiments_participant p "
        "ON p.id = t.participant_id WHERE p.token = %s ORDER BY t.index", (token,))


def status_of(stack, token: str) -> str:
    return stack.db.query("SELECT status FROM experiments_participant WHERE token = %s", (token,))[0][0]


def test_a_participant_survives_a_web_server_restart_mid_study(stack):
    browser = Browser(stack.web.base)
    browser.start(SLUG, "integration-restart-0001")
    assert browser.config["phase"] == "trials" and len(browser.config["trials"]) == ITEMS_PER_PARTICIPANT
    sent = [browser.answer(i) for i in range(ITEMS_PER_PARTICIPANT)]
    half = ITEMS_PER_PARTICIPANT // 2
    for body in sent[:half]:
        assert browser.send(body).status == 201
    # the server goes away: the next answer cannot be delivered…
    stack.web.stop()
    with pytest.raises(urllib.error.URLError):
        browser.send(sent[half])
    stack.restart_web()
    # …and comes back: the page resumes where the participant was, the cookie and CSRF token still work
    assert browser.load()["answered"] == list(range(half))
    # an answer saved before the restart, re-sent with its idempotency key (the browser's retry): not doubled
    again = browser.send(sent[half - 1])
    assert again.status == 200 and again.json()["duplicate"] is True
    # the undelivered one is retried with the same key, then the rest
    for body in sent[half:]:
        assert browser.send(body).status == 201
    assert browser.send(sent[half]).json()["duplicate"] is True
    done = browser.finish()
    assert done.status == 200 and done.json()["status"] == "completed" and done.json()["code"] == "C0MPLETE"
    rows = trials_of(stack, browser.token)
    assert [index for index, _, _ in rows] == list(range(ITEMS_PER_PARTICIPANT))
    assert [key for _, key, _ in rows] == [body["idempotency_key"] for body in sent]
    assert status_of(stack, browser.token) == "completed"


def hold_the_runs(stack):
    """A connection holding the model scores' table in SHARE mode: a run is claimed (running) and scores its
    first chunk, then waits to store it until the connection lets go. Nothing else waits for it: the
    participant flow never writes a model score, and launching a run only reads them."""
    hold = stack.db.connect()
    hold.execute("BEGIN")
    hold.execute("LOCK TABLE inference_modelscore IN SHARE MODE")
    return hold


def waiting_on(stack, hold) -> list[str]:
    """What the server processes waiting for the holding connection's lock are doing (their statements)."""
    pid = hold.info.backend_pid
    rows = stack.db.query("SELECT query FROM pg_stat_activity WHERE %s = ANY(pg_blocking_pids(pid))", (pid,))
    return [query for query, in rows]


def test_redis_down_the_participant_flow_goes_on_and_queued_runs_resume_when_it_is_back(stack):
    # the first run cannot finish until the test lets it (its worker waits for a lock this test holds), so
    # the second one waits in Redis behind it by construction, however fast or slow the machine is
    worker_pid = stack.worker.proc.pid
    hold = hold_the_runs(stack)
    try:
        busy = stack.launch_run(batch_size=4, item_limit=12)
        ended = ("done", "failed", "cancelled")  # (a run that ends instead fails the next line at once)
        wait_for(lambda: waiting_on(stack, hold) or stack.run_row(busy)["status"] in ended,
                 timeout=600, what="the first run held at its first chunk", log=stack.worker.log, interval=0.2)
        row = stack.run_row(busy)  # claimed, its first chunk scored and waiting to be stored
        storing = waiting_on(stack, hold)  # the worker, storing the chunk's scores
        assert len(storing) == 1 and storing[0].startswith('INSERT INTO "inference_modelscore"'), storing
        assert row["status"] == "running" and row["items_done"] == 0, row
        waiting = stack.launch_run(batch_size=4, item_limit=8)
        assert stack.run_row(waiting)["status"] == "queued"
        stack.redis.stop()  # SIGTERM: Redis writes its append-only file and exits
        assert not stack.redis.alive
        # the participant flow needs no broker: a whole study, start to finish, while Redis is down
        browser = Browser(stack.web.base)
        browser.start(SLUG, "integration-noredis-0001")
        for index in range(ITEMS_PER_PARTICIPANT):
            assert browser.send(browser.answer(index, code="KeyJ")).status == 201
        assert browser.finish().json()["status"] == "completed"
        assert len(trials_of(stack, browser.token)) == ITEMS_PER_PARTICIPANT
        assert stack.run_row(busy)["status"] == "running" and waiting_on(stack, hold) == storing  # still held
        assert stack.run_row(waiting)["status"] == "queued"  # nothing can reach it meanwhile
        # Redis back on the same port, then the first run let go: the same worker reconnects and both runs
        # complete, each item once (a failure above lets go too: the next tests' runs store their scores)
        stack.redis.start()
    finally:
        hold.execute("ROLLBACK")
        hold.close()
    for run_id, total in ((busy, 12), (waiting, 8)):
        row = stack.wait_run(run_id, timeout=600)
        assert row["status"] == "done" and row["items_done"] == total, row
    # the busy task's acknowledgement may have been lost with the connection: Redis hands it out again
    # after the visibility timeout (4 s here), and the finished run takes no second score
    time.sleep(6)
    for run_id, total in ((busy, 12), (waiting, 8)):
        items = [item for _, item, _ in stack.scores(run_id)]
        assert len(items) == total and len(set(items)) == total
    assert stack.worker.alive and stack.worker.proc.pid == worker_pid  # the same worker reconnected
