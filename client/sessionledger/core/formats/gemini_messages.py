"""Gemini CLI conversation records -> content-document messages (docs/agents.md "Gemini CLI").

A `gemini` record is one model response (thoughts, text, tool calls with their results); a `user`
record is a prompt, a command, or the function responses of earlier calls.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from .gemini_replay import Record
from .jsonlines import Ids, base64_size, iso_utc, text_of
from .render import human_size, tool_summary
from .toolmap import gemini_call

Message = dict[str, Any]

FINISHED = frozenset({"success", "error", "cancelled"})
_FAILED = frozenset({"error", "cancelled"})
_SYSTEM_TYPES = frozenset({"info", "error", "warning"})
# Gemini CLI's own rule for user text that is not conversation (isIgnoredUserContent).
_NOT_PROMPT: tuple[tuple[str, str], ...] = (
    ("/", "command"),
    ("?", "command"),
    ("<session_context>", "session_context"),
    ("<hook_context>", "hook_context"),
)
_RESULT_JSON_LIMIT = 20_000
_USAGE_KEYS = ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")


# --- parts ------------------------------------------------------------------------------


def _parts(content: Any) -> list[Any]:
    """A PartListUnion (a string, one Part or a list of both) as a list."""
    if content is None:
        return []
    return content if isinstance(content, list) else [content]


def _part_text(part: Any) -> str:
    if isinstance(part, str):
        return part
    if not isinstance(part, dict):
        return ""
    if isinstance(text := part.get("text"), str):
        return text
    blob = part.get("inlineData")
    if isinstance(blob, dict):
        return _blob_placeholder(blob)
    data = part.get("fileData")
    if isinstance(data, dict):
        return f"[file: {text_of(data.get('fileUri')) or text_of(data.get('mimeType')) or 'attachment'}]"
    return ""


def _blob_placeholder(blob: dict[str, Any]) -> str:
    mime = text_of(blob.get("mimeType")) or "data"
    size = blob.get("original_size") if blob.get("slimmed") else None
    data = blob.get("data")
    if not isinstance(size, int) and isinstance(data, str):
        size = base64_size(data)
    return f"[image: {mime}, {human_size(size)}]" if isinstance(size, int) else f"[image: {mime}]"


def _is_thought(part: Any) -> bool:
    return isinstance(part, dict) and part.get("thought") is True


def _text(content: Any, *, thoughts: bool = False) -> str:
    texts = [_part_text(p) for p in _parts(content) if _is_thought(p) == thoughts and not _is_call_part(p)]
    return "".join(t for t in texts if t)


def _is_call_part(part: Any) -> bool:
    return isinstance(part, dict) and ("functionResponse" in part or "functionCall" in part)


def responses(content: Any) -> list[dict[str, Any]]:
    return [
        p["functionResponse"]
        for p in _parts(content)
        if isinstance(p, dict) and isinstance(p.get("functionResponse"), dict)
    ]


def not_prompt_label(text: str) -> str | None:
    """The subtype for user text Gemini CLI itself does not treat as conversation."""
    head = text.strip()
    if not head:
        return "empty"
    for prefix, label in _NOT_PROMPT:
        if head.startswith(prefix):
            return label
    return None


def is_prompt_record(rec: Record) -> bool:
    """A user record Gemini CLI keeps as conversation, not function responses: a turn starts there."""
    if rec.get("type") != "user" or responses(rec.get("content")):
        return False
    shown = rec.get("displayContent") if rec.get("displayContent") is not None else rec.get("content")
    return not_prompt_label(_text(shown)) is None


# --- messages ---------------------------------------------------------------------------


@dataclass
class _Build:
    ids: Ids = field(default_factory=Ids)
    answered: set[str] = field(default_factory=set)
    out: list[Message] = field(default_factory=list)
    usage: dict[str, int] = field(default_factory=lambda: dict.fromkeys(_USAGE_KEYS, 0))

    def add(self, rec: Record, wanted: str, role: str, kind: str, content: str, stamp: Any = None) -> Message:
        msg: Message = {
            "index": 0,
            "uuid": self.ids.take(wanted),
            "role": role,
            "kind": kind,
            "timestamp": iso_utc(stamp) or iso_utc(rec.get("timestamp")),
            "turn": None,
            "content": content,
        }
        self.out.append(msg)
        return msg


def build_messages(records: list[Record]) -> tuple[list[Message], dict[str, int]]:
    """Content-document messages for the loaded conversation, and its token usage."""
    build = _Build()
    for rec in records:
        kind = rec.get("type")
        if kind == "user":
            _user(build, rec)
        elif kind == "gemini":
            _gemini(build, rec)
        elif kind in _SYSTEM_TYPES:
            text = _text(rec.get("content"))
            if text.strip():
                msg = build.add(rec, rec["id"], "system", "system", text)
                msg.update(subtype=kind, level=kind if kind != "info" else "info")
    return build.out, build.usage


def _user(build: _Build, rec: Record) -> None:
    for response in responses(rec.get("content")):
        call_id = text_of(response.get("id"))
        if call_id and call_id not in build.answered:
            _result(build, rec, call_id, _response_text(response), "error" in _response_body(response))
    shown = rec.get("displayContent") if rec.get("displayContent") is not None else rec.get("content")
    text = _text(shown)
    if not text.strip():
        return
    if responses(rec.get("content")):
        build.add(rec, rec["id"], "user", "text", text)
        return
    label = not_prompt_label(text)
    if label:
        msg = build.add(rec, rec["id"], "user", "system", text)
        msg.update(meta=True, subtype=label)
        if label == "command":
            msg["command"] = text.strip().split(None, 1)[0][:64]
        return
    build.add(rec, rec["id"], "user", "prompt", text)


def _gemini(build: _Build, rec: Record) -> None:
    model = found if isinstance(found := rec.get("model"), str) else None
    start = len(build.out)
    thoughts = rec.get("thoughts")
    for n, thought in enumerate(thoughts if isinstance(thoughts, list) else []):
        text = _thought_text(thought)
        if text:
            stamp = thought.get("timestamp") if isinstance(thought, dict) else None
            _model(build.add(rec, f"{rec['id']}:thought:{n}", "assistant", "thinking", text, stamp), model, rec)
    thinking = _text(rec.get("content"), thoughts=True)
    if thinking.strip():
        _model(build.add(rec, f"{rec['id']}:thinking", "assistant", "thinking", thinking), model, rec)
    text = _text(rec.get("content"))
    if text.strip():
        _model(build.add(rec, rec["id"], "assistant", "text", text), model, rec)
    calls = rec.get("toolCalls")
    for call in calls if isinstance(calls, list) else []:
        if isinstance(call, dict):
            _tool_call(build, rec, call, model)
    usage = _count_tokens(build.usage, rec.get("tokens"))
    if usage:
        for msg in build.out[start:]:
            if msg.get("message_id") == rec["id"]:
                msg["usage"] = dict(usage)


def _model(msg: Message, model: str | None, rec: Record) -> None:
    """Model name, and the record's id as `message_id`: one gemini record is one response card."""
    if model:
        msg["model"] = model
    msg["message_id"] = rec["id"]


def _thought_text(thought: Any) -> str:
    if not isinstance(thought, dict):
        return ""
    subject, description = text_of(thought.get("subject")), text_of(thought.get("description"))
    return f"**{subject}**\n\n{description}".strip() if subject else description.strip()


def _tool_call(build: _Build, rec: Record, call: dict[str, Any], model: str | None) -> None:
    call_id = text_of(call.get("id")) or None
    agent_name = text_of(call.get("name"))
    name, tool_input = gemini_call(agent_name, call.get("args"))
    msg = build.add(
        rec, f"{call_id or rec['id']}:call", "assistant", "tool_use", tool_summary(tool_input), call.get("timestamp")
    )
    msg["tool"] = {"name": name or "unknown", "input": tool_input, "id": call_id, "agent_name": agent_name}
    _model(msg, model, rec)
    status = call.get("status")
    if call_id and call_id not in build.answered and (status in FINISHED or call.get("result") is not None):
        text = _result_text(call)
        _result(build, rec, call_id, text, status in _FAILED, call.get("timestamp"))


def _result(build: _Build, rec: Record, call_id: str, text: str, is_error: bool, stamp: Any = None) -> None:
    build.answered.add(call_id)
    msg = build.add(rec, f"{call_id}:result", "tool", "tool_result", text, stamp)
    msg["tool"] = {"id": call_id, "is_error": is_error}


def _result_text(call: dict[str, Any]) -> str:
    parts = []
    for part in _parts(call.get("result")):
        if isinstance(part, dict) and isinstance(part.get("functionResponse"), dict):
            parts.append(_response_text(part["functionResponse"]))
        else:
            parts.append(_part_text(part))
    text = "\n".join(p for p in parts if p)
    display = call.get("resultDisplay")
    if not text and isinstance(display, str):
        text = display
    return text or f"[{text_of(call.get('status')) or 'no output'}]"


def _response_body(response: dict[str, Any]) -> dict[str, Any]:
    body = response.get("response")
    return body if isinstance(body, dict) else {}


def _response_text(response: dict[str, Any]) -> str:
    body = _response_body(response)
    for key in ("output", "error", "llmContent"):
        if isinstance(text := body.get(key), str):
            return text
    if not body:
        return ""
    text = json.dumps(body, ensure_ascii=False, default=str)
    return text if len(text) <= _RESULT_JSON_LIMIT else text[: _RESULT_JSON_LIMIT - 1] + "…"


def _count_tokens(totals: dict[str, int], tokens: Any) -> dict[str, int]:
    """The record's request usage as Claude Code's `usage` keys, added to ``totals`` ({} if none).
    Gemini counts cached input inside `input` and thinking apart from `output`."""
    if not isinstance(tokens, dict):
        return {}
    value = {
        k: v if isinstance(v := tokens.get(k), int) and not isinstance(v, bool) and v > 0 else 0
        for k in ("input", "output", "cached", "thoughts")
    }
    usage = {
        "input_tokens": max(0, value["input"] - value["cached"]),
        "cache_read_input_tokens": value["cached"],
        "output_tokens": value["output"] + value["thoughts"],
    }
    for key, count in usage.items():
        totals[key] += count
    return usage if any(usage.values()) else {}
