"""Codex CLI rollout lines as records, and where the prompts are (docs/agents.md "Codex CLI").

Both the parse (`codex_messages.py`) and the cuts (`codex.py`) read a rollout through these: a line
is an `Entry` (its record category, payload type and payload, whatever the rollout's age), and
`prompt_lines` applies the prompt rule of `codex.py`'s docstring.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from .jsonlines import Line, iso_utc, text_of
from .render import human_size

_ENVELOPE = frozenset({"session_meta", "turn_context", "response_item", "event_msg", "compacted"})
_RESPONSE_TYPES = frozenset(
    {
        "message",
        "reasoning",
        "function_call",
        "function_call_output",
        "custom_tool_call",
        "custom_tool_call_output",
        "local_shell_call",
        "web_search_call",
        "ghost_snapshot",
        "compaction",
    }
)
CALLS = frozenset({"function_call", "custom_tool_call", "local_shell_call"})
OUTPUTS = frozenset({"function_call_output", "custom_tool_call_output"})
# User text Codex writes for the model (not typed by the user) -> message subtype.
_CONTEXT_PREFIXES: tuple[tuple[str, str], ...] = (
    ("<environment_context>", "environment"),
    ("<user_instructions>", "instructions"),
    ("# AGENTS.md instructions", "instructions"),
    ("<permissions instructions>", "permissions"),
    ("<turn_aborted>", "interrupt"),
    ("<user_shell_command>", "shell_command"),
    ("<subagent_notification>", "subagent"),
    ("<skill>", "skill"),
)
_TAG = re.compile(r"<([a-z_][a-z0-9_ -]{0,40}?)(/?)>")
# Context blocks the IDE and desktop app put before what the user typed (which follows the marker).
_CONTEXT_HEADERS = ("# Context from my IDE setup:", "# Files mentioned by the user:")
_REQUEST_MARKER = "## My request for Codex:"
LINE_ID = "sessionledger_line_id"  # added by slim(): keeps message uuids stable (codex_messages.line_id_of)


@dataclass
class Entry:
    """A line, what kind of record it is (None: blank, broken or unknown) and its payload."""

    index: int
    line: Line
    cat: str | None = None
    ptype: str | None = None
    payload: dict[str, Any] = field(default_factory=dict)


# --- reading lines ----------------------------------------------------------------------


def read_entries(lines: list[Line]) -> list[Entry]:
    return [_entry(i, line) for i, line in enumerate(lines)]


def _entry(index: int, line: Line) -> Entry:
    rec = line.rec
    entry = Entry(index, line)
    if rec is None:
        return entry
    kind, payload = rec.get("type"), rec.get("payload")
    if kind in _ENVELOPE and isinstance(payload, dict):
        entry.cat, entry.payload = kind, payload
    elif "payload" not in rec and kind in _RESPONSE_TYPES:  # pre-envelope rollout
        entry.cat, entry.payload = "response_item", rec
    elif "payload" not in rec and kind is None and isinstance(rec.get("id"), str) and "timestamp" in rec:
        entry.cat, entry.payload = "session_meta", rec
    ptype = entry.payload.get("type")
    entry.ptype = ptype if isinstance(ptype, str) else None
    return entry


def timestamp(entry: Entry) -> str | None:
    rec = entry.line.rec or {}
    return iso_utc(rec.get("timestamp")) or iso_utc(entry.payload.get("timestamp"))


def parts_text(content: Any) -> str:
    """Text of a message's content parts; images become placeholders."""
    if isinstance(content, str):
        return content
    parts = []
    for part in content if isinstance(content, list) else []:
        if not isinstance(part, dict):
            continue
        if part.get("type") in ("input_image", "image"):
            parts.append(_image_placeholder(part))
        else:
            text = part.get("text")
            if isinstance(text, str) and text:
                parts.append(text)
    return "\n\n".join(parts)


def _image_placeholder(part: dict[str, Any]) -> str:
    url = part.get("image_url")
    if isinstance(url, str) and url.startswith("data:"):
        media = url[5 : url.find(";")] if 0 < url.find(";") < 64 else "image"
        comma = url.find(",")
        size = max(0, (len(url) - comma - 1) * 3 // 4) if comma > 0 else 0
        if part.get("slimmed") and isinstance(part.get("original_size"), int):
            size = part["original_size"]
        return f"[image: {media}, {human_size(size)}]" if size else f"[image: {media}]"
    return "[image]"


def _is_user_item(entry: Entry) -> bool:
    return entry.cat == "response_item" and entry.ptype == "message" and entry.payload.get("role") == "user"


def _is_user_event(entry: Entry) -> bool:
    """A `user_message` event with something in it (an empty one opens no turn)."""
    return entry.cat == "event_msg" and entry.ptype == "user_message" and bool(event_text(entry.payload))


def event_text(payload: dict[str, Any]) -> str:
    text = text_of(payload.get("message"))
    images = payload.get("images")
    if isinstance(images, list) and images:
        text = "\n\n".join([text, *("[image]" for _ in images)])
    return text.strip()


def context_label(text: str) -> str | None:
    """The subtype of user text Codex wrote for the model, or None when it reads as typed."""
    head = text.lstrip()[:64]
    for prefix, label in _CONTEXT_PREFIXES:
        if head.startswith(prefix):
            return label
    match = _TAG.match(head)
    if match is None:
        return None
    return "context" if match.group(2) or f"</{match.group(1)}>" in text else None


# --- prompts ----------------------------------------------------------------------------


def prompt_lines(entries: list[Entry]) -> dict[int, str]:
    """Line index -> "item" or "event": where each prompt sits (the rule is in codex.py's docstring)."""
    if not any(_is_user_event(e) for e in entries):
        return {
            e.index: "item"
            for e in entries
            if _is_user_item(e) and not context_label(parts_text(e.payload.get("content")))
        }
    prompts: dict[int, str] = {}
    pending: list[Entry] = []
    for entry in entries:
        if _is_user_item(entry):
            pending.append(entry)
        elif _is_user_event(entry):
            match = _matching_item(pending, text_of(entry.payload.get("message")))
            if match is None:
                prompts[entry.index] = "event"
            else:
                prompts[match.index] = "item"
            pending = []
    return prompts


def _matching_item(pending: list[Entry], typed: str) -> Entry | None:
    """The latest user item since the previous prompt whose text is what the user typed."""
    typed = typed.strip()
    for entry in reversed(pending):
        text = parts_text(entry.payload.get("content")).strip()
        if text == typed or (typed and typed in text and not context_label(text)):
            return entry
    return None


def prompt_text(text: str) -> tuple[str, dict[str, Any]]:
    """What the user asked: the request after an IDE/app context block, else the text itself."""
    if text.lstrip().startswith(_CONTEXT_HEADERS):
        at = text.find(_REQUEST_MARKER)
        if at >= 0:
            return text[at + len(_REQUEST_MARKER) :].strip(), {"ide_context": True}
    return text, {}


def call_id_of(payload: dict[str, Any]) -> str | None:
    """What pairs a call with its output: `call_id`, else the item's `id`."""
    for key in ("call_id", "id"):
        value = payload.get(key)
        if isinstance(value, str) and value:
            return value
    return None
