"""Model runs through the real Redis broker and a real Celery worker, scores in PostgreSQL."""
from __future__ import annotations

import re
import time

import pytest

from tests.inference.tiny_models import direct_scores
from tests.integration.servers import script


def test_a_queued_run_completes_on_the_worker_with_one_score_per_item(stack):
    run_id = stack.launch_run(batch_size=4, item_limit=12)
    row = stack.wait_run(run_id, timeout=600)
    assert row["status"] == "done", row
    assert row["items_done"] == row["items_total"] == 12
    scores = stack.scores(run_id)
    items = [item for _, item, _ in scores]
    assert len(items) == 12 and len(set(items)) == 12
    # every score is a real forward pass: probabilities in (0, 1), a finite perplexity, token counts
    values = stack.db.query(
        "SELECT p_yes, p_no, relative_p_yes, perplexity, prompt_tokens FROM inference_modelscore WHERE run_id = %s", (run_id,))
    for p_yes, p_no, relative, perplexity, tokens in values:
        assert 0 < p_yes < 1 and 0 < p_no < 1 and 0 < relative < 1
        assert perplexity > 1 and tokens > 10
    assert "inference.run_model" in stack.worker.log.read_text(errors="replace")
    # a Celery worker answers, so the admin shows a run's queue (common/workers.py; the embedded
    # mode, with no workers, never does: tests/studyserver/test_admin_words.py)
    listening = script(stack.env, "from common import workers\nprint(workers.queues_shown(), "
                                  "','.join(workers.listening(timeout=5)))")
    assert re.fullmatch(r"True \S+@\S+", listening), listening  # True, and the worker's name
    # the worker's numbers equal an independent float64 forward pass of the same model (no product code)
    rows = stack.db.query(
        "SELECT i.prompt, s.logprobs, s.token_ids, s.prompt_tokens FROM inference_modelscore s "
        "JOIN experiments_item i ON i.id = s.item_id WHERE s.run_id = %s ORDER BY s.id LIMIT 3", (run_id,))
    for prompt, logprobs, token_ids, tokens in rows:
        reference, _, count = direct_scores(stack.model_dir, prompt, token_ids)
        assert tokens == count
        assert logprobs == pytest.approx(reference, abs=1e-5)


def test_a_worker_killed_mid_run_is_replaced_and_the_run_completes_keeping_finished_chunks(stack):
    run_id = stack.launch_run(batch_size=1, item_limit=240)
    total = stack.run_row(run_id)["items_total"]
    assert total == 240
    # wait until some chunks are committed, then crash the worker (kill -9, no chance to clean up)
    row = stack.wait_run(run_id, timeout=600, until=lambda r: r["items_done"] >= 20 or r["status"] == "done")
    stack.worker.kill()
    time.sleep(1)  # let PostgreSQL notice the dead connection (an open chunk transaction rolls back)
    before = stack.scores(run_id)
    assert row["status"] == "running" and 20 <= len(before) < total, "the run finished before the kill"
    assert stack.run_row(run_id)["status"] == "running"
    time.sleep(1)
    assert stack.scores(run_id) == before  # nothing moves while no worker runs
    # a new worker gets the unacknowledged task back from Redis (visibility timeout) and resumes
    stack.start_worker()
    row = stack.wait_run(run_id, timeout=600)
    assert row["status"] == "done", row
    after = stack.scores(run_id)
    items = [item for _, item, _ in after]
    assert len(after) == total == row["items_done"] and len(set(items)) == total
    # the chunks finished before the kill kept their rows: same ids, same items, same timestamps
    assert after[: len(before)] == before
    assert min(created for _, _, created in after[len(before):]) > max(created for _, _, created in before)
