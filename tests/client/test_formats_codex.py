"""OpenAI Codex CLI rollouts (docs/agents.md, "Codex CLI") on real public sessions and edge cases.

The counts every test compares against are taken from the raw JSON lines here, independently of
the parser: prompts are `user_message` events, calls and outputs are the `call_id`s of the
response items.
"""

from __future__ import annotations

import json
import re
from functools import partial

import pytest
from hypothesis import HealthCheck, given, settings

from sessionledger.core.formats import codex, cut_after_turn, facts, get_format, parse_transcript, slim, turn_starts
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

REAL = names("codex")
MODERN = "rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl.gz"  # 0.125.0, codex-tui
VSCODE = "rollout-2025-09-24T20-12-23-01997ea4-a70d-7da3-8c20-c736db82a7c5.jsonl.gz"  # 0.40.0, VS Code
CALLS = {"function_call", "custom_tool_call", "local_shell_call"}
OUTPUTS = {"function_call_output", "custom_tool_call_output"}


def records(raw: bytes) -> list[dict]:
    return [json.loads(line) for line in raw.splitlines() if line.strip()]


def items(raw: bytes, *types: str) -> list[dict]:
    return [r["payload"] for r in records(raw) if r["type"] == "response_item" and r["payload"]["type"] in types]


def events(raw: bytes, kind: str) -> list[dict]:
    return [r["payload"] for r in records(raw) if r["type"] == "event_msg" and r["payload"]["type"] == kind]


def parse(raw: bytes):
    return parse_transcript(raw, agent="codex")


@pytest.fixture(params=REAL)
def raw(request) -> bytes:
    return load("codex", request.param)


def line(**payload) -> bytes:
    kind = payload.pop("kind", "response_item")
    stamp = payload.pop("at", "2026-01-01T00:00:00.000Z")
    return json.dumps({"timestamp": stamp, "type": kind, "payload": payload}).encode() + b"\n"


def meta() -> bytes:
    return line(kind="session_meta", id="s-1", cwd="/w/app", cli_version="0.130.0", git={"branch": "main"})


def prompt(text: str) -> bytes:
    user = line(type="message", role="user", content=[{"type": "input_text", "text": text}])
    return user + line(kind="event_msg", type="user_message", message=text)


def call(call_id: str, cmd: str) -> bytes:
    return line(type="function_call", name="exec_command", arguments=json.dumps({"cmd": cmd}), call_id=call_id)


def output(call_id: str, text: str, code: int = 0) -> bytes:
    body = f"Chunk ID: 1\nWall time: 0.1 seconds\nProcess exited with code {code}\nOutput:\n{text}"
    return line(type="function_call_output", call_id=call_id, output=body)


def say(text: str) -> bytes:
    return line(type="message", role="assistant", content=[{"type": "output_text", "text": text}])


# --- real sessions ----------------------------------------------------------------------


def test_the_format_is_registered_for_the_ingest_agent_name():
    assert get_format("codex").name == "codex" == parse(b"").agent


def test_every_prompt_of_a_real_session_is_recovered(raw):
    parsed = parse(raw)
    typed = [e["message"] for e in events(raw, "user_message")]
    assert parsed.turn_count == len(typed) == len(turn_starts(raw, agent="codex")) >= 1
    images = [len(e.get("images") or []) for e in events(raw, "user_message")]
    for prompt_text, wanted, count in zip(parsed.prompts, typed, images, strict=True):
        request = wanted.split("## My request for Codex:")[-1].strip()
        shown = re.findall(r"\[image: image/\w+, [\d.]+ [KM]?B\]", prompt_text)
        assert len(shown) == count  # pasted images are placeholders, never base64
        assert re.sub(r"\s*\[image: [^\]]*\]", "", prompt_text).strip() == request
    assert_document_shape(parsed)
    assert parsed.stats["skipped_lines"] == 0 and parsed.stats["truncated_bytes"] == 0


def test_every_call_and_output_id_of_a_real_session_is_recovered_and_paired(raw):
    parsed = parse(raw)
    calls = [p["call_id"] for p in items(raw, *CALLS)]
    outputs = [p["call_id"] for p in items(raw, *OUTPUTS)]
    searches = items(raw, "web_search_call")
    uses = tool_ids(parsed, "tool_use")
    assert [u for u in uses if u in set(calls)] == calls
    assert len(uses) == len(calls) + len(searches)
    assert tool_ids(parsed, "tool_result") == outputs
    position = {m["tool"]["id"]: m["index"] for m in parsed.messages if m["kind"] == "tool_use"}
    for msg in parsed.messages:
        if msg["kind"] == "tool_result":
            assert position[msg["tool"]["id"]] < msg["index"], "a result before (or without) its call"
            assert msg["tool"]["name"]  # labelled with its call's tool by the shared facts


def test_a_real_session_reads_its_meta_and_tokens(raw):
    parsed = parse(raw)
    first = records(raw)[0]["payload"]
    assert parsed.agent_session_id == first["id"] and parsed.agent_version == first["cli_version"]
    assert parsed.stats["session"]["cwd"] == first["cwd"]
    totals = [e["info"]["total_token_usage"] for e in events(raw, "token_count") if e.get("info")]
    last = totals[-1]
    usage = parsed.token_usage
    assert usage["input_tokens"] + usage["cache_read_input_tokens"] == last["input_tokens"]
    assert usage["cache_read_input_tokens"] == last["cached_input_tokens"]
    assert usage["output_tokens"] == last["output_tokens"]
    assert parsed.first_timestamp <= parsed.last_timestamp


def test_shell_calls_read_as_bash_commands():
    raw = load("codex", MODERN)
    parsed = parse(raw)
    commands = [json.loads(p["arguments"])["cmd"] for p in items(raw, "function_call") if p["name"] == "exec_command"]
    bash = [
        m["tool"]["input"]["command"]
        for m in parsed.messages
        if m["kind"] == "tool_use" and m["tool"]["name"] == "Bash"
    ]
    assert bash == commands and len(commands) == 43
    older = parse(load("codex", VSCODE))
    shell = [m for m in older.messages if m["kind"] == "tool_use" and m["tool"]["agent_name"] == "shell"]
    assert shell and all(isinstance(m["tool"]["input"]["command"], str) for m in shell)
    assert any(m["tool"]["input"]["command"].startswith("cd ") for m in shell)  # `bash -lc <script>` unwrapped
    failed = [m for m in older.messages if m["kind"] == "tool_result" and m["tool"]["is_error"]]
    exit_codes = [json.loads(p["output"])["metadata"]["exit_code"] for p in items(load("codex", VSCODE), *OUTPUTS)]
    assert len(failed) == sum(1 for code in exit_codes if code != 0) > 0


def test_apply_patch_reads_as_an_edit_with_every_file_touched():
    raw = load("codex", MODERN)
    parsed = parse(raw)
    patches = [p["input"] for p in items(raw, "custom_tool_call") if p["name"] == "apply_patch"]
    edits = [m for m in parsed.messages if m["kind"] == "tool_use" and m["tool"]["agent_name"] == "apply_patch"]
    assert len(edits) == len(patches) == 3
    patched = re.findall(r"^\*\*\* (?:Update|Add|Delete) File: (.+)$", "\n".join(patches), re.MULTILINE)
    for msg, patch in zip(edits, patches, strict=True):
        tool = msg["tool"]
        assert tool["name"] == "Edit" and tool["input"]["patch"] == patch and tool["input"]["edits"]
        assert all(e["old_string"] != e["new_string"] for e in tool["input"]["edits"] if not e.get("deleted"))
    assert set(parsed.files_touched) == set(patched)


def test_real_sessions_cut_at_every_turn_as_a_safe_prefix(raw):
    full = parse(raw)
    for n in range(1, full.turn_count):
        cut = cut_after_turn(raw, n, agent="codex")
        assert_prefix_at_line_end(raw, cut)
        parsed = parse(cut)
        assert parsed.prompts == full.prompts[:n]
        assert set(tool_ids(parsed, "tool_use")) >= set(tool_ids(parsed, "tool_result"))
        answered = set(tool_ids(parsed, "tool_result"))
        later = set(tool_ids(parse(raw[len(cut) :]), "tool_result"))
        assert not (set(tool_ids(parsed, "tool_use")) - answered) & later, "a call lost its output"
    assert cut_after_turn(raw, full.turn_count, agent="codex") == raw
    assert cut_after_turn(raw, 99, agent="codex") == raw


def test_real_sessions_read_the_same_after_slimming(raw):
    slimmed, counts = slim(raw, agent="codex")
    changed = assert_slim_keeps_lines(raw, slimmed, lambda old: b'"exec_command_end"' in old or b";base64," in old)
    assert changed <= counts["events"] + counts["images"] and counts["bytes_saved"] == len(raw) - len(slimmed)
    assert parse(slimmed).messages == parse(raw).messages


def test_the_modern_session_slims_its_command_output_copies():
    raw = load("codex", MODERN)
    slimmed, counts = slim(raw, agent="codex")
    assert counts["events"] > 0 and len(slimmed) < len(raw)


# --- edge cases (synthetic) -------------------------------------------------------------


def test_context_the_agent_wrote_is_not_a_prompt():
    env = line(
        type="message",
        role="user",
        content=[{"type": "input_text", "text": "<environment_context>x</environment_context>"}],
    )
    agents = line(
        type="message", role="user", content=[{"type": "input_text", "text": "# AGENTS.md instructions for /w\n"}]
    )
    dev = line(type="message", role="developer", content=[{"type": "input_text", "text": "<permissions instructions>"}])
    raw = meta() + dev + env + agents + prompt("fix the bug") + say("done")
    parsed = parse(raw)
    assert parsed.prompts == ["fix the bug"] and parsed.title == "fix the bug"
    subtypes = [m.get("subtype") for m in parsed.messages if m["kind"] == "system"]
    assert subtypes == ["instructions", "environment", "instructions"]
    assert turn_starts(raw, agent="codex") == [len(meta())]  # the turn's preamble opens it


def test_without_user_message_events_the_wrapper_rule_decides():
    env = line(type="message", role="user", content=[{"type": "input_text", "text": "<environment_context/>"}])
    user = line(type="message", role="user", content=[{"type": "input_text", "text": "add tests"}])
    parsed = parse(meta() + env + user + say("ok"))
    assert parsed.prompts == ["add tests"]


def test_a_typed_message_without_its_response_item_is_still_a_prompt():
    raw = meta() + line(kind="event_msg", type="user_message", message="only the event", images=["a.png"])
    parsed = parse(raw)
    assert parsed.prompts == ["only the event\n\n[image]"]


def test_pre_envelope_rollouts_read_the_same():
    bare = [
        {"id": "old-1", "timestamp": "2025-05-07T17:24:21.000Z", "instructions": None},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hello"}]},
        {
            "type": "local_shell_call",
            "call_id": "c1",
            "status": "completed",
            "action": {"type": "exec", "command": ["ls", "-la"]},
        },
        {"type": "function_call_output", "call_id": "c1", "output": {"content": "total 0", "success": False}},
        {"record_type": "state"},
    ]
    parsed = parse(b"".join(json.dumps(r).encode() + b"\n" for r in bare))
    assert parsed.agent_session_id == "old-1" and parsed.prompts == ["hello"]
    use, result = (m for m in parsed.messages if "tool" in m)
    assert use["tool"]["name"] == "Bash" and use["tool"]["input"]["command"] == "ls -la"
    assert result["tool"] == {"id": "c1", "is_error": True, "name": "Bash"}
    assert parsed.stats["ignored_lines"] == {"session_meta": 1, "unknown": 1}


def test_compaction_interrupts_and_failures_are_visible():
    raw = (
        meta()
        + prompt("one")
        + call("c1", "false")
        + output("c1", "", code=1)
        + line(kind="event_msg", type="turn_aborted", reason="interrupted")
        + line(kind="compacted", message="Summary of the work so far")
        + prompt("two")
    )
    parsed = parse(raw)
    kinds = [(m["kind"], m.get("subtype")) for m in parsed.messages if m["kind"] in ("system", "summary")]
    assert kinds == [("system", "interrupt"), ("summary", None)]
    assert parsed.tool_counts == {"Bash": {"calls": 1, "errors": 1}}


def test_reasoning_summaries_are_thinking_and_encrypted_only_reasoning_is_counted():
    summary = line(type="reasoning", summary=[{"type": "summary_text", "text": "**Plan**"}], encrypted_content="gAAA")
    hidden = line(type="reasoning", summary=[], content=None, encrypted_content="gAAA")
    parsed = parse(meta() + prompt("p") + summary + hidden)
    assert [m["content"] for m in parsed.messages if m["kind"] == "thinking"] == ["**Plan**"]
    assert parsed.stats["ignored_lines"]["response_item/reasoning"] == 1


def test_a_cut_never_leaves_a_call_without_its_output():
    raw = (
        meta()
        + prompt("one")
        + call("c1", "sleep 9")
        + prompt("two")
        + output("c1", "late")
        + say("x")
        + prompt("three")
    )
    cut = cut_after_turn(raw, 1, agent="codex")
    assert parse(cut).prompts == ["one", "two"]  # turn 2 kept: c1's output is written inside it
    assert_prefix_at_line_end(raw, cut)
    with pytest.raises(ValueError):
        cut_after_turn(raw, 0, agent="codex")


def test_broken_and_torn_lines_are_counted_never_fatal():
    good = meta() + prompt("one") + call("c1", "ls") + output("c1", "a")
    raw = good + b"{not json\n" + b"[1, 2]\n" + b"\n" + say("x")[:-20]
    parsed = parse(raw)
    assert parsed.stats["skipped_lines"] == 3 and parsed.stats["truncated_bytes"] == len(say("x")) - 20
    assert parsed.messages == parse(good).messages
    assert turn_starts(raw, agent="codex") == turn_starts(good, agent="codex")


def test_images_are_placeholders_and_big_ones_are_slimmed():
    data = "A" * 20000
    image = line(
        type="message", role="user", content=[{"type": "input_image", "image_url": f"data:image/png;base64,{data}"}]
    )
    raw = meta() + image + prompt("see")
    slimmed, counts = slim(raw, agent="codex")
    assert counts["images"] == 1 and len(slimmed) < len(raw)
    assert_slim_keeps_lines(raw, slimmed, lambda old: b";base64," in old)
    shown = [m["content"] for m in parse(raw).messages if m["role"] == "user" and m["kind"] == "text"]
    assert shown == ["[image: image/png, 15 KB]"]


def _pathological(n: int) -> bytes:
    """Context blocks, a long event, and n pending calls each followed by a turn (every turn holds one)."""
    many_context = line(type="message", role="user", content=[{"type": "input_text", "text": "<a>" + "x" * 50}]) * 7 * n
    long_event = line(kind="event_msg", type="user_message", message="y" * 70 * n)
    calls = b"".join(call(f"c{i}", "ls") for i in range(n))
    turns = b"".join(prompt(f"p{i}") for i in range(n))
    outputs = b"".join(output(f"c{i}", "o") for i in range(n))
    return meta() + many_context + long_event + calls + turns + outputs


def _deep(n: int) -> bytes:
    return b"[" * 33 * n + b"\n" + (b'{"type":"response_item","payload":' * 2 * n) + b"\n"


def _deep_slim(n: int) -> bytes:
    return b'{"type":"event_msg","payload":{"type":"exec_command_end"' + b"[" * 33 * n


def test_pathological_inputs_stay_linear():
    # Work, not time (tests/work.py): the Python lines run at n and 2n grow ~2x, not ~4x.
    assert_linear(lambda n: partial(parse, _pathological(n)), 300)
    assert_linear(lambda n: partial(cut_after_turn, _pathological(n), 1, agent="codex"), 300)
    assert_linear(lambda n: partial(parse, _deep(n)), 300)
    assert_linear(lambda n: partial(codex.slim, _deep_slim(n)), 300)
    # … and the full size still parses, cuts and slims as it should.
    raw = _pathological(3000)
    parsed = parse(raw)
    assert parsed.turn_count == 3001
    assert cut_after_turn(raw, 1, agent="codex") == raw  # every turn holds a pending call
    assert parse(_deep(3000)).stats["skipped_lines"] == 2
    assert codex.slim(_deep_slim(3000))[1]


def test_the_project_key_is_the_working_directory():
    assert get_format("codex").encode_project_dir("/w/app/") == "/w/app"


@settings(max_examples=80, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(hostile_lines(["message", "function_call", "function_call_output", "reasoning", "user_message"], envelope=True))
def test_any_input_parses_and_every_line_is_accounted_for(raw):
    parsed = parse(raw)
    counted = sum(1 for line in raw.split(b"\n") if line.strip())
    assert parsed.stats["lines"] == counted
    assert parsed.stats["skipped_lines"] + sum(parsed.stats["ignored_lines"].values()) <= counted
    starts = turn_starts(raw, agent="codex")
    assert starts == sorted(starts) and len(starts) == parsed.turn_count
    for n in range(1, len(starts) + 1):
        assert raw.startswith(cut_after_turn(raw, n, agent="codex"))
    slimmed, _ = slim(raw, agent="codex")
    assert parse(slimmed).messages == parsed.messages


def test_the_items_of_one_model_response_share_a_message_id():
    raw = meta() + prompt("p") + say("looking") + call("c1", "ls") + call("c2", "pwd") + output("c1", "a")
    raw += output("c2", "b") + say("done")
    parsed = parse(raw)
    groups = [m.get("message_id") for m in parsed.messages if m["role"] == "assistant"]
    assert groups[0] == groups[1] == groups[2] != groups[3]
    assert all(m.get("message_id") is None for m in parsed.messages if m["role"] != "assistant")


PATCH = """*** Begin Patch
*** Add File: docs/new.md
+# New
+text
*** Update File: src/app.py
*** Move to: src/main.py
@@ def main():
-    return 1
+    return 2
@@
 anchor
@@ class A:
-    x = 1
+    x = 2
*** Delete File: old.txt
*** End Patch"""


@pytest.mark.parametrize(
    "call_line",
    [
        line(type="custom_tool_call", name="apply_patch", input=PATCH, call_id="p1", status="completed"),
        line(type="function_call", name="apply_patch", arguments=json.dumps({"input": PATCH}), call_id="p1"),
        line(
            type="function_call", name="shell", arguments=json.dumps({"command": ["apply_patch", PATCH]}), call_id="p1"
        ),
        call("p1", f"apply_patch <<'EOF'\n{PATCH}\nEOF"),
    ],
    ids=["custom_tool", "function_arguments", "shell_argv", "heredoc"],
)
def test_every_way_codex_applies_a_patch_reads_as_one_edit(call_line):
    parsed = parse(meta() + prompt("refactor") + call_line + output("p1", "Success"))
    tool = next(m["tool"] for m in parsed.messages if m["kind"] == "tool_use")
    assert tool["name"] == "Edit" and tool["input"]["files"] == ["docs/new.md", "src/main.py", "old.txt"]
    assert [(e["file_path"], e["old_string"], e["new_string"], e.get("deleted")) for e in tool["input"]["edits"]] == [
        ("docs/new.md", "", "# New\ntext", None),
        ("src/main.py", "    return 1", "    return 2", None),
        ("src/main.py", "anchor\n    x = 1", "anchor\n    x = 2", None),  # an anchor-only hunk joins the next
        ("old.txt", "", "", True),
    ]
    assert parsed.files_touched == ["docs/new.md", "src/main.py", "old.txt"]


def _count(**usage) -> bytes:
    return line(kind="event_msg", type="token_count", **usage)


def test_each_response_carries_its_requests_tokens_and_model():
    first = {"input_tokens": 1000, "cached_input_tokens": 800, "output_tokens": 50, "total_tokens": 1050}
    second = {"input_tokens": 1500, "cached_input_tokens": 1200, "output_tokens": 20, "total_tokens": 1520}
    total = {k: first[k] + second[k] for k in first}
    raw = meta() + line(kind="turn_context", model="gpt-5-codex") + prompt("p") + say("looking") + call("c1", "ls")
    raw += _count(info={"total_token_usage": first, "last_token_usage": first})
    raw += _count(info={"total_token_usage": first, "last_token_usage": first})  # a rate-limit repeat
    raw += output("c1", "a") + say("done")
    raw += _count(info={"total_token_usage": total})  # no last_token_usage: the growth of the total
    parsed = parse(raw)
    responses = {m["message_id"]: m for m in parsed.messages if m["role"] == "assistant"}
    assert [(m["model"], m["usage"]) for m in responses.values()] == [
        ("gpt-5-codex", {"input_tokens": 200, "cache_read_input_tokens": 800, "output_tokens": 50}),
        ("gpt-5-codex", {"input_tokens": 300, "cache_read_input_tokens": 1200, "output_tokens": 20}),
    ]
    by_model = facts.effort(parsed.messages)["tokens"]
    assert by_model == {"gpt-5-codex": [500, 70, 0, 2000]}  # what insights price: 2,500 input in all


def test_a_real_sessions_responses_carry_tokens(raw):
    parsed = parse(raw)
    per_response = {m["message_id"]: m["usage"] for m in parsed.messages if "usage" in m}
    totals = [e["info"]["total_token_usage"] for e in events(raw, "token_count") if e.get("info")]
    assert sum(u["output_tokens"] for u in per_response.values()) == totals[-1]["output_tokens"]
