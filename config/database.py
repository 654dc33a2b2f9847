"""The web service's bound on a statement: a query that runs away (or a database that stops answering
mid-query) ends the request with a 503 after ``DATABASE_STATEMENT_TIMEOUT`` seconds instead of holding
one of gunicorn's threads (docs/deployment.md "Timeouts")."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.backends.signals import connection_created


def bound_statements(connection: BaseDatabaseWrapper) -> None:
    """Set the statement timeout on this connection (a session setting: it outlives RESET ROLE)."""
    seconds = settings.DATABASE_STATEMENT_TIMEOUT
    if seconds:
        with connection.cursor() as cursor:
            cursor.execute("SELECT set_config('statement_timeout', %s, false)", [f"{seconds}s"])


def _on_connection(sender: Any, connection: BaseDatabaseWrapper, **kwargs: Any) -> None:
    bound_statements(connection)


def bound_statements_of_new_connections() -> None:
    connection_created.connect(_on_connection, weak=False, dispatch_uid="sessionledger-statement-timeout")
