"""Gemini CLI chat recordings (docs/agents.md, "Gemini CLI") on real public sessions and edge cases.

The real sessions were written before v0.39, as one JSON document. The JSONL form of the same
sessions is made here the way Gemini CLI itself migrates a document when it resumes it
(`ChatRecordingService.initialize`): the metadata line, one line per message, then a `$set`.
Counts are taken from the raw JSON here, independently of the parser.
"""

from __future__ import annotations

import json
import os
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from sessionledger.core.formats import cut_after_turn, get_format, locate, parse_transcript, slim, turn_starts
from sessionledger.core.formats.gemini_replay import legacy_messages
from tests.fixtures.agents.helpers import (
    assert_document_shape,
    assert_prefix_at_line_end,
    assert_slim_keeps_lines,
    hostile_lines,
    load,
    names,
    tool_ids,
)
from tests.work import assert_linear

REAL = names("gemini")
IGNORED_PREFIXES = ("/", "?", "<session_context>", "<hook_context>")
FINISHED = {"success", "error", "cancelled"}


def parse(raw: bytes):
    return parse_transcript(raw, agent="gemini")


def migrate(raw: bytes) -> bytes:
    """A legacy document as the JSONL file Gemini CLI writes when it resumes it."""
    doc = json.loads(raw)
    keys = ("sessionId", "projectHash", "startTime", "lastUpdated", "kind", "directories", "summary")
    rows = [{k: doc[k] for k in keys if k in doc}, *doc["messages"], {"$set": {"sessionId": doc["sessionId"]}}]
    return b"".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")).encode() + b"\n" for r in rows)


def prompts_in(doc: dict) -> list[dict]:
    return [
        m
        for m in doc["messages"]
        if m["type"] == "user" and isinstance(m["content"], str) and m["content"].strip()
        if not m["content"].strip().startswith(IGNORED_PREFIXES)
    ]


def calls_in(doc: dict) -> list[dict]:
    return [c for m in doc["messages"] if m["type"] == "gemini" for c in m.get("toolCalls") or []]


@pytest.fixture(params=REAL)
def raw(request) -> bytes:
    return load("gemini", request.param)


@pytest.fixture(params=["json", "jsonl"])
def form(request, raw) -> bytes:
    return raw if request.param == "json" else migrate(raw)


def row(**rec) -> bytes:
    return json.dumps(rec).encode() + b"\n"


META = row(sessionId="g-1", projectHash="ab" * 32, startTime="2026-05-01T10:00:00.000Z", kind="main")


def user(key: str, text: str) -> bytes:
    return row(id=key, timestamp="2026-05-01T10:00:01.000Z", type="user", content=[{"text": text}])


def reply(key: str, text: str = "", calls: list[dict] | None = None, **extra) -> bytes:
    return row(id=key, timestamp="2026-05-01T10:00:02Z", type="gemini", content=text, toolCalls=calls or [], **extra)


def tool(call_id: str, status: str = "success", output: str | None = "ok", name: str = "run_shell_command") -> dict:
    call: dict[str, Any] = {
        "id": call_id,
        "name": name,
        "args": {"command": "ls"},
        "status": status,
        "timestamp": "2026-05-01T10:00:03Z",
    }
    if output is not None:
        call["result"] = [{"functionResponse": {"id": call_id, "name": name, "response": {"output": output}}}]
    return call


# --- real sessions ----------------------------------------------------------------------


def test_the_format_is_registered_for_the_ingest_agent_name():
    assert get_format("gemini").name == "gemini" == parse(b"").agent


def test_every_prompt_of_a_real_session_is_recovered(raw, form):
    doc = json.loads(raw)
    parsed = parse(form)
    wanted = [m["content"] for m in prompts_in(doc)]
    assert parsed.prompts == wanted and parsed.turn_count == len(turn_starts(form, agent="gemini")) >= 1
    assert [t["uuid"] for t in parsed.turns] == [m["id"] for m in prompts_in(doc)]
    assert parsed.agent_session_id == doc["sessionId"] and parsed.agent_version is None
    assert parsed.stats["session"]["projectHash"] == doc["projectHash"]
    assert parsed.stats["format"] == ("json" if form is raw else "jsonl")
    assert parsed.stats["skipped_lines"] == 0
    assert_document_shape(parsed)


def test_every_tool_call_and_result_of_a_real_session_is_recovered(raw, form):
    doc = json.loads(raw)
    parsed = parse(form)
    calls = calls_in(doc)
    assert tool_ids(parsed, "tool_use") == [c["id"] for c in calls]
    assert tool_ids(parsed, "tool_result") == [c["id"] for c in calls if c["status"] in FINISHED]
    errors = [m["tool"]["id"] for m in parsed.messages if m["kind"] == "tool_result" and m["tool"]["is_error"]]
    assert errors == [c["id"] for c in calls if c["status"] in ("error", "cancelled")]
    for use, result in zip(*(iter(m for m in parsed.messages if "tool" in m),) * 2, strict=True):
        assert use["kind"] == "tool_use" and result["kind"] == "tool_result"
        assert result["tool"]["id"] == use["tool"]["id"] and result["index"] == use["index"] + 1


def test_real_results_are_the_tool_outputs(raw):
    parsed = parse(raw)
    outputs = {
        c["id"]: c["result"][0]["functionResponse"]["response"]
        for c in calls_in(json.loads(raw))
        if c.get("result") and "functionResponse" in c["result"][0]
    }
    for msg in parsed.messages:
        if msg["kind"] == "tool_result" and msg["tool"]["id"] in outputs:
            response = outputs[msg["tool"]["id"]]
            assert msg["content"].startswith(response.get("output") or response.get("error") or "")


def test_real_tool_calls_read_as_claude_like_tools():
    parsed = parse(load("gemini", "session-2025-10-27T19-55-981c87cb.json"))
    by_agent = {m["tool"]["agent_name"]: m["tool"] for m in parsed.messages if m["kind"] == "tool_use"}
    assert by_agent["run_shell_command"]["name"] == "Bash" and by_agent["run_shell_command"]["input"]["command"]
    assert by_agent["write_file"]["name"] == "Write" and by_agent["write_file"]["input"]["content"]
    assert by_agent["read_file"]["name"] == "Read" and by_agent["read_file"]["input"]["file_path"].startswith("/")
    assert by_agent["google_web_search"]["name"] == "WebSearch"
    calls = calls_in(json.loads(load("gemini", "session-2025-10-27T19-55-981c87cb.json")))
    written = [c["args"]["file_path"] for c in calls if c["name"] in ("write_file", "replace")]
    assert set(parsed.files_touched) <= set(written) and parsed.files_touched
    thinking = [m for m in parsed.messages if m["kind"] == "thinking"]
    assert thinking and all(m["content"].startswith("**") for m in thinking)  # **subject** then description


def test_legacy_turn_starts_point_at_each_prompt_object(raw):
    starts = turn_starts(raw, agent="gemini")
    ids = [m["id"] for m in prompts_in(json.loads(raw))]
    decoder = json.JSONDecoder()
    for offset, wanted in zip(starts, ids, strict=True):
        found, _ = decoder.raw_decode(raw.decode(), len(raw[:offset].decode()))
        assert found["id"] == wanted
    assert [rec["id"] for _, rec in legacy_messages(raw)] == [m["id"] for m in json.loads(raw)["messages"]]


def test_real_sessions_cut_at_every_turn(raw, form):
    full = parse(form)
    for n in range(1, full.turn_count):
        cut = cut_after_turn(form, n, agent="gemini")
        parsed = parse(cut)
        assert parsed.prompts == full.prompts[:n]
        assert set(tool_ids(parsed, "tool_result")) == {i for i in tool_ids(parsed, "tool_use")} & set(
            tool_ids(full, "tool_result")
        )
        if form is not raw:
            assert_prefix_at_line_end(form, cut)
        else:  # a legacy document comes back as the JSONL Gemini CLI would resume
            assert parse(cut).stats["format"] == "jsonl" and parsed.agent_session_id == full.agent_session_id
    assert cut_after_turn(form, full.turn_count, agent="gemini") == form
    assert cut_after_turn(form, 99, agent="gemini") == form


def test_real_sessions_are_unchanged_by_slimming(form):
    slimmed, counts = slim(form, agent="gemini")
    assert slimmed == form and counts == {"images": 0, "bytes_saved": 0}


# --- edge cases (synthetic) -------------------------------------------------------------


def test_a_message_written_again_replaces_the_first_copy_in_place():
    running = reply("m1", "", [tool("c1", status="executing", output=None)])
    done = reply("m1", "", [tool("c1")], tokens={"input": 100, "output": 5, "cached": 60, "thoughts": 3, "total": 105})
    raw = META + user("u1", "run ls") + running + row(**{"$set": {"lastUpdated": "x"}}) + done + reply("m2", "listed")
    parsed = parse(raw)
    assert [m["kind"] for m in parsed.messages] == ["prompt", "tool_use", "tool_result", "text"]
    assert parsed.token_usage == {
        "input_tokens": 40,
        "output_tokens": 8,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 60,
    }
    call_card = parsed.messages[1]
    assert call_card["usage"] == {"input_tokens": 40, "cache_read_input_tokens": 60, "output_tokens": 8}
    assert "usage" not in parsed.messages[3]  # m2 recorded no tokens
    # a cut right after the running copy would lose c1's output: the turn is kept whole
    raw2 = raw + user("u2", "again")
    assert parse(cut_after_turn(raw2, 1, agent="gemini")).prompts == ["run ls"]
    early = META + user("u1", "run ls") + running + user("u2", "next") + done
    assert cut_after_turn(early, 1, agent="gemini") == early


def test_rewind_and_set_messages_replay_like_gemini_cli():
    raw = (
        META + user("u1", "one") + reply("m1", "a") + user("u2", "two") + reply("m2", "b") + row(**{"$rewindTo": "u2"})
    )
    parsed = parse(raw)
    assert parsed.prompts == ["one"] and parsed.stats["rewound_messages"] == 2
    assert parse(raw + row(**{"$rewindTo": "unknown"})).messages == []
    checkpoint = row(**{"$set": {"messages": [json.loads(user("s1", "summary of earlier work"))], "summary": "Title"}})
    replaced = parse(raw + checkpoint + reply("m3", "c"))
    assert replaced.prompts == ["summary of earlier work"] and replaced.stats["session"]["summary"] == "Title"


def test_commands_context_and_tool_responses_are_not_prompts():
    response = {"functionResponse": {"id": "c9", "name": "read_file", "response": {"error": "denied"}}}
    raw = (
        META
        + user("u0", "/compress")
        + user("u1", "<session_context>cwd</session_context>")
        + user("u2", "real question")
        + row(id="u3", timestamp="2026-05-01T10:00:04Z", type="user", content=[response])
        + row(id="i1", timestamp="2026-05-01T10:00:05Z", type="error", content="Quota exceeded")
    )
    parsed = parse(raw)
    assert parsed.prompts == ["real question"] and parsed.title == "real question"
    assert [(m["kind"], m.get("subtype")) for m in parsed.messages if m["kind"] == "system"] == [
        ("system", "command"),
        ("system", "session_context"),
        ("system", "error"),
    ]
    result = next(m for m in parsed.messages if m["kind"] == "tool_result")
    assert result["tool"]["id"] == "c9" and result["content"] == "denied"
    assert turn_starts(raw, agent="gemini") == [raw.index(user("u2", "real question"))]


def test_display_content_and_thought_parts():
    typed = row(
        id="u1", timestamp="t", type="user", content=[{"text": "expanded @file body"}], displayContent="@a.py fix"
    )
    thought = row(
        id="m1",
        timestamp="2026-05-01T10:00:02Z",
        type="gemini",
        content=[{"text": "hmm", "thought": True}, {"text": "fixed"}],
    )
    parsed = parse(META + typed + thought)
    assert parsed.prompts == ["@a.py fix"] and parsed.messages[0]["timestamp"] is None
    assert [(m["kind"], m["content"]) for m in parsed.messages[1:]] == [("thinking", "hmm"), ("text", "fixed")]


def test_broken_and_torn_lines_are_counted_never_fatal():
    good = META + user("u1", "one") + reply("m1", "a")
    raw = good + b"{oops\n" + b'"a string"\n' + reply("m2", "b")[:-9]
    parsed = parse(raw)
    assert parsed.stats["skipped_lines"] == 3 and parsed.stats["truncated_bytes"] == len(reply("m2", "b")) - 9
    assert parsed.messages == parse(good).messages


def test_big_inline_images_are_slimmed_and_other_lines_kept():
    image = {"inlineData": {"mimeType": "image/png", "data": "A" * 40000}}
    raw = META + row(id="u1", timestamp="t", type="user", content=[{"text": "look"}, image]) + reply("m1", "ok")
    slimmed, counts = slim(raw, agent="gemini")
    assert counts["images"] == 1 and assert_slim_keeps_lines(raw, slimmed, lambda old: b"inlineData" in old) == 1
    assert parse(slimmed).prompts == parse(raw).prompts == ["look[image: image/png, 29 KB]"]
    legacy = json.dumps({"sessionId": "g", "projectHash": "h", "messages": [json.loads(raw.splitlines()[1])]}, indent=2)
    slim_legacy, legacy_counts = slim(legacy.encode(), agent="gemini")
    assert legacy_counts["images"] == 1 and parse(slim_legacy).prompts == ["look[image: image/png, 29 KB]"]


def _pathological(n: int) -> bytes:
    """n rewinds and upserts, and n/10 calls left executing across as many turns."""
    rewinds = b"".join(user(f"u{i}", f"p{i}") + row(**{"$rewindTo": f"u{i}"}) for i in range(n))
    upserts = reply("m", "x") * n
    return META + _pending(n // 10) + rewinds + upserts


def _pending(n: int) -> bytes:
    calls = [tool(f"c{i}", status="executing", output=None) for i in range(n)]
    return (
        reply("big", "", calls)
        + b"".join(user(f"v{i}", f"q{i}") for i in range(n))
        + reply("big", "", [tool(f"c{i}") for i in range(n)])
    )


def _legacy(n: int) -> bytes:
    messages = [{"id": str(i), "type": "user", "content": f"p{i}"} for i in range(n)]
    return json.dumps({"sessionId": "s", "projectHash": "h", "messages": messages}, indent=2).encode()


def _deep(n: int) -> bytes:
    return b"{" + b'"a":[' * n + b"\n"


def test_pathological_inputs_stay_linear():
    # Work, not time (tests/work.py): the Python lines run at n and 2n grow ~2x, not ~4x.
    assert_linear(lambda n: partial(parse, _pathological(n)), 1000)
    assert_linear(lambda n: partial(cut_after_turn, _pathological(n), 1, agent="gemini"), 1000)
    assert_linear(lambda n: partial(parse, _deep(n)), 5000)
    assert_linear(lambda n: partial(turn_starts, _legacy(n), agent="gemini"), 2500)
    # … and the full size still parses and cuts as it should.
    raw = _pathological(20000)
    parsed = parse(raw)
    assert parsed.stats["rewound_messages"] == 20000 and parsed.turn_count == 2000
    assert cut_after_turn(raw, 1, agent="gemini") == META + _pending(2000)  # no call left behind
    assert parse(_deep(50000)).stats["skipped_lines"] == 1
    assert len(turn_starts(_legacy(50000), agent="gemini")) == 50000


# --- where the files are ----------------------------------------------------------------


def test_project_folders_are_found_by_registry_marker_and_hash(tmp_path: Path):
    root = str(tmp_path / "work" / "app")
    gemini = tmp_path / "home" / ".gemini"
    hashed = gemini / "tmp" / get_format("gemini").encode_project_dir(root)
    named = gemini / "tmp" / "app"
    marked = gemini / "tmp" / "app-1"
    for folder in (hashed / "chats", named / "chats", marked / "chats"):
        folder.mkdir(parents=True)
    (gemini / "projects.json").write_text(json.dumps({"projects": {root: "app"}}))
    (marked / ".project_root").write_text(root)
    (named / "chats" / "session-2026-05-01T10-00-g1.jsonl").write_bytes(META)
    legacy = hashed / "chats" / "session-2025-10-01T10-00-g2.json"
    legacy.write_text(json.dumps({"sessionId": "g-2", "projectHash": "h", "messages": []}))
    os.utime(legacy, (1, 1))
    assert locate.gemini_project_dirs(root, gemini=gemini) == [named, marked, hashed]
    assert [s.session_id for s in locate.gemini_sessions(root, gemini=gemini)] == ["g-1", "g-2"]
    assert locate.gemini_dir({"GEMINI_CLI_HOME": "/x"}) == Path("/x/.gemini")


def test_codex_sessions_of_a_repository_are_found_by_their_cwd(tmp_path: Path):
    home = tmp_path / ".codex"
    day = home / "sessions" / "2026" / "05" / "11"
    day.mkdir(parents=True)
    raw = load("codex", "rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl.gz")
    first = json.loads(raw.split(b"\n", 1)[0])
    repo = first["payload"]["cwd"]
    (day / "rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl").write_bytes(raw)
    other = dict(first, payload=dict(first["payload"], id="other", cwd="/elsewhere"))
    (day / "rollout-2026-05-11T12-00-00-other.jsonl").write_text(json.dumps(other) + "\n")
    (day / "rollout-broken.jsonl").write_bytes(b"\x00not json")
    found = locate.codex_sessions(repo + "/", home=home)
    assert [s.session_id for s in found] == [first["payload"]["id"]]
    assert locate.codex_sessions(str(Path(repo).parent), home=home)[0].cwd == repo  # a subfolder counts
    assert locate.codex_home({"CODEX_HOME": "/c"}) == Path("/c")


@settings(max_examples=80, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(hostile_lines(["user", "gemini", "info", "error"], envelope=False))
def test_any_input_parses_and_cuts_as_a_prefix(raw):
    parsed = parse(raw)
    assert parsed.stats["lines"] == sum(1 for line in raw.split(b"\n") if line.strip())
    starts = turn_starts(raw, agent="gemini")
    assert starts == sorted(starts)
    for n in range(1, len(starts) + 1):
        assert raw.startswith(cut_after_turn(raw, n, agent="gemini"))
    assert slim(raw, agent="gemini")[0] == raw


def test_the_messages_of_one_model_reply_share_its_record_id(raw):
    parsed = parse(raw)
    replies = {m["id"] for m in json.loads(raw)["messages"] if m["type"] == "gemini"}
    assistant = [m for m in parsed.messages if m["role"] == "assistant"]
    assert assistant and {m["message_id"] for m in assistant} <= replies
