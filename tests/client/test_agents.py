"""The agent adapters: the one place that knows an agent (docs/agents.md "The Agent adapter").

Outside `client/sessionledger/agents/` and the format modules (`client/sessionledger/core/formats/`),
no module reads an agent's raw records: the keys and shapes below belong to Claude Code's, Codex
CLI's or Gemini CLI's files, and a module that needs what they say asks the adapter instead.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from sessionledger import agents
from sessionledger.agents.base import SNAPSHOT, Agent
from sessionledger.core.formats import FORMATS
from sessionledger.core.formats.base import KINDS, ROLES
from tests.fixtures.agents.helpers import load, names

ROOT = Path(__file__).resolve().parents[2]
ADAPTERS = ("client/sessionledger/agents/", "client/sessionledger/core/formats/")
# Modules that read agent files' bytes without being adapters, and why that is allowed:
ALLOWED = {
    # a byte-level secret scanner: it recognises Claude Code's repeated tool output (`toolUseResult`
    # copies) only to skip scanning a copy twice; for other agents it simply scans everything
    "client/sessionledger/core/redaction/copies.py",
    "client/sessionledger/core/redaction/engine.py",
    # builds the demo project's transcript (writes a Claude Code file, reads none)
    "sessions_app/demo.py",
    # Claude Code's file layout, the adapter's own (shared with its format and the hooks, which
    # capture a Claude Code transcript without importing any adapter): a legacy sub-agent file beside
    # the session is this session's when its lines carry its `sessionId`
    "client/sessionledger/core/claude_layout.py",
}
SCANNED = ("client/sessionledger", "sessions_app", "frontend", "projects")
RAW_KEYS = [
    r"\btoolUseResult\b",
    r"\bisSidechain\b",
    r"\bgitBranch\b",
    r"[\"']sessionId[\"']",
    r"[\"']tool_use_id[\"']",
    r"[\"']parentUuid[\"']",
    r"[\"']function_call_output[\"']",
    r"[\"']session_meta[\"']",
    r"[\"']response_item[\"']",
    r"[\"']toolCalls[\"']",
    r"[\"']functionResponse[\"']",
    r"\[\s*[\"']type[\"']\s*\]\s*[!=]=\s*[\"'](?:assistant|user|gemini)[\"']",
    r"\b(?:rec|record|line|raw_record)\.get\(\s*[\"'](?:message|payload|type|toolCalls)[\"']",
    r"\bload_record\b",
    r"formats\.(?:classify|resume|lines)\b",
    r"from sessionledger\.formats\.(?:classify|resume|lines) import",
]


def _modules() -> list[Path]:
    found = []
    for top in SCANNED:
        for path in sorted((ROOT / top).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if "/migrations/" in rel or rel.startswith(ADAPTERS) or rel in ALLOWED:
                continue
            found.append(path)
    return found


def test_no_module_outside_the_adapters_reads_raw_agent_records() -> None:
    pattern = re.compile("|".join(RAW_KEYS))
    offenders = []
    for path in _modules():
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if pattern.search(line):
                offenders.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert offenders == [], "ask the agent's adapter (sessionledger.agents) instead:\n" + "\n".join(offenders)


def test_the_scan_would_catch_a_raw_read() -> None:
    pattern = re.compile("|".join(RAW_KEYS))
    for line in ('if rec["type"] == "assistant":', 'x = record.get("message")', 'y = r["toolUseResult"]'):
        assert pattern.search(line), line


def test_every_format_has_an_adapter_and_every_adapter_a_format() -> None:
    assert set(agents.AGENTS) == set(FORMATS)
    for agent in agents.every():
        assert isinstance(agent, Agent) and agent.format.name == agent.name
        assert agent.roles <= set(ROLES) and agent.kinds <= set(KINDS)
        assert agent.display_name and agent.executable and agent.resume_command("x")[0] == agent.executable


def test_roles_and_kinds_are_declared_once_and_imported_where_offered() -> None:
    from frontend.forms import ROLE_CHOICES
    from sessionledger import mcp_server
    from sessions_app.api.sessions import MessagesQuery

    query = MessagesQuery()
    assert list(query.fields["role"].child.choices) == list(ROLES)
    assert list(query.fields["kind"].child.choices) == list(KINDS)
    assert (mcp_server.ROLES, mcp_server.KINDS) == (ROLES, KINDS)
    assert [value for value, _ in ROLE_CHOICES if value != "thinking"] == list(ROLES)


def test_agents_are_found_by_name_and_by_where_their_files_live(tmp_path: Path) -> None:
    assert agents.get(None).name == "claude-code"
    with pytest.raises(ValueError, match="known: claude-code, codex, gemini"):
        agents.get("cursor")
    claude = tmp_path / ".claude" / "projects" / "-w-app" / "5d1c0c8e-3f6a-4b7e-9a51-2b8f0d4c6e17.jsonl"
    codex = tmp_path / ".codex" / "sessions" / "2026" / "05" / "11" / "rollout-2026-05-11T11-26-55-abc.jsonl"
    gemini = tmp_path / ".gemini" / "tmp" / "app" / "chats" / "session-2025-10-27T19-55-981c87cb.json"
    assert [agents.for_transcript(str(p)).name for p in (claude, codex, gemini)] == ["claude-code", "codex", "gemini"]
    assert agents.get("gemini").capture_mode(str(gemini)) == SNAPSHOT
    assert agents.get("gemini").capture_mode(str(gemini) + "l") != SNAPSHOT


@pytest.mark.parametrize("name", names("codex"))
def test_codex_commit_calls_end_after_the_line_that_answers_them(name: str) -> None:
    raw = load("codex", name)
    codex = agents.get("codex")
    ends = codex.answer_ends(raw)
    assert ends and all(raw[end - 1 : end] == b"\n" for end in ends.values())
    for call in codex.commit_calls(raw):
        assert call.used_at <= call.answered_at and raw[call.end - 1 : call.end] == b"\n"


def test_turn_prompts_match_the_parsed_prompts_for_every_agent() -> None:
    for agent_name in ("codex", "gemini"):
        agent = agents.get(agent_name)
        for name in names(agent_name):
            raw = load(agent_name, name)
            prompts = [m["content"] for m in agent.format.parse(raw).messages if m["kind"] == "prompt"]
            found = agent.turn_prompts(raw, agent.format.turn_starts(raw))
            assert [text for text, _ in found] == prompts, name
            assert all(stamp is None or stamp.endswith("Z") for _, stamp in found)


def test_gemini_hooks_switched_off_are_reported() -> None:
    gemini = agents.get("gemini")
    assert gemini.hooks_off({"hooksConfig": {"enabled": False}}) is not None
    assert gemini.hooks_off({"tools": {"enableHooks": False}}) is not None
    assert gemini.hooks_off({"hooks": {"AfterTool": []}}) is None
    settings: dict = {"hooks": {"AfterTool": [{"matcher": "read_file", "hooks": [{"command": "x"}]}]}}
    gemini.merge_hooks(settings, lambda name: f"sessionledger hook {name}")
    gemini.merge_hooks(settings, lambda name: f"/abs/sessionledger hook {name}")
    groups = settings["hooks"]["AfterTool"]
    assert len(groups) == 2 and groups[1]["hooks"] == [
        {"type": "command", "command": "/abs/sessionledger hook post-tool-use", "timeout": 30000}
    ]
