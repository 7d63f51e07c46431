"""PostgreSQL: a regular answer saved in one statement and one round trip (issue 8's load target).

A participant in progress answering the next trial is the request a study's server handles most
often. Through the ORM (trials.trial_record, the locked path and the truth) such a save costs a
handful of queries; here it is one statement:

    WITH h AS MATERIALIZED (<the participant by slug and token, its arm, the submitted item, whether
                            the study has four-option items> FOR NO KEY UPDATE OF p),
         ins AS (INSERT INTO trial (…) SELECT … FROM h WHERE <every check of a regular answer>
                 ON CONFLICT DO NOTHING RETURNING …),
         upd AS (UPDATE participant SET last_seen_at, attention_failures (+1 for a wrong answer to a
                 catch item), status/finished_at (ended when the arm's attention rule says so)
                 WHERE <a failure> OR <last_seen_at older than SEEN_REFRESH> RETURNING …)
    SELECT … FROM h LEFT JOIN ins ON true LEFT JOIN upd ON true

It only ever saves what the locked path would save identically, and says "not written" for
everything else (a re-sent or clashing answer, an ended participation, a step out of order, a time
limit passed, a four-option study, a timed-out trial, an answer by click or tap — trials.trial_submit sends
only key presses here, the one channel every study accepts), which the locked path then decides and
explains. Every rule it applies is generated from the rule's own declaration, not restated:

- the pages before the trials: flow.trials_open_sql (from flow.STEPS);
- the keys: the answer each key means under each key mapping (trials.KEY_ANSWERS, sent as JSON);
- the response-time ceiling: payload.rt_ceiling_ms's constants;
- the attention rule: AttentionRule.end_limit_sql / ends_sql;
- the trial's columns: every concrete Trial field, typed by the field itself.

tests/experiments/participation/test_save_rulebook.py drives this statement and the locked path with
the same random sequences (answers, re-sends, catch items, endings, erasures) and compares every
row.

The row lock makes an ending (finish, expiry, erasure: they lock the row for update) either wait for
this answer or win, and then the WHERE sees the ended status and nothing is inserted; two saves of
one participant run one after the other; unlike FOR UPDATE it does not hold up the foreign-key
checks of trials being inserted (KEY SHARE). The participant's row is updated only for a failed
attention check or when the last-seen time is SEEN_REFRESH old, so an answer does not write a new
version of the row (plan included) every time.

Prepared statements: with DUET_PREPARED_STATEMENTS (the default) the PostgreSQL connection is opened
with psycopg's prepare_threshold 0 and plan_cache_mode force_generic_plan (common/env.py). Only
server-binding cursors prepare, and Django's own cursors bind on the client, so this statement is
the only one prepared, and planned once per connection: planning its joins cost about 0.5 ms of the
server's CPU per save, more than executing it.
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass
from datetime import timedelta

from django.db import DEFAULT_DB_ALIAS, connections

from ..design_registry import CATCH_ITEMS
from ..models import HumanArm, Item, ItemKind, Participant, ParticipantStatus, Study, Trial
from . import flow
from ..models.attention import AttentionRule
from .payload import MAX_RT_MS, TIME_LIMIT_GRACE_MS

ATTENTION_DESIGN = CATCH_ITEMS  # Item.design of the catch items
MAX_ID = 2**63 - 1  # a bigint primary key
MAX_INDEX = 2**31 - 1  # the statement compares the plan's entry at this index (an integer)
# A save refreshes last_seen_at when it is at least this old: the heartbeat's period. Abandonment
# (participants_expire) is judged in minutes, so a few seconds of staleness never matter.
SEEN_REFRESH = timedelta(seconds=30)

# The trial's columns the statement decides from the read (the others come from the browser).
_DECIDED = ("participant", "item", "answer", "correct", "is_attention_check")
# The participant's columns the receipt carries (what the trial endpoint's answer reads).
# (In the model's field order, as Model.from_db takes a subset of fields.)
_PARTICIPANT_BACK = tuple(f.attname for f in Participant._meta.concrete_fields if f.attname in {
    "id", "study_id", "status", "is_preview", "attention_failures", "finished_at", "last_seen_at"})
_UPDATED = ("status", "attention_failures", "finished_at", "last_seen_at")  # upd's RETURNING, in order


@dataclass(frozen=True, slots=True)
class Written:
    """An answer the statement saved: the trial and its participant as they now stand (model
    instances built with Model.from_db; the participant's fields not listed in _PARTICIPANT_BACK
    load from the database if something asks for them)."""

    trial: Trial
    participant: Participant


NOT_WRITTEN = object()  # the session exists, but this answer is for the locked path to decide


def _literal(value) -> str:
    """One of our own constants (a status, a kind, a design name) as an SQL string literal: written
    into the statement rather than sent with every execution, and visible to the planner."""
    return "'" + str(value).replace("'", "''") + "'"


_statement: dict[str, object] = {}


def _build(db) -> dict:
    """The statement and its parameter fields, built once from the models' metadata."""
    if _statement:
        return _statement
    quote = db.ops.quote_name
    column = lambda model, name: quote(model._meta.get_field(name).column)  # noqa: E731
    table = lambda model: quote(model._meta.db_table)  # noqa: E731
    P, A, I, S, T = Participant, HumanArm, Item, Study, Trial
    p = lambda name: "p." + column(P, name)  # noqa: E731
    a = lambda name: "a." + column(A, name)  # noqa: E731
    read = {  # the read's columns, by the name the rest of the statement uses
        **{f"p_{name}": p(name.removesuffix("_id")) for name in _PARTICIPANT_BACK},
        "key_mapping": p("key_mapping"), "plan": p("plan"),
        "trials_open": flow.trials_open_sql(p, a),
        "arm_id": a("id"), "time_limit_ms": a("time_limit_ms"),
        "end_limit": AttentionRule.end_limit_sql(a("attention_fail_after"), a("attention_end_session")),
        "i_id": "i." + column(I, "id"), "i_kind": "i." + column(I, "kind"),
        "i_gold": "i." + column(I, "gold_answer"), "i_design": "i." + column(I, "design"),
        "mc": (f"EXISTS (SELECT 1 FROM {table(I)} m WHERE m.{column(I, 'study')} = {p('study')} "
               f"AND m.{column(I, 'kind')} = {_literal(ItemKind.MULTIPLE_CHOICE)} "
               f"AND m.{column(I, 'design')} <> {_literal(ATTENTION_DESIGN)})"),
    }
    fields = [f for f in T._meta.concrete_fields if not f.primary_key]
    from_browser = [f for f in fields if f.name not in _DECIDED]
    decided = {"participant": "h.p_id", "item": "h.i_id", "answer": "x.answer",
               "correct": "COALESCE(x.answer = h.i_gold, false)",
               "is_attention_check": f"h.i_design = {_literal(ATTENTION_DESIGN)}"}
    # a parameter bound by the server in a SELECT list has no column to take its type from: cast it
    select = ", ".join(decided.get(f.name, f"CAST(%s AS {f.cast_db_type(db)})") for f in fields)
    returned = ("id", "answer", "correct", "is_attention_check")
    failures, status = column(P, "attention_failures"), column(P, "status")
    last_seen, finished = column(P, "last_seen_at"), column(P, "finished_at")
    failed = f"(ins.{column(T, 'is_attention_check')} AND NOT ins.{column(T, 'correct')})"
    ends = f"{failed} AND {AttentionRule.ends_sql(f'u.{failures} + 1', 'h.end_limit')}"
    grace, ceiling = int(TIME_LIMIT_GRACE_MS), int(MAX_RT_MS)
    sql = (
        f"WITH h ({', '.join(read)}) AS MATERIALIZED (SELECT {', '.join(read.values())} "
        f"FROM {table(P)} p JOIN {table(S)} s ON s.{column(S, 'id')} = {p('study')} "
        f"LEFT JOIN {table(A)} a ON {a('study')} = {p('study')} "
        f"LEFT JOIN {table(I)} i ON i.{column(I, 'id')} = %s AND i.{column(I, 'study')} = {p('study')} "
        f"WHERE {p('token')} = %s AND s.{column(S, 'slug')} = %s FOR NO KEY UPDATE OF p), "
        f"ins AS (INSERT INTO {table(T)} ({', '.join(quote(f.column) for f in fields)}) SELECT {select} "
        f"FROM h, LATERAL (SELECT CAST(%s AS jsonb) ->> h.key_mapping) x (answer) "
        f"WHERE h.p_status = {_literal(ParticipantStatus.STARTED)} AND h.trials_open AND h.arm_id IS NOT NULL "
        f"AND NOT h.mc AND h.i_kind = {_literal(ItemKind.YES_NO)} AND h.plan ->> CAST(%s AS integer) = %s "
        f"AND CAST(%s AS double precision) <= COALESCE(NULLIF(h.time_limit_ms, 0) + {grace}, {ceiling}) "
        f"AND x.answer IS NOT NULL "
        f"ON CONFLICT DO NOTHING RETURNING {', '.join(column(T, name) for name in returned)}), "
        f"upd AS (UPDATE {table(P)} u SET {last_seen} = %s, "
        f"{failures} = u.{failures} + CASE WHEN {failed} THEN 1 ELSE 0 END, "
        f"{status} = CASE WHEN {ends} THEN {_literal(ParticipantStatus.FAILED_ATTENTION)} ELSE u.{status} END, "
        f"{finished} = CASE WHEN {ends} THEN %s ELSE u.{finished} END "
        f"FROM ins, h WHERE u.{column(P, 'id')} = h.p_id "
        f"AND ({failed} OR u.{last_seen} IS NULL OR u.{last_seen} <= %s) "
        f"RETURNING {', '.join('u.' + column(P, name) for name in _UPDATED)}) "
        f"SELECT {', '.join('h.p_' + name for name in _PARTICIPANT_BACK)}, "
        f"{', '.join('ins.' + column(T, name) for name in returned)}, upd.* "
        f"FROM h LEFT JOIN ins ON true LEFT JOIN upd ON true"
    )
    _statement.update(sql=sql, fields=fields, from_browser=from_browser)
    return _statement


def available() -> bool:
    """Whether this database saves answers in one statement: PostgreSQL."""
    return connections[DEFAULT_DB_ALIAS].vendor == "postgresql"


def save(*, slug: str, token: str, trial: Trial, index: int, answers: dict[str, str], now):
    """Save `trial` (unsaved: item_id and what the browser sent; index <= MAX_INDEX) for the session
    of this study and token if it is a regular answer. `answers` maps each key mapping to the answer
    the pressed key means under it. None: no such session; NOT_WRITTEN: the session exists and the
    locked path decides; else Written."""
    import psycopg

    db = connections[DEFAULT_DB_ALIAS]
    built = _build(db)
    trial.received_at = now
    values = [f.get_db_prep_save(getattr(trial, f.attname), db) for f in built["from_browser"]]
    params = [trial.item_id, token, slug, *values, json.dumps(answers), index, str(trial.item_id), trial.rt_ms,
              now, now, now - SEEN_REFRESH]
    db.ensure_connection()
    start = time.monotonic()
    # A cursor that binds on the server, so that the connection prepares the statement (module doc),
    # in Django's wrapper (error translation, execute wrappers).
    with db.make_cursor(psycopg.Cursor(db.connection)) as cursor:
        cursor.execute(built["sql"], params)
        row = cursor.fetchone()
    if db.queries_logged:  # logged like any query (DEBUG, CaptureQueriesContext), with its parameters
        db.queries_log.append({"sql": db.ops.compose_sql(built["sql"], params),
                               "time": f"{time.monotonic() - start:.3f}"})
    if row is None:
        return None
    n = len(_PARTICIPANT_BACK)
    person, (trial_id, answer, correct, is_check), updated = row[:n], row[n:n + 4], row[n + 4:]
    if trial_id is None:
        return NOT_WRITTEN
    person = dict(zip(_PARTICIPANT_BACK, person))
    if updated[0] is not None:  # the participant's row was updated: its status, failures, end, last seen
        person.update(zip(_UPDATED, updated))
    participant = Participant.from_db(db.alias, _PARTICIPANT_BACK, list(person.values()))
    decided = {"id": trial_id, "participant_id": participant.pk, "item_id": trial.item_id, "answer": answer,
               "correct": correct, "is_attention_check": is_check}
    names = [f.attname for f in Trial._meta.concrete_fields]
    saved = Trial.from_db(db.alias, names, [decided.get(name, getattr(trial, name, None)) for name in names])
    saved.participant = participant
    return Written(trial=saved, participant=participant)
