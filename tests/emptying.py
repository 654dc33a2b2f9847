"""Emptying the database after a transactional test (``transactional_db``, ``live_server``) by DELETE.

Django's ``TransactionTestCase`` runs ``flush``: a TRUNCATE of every table, which gives each table and
index a new file (hundreds of them, synced), then the ``post_migrate`` signal, which writes every content
type and permission back and, with two logins, grants the runtime login its rights again
(``governance.dbroles``). Under load that took most of a second per test, for tables that hold a dozen
rows. Here only the tables that hold rows are emptied, by DELETE in one transaction (every foreign key
is deferred, so the order does not matter); content types and permissions, which are the migrations'
and which no test changes, stay, so there is nothing to write back. What a test sees at its start is
what it saw after a flush. A test that asks for ``serialized_rollback`` or ``available_apps`` gets
Django's own flush. bench/bench_test_teardown.py measures the two side by side.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.db import connections, transaction

# The rows post_migrate writes: the same after every test, so left in place rather than written back.
KEPT_TABLES = frozenset({"django_content_type", "auth_permission"})
# A DELETE can make rows elsewhere (sessions_app_session's trigger keeps sessions_app_insightsday):
# empty again until nothing is left, a few rounds at most.
ROUNDS = 5


def empty_tables(alias: str) -> None:
    """DELETE every row of every table of the models, but the content types and permissions."""
    connection = connections[alias]
    quote = connection.ops.quote_name
    tables = [
        table
        for table in connection.introspection.django_table_names(only_existing=True, include_views=False)
        if table not in KEPT_TABLES
    ]
    holding_rows = " UNION ALL ".join(
        f"SELECT {index} WHERE EXISTS (SELECT 1 FROM {quote(table)})" for index, table in enumerate(tables)
    )
    with transaction.atomic(using=alias), connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL DEFERRED")
        for _ in range(ROUNDS):
            cursor.execute(holding_rows)
            full = [tables[index] for (index,) in cursor.fetchall()]
            if not full:
                return
            for table in full:
                cursor.execute(f"DELETE FROM {quote(table)}")
    raise RuntimeError(f"tables still hold rows after {ROUNDS} rounds of DELETE: {full}")


def fixture_teardown(django_flush: Callable[[Any], None]) -> Callable[[Any], None]:
    """A ``TransactionTestCase._fixture_teardown`` that empties the tables, or flushes where asked."""

    def teardown(test_case: Any) -> None:
        if test_case.available_apps is not None or test_case.serialized_rollback:
            django_flush(test_case)
            return
        for alias in test_case._databases_names(include_mirrors=False):
            empty_tables(alias)

    return teardown
