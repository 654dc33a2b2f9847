"""Parsing Claude Code transcripts into the docs/design.md §2 content document (sessionledger.core.formats)."""

from __future__ import annotations

import json
import random

import pytest

from sessionledger.core.formats import cut_after_turn, get_format, parse_transcript, slim, turn_starts
from tests.client.sample_transcripts import AGENT_ID, every_line_type
from tests.client.transcript_builder import TranscriptBuilder, image_block


def kinds(parsed, **where) -> list[tuple[str, str]]:
    return [(m["role"], m["kind"]) for m in parsed.messages if all(m.get(k) == v for k, v in where.items())]


def contents(parsed) -> list[str]:
    return [m["content"] for m in parsed.messages]


def test_a_simple_turn_reads_as_prompt_thinking_text_tool_use_and_result():
    raw = (
        TranscriptBuilder()
        .prompt("run the tests")
        .thinking("I should run pytest.")
        .assistant_text("Running them.")
        .tool_call("Bash", {"command": "pytest -q"}, result="12 passed")
        .assistant_text("All green.")
        .build()
    )
    parsed = parse_transcript(raw)
    assert kinds(parsed) == [
        ("user", "prompt"),
        ("assistant", "thinking"),
        ("assistant", "text"),
        ("assistant", "tool_use"),
        ("tool", "tool_result"),
        ("assistant", "text"),
    ]
    use, result = parsed.messages[3], parsed.messages[4]
    assert use["tool"] == {"name": "Bash", "input": {"command": "pytest -q"}, "id": use["tool"]["id"]}
    assert use["content"] == "pytest -q"
    assert result["tool"]["id"] == use["tool"]["id"] and result["tool"]["is_error"] is False
    assert result["content"] == "12 passed"
    assert [m["index"] for m in parsed.messages] == list(range(6))
    assert all(m["turn"] == 0 for m in parsed.messages)


def test_every_line_type_parses_and_only_the_broken_line_is_skipped():
    raw, subagents = every_line_type()
    parsed = parse_transcript(raw, subagents=subagents)
    assert parsed.stats["skipped_lines"] == 1
    assert parsed.stats["lines"] == raw.count(b"\n")
    ignored = parsed.stats["ignored_lines"]
    for line_type in ("progress", "file-history-snapshot", "queue-operation", "custom-title", "pr-link"):
        assert ignored[line_type] >= 1
    assert ignored["system/turn_duration"] == 2
    assert ignored["attachment/hook_success"] == 1
    assert parsed.turn_count == 4
    json.dumps(parsed.to_document())  # the document is plain JSON


def test_lines_of_one_api_response_share_message_id_and_tokens_count_once():
    b = TranscriptBuilder().prompt("hi").thinking("hmm").assistant_text("hello")
    b.new_response().assistant_text("again")
    parsed = parse_transcript(b.build())
    ids = [m["message_id"] for m in parsed.messages[1:]]
    assert ids[0] == ids[1] != ids[2]
    assert parsed.messages[1]["model"] == "claude-opus-4-6"
    assert parsed.messages[1]["usage"]["output_tokens"] == 12
    assert parsed.token_usage["output_tokens"] == 24  # two responses, not three lines


def test_an_assistant_line_with_several_blocks_gives_one_message_per_block():
    b = TranscriptBuilder().prompt("hi").assistant_text("first")
    b.lines[-1]["message"]["content"].append({"type": "text", "text": "second"})
    b.lines[-1]["message"]["content"].append({"type": "tool_use", "id": "toolu_x", "name": "Read", "input": {}})
    parsed = parse_transcript(b.build())
    assert kinds(parsed)[1:] == [("assistant", "text"), ("assistant", "text"), ("assistant", "tool_use")]
    assert contents(parsed)[1:3] == ["first", "second"]


def test_blank_assistant_text_blocks_are_dropped():
    parsed = parse_transcript(TranscriptBuilder().prompt("hi").assistant_text("\n\n").assistant_text("ok").build())
    assert contents(parsed) == ["hi", "ok"]
    assert parsed.stats["ignored_lines"] == {"assistant": 1}


def test_parallel_tool_results_are_siblings_and_keep_file_order():
    b = TranscriptBuilder().prompt("look around")
    b.parallel_tools([("Glob", {"pattern": "*.py"}, "a.py"), ("Grep", {"pattern": "x"}, "a.py:1")], errors=[1])
    b.interrupt(for_tool_use=True)
    parsed = parse_transcript(b.build())
    assert [(m["kind"], m["content"]) for m in parsed.messages] == [
        ("prompt", "look around"),
        ("tool_use", "*.py"),
        ("tool_use", "x"),
        ("tool_result", "a.py"),
        ("tool_result", "a.py:1"),
        ("system", "[Request interrupted by user for tool use]"),
    ]
    assert parsed.messages[4]["tool"] == {"id": parsed.messages[2]["tool"]["id"], "is_error": True, "name": "Grep"}
    assert parsed.tool_counts == {"Glob": {"calls": 1, "errors": 0}, "Grep": {"calls": 1, "errors": 1}}


def test_a_user_line_with_several_tool_results_gives_several_messages():
    b = TranscriptBuilder(version="2.0.76").prompt("go")
    b.tool_use("Read", {"file_path": "/a"}, tool_id="toolu_a").tool_use("Read", {"file_path": "/b"}, tool_id="toolu_b")
    results = [
        {"type": "tool_result", "tool_use_id": "toolu_a", "content": "A"},
        {"type": "tool_result", "tool_use_id": "toolu_b", "content": [{"type": "text", "text": "B"}], "is_error": True},
    ]
    b.user(results)
    parsed = parse_transcript(b.build())
    assert [(m["kind"], m["content"], m["tool"]["is_error"]) for m in parsed.messages[3:]] == [
        ("tool_result", "A", False),
        ("tool_result", "B", True),
    ]


def test_string_tool_use_result_on_an_error_is_read_from_the_message_content():
    b = TranscriptBuilder().prompt("go")
    b.tool_call("Read", {"file_path": "/nope"}, result="File does not exist.", is_error=True)
    parsed = parse_transcript(b.build())
    assert b.lines[-1]["toolUseResult"] == "Error: File does not exist."
    assert parsed.messages[-1]["content"] == "File does not exist."
    assert parsed.messages[-1]["tool"]["is_error"] is True


def test_meta_caveat_and_command_output_are_not_prompts():
    b = TranscriptBuilder().prompt("first")
    b.meta("Expanded skill instructions").slash_command("mcp", stdout="Reconnected to tidewave.")
    parsed = parse_transcript(b.build())
    assert [(m["kind"], m.get("subtype"), m["content"]) for m in parsed.messages] == [
        ("prompt", None, "first"),
        ("system", "meta", "Expanded skill instructions"),
        ("system", "caveat", parsed.messages[2]["content"]),
        ("prompt", None, "/mcp"),
        ("system", "command_output", "Reconnected to tidewave."),
    ]
    assert parsed.messages[2]["content"].startswith("Caveat: The messages below")
    assert all(m["meta"] for m in parsed.messages if m["kind"] == "system")
    assert parsed.messages[3]["command"] == "/mcp"
    assert parsed.prompts == ["first", "/mcp"]


def test_a_slash_command_prompt_reads_with_its_arguments():
    parsed = parse_transcript(TranscriptBuilder().slash_command("compact", "keep the API notes").build())
    assert parsed.prompts == ["/compact keep the API notes"]


def test_bash_mode_input_is_a_prompt_and_its_output_is_not():
    parsed = parse_transcript(TranscriptBuilder().bash_command("git status", stdout="clean").build())
    assert [(m["kind"], m["content"]) for m in parsed.messages] == [("prompt", "!git status"), ("system", "clean")]
    assert parsed.messages[0]["bash"] is True


@pytest.mark.parametrize(
    ("step", "subtype"),
    [
        (lambda b: b.interrupt(), "interrupt"),
        (lambda b: b.interrupt(for_tool_use=True), "interrupt"),
        (lambda b: b.task_notification(), "task_notification"),
        (lambda b: b.hook_feedback(), "hook_feedback"),
        (lambda b: b.caveat(), "caveat"),
    ],
)
def test_machine_written_user_text_does_not_start_a_turn(step, subtype):
    b = TranscriptBuilder().prompt("only prompt").assistant_text("ok")
    step(b)
    parsed = parse_transcript(b.build())
    assert parsed.turn_count == 1
    assert parsed.messages[-1]["kind"] == "system" and parsed.messages[-1]["subtype"] == subtype
    assert parsed.messages[-1]["turn"] == 0


def test_compaction_starts_a_new_root_after_the_old_content_and_its_summary_is_no_prompt():
    b = TranscriptBuilder().prompt("before").assistant_text("old work")
    b.compact("We did old work.", trigger="auto", pre_tokens=1234)
    b.prompt("after").assistant_text("new work")
    parsed = parse_transcript(b.build())
    assert [(m["role"], m["kind"]) for m in parsed.messages] == [
        ("user", "prompt"),
        ("assistant", "text"),
        ("system", "system"),
        ("system", "summary"),
        ("user", "prompt"),
        ("assistant", "text"),
    ]
    boundary, summary = parsed.messages[2], parsed.messages[3]
    assert boundary["subtype"] == "compact_boundary" and boundary["compact"]["preTokens"] == 1234
    assert summary["compact_summary"] is True and "We did old work." in summary["content"]
    assert parsed.prompts == ["before", "after"]


def test_a_compaction_boundary_written_before_its_logical_parent_still_follows_it():
    b = TranscriptBuilder().prompt("before").assistant_text("old work")
    b.compact("Summary.")
    boundary = b.lines.pop(2)
    b.lines.insert(0, boundary)  # out of file order, linked only by logicalParentUuid
    parsed = parse_transcript(b.build())
    assert [m["content"] for m in parsed.messages][:3] == ["before", "old work", "Conversation compacted"]


def test_a_summary_line_is_a_system_summary_message():
    b = TranscriptBuilder().prompt("hi").assistant_text("hello")
    b.summary("Greeting session")
    parsed = parse_transcript(b.build())
    last = parsed.messages[-1]
    assert (last["role"], last["kind"], last["content"]) == ("system", "summary", "Greeting session")
    assert last["leaf_uuid"] == b.lines[1]["uuid"] and last["uuid"] is None


def test_system_subtypes_keep_what_matters_and_drop_turn_noise():
    b = TranscriptBuilder().prompt("hi").assistant_text("hello").turn_end()
    b.system("api_error", "API Error: 529 overloaded", level="error")
    b.system("stop_hook_summary", hookErrors=["lint failed"], preventedContinuation=True, hookCount=1)
    b.system(None, "Running PostToolUse:Bash...", level="info")  # 1.0.x lines have no subtype
    b.system("local_command", "<local-command-stdout>Set model to opus</local-command-stdout>")
    parsed = parse_transcript(b.build())
    system = [(m["subtype"], m["content"]) for m in parsed.messages if m["role"] == "system"]
    assert system == [
        ("api_error", "API Error: 529 overloaded"),
        ("stop_hook_summary", "lint failed"),
        ("informational", "Running PostToolUse:Bash..."),
        ("local_command", "Set model to opus"),
    ]
    assert parsed.stats["ignored_lines"] == {"system/stop_hook_summary": 1, "system/turn_duration": 1}


def test_hook_context_and_queued_messages_are_kept_other_attachments_are_counted():
    b = TranscriptBuilder()
    b.attachment("hook_additional_context", hookName="SessionStart", content=["Recent sessions: …"])
    b.prompt("hi").attachment("queued_command", prompt="and then the docs")
    b.attachment("deferred_tools_delta", advance=False)
    parsed = parse_transcript(b.build())
    first, queued = parsed.messages[0], parsed.messages[2]
    assert (first["kind"], first["subtype"], first["turn"]) == ("system", "hook_context", None)
    assert first["content"] == "Recent sessions: …" and first["meta"] is True
    assert (queued["role"], queued["kind"], queued["queued"]) == ("user", "text", True)
    assert parsed.stats["ignored_lines"] == {"attachment/deferred_tools_delta": 1}
    assert parsed.turn_count == 1


def test_images_become_short_placeholders_never_base64():
    b = TranscriptBuilder().prompt("what is this?", images=[image_block("image/png", 12 * 1024)])
    b.tool_call("Read", {"file_path": "/x.jpg"}, result=[image_block("image/jpeg", 300)])
    parsed = parse_transcript(b.build())
    assert parsed.messages[0]["content"] == "what is this?\n\n[image: image/png, 12 KB]"
    assert parsed.messages[-1]["content"] == "[image: image/jpeg, 300 B]"
    assert "AAAA" not in json.dumps(parsed.to_document())
    assert parsed.title == "what is this?"


def test_an_image_only_prompt_is_still_a_prompt():
    raw = TranscriptBuilder().user([image_block()]).build()
    assert parse_transcript(raw).prompts == ["[image: image/png, 12 KB]"]


def test_broken_lines_are_counted_never_fatal():
    b = TranscriptBuilder().prompt("hi").broken().raw("[1, 2]").raw('{"no": "type"}').raw('"a string"')
    b.raw("   ").assistant_text("still here")
    raw = b.build() + b'{"type": "user", "message": {"ro'  # torn final write
    parsed = parse_transcript(raw)
    assert contents(parsed) == ["hi", "still here"]
    assert parsed.stats["skipped_lines"] == 5
    assert parsed.stats["truncated_bytes"] == len(b'{"type": "user", "message": {"ro')
    assert parsed.stats["lines"] == 7


def test_invalid_utf8_is_replaced_not_fatal():
    raw = TranscriptBuilder().prompt("caf\u00e9").build().replace("é".encode(), b"\xff\xfe")
    parsed = parse_transcript(raw)
    assert parsed.prompts == ["caf\ufffd\ufffd"]


def test_garbage_input_never_raises():
    rng = random.Random(7)
    base, subagents = every_line_type()
    for _ in range(150):
        data = bytearray(base)
        for _ in range(rng.randint(1, 40)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        parsed = parse_transcript(bytes(data), subagents=subagents)
        assert parsed.stats["lines"] > 0
        assert len(turn_starts(bytes(data))) <= len(cut_after_turn(bytes(data), 1)) + 1
        slim(bytes(data), image_threshold=10)
    deep = b'{"type":"user","message":{"content":' + b"[" * 5000 + b"]" * 5000 + b"}}\n"
    for blob in (b"", b"\n\n", b"\x00" * 100, b"[" * 100_000, b'{"type":' * 1000, rng.randbytes(5000), deep):
        parse_transcript(blob)
        turn_starts(blob)
        cut_after_turn(blob, 1)
        slim(blob)


def test_lines_whose_parent_comes_later_in_the_file_are_ordered_after_it():
    b = TranscriptBuilder().prompt("question").assistant_text("answer")
    b.lines.reverse()
    assert contents(parse_transcript(b.build())) == ["question", "answer"]


def test_a_parent_cycle_falls_back_to_file_order_without_losing_lines():
    b = TranscriptBuilder().prompt("one").assistant_text("two").assistant_text("three")
    b.lines[0]["parentUuid"] = b.lines[2]["uuid"]  # one -> three -> two -> one
    b.prompt("four")
    b.lines[-1]["parentUuid"] = b.lines[-1]["uuid"]  # a self-loop is a root
    assert contents(parse_transcript(b.build())) == ["four", "one", "two", "three"]


def test_a_segment_starting_mid_file_treats_orphans_as_roots_in_file_order():
    b = TranscriptBuilder().prompt("one").assistant_text("two").prompt("three").assistant_text("four")
    segment = b"".join(line + b"\n" for line in b.build().splitlines()[1:])
    parsed = parse_transcript(segment)
    assert contents(parsed) == ["two", "three", "four"]
    assert parsed.messages[0]["turn"] is None and parsed.turns[0]["first_message"] == 1


def test_a_rewind_keeps_both_branches_in_file_order():
    b = TranscriptBuilder().prompt("start").assistant_text("ok")
    fork_point = b.last_uuid
    b.prompt("try A").assistant_text("A done")
    b.prompt("try B", parent=fork_point).assistant_text("B done")
    parsed = parse_transcript(b.build())
    assert contents(parsed) == ["start", "ok", "try A", "A done", "try B", "B done"]
    assert parsed.prompts == ["start", "try A", "try B"]


def test_replayed_lines_are_deduplicated_by_uuid():
    b = TranscriptBuilder().prompt("hi").assistant_text("hello")
    replay = list(b.lines)
    b.lines.extend(replay)
    b.prompt("next")
    parsed = parse_transcript(b.build())
    assert contents(parsed) == ["hi", "hello", "next"]
    assert parsed.stats["duplicate_lines"] == 2


def test_old_style_sidechain_lines_in_the_main_file_are_marked_and_never_prompts():
    b = TranscriptBuilder(version="1.0.89").prompt("main prompt")
    side = b.subagent("warmup")
    side.user("Warmup").assistant_text("ready")
    b.lines.extend(side.lines)
    b.assistant_text("main answer")
    parsed = parse_transcript(b.build())
    assert parsed.prompts == ["main prompt"]
    assert [m.get("sidechain", False) for m in parsed.messages] == [False, True, True, False]
    assert [m["turn"] for m in parsed.messages] == [0, 0, 0, 0]


def _task_session(links=("result", "trailer", "progress")) -> tuple[bytes, dict[str, bytes]]:
    b = TranscriptBuilder().prompt("investigate")
    b.task("Look", "Find the bug", agent_id=AGENT_ID, result="Found it.", links=links)
    b.assistant_text("The agent found it.")
    sub = b.subagent(AGENT_ID).user("Find the bug").tool_call("Grep", {"pattern": "bug"}, result="x.py:1")
    sub.assistant_text("Found it.")
    return b.build(), {AGENT_ID: sub.build()}


@pytest.mark.parametrize("links", [("result",), ("trailer",), ("progress",), ("result", "trailer", "progress")])
def test_subagent_messages_follow_the_task_result_that_spawned_them(links):
    raw, subagents = _task_session(links)
    parsed = parse_transcript(raw, subagents=subagents)
    assert [(m["kind"], m.get("sidechain", False)) for m in parsed.messages] == [
        ("prompt", False),
        ("tool_use", False),
        ("tool_result", False),
        ("text", True),
        ("tool_use", True),
        ("tool_result", True),
        ("text", True),
        ("text", False),
    ]
    task_id = parsed.messages[1]["tool"]["id"]
    side = [m for m in parsed.messages if m.get("sidechain")]
    assert all(m["parent_tool_id"] == task_id and m["agent_id"] == AGENT_ID and m["turn"] == 0 for m in side)
    assert parsed.turn_count == 1 and parsed.last_assistant_text == "The agent found it."
    assert parsed.stats["subagents"][AGENT_ID]["parent_tool_id"] == task_id


def test_an_unlinked_subagent_is_appended_at_the_end_as_sidechain():
    raw, subagents = _task_session(links=())
    parsed = parse_transcript(raw, subagents=subagents)
    assert [m.get("sidechain", False) for m in parsed.messages] == [False] * 4 + [True] * 4
    assert "parent_tool_id" not in parsed.messages[-1]
    assert parsed.stats["subagents"][AGENT_ID]["parent_tool_id"] is None


def test_a_subagent_still_running_goes_right_after_its_task_call():
    b = TranscriptBuilder().prompt("investigate")
    b.tool_use("Task", {"description": "Look", "prompt": "Find"})
    b.progress("agent_progress", parent_tool_use_id=b.last_tool_id, agentId=AGENT_ID)
    sub = b.subagent(AGENT_ID).user("Find")
    parsed = parse_transcript(b.build(), subagents={AGENT_ID: sub.build()})
    assert [(m["kind"], m.get("sidechain", False)) for m in parsed.messages] == [
        ("prompt", False),
        ("tool_use", False),
        ("text", True),
    ]


def test_a_subagent_file_without_sidechain_flags_still_opens_no_turn():
    raw, _ = _task_session()
    plain = TranscriptBuilder().prompt("Find the bug").assistant_text("Found it.").build()
    parsed = parse_transcript(raw, subagents={AGENT_ID: plain})
    assert parsed.prompts == ["investigate"]
    assert [m["kind"] for m in parsed.messages if m.get("sidechain")] == ["text", "text"]


def test_nested_subagents_are_placed_under_their_own_task_calls():
    b = TranscriptBuilder().prompt("go").task("outer", "outer job", agent_id="aouter", result="outer done")
    outer = b.subagent("aouter").user("outer job").task("inner", "inner job", agent_id="ainner", result="inner done")
    inner = b.subagent("ainner").user("inner job").assistant_text("inner done")
    parsed = parse_transcript(b.build(), subagents={"ainner": inner.build(), "aouter": outer.build()})
    agents = [m.get("agent_id") for m in parsed.messages]
    assert agents == [None, None, None, "aouter", "aouter", "aouter", "ainner", "ainner"]


def test_derived_facts_for_the_worker():
    b = TranscriptBuilder(version="2.1.38").slash_command("model")
    b.prompt("  Please   implement\n the session capture feature " + "x" * 200)
    b.tool_call("Edit", {"file_path": "/app/a.py"}).tool_call("Write", {"file_path": "/app/b.py"})
    b.tool_call("MultiEdit", {"file_path": "/app/a.py"}).tool_call("NotebookEdit", {"notebook_path": "/app/n.ipynb"})
    b.tool_call("Bash", {"command": "false"}, result="exit 1", is_error=True).tool_call("Bash", {"command": "true"})
    b.version = "2.1.39"
    b.assistant_text("Done with the feature.").prompt("thanks").turn_end()
    parsed = parse_transcript(b.build())
    assert parsed.title.startswith("Please implement the session capture feature xxx")
    assert len(parsed.title) == 120 and parsed.title.endswith("…")
    assert parsed.files_touched == ["/app/a.py", "/app/b.py", "/app/n.ipynb"]
    assert parsed.tool_counts["Bash"] == {"calls": 2, "errors": 1}
    assert parsed.last_assistant_text == "Done with the feature."
    assert parsed.agent_version == "2.1.39" and parsed.agent_session_id == b.session_id
    assert parsed.first_timestamp == parsed.messages[0]["timestamp"]
    assert parsed.last_timestamp == parsed.messages[-1]["timestamp"]
    assert (parsed.message_count, parsed.turn_count) == (len(parsed.messages), 3)
    assert parsed.prompts[0] == "/model"


def test_turns_record_their_prompt_first_message_timestamp_and_uuid():
    b = TranscriptBuilder().attachment("hook_additional_context", content=["ctx"]).prompt("one").assistant_text("a")
    b.prompt("two")
    parsed = parse_transcript(b.build())
    assert parsed.turns == [
        {"index": 0, "first_message": 1, "last_message": 2, "prompt": "one",
         "timestamp": b.lines[1]["timestamp"], "uuid": b.lines[1]["uuid"]},
        {"index": 1, "first_message": 3, "last_message": 3, "prompt": "two",
         "timestamp": b.lines[3]["timestamp"], "uuid": b.lines[3]["uuid"]},
    ]  # fmt: skip
    assert [m["turn"] for m in parsed.messages] == [None, 0, 0, 1]


def test_to_document_wraps_messages_with_the_callers_header():
    raw = TranscriptBuilder(version="2.0.14").prompt("hi").build()
    parsed = parse_transcript(raw)
    doc = parsed.to_document(session_id="s1", project="acme-api", commit_hash=None, captured_at="2026-02-12T10:30:00Z")
    assert doc["version"] == "1.0" and doc["project"] == "acme-api" and doc["commit_hash"] is None
    assert doc["agent"] == {"name": "claude-code", "version": "2.0.14", "session_id": parsed.agent_session_id}
    assert doc["messages"] is parsed.messages and doc["turns"] is parsed.turns
    assert doc["stats"]["skipped_lines"] == 0 and doc["stats"]["truncated_bytes"] == 0
    assert parsed.to_document(agent={"name": "x"})["agent"] == {"name": "x"}
    with pytest.raises(ValueError, match="messages"):
        parsed.to_document(messages=[])


def test_unknown_agent_is_a_clear_value_error():
    assert get_format("claude-code").name == "claude-code"
    with pytest.raises(ValueError, match=r"unknown transcript format 'cursor' \(known: claude-code, codex, gemini\)"):
        get_format("cursor")
    with pytest.raises(ValueError):
        parse_transcript(b"", agent="cursor")


@pytest.mark.parametrize(
    ("opening", "expected"),
    [
        (lambda b: b.slash_command("/clear", stdout=""), "Fix the retry bug"),
        (lambda b: b.slash_command("/compact", "keep the test names"), "Fix the retry bug"),
        (lambda b: b.prompt("/clear"), "Fix the retry bug"),
        (lambda b: b.slash_command("/review"), "Fix the retry bug"),
    ],
)
def test_a_session_opened_by_a_slash_command_is_titled_by_its_first_real_prompt(opening, expected):
    b = opening(TranscriptBuilder())
    b.prompt("Fix the retry bug").assistant_text("Done.").prompt("Now the docs").assistant_text("Done.")
    assert parse_transcript(b.build()).title == expected


def test_a_custom_command_with_arguments_titles_the_session_not_the_next_prompt():
    b = TranscriptBuilder().slash_command("/review", "the parser's error paths").assistant_text("Reviewed.")
    b.prompt("Now fix what you found").assistant_text("Done.")
    assert parse_transcript(b.build()).title == "/review the parser's error paths"


def test_parallel_1_0_sub_agents_in_the_main_file_fold_one_per_task_call():
    b = TranscriptBuilder(version="1.0.89").prompt("audit both modules")
    b.tool_use("Task", {"description": "A", "prompt": "Audit module a"})
    use_a, task_a = b.last_uuid, b.last_tool_id
    b.tool_use("Task", {"description": "B", "prompt": "Audit module b"})
    use_b, task_b = b.last_uuid, b.last_tool_id
    a, c = b.subagent("x"), b.subagent("y")
    a.user("Audit module a")
    c.user("Audit module b")
    a.tool_call("Read", {"file_path": "a.py"}, result="a")
    c.tool_call("Read", {"file_path": "b.py"}, result="b")
    a.assistant_text("a is fine")
    c.assistant_text("b has a bug")
    b.inline(a, c)
    b.tool_result(task_a, "a is fine", parent=use_a).tool_result(task_b, "b has a bug", parent=use_b)
    b.assistant_text("done")
    parsed = parse_transcript(b.build())

    side = [m for m in parsed.messages if m.get("sidechain")]
    by_call = {task: [m["content"] for m in side if m.get("parent_tool_id") == task] for task in (task_a, task_b)}
    assert by_call[task_a] == ["Audit module a", "a.py", "a", "a is fine"]
    assert by_call[task_b] == ["Audit module b", "b.py", "b", "b has a bug"]
    assert len({m["agent_id"] for m in side}) == 2
    positions = {m["tool"]["id"]: i for i, m in enumerate(parsed.messages) if m["kind"] == "tool_result"}
    first_a = parsed.messages.index(next(m for m in side if m["parent_tool_id"] == task_a))
    assert first_a == positions[task_a] + 1  # woven right after its Task's result
    assert parsed.prompts == ["audit both modules"] and parsed.last_assistant_text == "done"


def test_a_1_0_sidechain_with_no_matching_task_stays_in_place_as_its_own_agent():
    b = TranscriptBuilder(version="1.0.89").prompt("main prompt")
    b.tool_use("Task", {"description": "A", "prompt": "something else"})
    b.inline(b.subagent("w").user("Warmup").assistant_text("ready"))
    b.inline(b.subagent("v").user("Warmup").assistant_text("ready"))
    parsed = parse_transcript(b.build())
    side = [m for m in parsed.messages if m.get("sidechain")]
    assert [m["kind"] for m in parsed.messages[:2]] == ["prompt", "tool_use"] and len(side) == 4
    assert len({m["agent_id"] for m in side}) == 2 and not any("parent_tool_id" in m for m in side)


def test_a_1_0_sidechain_parent_cycle_or_junk_parent_never_breaks_the_grouping():
    b = TranscriptBuilder(version="1.0.89").prompt("go")
    b.inline(b.subagent("z").user("Warmup").assistant_text("ready").assistant_text("more"))
    side = [line for line in b.lines if line.get("isSidechain")]
    side[0]["parentUuid"], side[1]["parentUuid"], side[2]["parentUuid"] = side[2]["uuid"], side[0]["uuid"], {"x": 1}
    parsed = parse_transcript(b.build())
    agents = [m.get("agent_id") for m in parsed.messages if m.get("sidechain")]
    assert len(agents) == 3 and all(isinstance(a, str) and a.startswith("inline-") for a in agents)
