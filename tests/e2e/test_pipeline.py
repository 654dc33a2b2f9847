"""Upload → object storage (moto over HTTP) → Celery worker process → Postgres → REST."""

from __future__ import annotations

import gzip

import pytest

from tests.client.transcript_builder import TranscriptBuilder
from tests.e2e.conftest import wait_for_status
from tests.uploads import metadata_for, upload

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def every_line_type() -> tuple[bytes, bytes]:
    """A transcript with every line type of the reference, and its sub-agent's file."""
    main = TranscriptBuilder()
    child = (
        main.subagent("a2898e3")
        .prompt("Find the parser")
        .tool_call("Grep", {"pattern": "parse"}, result="src/parse.py")
        .assistant_text("It is in src/parse.py.")
    )
    (
        main.bookkeeping("custom-title", customTitle="capture work")
        .file_history_snapshot()
        .prompt("Please implement the session capture feature")
        .attachment("hook_additional_context", content=["ctx"])
        .thinking("Plan: read the code first.")
        .tool_call("Bash", {"command": "pytest -q"}, result="1 failed", hook=True)
        .parallel_tools(
            [("Read", {"file_path": "/work/app/a.py"}, "a"), ("Read", {"file_path": "/work/app/b.py"}, "b")], errors=[1]
        )
        .task("find parser", "Find the parser", agent_id="a2898e3", result="It is in src/parse.py.")
        .tool_call("Edit", {"file_path": "/work/app/src/capture.py", "old_string": "a", "new_string": "b"})
        .assistant_text("Implemented **capture**.")
        .turn_end()
        .queue_operation("enqueue", "also docs")
        .slash_command("compact", stdout="Compacted")
        .compact("We implemented capture.")
        .prompt("Now write the docs")
        .assistant_text("Docs written.")
        .turn_end()
        .summary("Session capture")
        .broken()
    )
    return main.build(), child.build()


def _messages(client, slug: str, session_id: str, query: str = "") -> list[dict]:
    response = client.get(f"/api/v1/projects/{slug}/sessions/{session_id}/messages?limit=1000{query}")
    assert response.status_code == 200, response.content
    return response.json()["results"]


def test_an_upload_is_processed_by_a_real_worker_into_messages_and_turns(world, api_as, start_worker) -> None:
    raw, child = every_line_type()
    client = api_as(world.member)
    start_worker()
    accepted = upload(client, world.project.slug, raw, subagents={"a2898e3": child})
    assert accepted.status_code == 202
    session = wait_for_status(accepted.json()["id"])
    assert session.status == "complete", session.error
    # three turns: the first prompt, the typed `/compact` (a slash command is a prompt), the last prompt
    assert session.turn_count == 3 and session.title == "Please implement the session capture feature"
    # the Edit's /work/app/src/capture.py is the commit's src/capture.py: listed once, relative
    assert "src/capture.py" in session.files_touched and not any(p.startswith("/") for p in session.files_touched)

    messages = _messages(client, world.project.slug, str(session.pk))
    assert session.message_count == len(messages)
    assert [m["index"] for m in messages] == list(range(len(messages)))
    prompts = [m["content"] for m in messages if m["kind"] == "prompt"]
    assert prompts[0] == "Please implement the session capture feature" and prompts[-1] == "Now write the docs"
    uses = {m["tool"]["id"]: m for m in messages if m["kind"] == "tool_use"}
    results = [m for m in messages if m["kind"] == "tool_result"]
    assert all(r["tool"]["id"] in uses for r in results if not r.get("sidechain"))
    assert [r["tool"]["is_error"] for r in results if not r.get("sidechain")].count(True) == 1
    assert any(m.get("sidechain") and m["content"] == "Find the parser" for m in messages)
    assert {m["role"] for m in messages} == {"user", "assistant", "tool", "system"}
    assert all(m["timestamp"] for m in messages if m["role"] != "system" or m["kind"] != "summary")


def test_raw_returns_the_uploaded_bytes_exactly(world, api_as, start_worker) -> None:
    raw, _ = every_line_type()
    client = api_as(world.viewer)
    accepted = upload(api_as(world.member), world.project.slug, raw).json()
    response = client.get(f"/api/v1/projects/{world.project.slug}/sessions/{accepted['id']}/raw")
    assert response.status_code == 200 and response["Content-Type"] == "application/gzip"
    assert gzip.decompress(b"".join(response.streaming_content)) == raw


def test_role_and_time_filters_return_exactly_the_matching_messages(world, api_as, start_worker) -> None:
    raw, _ = every_line_type()
    client = api_as(world.member)
    start_worker()
    session_id = upload(client, world.project.slug, raw).json()["id"]
    wait_for_status(session_id)
    everything = _messages(client, world.project.slug, session_id)
    tools = _messages(client, world.project.slug, session_id, "&role=tool&role=user")
    assert tools == [m for m in everything if m["role"] in ("tool", "user")]
    stamps = sorted(m["timestamp"] for m in everything if m["timestamp"])
    since, until = stamps[3], stamps[8]
    window = _messages(client, world.project.slug, session_id, f"&since={since}&until={until}")
    assert window and window == [m for m in everything if m["timestamp"] and since <= m["timestamp"] <= until]


def test_a_session_uploaded_while_no_worker_runs_completes_when_one_starts(world, api_as, start_worker) -> None:
    raw, _ = every_line_type()
    client = api_as(world.member)
    session_id = upload(client, world.project.slug, raw, metadata_for(raw)).json()["id"]
    detail = client.get(f"/api/v1/projects/{world.project.slug}/sessions/{session_id}").json()
    assert detail["status"] == "processing"
    start_worker()
    assert wait_for_status(session_id).status == "complete"
