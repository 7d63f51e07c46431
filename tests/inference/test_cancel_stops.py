"""A cancel stops a run's scorer within seconds (issue 43 item 3), tried against real listeners on
loopback (tests/inference/hostile_servers.py's stand-in, each behind a counting proxy that records what
it was sent and when, and which connections the client closed):

* a server or chat scorer asked to stop (its `stop()` raises: the run loop's checkpoint) while its
  requests hang on a slow server sends nothing more, closes the requests in flight and raises, within
  seconds — scoring and generation alike;
* a server scorer's items finish one by one in their order, so a run's progress moves with each (the
  first long before the chunk's last request), not all together at the chunk's end;
* the run loop passes its checkpoint to the scorer: a run cancelled while a chunk is scored ends
  cancelled at the scorer's next step, nothing of that chunk stored, its progress what is stored.

The same against the real llama.cpp server, a run fanned out over two servers and cancelled from
another process: tests/inference/test_server_cancel.py."""
from __future__ import annotations

import time

import pytest

from inference import services
from inference.models import Backend, LanguageModel, ModelRun, ModelScore, RunStatus
from inference.scorers.base import AnswerSet, GenerationRequest, Request, SamplingSpec
from inference.scorers.chat import ChatScorer
from inference.scorers.server import ServerScorer
from tests.factories import ItemFactory, StudyFactory
from tests.inference.counting_proxy import CountingProxy
from tests.inference.hostile_servers import MODEL, Lies, Stand_in
from tests.integration.servers import wait_for

PROMPT = "Leo is sewing.\nQuestion: Is Leo sewing?\nAnswer:"
STOP_AFTER = 1.0  # seconds the requests are left to hang before the scorer is told to stop
STOPPED_WITHIN = 20.0  # generous: the scorer reads stop() every second; a busy machine is slow, not broken
HANG = 120.0  # the slow server's seconds per completion: far past anything the test waits for


class Stopped(Exception):
    """What the run loop's checkpoint raises (jobs.JobStopped) stands for here."""


def _stop_after(seconds: float):
    started = time.monotonic()

    def stop() -> None:
        if time.monotonic() - started >= seconds:
            raise Stopped

    return stop


def _scorer(kind: str, url: str):
    if kind.startswith("chat"):
        return ChatScorer(url=url, model=MODEL, answers=AnswerSet.yes_no("Yes", "No", forms="answers"), concurrency=3,
                          timeout=HANG * 2)
    return ServerScorer(urls=[url], answers=AnswerSet.yes_no(forms="answers"), concurrency=3, timeout=HANG * 2)


def _ask(kind: str, scorer, stop):
    if kind.endswith("generate"):
        asked = [GenerationRequest(key=n, turns=(("user", PROMPT),), sampling=SamplingSpec()) for n in range(8)]
        return scorer.generate(asked, on_done=lambda key: None, stop=stop)
    return scorer.score([Request(key=n, text=PROMPT) for n in range(8)], on_done=lambda key: None, stop=stop)


@pytest.mark.parametrize("kind", ["server score", "server generate", "chat score", "chat generate"])
def test_a_stopped_scorer_closes_its_requests_in_flight_and_sends_nothing_more(kind):
    with Stand_in(Lies(delay=HANG)) as server, CountingProxy(server.server.server_port) as proxy:
        scorer = _scorer(kind, proxy.url)
        started = time.monotonic()
        with pytest.raises(Stopped):
            _ask(kind, scorer, _stop_after(STOP_AFTER))
        took = time.monotonic() - started
        asked = [a for a in proxy.arrivals if a.path.endswith("completions")]
        # requests hanging in the slots (a server scorer's first: its logit_bias check, which the others
        # wait for); the stop came well before any could be answered
        assert 0 < len(asked) <= 3, proxy.arrivals
        assert took < STOPPED_WITHIN, f"the scorer stopped {took:.1f} s after it started"
        # the requests in flight were closed by the client (the server never answered them) …
        wait_for(lambda: proxy.open == 0, timeout=STOPPED_WITHIN, what="the scorer's connections closed")
        # … and nothing more is sent
        sent = len(proxy.arrivals)
        time.sleep(2 * STOP_AFTER)
        assert len(proxy.arrivals) == sent and proxy.opened == proxy.closed
    print(f"{kind}: stopped {took:.1f} s after the start ({STOP_AFTER:g} s of hanging requests), "
          f"{len(asked)} requests in flight closed")


def test_a_server_scorers_items_finish_one_by_one_in_their_order():
    """Before issue 43 every item of a chunk was tokenized before any was scored, and an item's later
    steps queued behind every other item's requests: a chunk's items finished late and together, and a
    run's progress stood still ("0 / 1442 items" for minutes while completions were served)."""
    with Stand_in(Lies(delay=0.01)) as server, CountingProxy(server.server.server_port) as proxy:
        scorer = ServerScorer(urls=[proxy.url], answers=AnswerSet.yes_no(), concurrency=2)
        seen: list[tuple[int, int]] = []  # (key, requests the server was sent so far) as each item is reported
        scorer.score([Request(key=n, text=f"Item {n}. {PROMPT}") for n in range(32)],
                     on_done=lambda key: seen.append((key, len(proxy.arrivals))))
        total = len(proxy.arrivals)
    assert sorted(key for key, _ in seen) == list(range(32))
    first_at = seen[0][1]
    assert first_at < total / 4, f"the first item finished after {first_at} of the chunk's {total} requests"
    assert max(key for key, _ in seen[:4]) < 8  # in about their order (a few under way at once)
    print(f"the first item finished after {first_at} of the chunk's {total} requests; order {[k for k, _ in seen]}")


@pytest.mark.django_db
def test_a_run_cancelled_while_its_chunk_is_scored_stops_at_the_scorers_next_step(monkeypatch):
    monkeypatch.setattr(services, "STOP_EVERY", 0.0)  # every step reads the run's status
    study = StudyFactory()
    for n in range(12):
        ItemFactory(study=study, prompt=f"Item {n}. {PROMPT}")
    fake = LanguageModel.objects.create(name="fake", source="fake", backend=Backend.FAKE, device="cpu")
    run = services.model_run_create(study=study, language_model=fake, batch_size=2)  # chunks of 4
    scorer = services._build_scorer(run)
    inner, chunks = scorer.score, []

    def score(requests, **options):  # the second chunk: cancelled (as the admin would) while it is scored
        chunks.append([r.key for r in requests])
        if len(chunks) == 2:
            services.model_run_cancel(run=ModelRun.objects.get(pk=run.pk))
        return inner(requests, **options)

    scorer.score = score
    run = services.model_run_execute(run_id=run.pk, scorer=scorer)
    assert run.status == RunStatus.CANCELLED and len(chunks) == 2
    stored = set(ModelScore.objects.filter(run=run).values_list("item_id", flat=True))
    assert stored == set(chunks[0])  # the first chunk kept, nothing of the second
    assert run.items_done == len(stored) == 4
