"""The worker's fixed cost per session, in statements: small segments are most of the traffic."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django_scopes import scopes_disabled

from projects.scoping import project_scope
from sessions_app.models import Session, Status
from sessions_app.tasks import process_session
from tests.conftest import conversation
from tests.uploads import commit_hash, metadata_for, upload

pytestmark = pytest.mark.django_db(transaction=True)  # the task's own transactions, as in a worker


def _uploaded(world, api_as, prompt: str) -> Session:
    raw = conversation(prompt)
    response = upload(api_as(world.member), world.project.slug, raw, metadata_for(raw, commit_hash=commit_hash(prompt)))
    assert response.status_code == 202
    with scopes_disabled():
        return Session.objects.get(pk=response.json()["id"])


def test_processing_a_small_session_costs_eight_statements(world, api_as) -> None:
    process_session(str(_uploaded(world, api_as, "warm up").pk))  # caches, prepared plans
    session = _uploaded(world, api_as, "Add capture")
    with CaptureQueriesContext(connection) as queries:
        process_session(str(session.pk))
    statements = [q["sql"] for q in queries.captured_queries]
    # load (with project and author), count the attempt, BEGIN, settings, SAVEPOINT, UPDATE, RELEASE, COMMIT
    assert len(statements) == 8, statements
    assert "RETURNING" in statements[1]
    with scopes_disabled():
        done = Session.objects.get(pk=session.pk)
    assert done.status == Status.COMPLETE and done.processing_attempts == 1


def test_only_the_workers_transaction_skips_the_wal_flush_wait(world) -> None:
    """Its result is re-derivable (a lost commit leaves the session processing, and the sweep re-queues it);
    a request's transaction — an upload, a deletion — still waits for durability."""

    def synchronous_commit(**options) -> str:
        with project_scope(world.project, **options), connection.cursor() as cursor:
            cursor.execute("SHOW synchronous_commit")
            return cursor.fetchone()[0]

    default = synchronous_commit()
    assert default != "off"
    assert synchronous_commit(durable=False) == "off"
    assert synchronous_commit() == default  # transaction-local: the next transaction is durable again
