"""An agent that edits files for real and writes the matching tool calls into its transcript."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator, FormatChecker

from tests.client.conftest import ClaudeSession

SCHEMA = Path(__file__).parent.parent / "fixtures" / "agent-trace" / "trace-record.schema.json"


def agent_call(claude: ClaudeSession, name: str, tool_input: dict[str, Any], result: str = "ok") -> str:
    """Record one successful tool call; returns the tool_use message's uuid (the step)."""
    builder = claude.builder
    builder.new_response().tool_use(name, tool_input)
    step, tool_id = builder.last_uuid, builder.last_tool_id
    builder.tool_result(tool_id, result, parent=step, source_uuid=step)
    claude.flush()
    return step


def agent_write(claude: ClaudeSession, repo: Path, name: str, content: str) -> str:
    (repo / name).write_text(content)
    return agent_call(claude, "Write", {"file_path": str(repo / name), "content": content}, f"Wrote {name}")


def agent_edit(claude: ClaudeSession, repo: Path, name: str, old: str, new: str) -> str:
    text = (repo / name).read_text()
    assert text.count(old) == 1, f"{old!r} must occur once in {name}"
    (repo / name).write_text(text.replace(old, new))
    return agent_call(claude, "Edit", {"file_path": str(repo / name), "old_string": old, "new_string": new})


def human_edit(repo: Path, name: str, old: str, new: str) -> None:
    text = (repo / name).read_text()
    assert text.count(old) == 1
    (repo / name).write_text(text.replace(old, new))


def validate_agent_trace(record: dict[str, Any]) -> None:
    """Against the vendored published schema (tests/fixtures/agent-trace), formats checked."""
    Draft202012Validator(json.loads(SCHEMA.read_text()), format_checker=FormatChecker()).validate(record)
