"""Hostile uploads: gzip member bombs, the worker's CPU budget, oversized metadata,
conflicting re-uploads. Each test is named after the attack it stops.

"At once" is asserted as work, not time (tests/work.py): the lines our code runs do not grow when
the attack doubles; the real timings are in bench/bench_hostile.py.
"""

from __future__ import annotations

import gzip
import io
import json
from collections.abc import Callable

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django_scopes import scopes_disabled

from projects.scoping import project_scope
from sessions_app import blobs
from sessions_app.models import Session
from sessions_app.processing import session_process
from tests.client.transcript_builder import TranscriptBuilder
from tests.uploads import gz_file, metadata_for, upload
from tests.work import assert_bounded

RAW = TranscriptBuilder().prompt("Add capture").assistant_text("Done.").turn_end().build()
EMPTY_MEMBERS = 30_000  # ~600 KB; gzip.decompress takes seconds on these, quadratic in their number


def _sessions() -> list[Session]:
    with scopes_disabled():
        return list(Session.objects.all())


def _reprocess(session: Session) -> Session:
    with scopes_disabled():
        Session.objects.filter(pk=session.pk).update(status="processing")
        session.refresh_from_db()
    with project_scope(session.project):
        session_process(session=session)
        return Session.objects.get(pk=session.pk)


# --- gzip member bombs -----------------------------------------------------------------------------


def _members(n: int) -> io.BytesIO:
    part = io.BytesIO(gzip.compress(b"") * n)
    part.name = "transcript.jsonl.gz"
    return part


def test_an_upload_of_550000_empty_gzip_members_is_refused_at_once(world, api_as) -> None:
    def refused(n: int) -> Callable[[], None]:
        def run() -> None:
            response = upload(api_as(world.member), world.project.slug, RAW, transcript_part=_members(n))
            assert response.status_code == 413
            error = response.json()["error"]
            assert (error["code"], error["field"], error["limit"]) == ("too_many_members", "transcript", 64)

        return run

    # "At once" as work, not time (tests/work.py): our code runs as many lines for 550,000
    # members as for 275,000 (it stops at the 65th); main inflated them all, then the worker again.
    assert_bounded(refused, 275_000)
    assert _sessions() == []


def test_a_stored_gzip_member_bomb_fails_its_processing_at_once(world, ingest) -> None:
    session = ingest(world.project, world.member)

    def reprocess(n: int) -> Callable[[], None]:
        blobs.put(session.raw_storage_key, gzip.compress(b"") * n)  # stored before ingest counted members

        def run() -> None:
            failed = _reprocess(session)
            assert failed.status == "failed" and "gzip members" in failed.error

        return run

    assert_bounded(reprocess, EMPTY_MEMBERS)  # the same lines run for 2x the members: refused at once


def test_a_stored_gzip_member_bomb_does_not_stall_the_stitched_transcript(world, ingest, api_as) -> None:
    session = ingest(world.project, world.member)
    url = f"/api/v1/projects/{world.project.slug}/agent-sessions/{session.agent_session_id}/transcript"

    def read(n: int) -> Callable[[], None]:
        blobs.put(session.raw_storage_key, gzip.compress(b"") * n)

        def run() -> None:
            response = api_as(world.viewer).get(url)
            assert response.status_code == 409 and response.json()["error"]["code"] == "unreadable"

        return run

    assert_bounded(read, EMPTY_MEMBERS)  # the same lines run for 2x the members: refused at once


def test_a_few_gzip_members_are_still_one_transcript(world, api_as) -> None:
    part = io.BytesIO(b"".join(gzip.compress(RAW[i : i + 100]) for i in range(0, len(RAW), 100)))
    part.name = "transcript.jsonl.gz"
    assert upload(api_as(world.member), world.project.slug, RAW, transcript_part=part).status_code == 202
    [session] = _sessions()
    assert blobs.gunzip(blobs.get(session.raw_storage_key)) == RAW


# --- the worker's budget ---------------------------------------------------------------------------


def _long_transcript(turns: int = 400) -> bytes:
    builder = TranscriptBuilder()
    for n in range(turns):
        builder.prompt(f"step {n}: " + "make it faster " * 20).tool_call("Bash", {"command": f"make {n}"}, result="ok")
        builder.assistant_text("done " * 50).turn_end()
    return builder.build()


def test_a_session_over_its_cpu_budget_fails_with_the_reason(world, ingest, settings) -> None:
    session = ingest(world.project, world.member, raw=_long_transcript())
    settings.SESSIONLEDGER_PROCESS_CPU_SECONDS = 0.001  # parsing 400 turns takes tens of milliseconds
    failed = _reprocess(session)
    assert failed.status == "failed" and "budget of 0.001 s of CPU" in failed.error
    settings.SESSIONLEDGER_PROCESS_CPU_SECONDS = 30
    assert _reprocess(session).status == "complete"  # within the budget, the same session completes


# --- oversized metadata ----------------------------------------------------------------------------


def _post(client, slug: str, metadata: object) -> object:
    body = {"metadata": metadata, "transcript": gz_file(RAW, "transcript.jsonl.gz")}
    return client.post(f"/api/v1/projects/{slug}/sessions", body, format="multipart")


def _paths(count: int, length: int) -> list[str]:
    return [f"src/{n:06d}/" + "x" * (length - 11) for n in range(count)]


def test_metadata_sent_as_a_file_part_is_capped_like_any_metadata(world, api_as) -> None:
    meta = metadata_for(RAW, files_touched=_paths(10_000, 1024))  # 10.5 MB: each list within its own caps
    part = io.BytesIO(json.dumps(meta).encode())
    part.name = "metadata.json"
    response = _post(api_as(world.member), world.project.slug, part)
    assert response.status_code == 413
    error = response.json()["error"]
    assert (error["field"], error["limit"]) == ("metadata", 1024 * 1024)
    assert _sessions() == []


def test_metadata_sent_as_text_is_capped_in_bytes_too(world, api_as) -> None:
    meta = metadata_for(RAW, files_touched=_paths(1_500, 1000))  # 1.5 MB, under Django's own 2.5 MB limit
    response = _post(api_as(world.member), world.project.slug, json.dumps(meta))
    assert response.status_code == 413 and response.json()["error"]["field"] == "metadata"


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"files_touched": _paths(10_001, 20)}, "files_touched"),
        ({"files_touched": ["x" * 1025]}, "files_touched.0"),
        ({"redaction": {f"rule{n}": 1 for n in range(101)}}, "redaction"),
        ({"redaction": {"r" * 65: 1}}, "redaction"),
        ({"redaction": {"github": 2**70}}, "redaction.github"),
        ({"subagents": [{"agent_id": f"a{n}"} for n in range(101)]}, "subagents"),
        ({"diff_stat": {"files": 2**70}}, "diff_stat.files"),
        ({"end_offset": 2**63}, "end_offset"),
    ],
    ids=["files", "path", "rules", "rule_name", "rule_count", "subagents", "diff_stat", "offset"],
)
def test_every_list_and_dict_of_the_metadata_is_capped_naming_the_field(world, api_as, fields, field) -> None:
    response = upload(api_as(world.member), world.project.slug, RAW, metadata_for(RAW, **fields))
    assert response.status_code == 400, response.content
    assert response.json()["error"]["field"] == field
    assert _sessions() == []


def test_lists_of_sessions_leave_out_the_large_columns(world, ingest, api_as) -> None:
    session = ingest(
        world.project,
        world.member,
        kind="task",
        task_id="SL-4",
        status="complete",
        commit_message="Long\n\n" + "why " * 5000,
        files_touched=_paths(500, 200),
    )
    client, base = api_as(world.viewer), f"/api/v1/projects/{world.project.slug}"
    items = [
        client.get(f"{base}/sessions").json()["results"][0],
        client.get(f"{base}/tasks/SL-4").json()["results"][0],
        client.get(f"{base}/commits/{session.commit_hash}").json()["results"][0],
    ]
    for item in items:
        assert item["id"] == str(session.pk) and item["title"]
        assert "files_touched" not in item and "commit_message" not in item
    detail = client.get(f"{base}/sessions/{session.pk}").json()
    assert len(detail["files_touched"]) == 500 and detail["commit_message"].startswith("Long")


def test_list_pages_do_not_read_the_large_columns(world, ingest, client) -> None:
    session = ingest(world.project, world.member, files_touched=_paths(500, 200), feature_branch="feat/big")
    client.force_login(world.member)
    for page in (f"/p/{world.project.slug}/", f"/p/{world.project.slug}/b/feat/big"):
        with CaptureQueriesContext(connection) as queries:
            assert client.get(page).status_code == 200
        reads = [q["sql"] for q in queries.captured_queries if 'FROM "sessions_app_session"' in q["sql"]]
        assert reads and not any('"files_touched"' in sql.split(" FROM ")[0] for sql in reads), page
    assert client.get(f"/p/{world.project.slug}/s/{session.pk}").status_code == 200


def test_a_session_still_processing_is_listed_with_its_commit_subject(world, api_as) -> None:
    upload(api_as(world.member), world.project.slug, RAW)  # no worker: stays processing
    [item] = api_as(world.viewer).get(f"/api/v1/projects/{world.project.slug}/sessions").json()["results"]
    assert (item["status"], item["title"]) == ("processing", "Add session capture")


# --- re-uploads --------------------------------------------------------------------------------------


def test_different_bytes_for_the_same_agent_session_and_offsets_are_a_409(world, api_as) -> None:
    client = api_as(world.member)
    first = upload(client, world.project.slug, RAW, **{"Idempotency-Key": "first"}).json()
    forged = RAW.replace(b"Done.", b"Gone.")
    response = upload(client, world.project.slug, forged, metadata_for(RAW), **{"Idempotency-Key": "second"})
    assert response.status_code == 409
    error = response.json()["error"]
    assert (error["code"], error["field"], error["url"]) == ("conflict", "transcript", first["url"])
    assert "5d1c0c8e-3f6a-4b7e-9a51-2b8f0d4c6e17" in error["message"] and f"0-{len(RAW)}" in error["message"]
    [stored] = _sessions()
    assert blobs.gunzip(blobs.get(stored.raw_storage_key)) == RAW


def test_the_same_bytes_under_a_new_key_are_the_same_session(world, api_as) -> None:
    client = api_as(world.member)
    first = upload(client, world.project.slug, RAW, **{"Idempotency-Key": "one"})
    again = upload(client, world.project.slug, RAW, **{"Idempotency-Key": "two"})
    assert (first.status_code, again.status_code) == (202, 200)
    assert first.json()["id"] == again.json()["id"] and len(_sessions()) == 1
