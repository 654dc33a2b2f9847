"""The coding agents Sessionledger captures, one adapter module each (docs/agents.md).

    agent = agents.get("codex")            # by the ingest `agent` name
    agent = agents.for_transcript(path)    # by where a transcript file lives
    for agent in agents.every(): ...

Adding an agent = one module here defining `AGENT` (a subclass of `base.Agent`), its format
module in `sessionledger.core.formats` (registered in `formats.FORMATS`), one entry in `AGENTS`, its
layout module `core/<agent>_layout.py` (where its sessions are, `os` only: the git post-commit hook
asks it, not the adapter, listed in `hooks.post_commit.LAYOUTS`), and its real fixtures under
tests/fixtures/agents/<name>/ (docs/agents.md "Adding an agent").
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: a capture imports this module, not `typing`
if TYPE_CHECKING:
    from sessionledger.agents.base import Agent

DEFAULT = "claude-code"

# ingest `agent` name -> module defining AGENT
AGENTS: dict[str, str] = {
    "claude-code": "sessionledger.agents.claude_code",
    "codex": "sessionledger.agents.codex",
    "gemini": "sessionledger.agents.gemini",
}


def get(name: str | None) -> Agent:
    """The adapter of an agent name (None: Claude Code); ValueError names the known ones."""
    module = AGENTS.get(name or DEFAULT) if isinstance(name, str) or name is None else None
    if module is None:
        raise ValueError(f"unknown agent {name!r} (known: {', '.join(sorted(AGENTS))})")
    __import__(module)  # not importlib: importing importlib would slow every hook
    agent: Agent = sys.modules[module].AGENT
    return agent


def every() -> list[Agent]:
    return [get(name) for name in AGENTS]


def for_transcript(path: str) -> Agent:
    """The agent whose transcript `path` is, by its place and name (Claude Code otherwise)."""
    from sessionledger.core.claude_layout import is_transcript

    if is_transcript(path):
        return get(DEFAULT)  # Claude Code's folder holds no other agent's file: a capture imports no other adapter
    for agent in every():
        if agent.name != DEFAULT and agent.owns(path):
            return agent
    return get(DEFAULT)


def current(cwd: str) -> tuple[Agent, str] | None:
    """The conversation a command run from `cwd` belongs to: the one an agent names in the
    environment of its shell commands (Claude Code's session id), else the most recently written
    transcript of any agent for `cwd` (or, for Claude Code, a parent directory)."""
    found: list[tuple[float, Agent, str]] = []
    for agent in every():
        path = agent.find_current(cwd)
        if path is not None and agent.named_by_environment():
            return agent, path
        if path is not None:
            try:
                found.append((os.path.getmtime(path), agent, path))
            except OSError:
                continue
    if not found:
        return None
    _, agent, path = max(found, key=lambda item: item[0])
    return agent, path


def find_by_session(session_id: str) -> tuple[Agent, str] | None:
    """The transcript of an agent's session id, whichever agent it is."""
    for agent in every():
        path = agent.find_by_session(session_id)
        if path is not None:
            return agent, path
    return None
