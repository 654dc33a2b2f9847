"""Steps of Codex CLI and Gemini CLI sessions, for `turns --steps` (docs/client.md "Steps")."""

from __future__ import annotations

import pytest

from sessionledger.core.formats import get_format, parse_transcript
from tests.client.test_formats_gemini import migrate
from tests.fixtures.agents.helpers import load, names


@pytest.mark.parametrize(
    ("agent", "name", "form"),
    [("codex", n, "jsonl") for n in names("codex")]
    + [("gemini", n, f) for n in names("gemini") for f in ("json", "jsonl")],
)
def test_codex_and_gemini_sessions_list_every_prompt_and_tool_call_as_a_step(agent, name, form) -> None:
    """`turns --steps` of a real Codex or Gemini session: every prompt and call, in order, each
    ending at a line end whose cut holds it."""
    raw = load(agent, name)
    raw = migrate(raw) if form == "jsonl" and agent == "gemini" else raw
    parsed = parse_transcript(raw, agent=agent)
    found = get_format(agent).steps(raw)

    assert [s.kind for s in found].count("prompt") == parsed.turn_count >= 1
    calls = [m["uuid"] for m in parsed.messages if m["kind"] == "tool_use"]
    assert [s.uuid for s in found if s.kind == "tool"] == calls
    assert [s.end for s in found] == sorted(s.end for s in found)
    for step in found:
        assert step.end == len(raw) or raw[step.end - 1 : step.end] == b"\n"
        if form == "jsonl":
            assert step.uuid in {m["uuid"] for m in parse_transcript(raw[: step.end], agent=agent).messages}
