"""The content document's fields, declared once: what a reader of `content.json` can meet.

Every key the parser writes is listed here with the JSON types its value may have
(`tests/client/test_formats_document.py` parses every kind of line and fails on a key or a
type not declared). Readers use the declaration instead of repeating it: the browser test
`tests/frontend/browser/test_injection.py` puts hostile text into every field that may hold a
string, so a new field is attacked as soon as it is declared, without editing the test.

Types are JSON's: `str`, `int`, `float`, `bool`, `dict`, `list`, and `None` for null. `ANY`
marks a value copied from the transcript as it is (a tool's input, an API usage block): any
JSON, including strings at any depth.
"""

from __future__ import annotations

from typing import Any

ANY: tuple[type, ...] = (str, int, float, bool, dict, list, type(None))
TEXT = (str,)
OPTIONAL_TEXT = (str, type(None))
NUMBER = (int,)

HEADER: dict[str, tuple[type, ...]] = {
    "version": TEXT,
    "session_id": OPTIONAL_TEXT,
    "project": OPTIONAL_TEXT,
    "feature_branch": OPTIONAL_TEXT,
    "commit_hash": OPTIONAL_TEXT,
    "task_id": OPTIONAL_TEXT,
    "author": OPTIONAL_TEXT,
    "captured_at": OPTIONAL_TEXT,
    "agent": (dict,),
    "messages": (list,),
    "turns": (list,),
    "stats": (dict,),
}
AGENT: dict[str, tuple[type, ...]] = {"name": TEXT, "version": OPTIONAL_TEXT, "session_id": OPTIONAL_TEXT}

MESSAGE: dict[str, tuple[type, ...]] = {
    "index": NUMBER,
    "uuid": ANY,  # the line's uuid as written (a string in every real transcript)
    "role": TEXT,
    "kind": TEXT,
    "timestamp": OPTIONAL_TEXT,  # canonical UTC `YYYY-MM-DDTHH:MM:SS.mmmZ` (formats.sanitize)
    "turn": (int, type(None)),
    "content": TEXT,
    "sidechain": (bool,),
    "agent_id": TEXT,
    "parent_tool_id": TEXT,
    "tool": (dict,),
    "message_id": ANY,
    "model": ANY,
    "usage": ANY,
    "api_error": (bool,),
    "meta": (bool,),
    "subtype": TEXT,
    "level": TEXT,
    "compact": (dict,),
    "compact_summary": (bool,),
    "leaf_uuid": ANY,
    "command": TEXT,
    "bash": (bool,),
    "queued": (bool,),
    "hook": ANY,
    "persisted_output": ANY,  # Claude Code: a tool output saved under tool-results/ (formats.persisted)
    "phase": TEXT,  # Codex: the assistant message's phase ("commentary", "final_answer")
    "ide_context": (bool,),  # Codex: the prompt came with IDE context, stripped from `content`
}
TOOL: dict[str, tuple[type, ...]] = {
    "name": OPTIONAL_TEXT,
    "id": OPTIONAL_TEXT,
    "input": ANY,  # tool_use only: the call's arguments as the model wrote them
    "is_error": (bool,),  # tool_result only
    "agent_name": OPTIONAL_TEXT,  # the agent's own tool name where `name` maps it (formats.toolmap)
}
COMPACT: dict[str, tuple[type, ...]] = {"trigger": ANY, "preTokens": ANY}  # copied from compactMetadata
TURN: dict[str, tuple[type, ...]] = {
    "index": NUMBER,
    "first_message": NUMBER,
    "last_message": NUMBER,
    "prompt": TEXT,
    "timestamp": OPTIONAL_TEXT,
    "uuid": ANY,
}

STATS: dict[str, tuple[type, ...]] = {
    "lines": NUMBER,
    "skipped_lines": NUMBER,  # lines that are not a JSON object with a string `type`
    "truncated_bytes": NUMBER,  # an unterminated last line that did not parse (cut mid-write)
    "duplicate_lines": NUMBER,
    "ignored_lines": ANY,  # {line type (as written, e.g. "system/turn_duration"): count}
    "repaired_lines": NUMBER,  # kept after replacing NULs/lone surrogates or flattening deep nesting
    "invalid_timestamps": NUMBER,  # lines whose timestamp was not a time (now null)
    "subagents": ANY,  # {agent id: {lines, skipped_lines, messages, parent_tool_id}}
    "persisted_outputs": NUMBER,  # Claude Code: tool results given their saved full output
    "session": ANY,  # Codex, Gemini: facts of the session's meta records (cwd, git, originator…)
    "format": TEXT,  # Gemini: "json" (one rewritten document, ≤ v0.38) or "jsonl" (v0.39+)
    "rewound_messages": NUMBER,  # Gemini: messages a /rewind removed from the live conversation
}

# Where each declaration applies: a path of keys, "[]" for every item of a list.
SHAPES: dict[tuple[str, ...], dict[str, tuple[type, ...]]] = {
    (): HEADER,
    ("agent",): AGENT,
    ("stats",): STATS,
    ("messages", "[]"): MESSAGE,
    ("messages", "[]", "tool"): TOOL,
    ("messages", "[]", "compact"): COMPACT,
    ("turns", "[]"): TURN,
}


def string_fields() -> list[tuple[str, ...]]:
    """Every path whose value may be a string, e.g. ("messages", "[]", "tool", "name").

    A field of type ANY also stands for the strings inside it: its path ends in "*" (every
    string at any depth, and every key of its objects).
    """
    paths = []
    for where, fields in SHAPES.items():
        for key, types in fields.items():
            if str in types:
                paths.append((*where, key, "*") if types is ANY else (*where, key))
    return paths


def undeclared(document: dict[str, Any]) -> list[str]:
    """Keys or types in `document` that this module does not declare (empty for a good parser)."""
    problems: list[str] = []
    for where, fields in SHAPES.items():
        for path, obj in _objects(document, where, ()):
            for key, value in obj.items():
                if key not in fields:
                    problems.append(f"{'.'.join(path)}: undeclared key {key!r}")
                elif not isinstance(value, fields[key]) or (isinstance(value, bool) and bool not in fields[key]):
                    problems.append(f"{'.'.join(path)}.{key}: {type(value).__name__} not declared")
    return problems


def _objects(node: Any, where: tuple[str, ...], path: tuple[str, ...]) -> list[tuple[tuple[str, ...], dict[str, Any]]]:
    if not where:
        return [(path, node)] if isinstance(node, dict) else []
    step, rest = where[0], where[1:]
    if step == "[]":
        items = node if isinstance(node, list) else []
        return [found for i, item in enumerate(items) for found in _objects(item, rest, (*path, str(i)))]
    child = node.get(step) if isinstance(node, dict) else None
    return _objects(child, rest, (*path, step)) if child is not None else []
