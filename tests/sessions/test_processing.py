"""The worker's derivation of content and facts (run synchronously; the e2e tests use a real worker)."""

from __future__ import annotations

from django_scopes import scopes_disabled

from projects.scoping import project_scope
from sessions_app import blobs
from sessions_app.models import Session
from sessions_app.processing import session_process, session_reprocess
from tests.client.transcript_builder import TranscriptBuilder


def test_processing_derives_title_counts_summary_and_content(world, ingest) -> None:
    raw = (
        TranscriptBuilder()
        .prompt("Make the hook   never block\nplease")
        .thinking("hmm")
        .tool_call("Write", {"file_path": "/w/hook.py", "content": "x"})
        .assistant_text("The hook is async now.")
        .turn_end()
        .build()
    )
    session = ingest(world.project, world.member, raw=raw, files_touched=[])
    assert session.status == "complete" and session.processed_at is not None
    assert session.title == "Make the hook never block please"
    assert (session.turn_count, session.message_count) == (1, 5)
    assert session.files_touched == ["<outside>/hook.py"]  # no absolute path is kept (docs/client.md)
    assert "Make the hook never block" in session.summary and "The hook is async now." in session.summary
    assert session.digest["tool_counts"]["Write"]["calls"] == 1
    document = blobs.load_json_gz(session.content_storage_key)
    assert document["version"] == "1.0" and document["author"] == world.member.email
    assert [m["kind"] for m in document["messages"]] == ["prompt", "thinking", "tool_use", "tool_result", "text"]


def test_a_task_session_ends_with_the_status_the_client_sent(world, ingest) -> None:
    session = ingest(world.project, world.member, kind="task", task_id="SL-7", status="abandoned")
    assert session.status == "abandoned"


def test_broken_lines_are_counted_not_fatal(world, ingest) -> None:
    raw = TranscriptBuilder().prompt("hi").broken().assistant_text("hello").build() + b"\xff\xfe not json\n"
    session = ingest(world.project, world.member, raw=raw)
    assert session.status == "complete"
    assert blobs.load_json_gz(session.content_storage_key)["stats"]["skipped_lines"] == 2


def test_a_final_status_is_never_changed_by_a_redelivered_task(world, ingest) -> None:
    session = ingest(world.project, world.member, kind="task", task_id="SL-8", status="rejected")
    with project_scope(world.project):
        session_process(session=session)
        assert Session.objects.get(pk=session.pk).status == "rejected"


def test_a_session_whose_raw_blob_is_unreadable_is_marked_failed_with_the_reason(world, ingest) -> None:
    session = ingest(world.project, world.member)
    blobs.put(session.raw_storage_key, b"not gzip at all")
    with scopes_disabled():
        Session.objects.filter(pk=session.pk).update(status="processing")
        session.refresh_from_db()
    with project_scope(world.project):
        session_process(session=session)
        failed = Session.objects.get(pk=session.pk)
    assert failed.status == "failed" and "gzip" in failed.error.lower()


def test_reprocess_re_derives_content_and_keeps_the_final_status(world, ingest) -> None:
    session = ingest(world.project, world.member, kind="task", task_id="SL-9", status="rejected")
    blobs.delete(session.content_storage_key)
    with project_scope(world.project):
        session_reprocess(session=session)
        again = Session.objects.get(pk=session.pk)
    assert again.status == "rejected" and blobs.load_json_gz(again.content_storage_key)["messages"]
