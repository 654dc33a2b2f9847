"""The worker's fixed cost per session, in statements: small segments are most of the traffic."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django_scopes import scopes_disabled

from projects.rls import lazy_commit
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


def test_processing_a_small_session_costs_eleven_statements_and_two_redis_round_trips(
    world, api_as, redis_commands
) -> None:
    process_session(str(_uploaded(world, api_as, "warm up").pk))  # caches, prepared plans, loaded scripts
    session = _uploaded(world, api_as, "Add capture")
    redis_commands.clear()
    with CaptureQueriesContext(connection) as queries:
        process_session(str(session.pk))
    statements = [q["sql"] for q in queries.captured_queries]
    # load (with project and author); the attempt: BEGIN, SET LOCAL, UPDATE, COMMIT; the result: BEGIN,
    # tenant settings with synchronous_commit, the row's lock (held while the blobs are written, so a
    # deletion waits for them: docs/security.md "Erasure"), SAVEPOINT, UPDATE, COMMIT (which releases the
    # savepoint; docs/scaling.md)
    assert len(statements) == 11, statements
    assert not any(sql.startswith("RELEASE") for sql in statements)
    assert '"projects_project"' in statements[0] and '"projects_user"' in statements[0]
    assert statements[2] == "SET LOCAL synchronous_commit TO OFF"  # no WAL flush wait
    assert "set_config('synchronous_commit', 'off', true)" in statements[6]  # nor for the result
    assert statements[3].startswith('UPDATE "sessions_app_session" SET "processing_attempts" = 1 ')
    assert statements[7].endswith("FOR NO KEY UPDATE")
    assert statements[9].startswith('UPDATE "sessions_app_session" SET "status" = ')
    # the project's fairness slot taken (one script), the slot handed on (one script); the first page of
    # a session this small is rendered by its first reader, not kept by the worker (frontend/session_page/page_cache.py)
    assert redis_commands == ["EVALSHA", "EVALSHA"]
    with scopes_disabled():
        done = Session.objects.get(pk=session.pk)
    assert done.status == Status.COMPLETE and done.processing_attempts == 1
    assert done.search_vector and "captur" in done.search_vector  # the one-expression vector is the same


def test_a_refused_final_write_still_ends_the_session_failed_in_the_same_transaction(world, api_as) -> None:
    """The savepoint the result is written after is what the failure is written from."""
    session = _uploaded(world, api_as, "Refused")
    with connection.cursor() as cursor:
        cursor.execute(
            """CREATE FUNCTION pg_temp.refuse() RETURNS trigger LANGUAGE plpgsql AS $$
               BEGIN RAISE EXCEPTION 'refused by the test' USING ERRCODE = '22000'; END $$;
               CREATE TRIGGER refuse_complete BEFORE UPDATE ON sessions_app_session
               FOR EACH ROW WHEN (NEW.status = 'complete') EXECUTE FUNCTION pg_temp.refuse();"""
        )
    try:
        with CaptureQueriesContext(connection) as queries:
            process_session(str(session.pk))
    finally:  # this test's transactions are real: the trigger would outlive it
        with connection.cursor() as cursor:
            cursor.execute("DROP TRIGGER refuse_complete ON sessions_app_session; DROP FUNCTION pg_temp.refuse()")
    statements = [q["sql"] for q in queries.captured_queries]
    assert any(sql.startswith("ROLLBACK TO SAVEPOINT") for sql in statements), statements
    assert statements[-1] == "COMMIT"
    with scopes_disabled():
        failed = Session.objects.get(pk=session.pk)
    assert failed.status == Status.FAILED and "refused by the test" in failed.error


def test_only_the_transaction_that_asks_skips_the_wal_flush_wait(world) -> None:
    """The worker's (its result is re-derivable: a lost commit leaves the session processing, and the sweep
    re-queues it); a request's transaction — an upload, a deletion — still waits for durability."""

    def synchronous_commit(*, lazy: bool, durable: bool = True) -> str:
        with project_scope(world.project, durable=durable), connection.cursor() as cursor:
            if lazy:
                lazy_commit()
            cursor.execute("SHOW synchronous_commit")
            return cursor.fetchone()[0]

    default = synchronous_commit(lazy=False)
    assert default != "off"
    assert synchronous_commit(lazy=True) == "off"
    assert synchronous_commit(lazy=False) == default  # transaction-local: the next transaction is durable again
    assert synchronous_commit(lazy=False, durable=False) == "off"  # the worker's result transaction
    assert synchronous_commit(lazy=False) == default
