"""Turns and the derived facts the worker stores on a session row.

Computed from the final, woven message list so that the content document and the session
row always agree (message_count, turn_count, title, files_touched…).
"""

from __future__ import annotations

import re
from datetime import datetime
from itertools import pairwise
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


# Claude Code's built-in commands manage the session; they never say what it is about.
_HOUSEKEEPING = frozenset(
    [
        "/add-dir",
        "/agents",
        "/bug",
        "/clear",
        "/compact",
        "/config",
        "/context",
        "/cost",
        "/doctor",
        "/exit",
        "/export",
        "/help",
        "/hooks",
        "/ide",
        "/init",
        "/login",
        "/logout",
        "/mcp",
        "/memory",
        "/model",
        "/permissions",
        "/quit",
        "/release-notes",
        "/resume",
        "/rewind",
        "/status",
        "/terminal-setup",
        "/upgrade",
        "/vim",
    ]
)
_BARE_COMMAND = re.compile(r"/[\w:-]{1,64}")  # a prompt typed as just `/clear` (no envelope)


def _is_command_only(msg: Message) -> bool:
    """A prompt that is a slash command without a request of its own: `/clear`, `/compact keep
    tests`, a bare `/review`. A custom command with arguments (`/review the parser`) is a request."""
    content = msg["content"].strip() if isinstance(msg["content"], str) else ""
    name = msg.get("command") or (content if _BARE_COMMAND.fullmatch(content) else None)
    if name is None:
        return False
    return name in _HOUSEKEEPING or content == name


def title_from(turns: list[dict[str, Any]], messages: list[Message]) -> str:
    """First real prompt, whitespace-collapsed; a slash command only when nothing else.

    Skips housekeeping commands (`/clear`, `/compact …`) and bare commands; a custom command
    with arguments titles the session by itself (`/review the parser`), never by the next prompt.
    """
    prompts = [messages[t["first_message"]] for t in turns]
    typed = [m for m in prompts if not _is_command_only(m)] or prompts
    if not typed:
        return ""
    content = typed[0]["content"][:TITLE_SCAN]
    title = " ".join(_PLACEHOLDER.sub(" ", content).split()) or " ".join(content.split())
    return title if len(title) <= TITLE_LIMIT else title[: TITLE_LIMIT - 1].rstrip() + "…"


def last_assistant_text(messages: list[Message]) -> str:
    for msg in reversed(messages):
        if msg["kind"] == "text" and msg["role"] == "assistant" and not msg.get("sidechain"):
            text: str = msg["content"]
            return text
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


ACTIVE_GAP_SECONDS = 300  # a pause longer than this is not active time (the reader/agent was away)
TOOL_RUN_CAP_SECONDS = 3600  # a call answered later than this counts as this long (a forgotten shell)
MODELS_KEPT, MODEL_NAME_CAP = 20, 64
TOKENS_CAP = 10**12  # per model and kind: a hostile usage block cannot overflow the database's bigint


def effort(messages: list[Message]) -> dict[str, Any]:
    """What a session cost, for insights: tokens per model, active time, tool run time, steps.

    - ``tokens``: ``{model: [input, output, cache_creation, cache_read]}``, each API message
      counted once (its lines repeat the usage), sub-agents included (they are billed too);
    - ``active_ms``: the sum of the gaps under ``ACTIVE_GAP_SECONDS`` between consecutive
      messages of the main conversation (a session left open overnight is not 14 hours of work);
    - ``tool_ms``: the sum over the main conversation's tool calls of result time minus call time;
    - ``steps``: human prompts plus tool calls of the main conversation (the steps of
      ``formats.steps``).
    Linear; every value from the transcript is checked for its type.
    """
    per_message: dict[str, tuple[str, dict[str, Any]]] = {}
    for msg in messages:
        usage, key = msg.get("usage"), msg.get("message_id")
        if isinstance(usage, dict) and isinstance(key, str):
            model = found if isinstance(found := msg.get("model"), str) else ""
            per_message[key] = (model[:MODEL_NAME_CAP], usage)
    tokens: dict[str, list[int]] = {}
    for model, usage in per_message.values():
        if model not in tokens and len(tokens) >= MODELS_KEPT:
            model = "other"
        row = tokens.setdefault(model, [0, 0, 0, 0])
        for i, name in enumerate(_USAGE_KEYS):
            value = usage.get(name)
            if isinstance(value, int) and not isinstance(value, bool) and value > 0:
                row[i] = min(row[i] + value, TOKENS_CAP)
    main = [m for m in messages if not m.get("sidechain")]
    return {
        "tokens": tokens,
        "active_ms": _active_ms(main),
        "tool_ms": _tool_ms(main),
        "steps": sum(1 for m in main if m.get("kind") == "tool_use" or (m["role"] == "user" and m["kind"] == "prompt")),
    }


def _moment(stamp: Any) -> float | None:
    if not isinstance(stamp, str):
        return None
    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def _active_ms(messages: list[Message]) -> int:
    moments = sorted(t for t in (_moment(m.get("timestamp")) for m in messages) if t is not None)
    total = sum(gap for a, b in pairwise(moments) if 0 < (gap := b - a) < ACTIVE_GAP_SECONDS)
    return int(total * 1000)


def _tool_ms(messages: list[Message]) -> int:
    called: dict[str, float] = {}
    total = 0.0
    for msg in messages:
        tool = found if isinstance(found := msg.get("tool"), dict) else {}
        tool_id, moment = tool.get("id"), _moment(msg.get("timestamp"))
        if not isinstance(tool_id, str) or moment is None:
            continue
        if msg["kind"] == "tool_use":
            called.setdefault(tool_id, moment)
        elif msg["kind"] == "tool_result" and tool_id in called:
            total += min(max(moment - called.pop(tool_id), 0.0), TOOL_RUN_CAP_SECONDS)
    return int(total * 1000)
