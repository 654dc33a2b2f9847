"""Place sub-agent transcripts under the Task/Agent call that spawned them (docs/claude-code.md §1.9).

A reader wants the sub-agent's work where it happened: right after the spawning call's
tool_result (or the call itself while no result exists). The link is found, in order of
trust, from `toolUseResult.agentId`, the `agentId: <id>` trailer of the result text, or
`progress/agent_progress` lines (`data.agentId` + `parentToolUseID`). Unlinked sub-agents
(e.g. the compaction side agent) are appended at the end, still marked as sidechain.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from .classify import user_content

Record = dict[str, Any]
Message = dict[str, Any]

_TRAILER = re.compile(r"agentId: ([\w-]+)")


@dataclass
class Piece:
    """One parsed file (the main transcript or one sub-agent) before weaving."""

    messages: list[Message]
    links: dict[str, str] = field(default_factory=dict)  # agent id -> spawning tool_use id
    answered: set[str] = field(default_factory=set)  # tool_use ids that have a tool_result


def find_links(records: Iterable[Record], messages: list[Message]) -> dict[str, str]:
    """agent id -> tool_use id, preferring the most explicit evidence."""
    from_result: dict[str, str] = {}
    from_progress: dict[str, str] = {}
    for rec in records:
        if rec["type"] == "user":
            _result_link(rec, from_result)
        elif rec["type"] == "progress":
            _progress_link(rec, from_progress)
    from_trailer = _trailer_links(messages)
    return {**from_progress, **from_trailer, **from_result}


def _result_link(rec: Record, links: dict[str, str]) -> None:
    result = rec.get("toolUseResult")
    agent_id = result.get("agentId") if isinstance(result, dict) else None
    if not isinstance(agent_id, str):
        return
    content = user_content(rec)
    blocks = content if isinstance(content, list) else []
    ids = [b.get("tool_use_id") for b in blocks if isinstance(b, dict) and b.get("type") == "tool_result"]
    if len(ids) == 1 and isinstance(ids[0], str):
        links.setdefault(agent_id, ids[0])


def _progress_link(rec: Record, links: dict[str, str]) -> None:
    data = rec.get("data")
    agent_id = data.get("agentId") if isinstance(data, dict) else None
    tool_id = rec.get("parentToolUseID")
    if isinstance(agent_id, str) and isinstance(tool_id, str):
        links.setdefault(agent_id, tool_id)


def _trailer_links(messages: list[Message]) -> dict[str, str]:
    links: dict[str, str] = {}
    for msg in messages:
        if msg["kind"] == "tool_result" and "agentId: " in msg["content"]:
            match = _TRAILER.search(msg["content"])
            tool_id = msg["tool"]["id"]
            if match and tool_id:
                links.setdefault(match.group(1), tool_id)
    return links


def answered_ids(messages: list[Message]) -> set[str]:
    return {m["tool"]["id"] for m in messages if m["kind"] == "tool_result" and m["tool"]["id"]}


def weave(main: Piece, agents: dict[str, Piece]) -> tuple[list[Message], dict[str, str]]:
    """Main messages with each sub-agent's messages inserted after its anchor.

    Returns the woven list and agent id -> parent tool id for the agents that were linked.
    Nested agents (a sub-agent spawning another) are linked the same way, from any piece.
    """
    weaver = _Weaver(main, agents)
    weaver.emit(main.messages)
    for agent_id in agents:
        weaver.emit_agent(agent_id, None)
    return weaver.out, weaver.parents


class _Weaver:
    def __init__(self, main: Piece, agents: dict[str, Piece]) -> None:
        self.agents = agents
        self.out: list[Message] = []
        self.placed: set[str] = set()
        self.parents: dict[str, str] = {}
        self.spawned = _spawn_map([main, *agents.values()], agents)
        self.answered = set().union(main.answered, *(p.answered for p in agents.values()))

    def emit(self, messages: list[Message]) -> None:
        for msg in messages:
            self.out.append(msg)
            tool_id = self._anchor(msg)
            for agent_id in self.spawned.get(tool_id, ()) if tool_id else ():
                self.emit_agent(agent_id, tool_id)

    def emit_agent(self, agent_id: str, tool_id: str | None) -> None:
        if agent_id in self.placed:
            return
        self.placed.add(agent_id)
        messages = self.agents[agent_id].messages
        if tool_id is not None:
            self.parents[agent_id] = tool_id
            for msg in messages:
                msg["parent_tool_id"] = tool_id
        self.emit(messages)

    def _anchor(self, msg: Message) -> str | None:
        """The tool id after which spawned agents go: the result, else an unanswered call."""
        kind = msg["kind"]
        tool_id: str | None = msg["tool"]["id"] if kind in ("tool_result", "tool_use") else None
        if kind == "tool_result" or (kind == "tool_use" and tool_id not in self.answered):
            return tool_id
        return None


def _spawn_map(pieces: list[Piece], agents: dict[str, Piece]) -> dict[str, list[str]]:
    """tool_use id -> agent ids it spawned (only agents we actually have)."""
    spawned: dict[str, list[str]] = {}
    for piece in pieces:
        for agent_id, tool_id in piece.links.items():
            if agent_id in agents and agent_id not in spawned.get(tool_id, []):
                spawned.setdefault(tool_id, []).append(agent_id)
    return spawned


USAGE_KEYS = ("total_tokens", "tool_uses", "duration_ms")
USAGE_TAIL = 400  # characters of the end of a report searched for the usage trailer
_USAGE_OPEN, _USAGE_CLOSE = "<usage>", "</usage>"


def split_usage_trailer(text: str) -> tuple[str, dict[str, int]]:
    """A Task result without its ``<usage>total_tokens: …\ntool_uses: …\nduration_ms: …</usage>``
    trailer (Claude Code 2.1.x), and the numbers it held.

    Only the last ``USAGE_TAIL`` characters are looked at (``rfind``), and the block is read line by
    line as ``key: integer`` with known keys only: linear and bounded whatever a hostile result
    holds. Anything not of this exact shape stays text and gives no numbers.
    """
    end = text.rstrip()
    if not end.endswith(_USAGE_CLOSE):
        return text, {}
    opening = end.rfind(_USAGE_OPEN, max(0, len(end) - USAGE_TAIL))
    if opening < 0:
        return text, {}
    usage: dict[str, int] = {}
    for line in end[opening + len(_USAGE_OPEN) : -len(_USAGE_CLOSE)].split("\n", len(USAGE_KEYS)):
        key, colon, value = line.partition(":")
        key, value = key.strip(), value.strip()
        if not colon or key not in USAGE_KEYS or not value.isdigit() or len(value) > 15:
            return text, {}
        usage[key] = int(value)
    return (end[:opening], usage) if usage else (text, {})


SPAWNING_TOOLS = frozenset({"Task", "Agent"})


def split_inline(main: Piece, records: list[Record]) -> dict[str, Piece]:
    """Claude Code 1.0.x sub-agents, written into the main file (docs/claude-code.md §1.9).

    Their lines carry ``isSidechain: true`` and no ``agentId``; parallel Tasks interleave them. Each
    sub-agent is one ``parentUuid`` chain of sidechain lines whose root is the prompt the Task call
    sent (``input.prompt``). So: every inline sidechain message takes the id of its chain's root
    (``inline-`` and the root's uuid), and a root whose text equals a Task call's prompt (the first
    such call not yet taken, in call order) becomes a piece of its own linked to that call, moved
    out of ``main`` to be woven under the call like a 2.x sub-agent file. An unmatched chain stays
    where it was written, still marked with its own id so it reads as its own sub-agent.
    Linear: each line's root is found once (path compression); a parent cycle ends the walk.
    """
    parent_of: dict[str, Any] = {}
    text_of: dict[str, str] = {}
    for rec in records:
        uuid = rec.get("uuid")
        if rec.get("isSidechain") is True and isinstance(uuid, str) and uuid not in parent_of:
            parent_of[uuid] = rec.get("parentUuid")
            if rec.get("type") == "user":
                text_of[uuid] = _plain_text(user_content(rec))
    if not parent_of:
        return {}
    roots = _Roots(parent_of)
    groups: dict[str, list[Message]] = {}
    for msg in main.messages:
        uuid = msg.get("uuid")
        if msg.get("sidechain") and not msg.get("agent_id") and isinstance(uuid, str) and uuid in parent_of:
            root = roots.of(uuid)
            msg["agent_id"] = f"inline-{root}"
            groups.setdefault(root, []).append(msg)
    calls = _task_calls(main.messages)
    pieces: dict[str, Piece] = {}
    for root, messages in groups.items():
        waiting = calls.get(text_of.get(root, ""))
        if waiting:
            agent_id = messages[0]["agent_id"]
            pieces[agent_id] = Piece(messages, {}, answered_ids(messages))
            main.links[agent_id] = waiting.pop(0)
    if pieces:
        moved = {id(m) for piece in pieces.values() for m in piece.messages}
        main.messages[:] = [m for m in main.messages if id(m) not in moved]
    return pieces


class _Roots:
    def __init__(self, parent_of: dict[str, Any]) -> None:
        self.parent_of = parent_of
        self.root: dict[str, str] = {}

    def of(self, uuid: str) -> str:
        path: list[str] = []
        on_path: set[str] = set()
        node = uuid
        while node not in self.root:
            parent = self.parent_of.get(node)
            if not isinstance(parent, str) or parent not in self.parent_of or parent in on_path or parent == node:
                self.root[node] = node
                break
            path.append(node)
            on_path.add(node)
            node = parent
        found = self.root[node]
        for step in path:
            self.root[step] = found
        return found


def _task_calls(messages: list[Message]) -> dict[str, list[str]]:
    """Prompt text -> the ids of the main conversation's Task/Agent calls sending it, in call order."""
    calls: dict[str, list[str]] = {}
    for msg in messages:
        tool = msg.get("tool") if msg["kind"] == "tool_use" and not msg.get("sidechain") else None
        if not isinstance(tool, dict) or tool.get("name") not in SPAWNING_TOOLS or not tool.get("id"):
            continue
        prompt = tool["input"].get("prompt") if isinstance(tool.get("input"), dict) else None
        if isinstance(prompt, str) and prompt.strip():
            calls.setdefault(prompt.strip(), []).append(tool["id"])
    return calls


def _plain_text(content: Any) -> str:
    """The text a user line sent (a string, or its text blocks joined), stripped."""
    if isinstance(content, str):
        return content.strip()
    if not isinstance(content, list):
        return ""
    texts = [
        b["text"] for b in content if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
    ]
    return "\n".join(texts).strip()
