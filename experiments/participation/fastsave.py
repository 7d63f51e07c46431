"""The hot path of saving an answer in plain SQL (issue 8's load target).

A participant in progress answering the next trial is the request a study's server handles most
often. Through the ORM such a save cost about 10 ms of Python, nearly all of it spent building
queries (the participant with its study and arm, the multiple-choice check, the item, the update,
the insert) against about 1 ms for the whole middleware stack. Here the same facts cost:

PostgreSQL, the trial endpoint — `save(...)`: one statement, one round trip,
            WITH h AS MATERIALIZED (<the read below> FOR NO KEY UPDATE OF p),
                 ins AS (INSERT INTO trial (…) SELECT h.participant, h.item, <answer from the key
                         mapping>, … FROM h WHERE <every check of a yes/no answer>
                         ON CONFLICT DO NOTHING RETURNING …),
                 upd AS (UPDATE participant SET last_seen_at = …, attention_failures = … + <1 for a
                         wrong answer to an attention check>, status/finished_at = <ended when that
                         reaches the arm's limit> WHERE id = <ins's participant> AND (<a failure> OR
                         last_seen_at <= <now - SEEN_REFRESH>) RETURNING …)
            SELECT h.… (the plan and last-seen time only when nothing was inserted), ins.…, upd.…
            FROM h LEFT JOIN ins ON true LEFT JOIN upd ON true
        The row lock makes an ending (finish, expiry, erasure: they lock the row for update) either
        wait for this answer or win, and then the WHERE sees the ended status and nothing is
        inserted; two saves of one participant run one after the other (a shared lock would let both
        read and then deadlock on the update); unlike FOR UPDATE it does not hold up the foreign-key
        checks of trials being inserted (KEY SHARE). The row is updated only for a failed attention
        check or when the last-seen time is SEEN_REFRESH old, so an answer does not write a new
        version of the participant's row (plan included) every time. The read's facts come back
        either way: when nothing was inserted the caller knows at once why it must take the locked
        ORM path (a re-sent or clashing answer, an ended participation, a step out of order, a time
        limit passed, a four-option study), which says exactly what happened.
Elsewhere, and for trial_record's callers — read: `hot(...)`, the participant by study slug and token,
        joined with its human arm, the submitted item when it belongs to the same study, and
        whether the study has four-option items; write: `insert(...)`, on SQLite the UPDATE of
        last_seen_at and the INSERT in one transaction, on PostgreSQL one statement (the INSERT …
        SELECT under the same share lock, or with the UPDATE in a CTE when last-seen is stale).

On PostgreSQL the statements are prepared once per connection (parameters bound by the server,
psycopg's `prepare=True`) and planned once (GENERIC_PLANS), through one cursor kept per
connection: planning the joins cost about 0.5 ms of the server's CPU per save, more than executing
them. Django leaves prepared statements off by default for the sake of connection poolers in
transaction mode; DUET_PREPARED_STATEMENTS=false does the same here (a pooler that tracks
prepared statements, such as PgBouncer >= 1.21, is fine with them). These statements do not run
Django's per-request connection health check (CONN_HEALTH_CHECKS, one more round trip): a
connection that broke since the last request fails this one answer with a 5xx, Django drops the
connection at the end of the request, and the browser's sender re-sends the answer with the same
idempotency key.

The statements are built once per database vendor from the models' metadata (table and column
names, and every Trial column typed by its own field), so a renamed or added field cannot drift from
them. Rows come back as deferred model instances: a field not read here loads from the database if
something asks for it.
"""
from __future__ import annotations

import json
import time
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, IntegrityError, connections, models, transaction
from django.db.backends.utils import CursorWrapper

from ..models import HumanArm, Item, ItemKind, Participant, ParticipantStatus, Study, Trial
from .payload import TIME_LIMIT_GRACE_MS

ATTENTION_DESIGN = "attention-check"  # Item.design of the catch items
MAX_ID = 2**63 - 1  # a bigint primary key
# Every statement here finds its rows by unique keys (token, slug, primary keys), so the plan that
# ignores the parameters' values is the one a value would give, and planning is most of the
# server's work: about 0.5 ms against 0.1 ms to execute the save. Left to itself (plan_cache_mode
# auto), PostgreSQL compares the two after five executions and may keep planning every execution
# on some connections: in two of eight load-bench runs the database's CPU per save was that of
# forced custom plans (0.57-0.67 ms against 0.18-0.28 ms with generic ones). The setting applies
# only to prepared statements, and on these connections only ours are (Django binds on the client).
GENERIC_PLANS = "SET plan_cache_mode = force_generic_plan"
_ONLY_WHEN_ASKED = 2**62
# A save refreshes last_seen_at when it is at least this old: the heartbeat's period. Abandonment
# (participants_expire) is judged in minutes, so a few seconds of staleness never matter.
SEEN_REFRESH = timedelta(seconds=30)


def _in_model_order(model, names: set[str]) -> tuple[str, ...]:
    """Model.from_db takes a subset of fields in the model's own column order."""
    return tuple(f.attname for f in model._meta.concrete_fields if f.attname in names)


_PARTICIPANT_FIELDS = _in_model_order(Participant, {"id", "study_id", "status", "plan", "key_mapping", "is_preview"})
_ITEM_FIELDS = _in_model_order(Item, {"id", "study_id", "kind", "gold_answer", "design"})
_PLAN, _PREVIEW = _PARTICIPANT_FIELDS.index("plan"), _PARTICIPANT_FIELDS.index("is_preview")
# The read's columns by name, as the one-statement save's CTE calls them (same order as the SELECT list).
_READ_NAMES = (*(f"p_{name}" for name in _PARTICIPANT_FIELDS), "flow_done", "arm_id", "time_limit_ms", "seen_at",
               "fail_limit", *(f"i_{name}" for name in _ITEM_FIELDS), "mc")
_FLOW_AT, _ITEM_AT = _READ_NAMES.index("flow_done"), _READ_NAMES.index("i_id")
_RETURNED = ("answer", "correct", "is_attention_check")  # the trial's columns the one statement decides
# What the one statement sends back only when it wrote nothing (the plan's JSON and a timestamp are
# the costliest columns to convert, and a written answer's receipt needs neither).
_ONLY_WHEN_REFUSED = ("p_plan", "seen_at")
_PARTICIPANT_FIELDS_WRITTEN = tuple(name for name in _PARTICIPANT_FIELDS if name != "plan")


def _read_column(name: str, written: str) -> str:
    """The one statement's result column for the read's column `name` (`written`: the inserted id)."""
    return f"CASE WHEN {written} IS NULL THEN h.{name} END" if name in _ONLY_WHEN_REFUSED else f"h.{name}"


@dataclass(frozen=True, slots=True)
class Hot:
    """What a save needs to know, from one read."""

    participant: Participant  # deferred: only _PARTICIPANT_FIELDS loaded (not the plan after a written save)
    flow_done: bool  # consent, instructions and (if the arm has any) practice are behind
    has_arm: bool
    time_limit_ms: int | None
    multiple_choice: bool  # the study has four-option items
    item_row: tuple  # the submitted item's _ITEM_FIELDS (all None when it is not one of this study's)
    db_alias: str
    seen_at: object = None  # the participant's last_seen_at (PostgreSQL only; None elsewhere)

    @property
    def item(self) -> Item | None:
        """The submitted item when it is one of this study's, deferred (only _ITEM_FIELDS loaded);
        built when asked for (a save the one statement wrote never needs it)."""
        return Item.from_db(self.db_alias, _ITEM_FIELDS, self.item_row) if self.item_row[0] is not None else None


def _db():
    """The default database's wrapper, looked up once per call: every attribute read through
    django.db.connection goes through a context-local lookup (a quarter of a millisecond per save)."""
    return connections[DEFAULT_DB_ALIAS]


_statements: dict[str, dict] = {}


def _literal(value) -> str:
    """One of our own constants (a status, a kind, a design name) as an SQL string literal: written
    into the statements rather than sent with every execution, and visible to the planner."""
    return "'" + str(value).replace("'", "''") + "'"


def _sql(db) -> dict:
    """The statements for this database's vendor, built on first use."""
    built = _statements.get(db.vendor)
    if built is not None:
        return built
    _column = lambda model, name: db.ops.quote_name(model._meta.get_field(name).column)  # noqa: E731
    _table = lambda model: db.ops.quote_name(model._meta.db_table)  # noqa: E731
    P, A, I, S, T = Participant, HumanArm, Item, Study, Trial
    p = lambda name: "p." + _column(P, name)  # noqa: E731
    i = lambda name: "i." + _column(I, name)  # noqa: E731
    read = (
        f"SELECT {', '.join(p(name) for name in _PARTICIPANT_FIELDS)}, "
        # flow done: consent and instructions, and the practice block unless the arm has none (an
        # empty list, stored as '[]' by Django on every backend)
        f"{p('consented_at')} IS NOT NULL AND {p('instructions_done_at')} IS NOT NULL AND "
        f"({p('practice_done_at')} IS NOT NULL OR COALESCE(a.{_column(A, 'practice')}, 'null') IN ('[]', 'null')), "
        f"a.{_column(A, 'id')}, a.{_column(A, 'time_limit_ms')}, "
        f"{p('last_seen_at')}, CASE WHEN a.{_column(A, 'attention_end_session')} THEN a.{_column(A, 'attention_fail_after')} ELSE 0 END, "
        f"{', '.join(i(name) for name in _ITEM_FIELDS)}, "
        f"EXISTS (SELECT 1 FROM {_table(I)} m WHERE m.{_column(I, 'study')} = {p('study')} "
        f"AND m.{_column(I, 'kind')} = {_literal(ItemKind.MULTIPLE_CHOICE)} "
        f"AND m.{_column(I, 'design')} <> {_literal(ATTENTION_DESIGN)}) "
        f"FROM {_table(P)} p "
        f"JOIN {_table(S)} s ON s.{_column(S, 'id')} = {p('study')} "
        f"LEFT JOIN {_table(A)} a ON a.{_column(A, 'study')} = {p('study')} "
        f"LEFT JOIN {_table(I)} i ON {i('id')} = %s AND {i('study')} = {p('study')} "
        f"WHERE {p('token')} = %s AND s.{_column(S, 'slug')} = %s"
    )
    fields = [f for f in T._meta.concrete_fields if not f.primary_key]
    columns = ", ".join(db.ops.quote_name(f.column) for f in fields)

    def typed(sources: dict[str, str]) -> str:
        """The SELECT list of an INSERT … SELECT: the columns named in `sources` from the row source,
        every other column a typed placeholder (a parameter bound by the server in a SELECT list has
        no column to take its type from)."""
        return ", ".join(sources.get(f.name, f"CAST(%s AS {f.cast_db_type(db)})") for f in fields)

    seen = (f"UPDATE {_table(P)} SET {_column(P, 'last_seen_at')} = %s "
            f"WHERE {_column(P, 'id')} = %s AND {_column(P, 'status')} = %s")
    built = {
        "read": read,
        "fields": fields,
        "prepared": [(f, isinstance(f, _PLAIN) and not getattr(f, "auto_now_add", False)) for f in fields],
        "participant_at": [n for n, f in enumerate(fields) if f.name == "participant"][0],
        "seen": seen,
        # PostgreSQL: the update and the insert as one statement (see the module's docstring)
        "seen_insert": (
            f"WITH seen AS ({seen} RETURNING {_column(P, 'id')}) INSERT INTO {_table(T)} ({columns}) "
            f"SELECT {typed({'participant': 'seen.' + _column(P, 'id')})} FROM seen "
            f"ON CONFLICT DO NOTHING RETURNING {_column(T, 'id')}"
        ),
        # PostgreSQL, last-seen time still fresh: the insert under a share lock on the participant's row
        "locked_insert": (
            f"INSERT INTO {_table(T)} ({columns}) SELECT {typed({'participant': 'p.' + _column(P, 'id')})} "
            f"FROM {_table(P)} p WHERE p.{_column(P, 'id')} = %s AND p.{_column(P, 'status')} = %s "
            f"FOR SHARE ON CONFLICT DO NOTHING RETURNING {_column(T, 'id')}"
        ),
        "insert": f"INSERT INTO {_table(T)} ({columns}) VALUES ({', '.join('%s' for _ in fields)})",
    }
    if db.vendor == "postgresql":
        # The trial endpoint's save as one statement (see save()): the read under a lock on the
        # participant's row, the insert when every check of a yes/no answer holds, the participant's
        # update (last-seen time when stale; a wrong answer to an attention check counted, and the
        # participation ended when the arm's limit is reached), and the read's facts back for
        # whatever the insert did not do.
        attention = _literal(ATTENTION_DESIGN)
        from_read = {"participant": "h.p_id", "item": "h.i_id", "answer": "x.answer",
                     "correct": "COALESCE(x.answer = h.i_gold_answer, false)",
                     "is_attention_check": f"h.i_design = {attention}"}
        T_id, T_participant = _column(T, "id"), _column(T, "participant")
        returned = [_column(T, name) for name in _RETURNED]
        failures, status = _column(P, "attention_failures"), _column(P, "status")
        last_seen, finished = _column(P, "last_seen_at"), _column(P, "finished_at")
        failed = f"(ins.{_column(T, 'is_attention_check')} AND NOT ins.{_column(T, 'correct')})"
        ends = f"{failed} AND COALESCE(h.fail_limit, 0) > 0 AND u.{failures} + 1 >= h.fail_limit"
        built["save_prepared"] = [pair for pair in built["prepared"] if pair[0].name not in from_read]
        built["save"] = (
            f"WITH h ({', '.join(_READ_NAMES)}) AS MATERIALIZED ({read} FOR NO KEY UPDATE OF p), "
            f"ins AS (INSERT INTO {_table(T)} ({columns}) SELECT {typed(from_read)} "
            f"FROM h, LATERAL (SELECT CAST(%s AS jsonb) ->> h.p_key_mapping) x (answer) "
            f"WHERE h.p_status = {_literal(ParticipantStatus.STARTED)} AND h.flow_done AND h.arm_id IS NOT NULL "
            f"AND NOT h.mc AND h.i_kind = {_literal(ItemKind.YES_NO)} AND h.p_plan ->> CAST(%s AS integer) = %s "
            f"AND (COALESCE(h.time_limit_ms, 0) = 0 "
            f"OR CAST(%s AS double precision) <= h.time_limit_ms + {int(TIME_LIMIT_GRACE_MS)}) "
            f"AND x.answer IS NOT NULL "
            f"ON CONFLICT DO NOTHING RETURNING {T_id}, {T_participant}, {', '.join(returned)}), "
            f"upd AS (UPDATE {_table(P)} u SET {last_seen} = %s, "
            f"{failures} = u.{failures} + CASE WHEN {failed} THEN 1 ELSE 0 END, "
            f"{status} = CASE WHEN {ends} THEN {_literal(ParticipantStatus.FAILED_ATTENTION)} ELSE u.{status} END, "
            f"{finished} = CASE WHEN {ends} THEN %s ELSE u.{finished} END "
            f"FROM ins, h WHERE u.{_column(P, 'id')} = ins.{T_participant} "
            f"AND ({failed} OR u.{last_seen} IS NULL OR u.{last_seen} <= %s) "
            f"RETURNING u.{status}, u.{failures}, u.{finished}) "
            f"SELECT {', '.join(_read_column(name, f'ins.{T_id}') for name in _READ_NAMES)}, "
            f"ins.{T_id}, {', '.join('ins.' + c for c in returned)}, upd.* "
            f"FROM h LEFT JOIN ins ON true LEFT JOIN upd ON true"
        )
    _statements[db.vendor] = built
    return built


class _Prepared(CursorWrapper):
    """Django's cursor wrapper (error translation, execute wrappers) around a psycopg cursor that
    binds parameters on the server and prepares each statement once per connection."""

    def _execute(self, sql, params, *ignored_wrapper_args):
        self.db.validate_no_broken_transaction()
        with self.db.wrap_database_errors:
            return self.cursor.execute(sql, params, prepare=True)


class _PreparedDebug(_Prepared):
    """The same, logged in connection.queries like any query (DEBUG, CaptureQueriesContext)."""

    def execute(self, sql, params=None):
        start = time.monotonic()
        try:
            return super().execute(sql, params)
        finally:  # the statement with its parameters, as Django logs a client-side bound one
            self.db.queries_log.append({"sql": self.db.ops.compose_sql(sql, params),
                                        "time": f"{time.monotonic() - start:.3f}"})


@contextmanager
def _cursor(db):
    if db.vendor != "postgresql" or not getattr(settings, "DUET_PREPARED_STATEMENTS", True):
        with db.cursor() as cursor:
            yield cursor
        return
    db.ensure_connection()
    db.validate_thread_sharing()
    wrapper = _PreparedDebug if db.queries_logged else _Prepared
    yield wrapper(_raw_cursor(db), db)


def _raw_cursor(db):
    """One server-binding psycopg cursor per connection, kept for its life: a cursor remembers how
    it dumped each parameter type, which a new cursor per save would look up again every time.
    (The wrapper, a DatabaseWrapper, belongs to one thread, and so does its cursor.) The first time
    it is used outside a transaction, the session is told to plan these statements once
    (GENERIC_PLANS: why)."""
    import psycopg

    conn = db.connection
    kept = getattr(db, "_duet_cursor", None)
    if kept is None or kept[0] is not conn or kept[1].closed:
        if conn.prepare_threshold is None:
            # Django turns psycopg's preparing off (threshold None), which also ignores prepare=True.
            # Only server-binding cursors ever prepare (Django's own bind on the client), so a
            # threshold no query reaches prepares exactly the statements executed with prepare=True.
            conn.prepare_threshold = _ONLY_WHEN_ASKED
        with db.wrap_database_errors:
            kept = db._duet_cursor = [conn, psycopg.Cursor(conn), False]
    if not kept[2] and conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE:
        # outside a transaction (autocommit), so that no rollback undoes it
        with db.wrap_database_errors:
            kept[1].execute(GENERIC_PLANS)
        kept[2] = True
    return kept[1]


# Columns whose Python values the driver takes as they are (Django's preparation of them only checks
# the type); every other column (dates, auto_now_add) goes through its field's pre_save and
# get_db_prep_save, as the ORM does.
_PLAIN = (models.BooleanField, models.CharField, models.FloatField, models.IntegerField, models.ForeignKey)


def _db_values(trial: Trial, fields, db) -> list:
    return [getattr(trial, f.attname) if plain else f.get_db_prep_save(f.pre_save(trial, True), db)
            for f, plain in fields]


def _json(value):
    return json.loads(value) if isinstance(value, (str, bytes)) else value


def _read_params(*, slug: str, token: str, item_id: int | None) -> list:
    """The read's parameters, in the order of its placeholders (also the one statement's first ones)."""
    return [item_id, token, slug]


def hot(*, slug: str, token: str, item_id: object) -> Hot | None:
    """The participant of this study and token (None: no such session) and the submitted item."""
    candidate = item_id if type(item_id) is int and 1 <= item_id <= MAX_ID else None
    db = _db()
    with _cursor(db) as cursor:
        cursor.execute(_sql(db)["read"], _read_params(slug=slug, token=token, item_id=candidate))
        row = cursor.fetchone()
    return None if row is None else _hot(db, row)


def _hot(db, row, written: bool = False) -> Hot:
    """`written`: the one statement saved the answer and sent no plan (it stays deferred)."""
    n = len(_PARTICIPANT_FIELDS)
    values = list(row[:n])
    values[_PREVIEW] = bool(values[_PREVIEW])  # SQLite answers 0/1
    if written:
        del values[_PLAN]
        participant = Participant.from_db(db.alias, _PARTICIPANT_FIELDS_WRITTEN, values)
    else:
        values[_PLAN] = _json(values[_PLAN])
        participant = Participant.from_db(db.alias, _PARTICIPANT_FIELDS, values)
    flow_done, arm_id, time_limit_ms, seen_at = row[_FLOW_AT:_FLOW_AT + 4]  # fail_limit: the statement's own
    return Hot(participant=participant, flow_done=bool(flow_done), has_arm=arm_id is not None,
               time_limit_ms=time_limit_ms, multiple_choice=bool(row[-1]),
               item_row=tuple(row[_ITEM_AT:_ITEM_AT + len(_ITEM_FIELDS)]), db_alias=db.alias,
               seen_at=seen_at if db.vendor == "postgresql" else None)  # SQLite's raw value is text


def one_statement() -> bool:
    """Whether the trial endpoint reads and writes in one statement (save): on PostgreSQL."""
    return _db().vendor == "postgresql"


def needs_refresh(seen_at, now) -> bool:
    """Whether a save at `now` refreshes last_seen_at: always except on PostgreSQL within SEEN_REFRESH
    of the last refresh (SQLite's write takes its lock through the UPDATE)."""
    return _db().vendor != "postgresql" or seen_at is None or now - seen_at >= SEEN_REFRESH


def insert(*, trial: Trial, now, refresh_seen: bool = True) -> bool:
    """Write `trial` (unsaved, its participant in progress) and, with `refresh_seen` (see
    needs_refresh; SQLite always refreshes), the participant's last-seen time, atomically. False,
    with nothing written, when the participation is no longer in progress or a unique constraint
    refuses the trial; the caller then takes the locked path.

    On PostgreSQL a save whose participant was seen less than SEEN_REFRESH ago leaves last_seen_at
    alone and only share-locks the row (the same guard against an ending as the UPDATE's lock): an
    UPDATE per answer writes a new version of the participant row, plan included, and the row's
    version chain grows by one per answer, which every later read by token walks until vacuum."""
    db = _db()
    sql = _sql(db)
    values = _db_values(trial, sql["prepared"], db)
    seen_params = [now, trial.participant_id, ParticipantStatus.STARTED]
    if db.vendor == "postgresql":
        del values[sql["participant_at"]]
        with _cursor(db) as cursor:
            if refresh_seen:
                cursor.execute(sql["seen_insert"], seen_params + values)
            else:
                cursor.execute(sql["locked_insert"], values + seen_params[1:])
            row = cursor.fetchone()
        if row is None:
            return False
        trial.pk = row[0]
    else:
        try:
            with transaction.atomic(using=db.alias), db.cursor() as cursor:
                cursor.execute(sql["seen"], seen_params)
                if cursor.rowcount != 1:
                    return False
                cursor.execute(sql["insert"], values)
                trial.pk = db.ops.last_insert_id(cursor, Trial._meta.db_table, Trial._meta.pk.column)
        except IntegrityError:
            return False
    trial._state.adding, trial._state.db = False, db.alias
    return True


MAX_INDEX = 2**31 - 1  # the one-statement save compares the plan's entry at this index (an integer)


def save(*, slug: str, token: str, trial: Trial, answers: str, now) -> Hot | None:
    """PostgreSQL: the trial endpoint's read and write in one statement and one round trip. `trial`
    (unsaved) carries what the browser sent (index, item, key, times, …; index <= MAX_INDEX); `answers`
    is a JSON object from key mapping to the answer the pressed key means under it. The statement reads
    what hot() reads, under a lock on the participant's row (an ending waits for this save or wins
    before it), and inserts the trial when the answer is a regular one: participation in progress,
    consent, instructions and practice done, the item at this index of the participant's list and a
    yes/no item of the study (not a four-option study), the response time within the arm's time limit.
    A wrong answer to an attention check is counted as the locked path counts it (attention_failures,
    and the participation ends as failed_attention when the arm's attention rule says so, attention.py). It
    refreshes last_seen_at when that is SEEN_REFRESH old or the row is updated anyway. None: no such
    session. Otherwise the read's facts, with trial.pk set (and the columns decided from the read:
    answer, correct, attention check) when the trial was written, and the participant's updated
    columns set on hot.participant (its plan deferred, seen_at None: a receipt needs neither); when
    it was not, the caller decides from the facts (the locked path says exactly why)."""
    db = _db()
    sql = _sql(db)
    values = _db_values(trial, sql["save_prepared"], db)
    read = _read_params(slug=slug, token=token, item_id=trial.item_id)
    checks = [trial.index, str(trial.item_id), trial.rt_ms]
    with _cursor(db) as cursor:
        cursor.execute(sql["save"], read + values + [answers] + checks + [now, now, now - SEEN_REFRESH])
        row = cursor.fetchone()
    if row is None:
        return None
    n = len(_READ_NAMES)
    trial_id, *decided = row[n:n + 1 + len(_RETURNED)]
    hot = _hot(db, row[:n], written=trial_id is not None)
    if trial_id is not None:
        trial.pk = trial_id
        for name, value in zip(_RETURNED, decided):
            setattr(trial, name, value)
        trial.participant = hot.participant  # the item loads by item_id if anything asks for it
        trial._state.adding, trial._state.db = False, db.alias
        status, failures, finished_at = row[n + 1 + len(_RETURNED):]
        if status is not None:  # the participant's row was updated
            participant = hot.participant
            participant.last_seen_at, participant.status = now, status
            participant.attention_failures, participant.finished_at = failures, finished_at
    return hot
