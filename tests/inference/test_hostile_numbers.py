"""Numbers and completeness (issue 34 item 3, item 7's progress; issue 35's duplicate top-k texts):
runs against hostile stand-in servers (tests/inference/hostile_servers.py: real HTTP servers on
loopback) that answer NaN, inf, +50 or lists of the wrong length fail naming the item and the value,
with nothing stored; a run whose rows the database drops without an error is not done; a database's
refusal reaches the researcher in words; a 10 MB /props is not kept whole; a server run's progress
moves per item; a chat API's two top-k entries of the same text are summed."""
from __future__ import annotations

import json
import math
import re

import pytest
from django.db import connection

from inference import services
from inference.models import Backend, LanguageModel, ModelRun, ModelScore, PromptFormat, RunStatus
from inference.scorers import AnswerSet, Request, summarise
from inference.scorers.chat import ChatScorer
from common import jobs
from tests.factories import ItemFactory, StudyFactory
from tests.inference.hostile_servers import Lies, Stand_in

NAN, INF = float("nan"), float("inf")


def configuration(url: str, backend: str = Backend.SERVER) -> LanguageModel:
    """A server (or chat) configuration of the stand-in, saved without the save-time check (that check
    is inference/checks.py's, tested on its own): what a run reads."""
    chat = backend == Backend.CHAT
    lm = LanguageModel(name=f"stand-in {backend} {url}", source="toy", backend=backend, server_urls=url,
                       server_model="toy-model" if chat else "", concurrency=2,
                       prompt_format=PromptFormat.CHAT if chat else PromptFormat.RAW,
                       answer_yes="Yes" if chat else " Yes", answer_no="No" if chat else " No")
    lm.full_clean()
    lm.save()
    return lm


def items(n: int):
    study = StudyFactory()
    for _ in range(n):
        ItemFactory(study=study, prompt="Leo is sewing.\nQuestion: Is Leo sewing?\nAnswer:")
    return study


def scored(lm: LanguageModel, study, **options) -> ModelRun:
    run = services.model_run_create(study=study, language_model=lm, batch_size=16, **options)
    return services.model_run_execute(run_id=run.pk)


BAD = {  # what the stand-in lies about → what the run's error says
    "nan": (Lies(answer={" Yes": NAN}), "log p(' Yes') = nan is not a finite number"),
    "inf": (Lies(answer={" Yes": INF}), "log p(' Yes') = +inf is not a finite number"),
    "+50": (Lies(answer={" Yes": 50.0}), "log p(' Yes') = +50.0 is not a log-probability (must be ≤ 0)"),
    "prompt token +50": (Lies(prompt_token=50.0), "log p(prompt token 2) = +50.0 is not a log-probability"),
    "top_logprobs too short": (Lies(short_tops=True), "could not be read (IndexError"),
    "token_logprobs too short": (Lies(short_echo=True), "no log-probability"),
}


@pytest.mark.django_db
@pytest.mark.parametrize("lie", list(BAD))
def test_a_server_answering_a_bad_number_fails_the_run_naming_the_item_and_the_value(lie):
    lies, said = BAD[lie]
    study = items(3)
    with Stand_in(lies) as server:
        run = scored(configuration(server.url), study)
    assert run.status == RunStatus.FAILED, (run.status, run.error)
    assert said in run.error, run.error
    named = re.match(r"item (\S+): ", run.error)
    assert named and named.group(1) in set(study.items.values_list("code", flat=True)), run.error
    assert ModelScore.objects.filter(run=run).count() == 0 and run.items_done == 0


@pytest.mark.django_db
@pytest.mark.parametrize("value, said", [(NAN, "log p('Yes') = nan is not a finite number"),
                                         (50.0, "log p('Yes') = +50.0 is not a log-probability")])
def test_a_chat_api_answering_a_bad_number_fails_the_run_naming_the_item_and_the_value(value, said):
    study = items(2)
    with Stand_in(Lies(answer={"Yes": value})) as server:
        run = scored(configuration(server.url, Backend.CHAT), study)
    assert run.status == RunStatus.FAILED and said in run.error and run.error.startswith("item "), run.error
    assert ModelScore.objects.filter(run=run).count() == 0


@pytest.mark.django_db
def test_an_honest_stand_in_is_scored_and_its_10_mb_props_is_not_kept_whole():
    """The control of the tests above (the same stand-in, honest numbers: done, every item stored), with
    a /props of 10 MB: the run's record keeps chosen keys, capped."""
    props = {"model_path": "/models/" + "m" * 1000, "total_slots": 1, "junk": "x" * 10_000_000,
             "chat_template": "t" * 100_000, "default_generation_settings": {"n_ctx": 512, "huge": ["y" * 1000] * 1000}}
    study = items(3)
    with Stand_in(Lies(props=props)) as server:
        run = scored(configuration(server.url), study)
    assert run.status == RunStatus.DONE and run.error == "", run.error
    scores = list(ModelScore.objects.filter(run=run))
    assert len(scores) == 3 == run.items_done
    assert all(s.p_yes == pytest.approx(math.exp(-0.7)) and s.p_no == pytest.approx(math.exp(-1.2)) for s in scores)
    record = json.dumps(run.versions)
    print(f"the run's record with a 10 MB /props: {len(record)} bytes")
    assert len(record) < 40_000, len(record)
    assert "xxxxxxxxxx" not in record and "tttttttttt" not in record
    settings = run.versions["servers"][0].get("settings")
    if settings is not None:  # (a client with a byte cap may not read the 10 MB at all: nothing of it is kept)
        assert settings["total_slots"] == 1 and len(settings["model_path"]) < 240
        assert len(settings["default_generation_settings"]["huge"]) <= 21


@pytest.mark.django_db(transaction=True)
def test_a_server_runs_progress_moves_per_item_within_a_chunk():
    """Six items in one chunk of 32: the stand-in reads the run's progress from the database as each
    completion is asked for; it moves while the chunk is scored, not only when the chunk is stored."""
    seen: list[int] = []
    run_id: list[int] = []

    def look(prompt):
        try:
            if run_id:
                seen.append(ModelRun.objects.values_list("items_done", flat=True).get(pk=run_id[0]))
        finally:
            connection.close()  # the stand-in's thread's own connection

    study = items(6)
    with Stand_in(Lies(on_completion=look)) as server:
        lm = configuration(server.url)
        LanguageModel.objects.filter(pk=lm.pk).update(concurrency=1)
        lm.refresh_from_db()
        run = services.model_run_create(study=study, language_model=lm, batch_size=16)
        run_id.append(run.pk)
        run = services.model_run_execute(run_id=run.pk)
    assert run.status == RunStatus.DONE and run.items_done == 6, run.error
    assert seen and seen == sorted(seen), seen
    assert len(set(seen)) >= 3 and max(seen) >= 4, seen  # on main: 0 until the chunk was stored


def _drop_inserts_of(item_id: int) -> None:
    """A trigger that makes the database drop a score of `item_id` without an error (what INSERT OR
    IGNORE does to a row SQLite refuses)."""
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("CREATE FUNCTION duet_test_drop() RETURNS trigger AS $$ BEGIN IF NEW.item_id = "
                           f"{int(item_id)} THEN RETURN NULL; END IF; RETURN NEW; END $$ LANGUAGE plpgsql")
            cursor.execute("CREATE TRIGGER duet_test_drop BEFORE INSERT ON inference_modelscore FOR EACH ROW "
                           "EXECUTE FUNCTION duet_test_drop()")
        else:
            cursor.execute("CREATE TRIGGER duet_test_drop BEFORE INSERT ON inference_modelscore FOR EACH ROW "
                           f"WHEN NEW.item_id = {int(item_id)} BEGIN SELECT RAISE(IGNORE); END")


def _refuse_inserts(message: str) -> None:
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("CREATE FUNCTION duet_test_refuse() RETURNS trigger AS $$ BEGIN RAISE EXCEPTION "
                           f"'{message}'; END $$ LANGUAGE plpgsql")
            cursor.execute("CREATE TRIGGER duet_test_refuse BEFORE INSERT ON inference_modelscore FOR EACH ROW "
                           "EXECUTE FUNCTION duet_test_refuse()")
        else:
            cursor.execute("CREATE TRIGGER duet_test_refuse BEFORE INSERT ON inference_modelscore FOR EACH ROW "
                           f"BEGIN SELECT RAISE(ABORT, '{message}'); END")


def fake_configuration() -> LanguageModel:
    return LanguageModel.objects.create(name="fake", source="fake", backend=Backend.FAKE)


@pytest.mark.django_db
def test_a_run_whose_row_the_database_drops_is_not_done_and_says_which():
    study = items(3)
    lost = study.items.order_by("id")[1]
    _drop_inserts_of(lost.pk)
    run = scored(fake_configuration(), study)
    assert run.status == RunStatus.FAILED, (run.status, run.error)
    assert f"item {lost.code}" in run.error and "not in the database afterwards" in run.error, run.error
    assert ModelScore.objects.filter(run=run).count() == 0  # the chunk's transaction: nothing half-stored
    with pytest.raises(jobs.JobIncomplete, match=rf"3 of the 3 items it owns are not stored \(item "):
        jobs.job_finish(run)


@pytest.mark.django_db
def test_a_shard_never_makes_the_run_done_while_another_shards_items_are_missing():
    study = items(4)
    lm = fake_configuration()
    run = services.model_run_create(study=study, language_model=lm, batch_size=1)
    run = services.model_run_execute(run_id=run.pk, shard=0, shards=2)
    assert run.status == RunStatus.RUNNING and ModelScore.objects.filter(run=run).count() == 2
    with pytest.raises(jobs.JobIncomplete, match="2 of the 4 items it owns are not stored"):
        jobs.job_finish(run)
    theirs = [u for u in services.strategies.for_kind(run.kind).run_units(run)][1::2]
    _drop_inserts_of(theirs[1].pk)  # the other shard's second item
    run = services.model_run_execute(run_id=run.pk, shard=1, shards=2)
    assert run.status == RunStatus.FAILED and f"item {theirs[1].code}" in run.error, run.error
    assert ModelScore.objects.filter(run=run).count() == 2 == run.items_done  # its chunk (both its items): none


@pytest.mark.django_db
def test_a_database_refusal_reaches_the_researcher_in_words():
    study = items(2)
    _refuse_inserts("no scores today")
    run = scored(fake_configuration(), study)
    assert run.status == RunStatus.FAILED
    assert run.error.startswith("The database ") and "no scores today" in run.error, run.error
    assert "INSERT" not in run.error and "CONTEXT" not in run.error and "\n" not in run.error, run.error


@pytest.mark.db_independent
def test_two_top_k_entries_of_the_same_text_are_summed():
    """A chat API listing 'Yes' twice (two tokens that decode alike) with p 0.3 and 0.2: p(Yes) = 0.5
    (the larger alone, 0.3, before); p(No) 0.1; outside the top k 1 − 0.65."""
    top = [("Yes", math.log(0.3)), ("Yes", math.log(0.2)), ("No", math.log(0.1)), ("Maybe", math.log(0.05))]
    with Stand_in(Lies(chat_top=top)) as server:
        scorer = ChatScorer(url=server.url, model="toy-model", answers=AnswerSet.yes_no("Yes", "No", forms="answers"))
        (result,) = scorer.score([Request(key=1, text="Is Leo sewing?\nAnswer:")])
    summary = summarise(result, "yes")
    assert summary.p_yes == pytest.approx(0.5, abs=1e-12) and summary.p_no == pytest.approx(0.1, abs=1e-12)
    assert result.outside_top_k == pytest.approx(0.35, abs=1e-12)
    assert ChatScorer.merged([("a", -1e4), ("a", -1e4)])["a"] == pytest.approx(-1e4 + math.log(2))  # no underflow


@pytest.mark.django_db
def test_storing_rows_already_stored_keeps_them_and_doubles_none():
    """What a worker resuming a run (or a second worker on it) writes for items already stored: the
    stored rows are kept as they are, nothing is doubled, only the others are written."""
    study = items(3)
    run = scored(fake_configuration(), study)
    assert run.status == RunStatus.DONE
    kept = dict(ModelScore.objects.filter(run=run).values_list("item_id", "id"))
    strategy = services.strategies.for_kind(run.kind)
    units = strategy.run_units(run)
    ModelScore.objects.filter(run=run, item_id=units[2].pk).delete()
    scorer = services._build_scorer(run)
    rows = strategy.rows(run, units, strategy.compute(scorer, run, units))
    written = strategy.store(run, rows)
    assert [row.item_id for row in written] == [units[2].pk]
    now = dict(ModelScore.objects.filter(run=run).values_list("item_id", "id"))
    assert len(now) == 3 and all(now[item] == pk for item, pk in kept.items() if item != units[2].pk)
