"""A configuration listing several inference servers fans a run out (ModelRun.parts): one task
"inference.run_model_shard" per server, each scoring its share of the items on its own server, when
the run is created and again when it is retried. Against two real llama.cpp servers
(llama-cpp-python's, SmolLM2's float32 GGUF; inference/llama_serve.py): what each server answered is
read from its own access log, not from our bookkeeping.

The items are short yes/no prompts made here, not the demo's: the cost of a server test is the
server's echoed log-probabilities (llama-cpp-python sorts the vocabulary at every echoed position),
so a short prompt keeps the module to seconds per item on a busy machine."""
from __future__ import annotations

import pytest

from inference import llama_serve, scorers, services
from inference.models import Backend, ModelRun, ModelScore, RunStatus
from common import dispatch
from tests.factories import ItemFactory, StudyFactory
from tests.inference.conftest import start_llama

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("patient_checks")]  # tests/inference/conftest.py

SHARD_TASK = "inference.run_model_shard"
# The same weights behind both servers, yet not the same bits: llama.cpp computes in float32 and
# evaluates only what a prompt does not share with the previous request's (its KV cache), so the
# same prompt after another request goes through other batch sizes: measured 1.9e-6 and 3.3e-6 (the
# largest over the items' log p, relative perplexity and p(yes); a log p is about −3: a few float32 steps).
SAME = 1e-5
SMALL_CONTEXT = 512  # these prompts are short; llama-cpp-python's first echo touches n_ctx × vocabulary scores
SHORT = [  # (prompt, gold answer): six items, a few tokens each
    ("Leo is sewing a button.\nQuestion: Is Leo sewing a button?\nAnswer:", "yes"),
    ("Mia is reading a book.\nQuestion: Is Mia reading?\nAnswer:", "yes"),
    ("Ava is baking bread.\nQuestion: Is Ava asleep?\nAnswer:", "no"),
    ("It's possible that Gael is singing.\nQuestion: Must Gael sing?\nAnswer:", "no"),
    ("Every cat is an animal. Tom is a cat.\nQuestion: Is Tom an animal?\nAnswer:", "yes"),
    ("No fish can fly. Nemo is a fish.\nQuestion: Can Nemo fly?\nAnswer:", "no"),
]
ALL, HALF = len(SHORT), len(SHORT) // 2  # each server's share: every other item


@pytest.fixture(scope="module")
def second_llama(tmp_path_factory):
    """A second llama.cpp server with the same weights as the session's (llama_served)."""
    served = start_llama(tmp_path_factory, n_ctx=SMALL_CONTEXT)
    yield served
    served.stop()  # the process running now (a test may have restarted it)


@pytest.fixture
def short_study():
    study = StudyFactory()
    for prompt, gold in SHORT:
        ItemFactory(study=study, prompt=prompt, gold_answer=gold)
    return study


@pytest.fixture
def eager(settings, monkeypatch):
    """Tasks run in this process when the transaction commits (DUET_TASK_MODE "eager"); returns what
    was sent through the real dispatch.send, and the run's status and count after each shard's task."""
    settings.DUET_TASK_MODE = "eager"
    seen = {"sent": [], "after": []}
    send = dispatch.send

    def recording(task_name, *, args, queue, **options):
        seen["sent"].append((task_name, list(args), queue))
        send(task_name, args=args, queue=queue, **options)

    task = dispatch.registered(SHARD_TASK)
    apply = task.apply

    def applied(args):
        result = apply(args=args)
        run = ModelRun.objects.get(pk=args[0])
        seen["after"].append((args[1], run.status, run.items_done))
        return result

    monkeypatch.setattr(dispatch, "send", recording)
    monkeypatch.setattr(task, "apply", applied)
    return seen


def _two_servers(a: llama_serve.Served, b: llama_serve.Served):
    return services.language_model_create(
        name="SmolLM2 on two llama.cpp servers", source=services.EMBEDDED_SOURCE, backend=Backend.SERVER,
        server_urls=f"{a.url}\n{b.url}", start_token=llama_serve.START_TOKEN, concurrency=2)  # device: auto


def _answered(served: llama_serve.Served, since: int, path: str | None = None) -> list:
    return [(m, p, status) for m, p, status in served.answered()[since:] if path is None or p == path]


def test_a_run_over_two_servers_scores_each_item_once_each_server_its_share(
        llama_served, second_llama, short_study, eager, django_capture_on_commit_callbacks):
    servers = (llama_served, second_llama)
    lm = _two_servers(*servers)
    before = [len(s.answered()) for s in servers]
    with django_capture_on_commit_callbacks(execute=True):
        run = services.model_run_launch(study=short_study, language_model=lm, batch_size=2)
    run.refresh_from_db()
    # one task per server, each told how many shares there are; on the CPU queue (HTTP needs no GPU)
    assert eager["sent"] == [(SHARD_TASK, [run.pk, 0, 2], "cpu"), (SHARD_TASK, [run.pk, 1, 2], "cpu")]
    # the shard finishing first leaves the run running, counting what both stored; the last makes it done
    assert eager["after"] == [(0, RunStatus.RUNNING, HALF), (1, RunStatus.DONE, ALL)], run.error
    assert run.status == RunStatus.DONE and run.items_done == run.items_total == ALL
    scores = list(ModelScore.objects.filter(run=run))
    assert sorted(s.item_id for s in scores) == sorted(short_study.items.values_list("id", flat=True))
    # each server answered its share, as its own log says, and exactly the requests recorded for it
    assert [entry["url"] for entry in run.versions["servers"]] == [s.url for s in servers]
    for k, served in enumerate(servers):
        answered = _answered(served, before[k])
        completions = [a for a in answered if a[1] == "/v1/completions"]
        # per item at least its echo and a forced one-token completion
        assert len(completions) >= HALF * 2 and all(status == 200 for *_, status in completions)
        assert sum(status == 200 for *_, status in answered) == run.versions["usage_by_server"][str(k)]["requests"]
    assert run.versions["usage"]["requests"] == sum(u["requests"] for u in run.versions["usage_by_server"].values())
    assert run.versions["one_token_variants"].startswith("logit_bias")  # what scoring found, not "not checked yet"

    # the same items on one server (the first): the same numbers; the second server is not asked
    one = services.model_run_create(study=short_study, language_model=lm, batch_size=2)
    quiet = len(second_llama.answered())
    assert services.model_run_execute(run_id=one.pk, scorer=services._build_scorer(one, shard=0)).status == "done"
    assert len(second_llama.answered()) == quiet
    alone = {s.item_id: s for s in ModelScore.objects.filter(run=one)}
    assert len(alone) == ALL
    apart = []
    for score in scores:
        other = alone[score.item_id]
        assert score.token_ids == other.token_ids and score.decision == other.decision
        assert score.top_token_id == other.top_token_id
        apart += [abs(value - other.logprobs[text]) for text, value in score.logprobs.items()]
        apart += [abs(score.perplexity - other.perplexity) / score.perplexity, abs(score.p_yes - other.p_yes)]
    print(f"two servers vs one: the largest difference {max(apart):.2e}")
    assert max(apart) <= SAME


def test_a_run_failed_half_way_is_retried_as_both_shards_and_ends_without_doubling_a_score(
        llama_served, second_llama, short_study, eager, django_capture_on_commit_callbacks, monkeypatch):
    lm = _two_servers(llama_served, second_llama)
    original = scorers.REGISTRY["server"]

    def retrying_once(config, **options):  # the real scorer, one retry instead of five (seconds, not half a minute)
        return original(config, **{**options, "server": {**options["server"], "retries": 1}})

    monkeypatch.setitem(scorers.REGISTRY.entries, "server", retrying_once)
    second_llama.stop()
    with django_capture_on_commit_callbacks(execute=True):
        run = services.model_run_launch(study=short_study, language_model=lm, batch_size=2)
    run.refresh_from_db()
    assert run.status == RunStatus.FAILED and second_llama.url in run.error and "/v1/models" in run.error
    assert run.items_done == HALF == ModelScore.objects.filter(run=run).count()  # the first server's share
    first = dict(ModelScore.objects.filter(run=run).values_list("item_id", "id"))

    # the server is back where the configuration points; the retry is sent as both shards again
    second_llama.process = llama_serve.start(llama_serve.f32_gguf(), log=second_llama.log,
                                             port=second_llama.port, n_ctx=SMALL_CONTEXT).process
    sent_before, a_before, b_before = len(eager["sent"]), len(llama_served.answered()), len(second_llama.answered())
    with django_capture_on_commit_callbacks(execute=True):
        services.model_run_retry(run=run)
    run.refresh_from_db()
    assert eager["sent"][sent_before:] == [(SHARD_TASK, [run.pk, 0, 2], "cpu"), (SHARD_TASK, [run.pk, 1, 2], "cpu")]
    assert eager["after"][-2:] == [(0, RunStatus.RUNNING, HALF), (1, RunStatus.DONE, ALL)], run.error
    assert run.status == RunStatus.DONE and run.items_done == ALL == ModelScore.objects.filter(run=run).count()
    assert dict(ModelScore.objects.filter(run=run, item_id__in=first).values_list("item_id", "id")) == first
    assert not _answered(llama_served, a_before, "/v1/completions")  # its share was stored: nothing scored again
    assert len(_answered(second_llama, b_before, "/v1/completions")) >= HALF * 2
    assert [entry["url"] for entry in run.versions["servers"]] == [llama_served.url, second_llama.url]
    assert [u.get("server") for u in run.versions["usage_earlier"]] == [0]  # the first attempt's requests, kept


def test_a_configurations_new_servers_are_checked_and_tasks_sent_before_the_change_keep_their_servers(
        llama_served, second_llama, short_study, eager, django_capture_on_commit_callbacks):
    """Issue 45: a run executes from the configuration it was created with. New servers on a
    configuration with runs make a new version; tasks queued before the change still score on the
    servers their run was created with, each its own share."""
    from django.core.exceptions import ValidationError

    lm = _two_servers(llama_served, second_llama)
    both = [llama_served.url, second_llama.url]
    closed = f"http://127.0.0.1:{llama_serve.free_port()}"
    with pytest.raises(ValidationError, match="cannot be reached"):
        services.language_model_update(model=lm, server_urls=f"{llama_served.url}\n{closed}")
    lm.refresh_from_db()
    assert lm.urls() == both  # nothing changed
    b_before = len(second_llama.answered())
    with django_capture_on_commit_callbacks(execute=False) as waiting:
        run = services.model_run_launch(study=short_study, language_model=lm, batch_size=2, item_limit=3)
    newer = services.language_model_update(model=lm, server_urls=llama_served.url)  # it has a run: a new version
    lm.refresh_from_db()
    assert newer.pk != lm.pk and newer.replaces == lm and newer.urls() == [llama_served.url] and lm.urls() == both
    for callback in waiting:
        callback()
    run.refresh_from_db()
    assert [args for _, args, _ in eager["sent"]] == [[run.pk, 0, 2], [run.pk, 1, 2]]
    assert run.status == RunStatus.DONE and run.items_done == 3 == ModelScore.objects.filter(run=run).count(), run.error
    assert len(_answered(second_llama, b_before, "/v1/completions")) >= 2  # its share: the second item
    assert [entry["url"] for entry in run.versions["servers"]] == both
