"""Turn boundaries on raw bytes: turn_starts, cut_after_turn, complete_lines."""

from __future__ import annotations

import json

import pytest

from sessionledger.core.formats import complete_lines, cut_after_turn, parse_transcript, turn_starts
from tests.client.sample_transcripts import every_line_type
from tests.client.transcript_builder import TranscriptBuilder


def three_turns() -> TranscriptBuilder:
    b = TranscriptBuilder().file_history_snapshot().prompt("one").thinking("think").assistant_text("a1").turn_end()
    b.file_history_snapshot().prompt("two").tool_call("Bash", {"command": "ls"}, result="x", hook=True).turn_end()
    b.file_history_snapshot().prompt("three").assistant_text("a3")
    return b


def omitted_inside(raw: bytes, cut: bytes) -> list[dict]:
    """Lines of `raw` left out before the end of `cut`; asserts `cut` is otherwise a prefix."""
    kept = cut.splitlines(keepends=True)
    omitted, j = [], 0
    for line in raw.splitlines(keepends=True):
        if j == len(kept):
            break
        if line == kept[j]:
            j += 1
        else:
            omitted.append(json.loads(line))
    assert j == len(kept), "cut is not made of the input's lines in order"
    return omitted


def assert_safe_cut(raw: bytes, n: int) -> bytes:
    cut = cut_after_turn(raw, n)
    omitted = omitted_inside(raw, cut)
    assert all(rec["type"] == "summary" for rec in omitted)
    tail = raw.splitlines()[len(cut.splitlines()) + len(omitted) :]
    assert not tail or json.loads(tail[0])["type"] != "assistant"
    parsed, full = parse_transcript(cut), parse_transcript(raw)
    assert parsed.prompts == full.prompts[:n]
    uses = {m["tool"]["id"] for m in parsed.messages if m["kind"] == "tool_use"}
    answered = {m["tool"]["id"] for m in parsed.messages if m["kind"] == "tool_result"}
    assert uses <= answered, "a tool_use lost its tool_result"
    chain = [m["uuid"] for m in parsed.messages if m["uuid"]]
    assert chain == [m["uuid"] for m in full.messages if m["uuid"]][: len(chain)]
    return cut


def test_turn_starts_are_the_first_line_of_each_turn_in_file_order():
    b = three_turns()
    raw = b.build()
    starts = turn_starts(raw)
    assert len(starts) == 3 and starts == sorted(starts)
    for start in starts:  # the snapshot written for the prompt opens the turn
        assert json.loads(raw[start:].split(b"\n", 1)[0])["type"] == "file-history-snapshot"
    assert starts[0] == 0


def test_turn_starts_agree_with_parsed_turns():
    raw, _ = every_line_type()
    assert len(turn_starts(raw)) == parse_transcript(raw).turn_count == 4


def test_cut_after_each_turn_is_a_safe_prefix_ending_at_a_turn_boundary():
    for raw in (three_turns().build(), every_line_type()[0]):
        turns = parse_transcript(raw).turn_count
        for n in range(1, turns):
            cut = assert_safe_cut(raw, n)
            assert len(cut) <= turn_starts(raw)[n]
            assert parse_transcript(cut).turn_count == n


def test_cut_keeps_the_whole_input_when_n_is_past_the_last_turn():
    raw = three_turns().build()
    assert cut_after_turn(raw, 3) is raw or cut_after_turn(raw, 3) == raw
    assert cut_after_turn(raw, 99) == raw
    assert cut_after_turn(b"", 1) == b""


def test_cut_refuses_n_below_one():
    with pytest.raises(ValueError, match="n must be >= 1"):
        cut_after_turn(three_turns().build(), 0)


def test_cut_drops_trailing_snapshot_queue_and_progress_lines():
    b = TranscriptBuilder().prompt("one").assistant_text("done")
    last_real = b.build()
    b.progress("hook_progress", hookEvent="Stop").queue_operation("enqueue", "two").queue_operation("remove")
    b.file_history_snapshot().prompt("two")
    cut = cut_after_turn(b.build(), 1)
    assert cut == last_real


def test_cut_does_not_leave_a_dangling_caveat_before_a_slash_command():
    b = TranscriptBuilder().prompt("one").assistant_text("done")
    last_real = b.build()
    b.slash_command("mcp", stdout="ok")
    assert cut_after_turn(b.build(), 1) == last_real
    assert turn_starts(b.build())[1] == len(last_real)


def test_cut_removes_summaries_whose_leaf_was_cut_and_keeps_the_others():
    b = TranscriptBuilder().prompt("one").assistant_text("a1")
    kept_leaf = b.last_uuid
    b.prompt("two").assistant_text("a2")
    b.summary("whole session").summary("first part", leaf_uuid=kept_leaf)
    b.lines.insert(0, b.lines.pop())  # old CLIs write summaries first
    b.lines.insert(0, b.lines.pop())
    cut = cut_after_turn(b.build(), 1)
    summaries = [json.loads(line)["summary"] for line in cut.splitlines() if b'"summary"' in line]
    assert summaries == ["first part"]
    assert_safe_cut(b.build(), 1)


def test_cut_never_separates_a_tool_use_from_a_result_written_after_the_next_prompt():
    b = TranscriptBuilder().prompt("one")
    b.tool_use("Bash", {"command": "sleep 60", "run_in_background": True})
    use_uuid, tool_id = b.last_uuid, b.last_tool_id
    b.prompt("two (typed while the tool ran)")
    b.tool_result(tool_id, "slept", parent=use_uuid).assistant_text("a2")
    b.prompt("three").assistant_text("a3")
    raw = b.build()
    cut = cut_after_turn(raw, 1)
    assert parse_transcript(cut).prompts == ["one", "two (typed while the tool ran)"]
    assert_safe_cut(raw, 2)


def test_cut_keeps_kept_lines_byte_identical():
    b = TranscriptBuilder().prompt("one").thinking("deep thought", signature="Eo8C+/=")
    b.raw('{"type": "assistant",  "uuid": "odd", "message": {"role": "assistant", "content": "\\u00e9"}}')
    b.prompt("two")
    raw = b.build()
    cut = cut_after_turn(raw, 1)
    assert raw.startswith(cut) and b'"\\u00e9"' in cut and b"Eo8C+/=" in cut


def test_complete_lines_stops_at_the_last_newline():
    data = b'{"a":1}\n{"b":2}\n{"c":'
    assert complete_lines(data) == 16
    assert complete_lines(data, 8) == 16
    assert complete_lines(data, 16) == 16  # nothing complete after the start: stay put
    assert complete_lines(b"", 0) == 0
    assert complete_lines(b"abc\n", 0) == 4
