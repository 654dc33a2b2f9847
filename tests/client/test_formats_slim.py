"""slim() for storage, and Claude Code's project directory encoding."""

from __future__ import annotations

import json

from sessionledger.core.formats import encode_project_dir, parse_transcript, slim
from tests.client.sample_transcripts import AGENT_ID, every_line_type
from tests.client.transcript_builder import TranscriptBuilder, image_block


def _lines(raw: bytes) -> list[bytes]:
    return raw.splitlines(keepends=True)


def test_progress_lines_become_placeholders_that_keep_the_graph():
    b = TranscriptBuilder().prompt("go").tool_use("Bash", {"command": "ls"})
    b.progress("bash_progress", advance=True, output="x" * 5000, elapsedTimeSeconds=3)
    b.tool_result(b.last_tool_id, "ok")
    raw = b.build()
    slimmed, counts = slim(raw)
    before, after = json.loads(_lines(raw)[2]), json.loads(_lines(slimmed)[2])
    for key in ("uuid", "parentUuid", "type", "timestamp", "toolUseID", "parentToolUseID", "sessionId"):
        assert after[key] == before[key]
    assert after["data"] == {"type": "bash_progress", "slimmed": True}
    assert counts["progress"] == 1 and counts["images"] == 0
    assert counts["bytes_saved"] == len(raw) - len(slimmed) > 5000
    assert json.loads(_lines(slimmed)[3])["parentUuid"] == after["uuid"]  # the chain still holds


def test_agent_progress_placeholders_keep_the_subagent_link():
    b = TranscriptBuilder().prompt("go").task("t", "p", agent_id=AGENT_ID, links=("progress",))
    sub = b.subagent(AGENT_ID).user("p")
    slimmed, _ = slim(b.build())
    parsed = parse_transcript(slimmed, subagents={AGENT_ID: sub.build()})
    assert parsed.messages[3]["parent_tool_id"] == parsed.messages[1]["tool"]["id"]


def test_large_images_are_replaced_small_ones_kept():
    b = TranscriptBuilder().prompt("see", images=[image_block("image/png", 40_000), image_block("image/gif", 100)])
    b.tool_call(
        "Read",
        {"file_path": "/s.png"},
        result=[image_block("image/jpeg", 20_000)],
        tool_use_result={"type": "image", "file": {"base64": "QUFB" * 5000, "type": "image/jpeg"}},
    )
    raw = b.build()
    slimmed, counts = slim(raw, image_threshold=8192)
    assert counts["images"] == 3 and counts["progress"] == 0
    prompt = json.loads(_lines(slimmed)[0])["message"]["content"]
    assert prompt[1]["source"] == {
        "type": "base64", "media_type": "image/png", "data": "[slimmed]", "slimmed": True, "original_size": 40_000,
    }  # fmt: skip
    assert prompt[2]["source"]["data"] == image_block("image/gif", 100)["source"]["data"]
    result = json.loads(_lines(slimmed)[2])
    assert result["toolUseResult"]["file"]["slimmed"] is True
    assert len(slimmed) < len(raw) - 60_000


def test_slim_leaves_every_other_line_byte_identical():
    raw, _ = every_line_type()
    raw += b'{"type": "user",   "spacing": "kept", "text": "\\u00e9"}\n{not json but "progress"\n'
    slimmed, counts = slim(raw)
    changed = [(a, b) for a, b in zip(_lines(raw), _lines(slimmed), strict=True) if a != b]
    assert len(changed) == counts["progress"] + counts["images"] == 3 + 1
    assert all(json.loads(a)["type"] in ("progress", "user") for a, _ in changed)
    assert _lines(slimmed)[-2:] == _lines(raw)[-2:]


def test_a_slimmed_transcript_parses_to_the_same_messages():
    raw, subagents = every_line_type()
    slimmed, _ = slim(raw, image_threshold=1024)
    before, after = parse_transcript(raw, subagents=subagents), parse_transcript(slimmed, subagents=subagents)
    assert after.messages == before.messages
    assert after.turns == before.turns


def test_slim_of_nothing_is_nothing():
    assert slim(b"") == (b"", {"progress": 0, "images": 0, "bytes_saved": 0})


def test_project_dir_replaces_every_non_alphanumeric_character():
    assert encode_project_dir("/home/u/my_app.v2") == "-home-u-my-app-v2"
    assert encode_project_dir("/Users/a/.claude") == "-Users-a--claude"
    assert encode_project_dir("C:\\Users\\dev\\proj") == "C--Users-dev-proj"
    assert encode_project_dir("/tmp/\N{GRINNING FACE}x") == "-tmp---x"  # JS sees two UTF-16 units


def test_long_project_dirs_are_cut_and_get_the_node_cli_hash():
    # Expected values computed with the Node CLI's algorithm (String.hashCode, base 36).
    path = "/home/u/" + "very-long-directory-name/" * 10
    encoded = encode_project_dir(path)
    assert encoded == encode_project_dir(path)[:200] + "-qjdb7p"
    assert len(encoded) == 207
    assert encode_project_dir("/srv/" + "ünïcödé-\N{GRINNING FACE}/" * 20).endswith("-d---p2usvt")
