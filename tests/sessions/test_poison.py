"""Poison sessions: a session the worker cannot finish ends ``failed`` with its
reason; nothing is left ``processing`` for the sweep to re-queue forever."""

from __future__ import annotations

import json
from datetime import timedelta

from django.db import connection
from django.utils import timezone
from django_scopes import scopes_disabled

from config.celery import app
from projects.scoping import project_scope
from sessions_app.models import Session
from sessions_app.processing import session_process
from sessions_app.tasks import process_session, sweep_processing
from tests.client.transcript_builder import TranscriptBuilder


def _row(session: Session) -> Session:
    with scopes_disabled():
        return Session.objects.get(pk=session.pk)


def _processing(session: Session, **fields: object) -> Session:
    with scopes_disabled():
        Session.objects.filter(pk=session.pk).update(status="processing", **fields)
    return _row(session)


def test_a_nul_in_a_prompt_no_longer_fails_the_final_write(world, ingest) -> None:
    line = json.loads(TranscriptBuilder().prompt("fix it").build())
    line["message"]["content"] = "fix\x00 the parser"
    raw = json.dumps(line).encode() + b"\n" + TranscriptBuilder().assistant_text("Fixed.").build()
    session = ingest(world.project, world.member, raw=raw)
    assert session.status == "complete"
    assert "\x00" not in session.title and "the parser" in session.title


def test_any_error_at_the_final_write_marks_the_session_failed_with_the_reason(world, ingest) -> None:
    session = _processing(ingest(world.project, world.member))
    with connection.cursor() as cursor:  # the database refuses the final write, as it did for a NUL
        cursor.execute(
            """CREATE FUNCTION pg_temp.refuse() RETURNS trigger LANGUAGE plpgsql AS $$
               BEGIN RAISE EXCEPTION 'value refused by the test' USING ERRCODE = '22000'; END $$;
               CREATE TRIGGER refuse_complete BEFORE UPDATE ON sessions_app_session
               FOR EACH ROW WHEN (NEW.status = 'complete') EXECUTE FUNCTION pg_temp.refuse();"""
        )
    with project_scope(world.project):
        session_process(session=session)
    failed = _row(session)
    assert failed.status == "failed"
    assert "could not be stored" in failed.error and "value refused by the test" in failed.error


def test_the_sweep_gives_up_a_session_that_was_started_too_often(world, ingest, settings) -> None:
    settings.SESSIONLEDGER_SWEEP_AFTER_SECONDS = 0
    created = timezone.now() - timedelta(minutes=10)
    spent = _processing(ingest(world.project, world.member, "spent"), processing_attempts=3, created_at=created)
    fresh = _processing(ingest(world.project, world.member, "fresh"), processing_attempts=1, created_at=created)
    assert sweep_processing() == 1  # only the one with attempts left is queued again
    app.control.purge()
    given_up = _row(spent)
    assert given_up.status == "failed" and "after 3 processing attempt(s)" in given_up.error
    assert _row(fresh).status == "processing"


def test_a_delivery_past_the_attempts_fails_the_session_instead_of_processing_it(world, ingest) -> None:
    session = _processing(ingest(world.project, world.member), processing_attempts=3)
    process_session.apply(args=[str(session.pk)])
    failed = _row(session)
    assert failed.status == "failed" and "not retried" in failed.error and failed.processing_attempts == 4


def test_each_delivery_counts_one_attempt(world, ingest) -> None:
    session = _processing(ingest(world.project, world.member))
    process_session.apply(args=[str(session.pk)])
    done = _row(session)
    assert done.status == "complete" and done.processing_attempts == 1
