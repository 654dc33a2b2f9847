"""Real Claude Code sessions (tests/realfixtures.py); skipped, and said so, when they are absent."""

from __future__ import annotations

import pytest

from sessionledger.core.formats import base, cut_after_turn, parse_transcript, slim, turn_starts
from tests.client.test_formats_turns import assert_safe_cut
from tests.client.transcript_builder import TranscriptBuilder
from tests.realfixtures import REAL_TRANSCRIPTS as FIXTURES
from tests.realfixtures import real_transcripts

NAMES = ["spotter__short.jsonl", "spotter__tool_heavy.jsonl", "spotter__subagent.jsonl"]
ROLES, KINDS = set(base.ROLES), set(base.KINDS)

pytestmark = real_transcripts


@pytest.fixture(params=NAMES)
def raw(request) -> bytes:
    path = FIXTURES / request.param
    if not path.exists():
        pytest.skip(f"{path} is missing")
    return path.read_bytes()


def test_real_sessions_parse_without_skipped_lines(raw):
    parsed = parse_transcript(raw)
    assert parsed.stats["skipped_lines"] == 0 and parsed.stats["truncated_bytes"] == 0
    assert [m["index"] for m in parsed.messages] == list(range(parsed.message_count))
    assert {m["role"] for m in parsed.messages} <= ROLES and {m["kind"] for m in parsed.messages} <= KINDS
    assert parsed.turn_count == len(turn_starts(raw)) >= 1
    assert parsed.title and parsed.agent_version.startswith("2.1.") and parsed.agent_session_id


def test_real_sessions_cut_safely_at_every_turn(raw):
    for n in range(1, parse_transcript(raw).turn_count):
        assert_safe_cut(raw, n)
    assert cut_after_turn(raw, 99) == raw


def test_real_sessions_read_the_same_after_slimming(raw):
    slimmed, counts = slim(raw)
    assert counts["progress"] > 0 and len(slimmed) < len(raw)
    assert parse_transcript(slimmed).messages == parse_transcript(raw).messages


def test_parallel_results_in_a_real_session_follow_both_calls():
    parsed = parse_transcript((FIXTURES / NAMES[0]).read_bytes())
    tools = [(m["kind"], m["tool"].get("name")) for m in parsed.messages if "tool" in m]
    assert tools == [("tool_use", "Bash"), ("tool_use", "Glob"), ("tool_result", "Bash"), ("tool_result", "Glob")]
    assert parsed.messages[-3]["subtype"] == "interrupt"


def test_a_real_task_result_links_its_subagent_file():
    raw = (FIXTURES / NAMES[2]).read_bytes()
    sub = TranscriptBuilder(agent_id="afb92ff").user("Draft bead content").assistant_text("Drafted.")
    parsed = parse_transcript(raw, subagents={"afb92ff": sub.build()})
    first = next(i for i, m in enumerate(parsed.messages) if m.get("sidechain"))
    task_result = parsed.messages[first - 1]
    assert task_result["kind"] == "tool_result" and task_result["tool"]["name"] == "Task"
    assert parsed.messages[first]["parent_tool_id"] == task_result["tool"]["id"]
