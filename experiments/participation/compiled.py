"""Reads of the entry path compiled once by the ORM and run again with new values (issue 43: the launch
burst's CPU per arrival).

A launch sends some 60 arrivals a second to the entry page, and each ran about ten ORM queries: building a
queryset (filters, lookups, joins) and compiling it to SQL cost the web process about 1 ms of CPU per query
(bench/entry_profile.py), more than the driver and PostgreSQL together. Here such a read is still written as a
queryset — the one spelling of its rule (`real()`, `holding()`, the stored lists' header) — but it is built
and compiled once per process and database alias, with a marker in place of each value that varies; a later
run sends the same SQL with the values put where the markers were, through Django's cursor (query counts,
execute wrappers and transactions see it like any other query), and applies the fields' own converters to
the rows. Only plain values vary (ids, texts): what the ORM would prepare from them is the value itself.

tests/experiments/participation/test_compiled_reads.py checks that each read gives what its queryset gives.
"""
from __future__ import annotations

import time
from collections.abc import Callable

from django.db import DEFAULT_DB_ALIAS, connections
from django.db.models import Model, QuerySet


class CompiledRead:
    """`build(**values)` gives the queryset (a values_list); `kinds` names each value and its type (int or str).

    `prepared`: on PostgreSQL, prepare the read and let the server plan it once for any values (_cursor). Only
    for reads whose every value is matched by a unique index (a slug, a primary or one-to-one key, a unique
    pair), so that no plan can be better for one value than another. Any other read is planned for its values
    at each run: a plan made for no value in particular is one made without knowing how many of a table's rows
    a study holds, and where one study holds most of the items table it reads every item (issue 43 item 8;
    a generic plan of the catch items' read cost 38 ms of PostgreSQL's CPU per entry in one run of the bench)."""

    def __init__(self, build: Callable[..., QuerySet], *, prepared: bool = False, **kinds: type):
        if not kinds or any(kind not in (int, str) for kind in kinds.values()):
            raise TypeError("every value of a compiled read is an int or a str")
        self.build, self.kinds, self.prepared = build, kinds, prepared
        self._compiled: dict[str, tuple] = {}

    def _markers(self) -> dict[str, int | str]:
        # values no read of the entry meets among its constants: an integer inside every integer field's range
        # (the ORM drops a lookup whose value is out of the field's range), a text no form or link accepts
        return {name: 2_147_480_000 + n if kind is int else f"\uffffcompiled-read-{n}\uffff"
                for n, (name, kind) in enumerate(self.kinds.items())}

    def compile(self, using: str = DEFAULT_DB_ALIAS) -> tuple:
        """(SQL, parameters with the markers, [(position, name, type)], converters by column) for `using`."""
        compiled = self._compiled.get(using)
        if compiled is None:
            markers = self._markers()
            compiler = self.build(**markers).query.get_compiler(using=using)
            sql, params = compiler.as_sql()
            # a value as the ORM passes it on: on PostgreSQL an integer field's comes typed (psycopg's Int4,
            # a subclass of int), and a run passes its own value in that type
            slots = tuple((i, name, type(value)) for i, value in enumerate(params) for name, marker in markers.items()
                          if isinstance(value, type(marker)) and not isinstance(value, bool) and value == marker)
            missing = set(markers) - {name for _, name, _ in slots}
            if missing:
                raise ValueError(f"the compiled read's SQL does not take {sorted(missing)} as parameters")
            columns = [expression for expression, *_ in compiler.select[:compiler.col_count]]
            converters = tuple(compiler.get_converters(columns).items())
            compiled = self._compiled[using] = (sql, tuple(params), slots, converters)
        return compiled

    def rows(self, using: str = DEFAULT_DB_ALIAS, **values) -> list[tuple]:
        """The queryset's rows for `values` (every name of `kinds`), as its values_list gives them."""
        sql, base, slots, converters = self.compile(using)
        params = list(base)
        for position, name, kind in slots:
            value = values[name]
            if not isinstance(value, self.kinds[name]) or isinstance(value, bool):
                raise TypeError(f"{name} must be {self.kinds[name].__name__}, not {type(value).__name__}")
            params[position] = value if type(value) is kind else kind(value)
        connection = connections[using]
        start = time.monotonic()
        cursor, logged_here = self._cursor(connection, self.prepared)
        with cursor:
            cursor.execute(sql, params)
            rows = cursor.fetchall()
        if logged_here and connection.queries_logged:  # logged as Django logs its own (DEBUG, CaptureQueriesContext)
            connection.queries_log.append({"sql": connection.ops.compose_sql(sql, params),
                                           "time": f"{time.monotonic() - start:.3f}"})
        if not converters:
            return [tuple(row) for row in rows]
        out = []
        for row in rows:
            row = list(row)
            for position, (functions, expression) in converters:
                value = row[position]
                for function in functions:
                    value = function(value, expression, connection)
                row[position] = value
            out.append(tuple(row))
        return out


    @staticmethod
    def _cursor(connection, prepared: bool):
        """Django's cursor; for a `prepared` read on PostgreSQL with prepared statements (DUET_PREPARED_STATEMENTS,
        common/env.py: psycopg's prepare_threshold set, plans generic) one that binds on the server, as
        fastsave.py's, so that the connection prepares the read once and PostgreSQL plans it once (parsing and
        planning were most of its CPU per read), wrapped as Django wraps its own (health check, error translation, execute wrappers, the query
        log of DEBUG and CaptureQueriesContext, which rows() writes); (cursor, whether rows() logs it)."""
        if not prepared or connection.vendor != "postgresql" or connection.settings_dict.get("OPTIONS", {}).get(
                "prepare_threshold") is None:
            return connection.cursor(), False
        import psycopg

        connection.close_if_health_check_failed()  # what Django's cursor() does first
        connection.ensure_connection()
        connection.validate_thread_sharing()
        with connection.wrap_database_errors:
            return connection.make_cursor(psycopg.Cursor(connection.connection)), True


def field_names(model: type[Model]) -> tuple[str, ...]:
    """Every concrete field's attribute name, in the model's order (what Model.from_db takes)."""
    return tuple(f.attname for f in model._meta.concrete_fields)


def instance(model: type[Model], values: tuple, using: str = DEFAULT_DB_ALIAS) -> Model:
    """A model instance from a row of every concrete field (field_names' order), as the ORM makes one."""
    return model.from_db(using, field_names(model), values)
