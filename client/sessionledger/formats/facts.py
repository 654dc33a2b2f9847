"""Turns and the derived facts the worker stores on a session row.

Computed from the final, woven message list so that the content document and the session
row always agree (message_count, turn_count, title, files_touched…).
"""

from __future__ import annotations

import re
from typing import Any

Message = dict[str, Any]

TITLE_LIMIT = 120
TITLE_SCAN = 10_000  # characters of the prompt a title is made from (a prompt can be megabytes)
# Bounded: an unbounded `[^\]]*` rescans to the end of the prompt from every "[image:".
_PLACEHOLDER = re.compile(r"\[image(?::[^\]\n]{0,200})?\]")
FILE_TOOLS = {"Edit": "file_path", "Write": "file_path", "MultiEdit": "file_path", "NotebookEdit": "notebook_path"}
_USAGE_KEYS = (
    "input_tokens",
    "output_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
)


def number_and_turns(messages: list[Message]) -> list[dict[str, Any]]:
    """Set `index` and `turn` on every message; a prompt opens a turn, others inherit it.

    Sidechain messages are never prompts, so they carry the turn of the call that spawned
    them; messages before the first prompt have `turn: None`.
    """
    turns: list[dict[str, Any]] = []
    current: int | None = None
    for index, msg in enumerate(messages):
        msg["index"] = index
        if msg["kind"] == "prompt":
            current = len(turns)
            turns.append(_turn(current, msg))
        msg["turn"] = current
        if current is not None:
            turns[current]["last_message"] = index
    return turns


def _turn(index: int, msg: Message) -> dict[str, Any]:
    return {
        "index": index,
        "first_message": msg["index"],
        "last_message": msg["index"],
        "prompt": msg["content"],
        "timestamp": msg["timestamp"],
        "uuid": msg["uuid"],
    }


def title_from(turns: list[dict[str, Any]], messages: list[Message]) -> str:
    """First typed prompt, whitespace-collapsed; a slash command only when nothing else."""
    prompts = [messages[t["first_message"]] for t in turns]
    typed = [m for m in prompts if "command" not in m] or prompts
    if not typed:
        return ""
    content = typed[0]["content"][:TITLE_SCAN]
    title = " ".join(_PLACEHOLDER.sub(" ", content).split()) or " ".join(content.split())
    return title if len(title) <= TITLE_LIMIT else title[: TITLE_LIMIT - 1].rstrip() + "…"


def last_assistant_text(messages: list[Message]) -> str:
    for msg in reversed(messages):
        if msg["kind"] == "text" and msg["role"] == "assistant" and not msg.get("sidechain"):
            return msg["content"]
    return ""


def tool_facts(messages: list[Message]) -> tuple[list[str], dict[str, dict[str, int]]]:
    """Files edited (ordered, unique) and calls/errors per tool, sub-agents included.

    Also names each tool_result's tool (`tool.name`) so a UI can label a result on its own.
    """
    names: dict[str, str] = {}
    files: dict[str, None] = {}
    counts: dict[str, dict[str, int]] = {}
    for msg in messages:
        if msg["kind"] == "tool_use":
            _count_call(msg["tool"], names, files, counts)
        elif msg["kind"] == "tool_result":
            _count_result(msg["tool"], names, counts)
    return list(files), counts


def _count_call(
    tool: dict[str, Any], names: dict[str, str], files: dict[str, None], counts: dict[str, dict[str, int]]
) -> None:
    name = tool["name"] or "unknown"
    if tool["id"]:
        names[tool["id"]] = name
    counts.setdefault(name, {"calls": 0, "errors": 0})["calls"] += 1
    key = FILE_TOOLS.get(name)
    path = tool["input"].get(key) if key and isinstance(tool["input"], dict) else None
    if isinstance(path, str) and path:
        files[path] = None


def _count_result(tool: dict[str, Any], names: dict[str, str], counts: dict[str, dict[str, int]]) -> None:
    name = names.get(tool["id"]) if tool["id"] else None
    if name is None:
        return
    tool["name"] = name
    if tool["is_error"]:
        counts[name]["errors"] += 1


def token_usage(messages: list[Message]) -> dict[str, int]:
    """Token totals counted once per API message id (every line repeats the usage)."""
    last: dict[str, dict[str, Any]] = {}
    for msg in messages:
        usage = msg.get("usage")
        if isinstance(usage, dict) and isinstance(msg.get("message_id"), str):
            last[msg["message_id"]] = usage
    totals = dict.fromkeys(_USAGE_KEYS, 0)
    for usage in last.values():
        for key in _USAGE_KEYS:
            value = usage.get(key)
            if isinstance(value, int):
                totals[key] += value
    return totals


def time_span(messages: list[Message]) -> tuple[str | None, str | None]:
    stamps = [m["timestamp"] for m in messages if isinstance(m["timestamp"], str)]
    return (min(stamps), max(stamps)) if stamps else (None, None)
