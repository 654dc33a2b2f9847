"""Records (JSONL lines) -> docs/design.md §2 message objects, one per content block.

Decisions a reader of the content document relies on:

- `kind: prompt` is used exactly for real prompts (docs/claude-code.md §1.8), i.e. messages that start
  a turn. Other user text is `kind: text` (sub-agent prompts, text next to tool results,
  queued messages) or, when the user did not type it, `kind: system` with `meta: true` and
  a `subtype` (meta, caveat, command_output, bash_output, interrupt, task_notification,
  hook_feedback).
- The text and image blocks of one user line form one message (a prompt is one act);
  every tool_result block is its own `role: tool` message.
- Compaction summaries are `role: system, kind: summary, compact_summary: true`; `summary`
  lines are `role: system, kind: summary` with `leaf_uuid`.
- `system/turn_duration` is dropped as noise, and `system/stop_hook_summary` unless a hook
  failed or stopped the turn; blank assistant text blocks ("\\n\\n") are dropped too.
- Attachments are dropped except `hook_additional_context` (what hooks told the model,
  `kind: system, subtype: hook_context, meta: true`) and `queued_command` (text the user
  typed while the assistant worked, `kind: text, queued: true`).
- Lines that yield no message are counted by type in `stats.ignored_lines`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from .classify import (
    block_text,
    not_prompt_label,
    render_prompt,
    slash_command,
    strip_wrappers,
    user_content,
)
from .render import image_placeholder, render_blocks, render_content, tool_summary

Record = dict[str, Any]
Message = dict[str, Any]

_TOOL_USE_TYPES = frozenset({"tool_use", "server_tool_use", "mcp_tool_use"})


def build_messages(records: list[Record]) -> tuple[list[Message], dict[str, int]]:
    """Messages for records already in chain order, and the count of message-less lines."""
    messages: list[Message] = []
    ignored: dict[str, int] = {}
    for rec in records:
        handler = _HANDLERS.get(rec["type"])
        made = handler(rec) if handler else None
        if made:
            messages.extend(made)
        else:
            key = _ignored_key(rec)
            ignored[key] = ignored.get(key, 0) + 1
    return messages, ignored


def _ignored_key(rec: Record) -> str:
    kind = rec["type"]
    detail = rec.get("subtype") if kind == "system" else None
    if kind == "attachment" and isinstance(rec.get("attachment"), dict):
        detail = rec["attachment"].get("type")
    return f"{kind}/{detail}" if isinstance(detail, str) else kind


def _base(rec: Record, role: str, kind: str, content: str) -> Message:
    msg: Message = {
        "index": 0,
        "uuid": rec.get("uuid"),
        "role": role,
        "kind": kind,
        "timestamp": rec.get("timestamp"),
        "turn": None,
        "content": content,
    }
    if rec.get("isSidechain") is True:
        msg["sidechain"] = True
    return msg


# --- assistant -------------------------------------------------------------------------


def _assistant(rec: Record) -> list[Message]:
    message = rec.get("message")
    if not isinstance(message, dict):
        return []
    blocks = message.get("content")
    if isinstance(blocks, str):
        blocks = [{"type": "text", "text": blocks}]
    if not isinstance(blocks, list):
        return []
    extra = _response_keys(rec, message)
    out = []
    for block in blocks:
        msg = _assistant_block(rec, block) if isinstance(block, dict) else None
        if msg is not None:
            msg.update(extra)
            out.append(msg)
    return out


def _response_keys(rec: Record, message: dict[str, Any]) -> dict[str, Any]:
    """Keys that let a UI group the lines of one API response and count its tokens once."""
    extra = {}
    for key, source in (("message_id", "id"), ("model", "model"), ("usage", "usage")):
        value = message.get(source)
        if value is not None:
            extra[key] = value
    if rec.get("isApiErrorMessage") is True:
        extra["api_error"] = True
    return extra


def _assistant_block(rec: Record, block: dict[str, Any]) -> Message | None:
    kind = block.get("type")
    if kind == "text" or kind == "thinking":
        text = block.get(kind)
        return _base(rec, "assistant", kind, text) if isinstance(text, str) and _has_text(text) else None
    if kind in _TOOL_USE_TYPES:
        return _tool_use(rec, block)
    if kind == "redacted_thinking":
        return _base(rec, "assistant", "thinking", "[redacted thinking]")
    if kind == "image":
        return _base(rec, "assistant", "text", image_placeholder(block))
    return _base(rec, "assistant", "text", f"[{kind}]") if kind is not None else None


def _has_text(text: Any) -> bool:
    return isinstance(text, str) and not text.isspace() and text != ""


def _tool_use(rec: Record, block: dict[str, Any]) -> Message:
    tool_input = block.get("input")
    msg = _base(rec, "assistant", "tool_use", tool_summary(tool_input))
    msg["tool"] = {"name": _str(block.get("name")), "input": tool_input, "id": _str(block.get("id"))}
    return msg


# --- user ------------------------------------------------------------------------------


def _user(rec: Record) -> list[Message]:
    content = user_content(rec)
    if isinstance(content, str):
        return _user_text(rec, content, content, with_results=False)
    if not isinstance(content, list):
        return []
    results = [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]
    out = [_tool_result(rec, block) for block in results]
    rest = [b for b in content if not (isinstance(b, dict) and b.get("type") == "tool_result")]
    if rest:
        out.extend(_user_text(rec, block_text(rest), render_blocks(rest), bool(results)))
    return out


def _tool_result(rec: Record, block: dict[str, Any]) -> Message:
    msg = _base(rec, "tool", "tool_result", render_content(block.get("content")))
    msg["tool"] = {"id": _str(block.get("tool_use_id")), "is_error": block.get("is_error") is True}
    return msg


def _str(value: Any) -> str | None:
    """Ids and names are used as dict keys downstream; anything but a string is dropped."""
    return value if isinstance(value, str) else None


def _user_text(rec: Record, text: str, rendered: str, with_results: bool) -> list[Message]:
    """Classify one user line's text: compaction summary, machine text, plain text, prompt."""
    if not rendered.strip():
        return []
    if rec.get("isCompactSummary") is True:
        msg = _base(rec, "system", "summary", rendered)
        msg["compact_summary"] = True
        return [msg]
    label = not_prompt_label(text)
    if label or rec.get("isMeta") is True:
        msg = _base(rec, "user", "system", strip_wrappers(rendered) if label else rendered)
        msg.update(meta=True, subtype=label or "meta")
        return [msg]
    if with_results or rec.get("isSidechain") is True:
        return [_base(rec, "user", "text", rendered)]
    content, marks = render_prompt(rendered)
    msg = _base(rec, "user", "prompt", content)
    msg.update(marks)
    return [msg]


# --- system, summary, attachment -------------------------------------------------------


def _system(rec: Record) -> list[Message]:
    subtype = rec.get("subtype")
    subtype = subtype if isinstance(subtype, str) else "informational"
    if subtype == "turn_duration" or (subtype == "stop_hook_summary" and not _stop_mattered(rec)):
        return []
    msg = _base(rec, "system", "system", _system_text(rec, subtype))
    msg["subtype"] = subtype
    if isinstance(rec.get("compactMetadata"), dict):
        msg["compact"] = rec["compactMetadata"]
    if isinstance(rec.get("level"), str):
        msg["level"] = rec["level"]
    return [msg]


def _stop_mattered(rec: Record) -> bool:
    return bool(rec.get("hookErrors")) or rec.get("preventedContinuation") is True


def _system_text(rec: Record, subtype: str) -> str:
    content = rec.get("content")
    if isinstance(content, str) and content:
        command = slash_command(content)
        if command:
            return " ".join(part for part in command if part)
        return strip_wrappers(content)
    return _system_fallback(rec, subtype)


def _system_fallback(rec: Record, subtype: str) -> str:
    if subtype == "compact_boundary":
        return "Conversation compacted"
    if subtype == "stop_hook_summary":
        errors = rec.get("hookErrors") or []
        reason = rec.get("stopReason") or ""
        return "; ".join(map(str, errors)) or f"Stop hook stopped the turn {reason}".strip()
    error = rec.get("error")
    return json.dumps(error, ensure_ascii=False) if error is not None else subtype


def _summary(rec: Record) -> list[Message]:
    text = rec.get("summary")
    if not isinstance(text, str):
        return []
    msg = _base(rec, "system", "summary", text)
    msg["leaf_uuid"] = rec.get("leafUuid")
    return [msg]


def _attachment(rec: Record) -> list[Message]:
    att = rec.get("attachment")
    if not isinstance(att, dict):
        return []
    kind = att.get("type")
    if kind == "hook_additional_context":
        msg = _base(rec, "system", "system", _attachment_text(att.get("content")))
        msg.update(subtype="hook_context", meta=True, hook=att.get("hookName"))
        return [msg] if msg["content"] else []
    if kind == "queued_command":
        msg = _base(rec, "user", "text", _attachment_text(att.get("prompt")))
        msg["queued"] = True
        return [msg] if msg["content"] else []
    return []


def _attachment_text(value: Any) -> str:
    if isinstance(value, list):
        return "\n".join(v if isinstance(v, str) else render_blocks([v]) for v in value)
    return render_content(value)


_HANDLERS: dict[str, Callable[[Record], list[Message]]] = {
    "user": _user,
    "assistant": _assistant,
    "system": _system,
    "summary": _summary,
    "attachment": _attachment,
}
