"""The parser writes only what formats/document.py declares, so readers can rely on the list."""

from __future__ import annotations

import json

import pytest

from sessionledger.core.formats import parse_transcript
from sessionledger.core.formats.document import SHAPES, string_fields, undeclared
from tests.client.sample_transcripts import every_line_type
from tests.client.transcript_builder import TranscriptBuilder
from tests.frontend.conftest import rich_transcript

HEADER = {
    "session_id": "5f0c…",
    "project": "acme",
    "feature_branch": "main",
    "commit_hash": None,
    "task_id": None,
    "author": "a@example.com",
    "captured_at": None,
}


def _document(raw: bytes, subagents: dict[str, bytes] | None = None) -> dict:
    return parse_transcript(raw, subagents=subagents).to_document(**HEADER)


@pytest.mark.parametrize("make", [every_line_type, rich_transcript], ids=["every_line_type", "rich"])
def test_every_key_and_type_the_parser_writes_is_declared(make) -> None:
    raw, subagents = make()
    assert undeclared(_document(raw, subagents)) == []


def test_hostile_lines_still_produce_only_declared_fields() -> None:
    b = TranscriptBuilder()
    b.prompt("hi\x00 there")
    lone = {"type": "assistant", "message": {"id": "m1", "content": [{"type": "text", "text": "\ud800 lone"}]}}
    b.raw(json.dumps(lone))  # ASCII JSON: the surrogate stays a \ud800 escape, as an attacker writes it
    b.raw({"type": "user", "timestamp": 5, "message": {"role": "user", "content": [{"type": "text", "text": "x"}]}})
    b.raw({"type": "system", "subtype": ["not", "text"], "content": {"a": 1}, "level": 3, "compactMetadata": []})
    b.tool_call("Bash", {"command": ["x"]}, result={"unexpected": "shape"})
    assert undeclared(_document(b.build())) == []


def test_an_undeclared_field_is_reported() -> None:
    raw, _ = rich_transcript()
    document = _document(raw)
    document["messages"][0]["steps"] = []
    document["turns"][0]["prompt"] = 7
    assert undeclared(document) == [
        "messages.0: undeclared key 'steps'",
        "turns.0.prompt: int not declared",
    ]


def test_string_fields_cover_every_declared_text_field() -> None:
    fields = string_fields()
    assert ("messages", "[]", "timestamp") in fields and ("messages", "[]", "tool", "input", "*") in fields
    assert ("turns", "[]", "prompt") in fields and ("feature_branch",) in fields
    assert {path[: len(where)] for path in fields for where in SHAPES if path[: len(where)] == where} <= set(SHAPES)
