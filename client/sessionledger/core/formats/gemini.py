"""Gemini CLI chat recordings (`~/.gemini/tmp/<project>/chats/session-<time>-<id8>.jsonl`).

Since v0.39 a recording is JSONL that Gemini CLI replays on load: a metadata line
(`sessionId`, `projectHash`, `startTime`…), message records keyed by `id` (a later line with the
same `id` replaces the message in place: tool calls gain results, tokens arrive), `{"$set": …}`
metadata updates (`$set.messages` replaces the whole conversation) and `{"$rewindTo": id}`
(drops that message and everything after it). Before v0.39 the same conversation was one
pretty-printed JSON document (`session-….json`), rewritten on every change; it parses the same.
Formats, versions and the tool mapping are documented in docs/agents.md ("Gemini CLI").

A gemini message carries its tool calls *and* their results (`toolCalls[].result`), so a call and
its output can only be split across lines when an early copy of the message was written before
the call finished; cuts never fall there.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .base import ParsedTranscript
from .jsonlines import (
    FunctionFormat,
    Ids,
    Line,
    assemble,
    base64_size,
    count_in_dicts,
    dump_line,
    forward_cut,
    iso_utc,
    safe_turn_cut,
    scan,
    text_of,
)
from .locate import project_hash
from .render import human_size, tool_summary
from .toolmap import gemini_call

NAME = "gemini"
Message = dict[str, Any]
Record = dict[str, Any]

_FINISHED = frozenset({"success", "error", "cancelled"})
_FAILED = frozenset({"error", "cancelled"})
_SYSTEM_TYPES = frozenset({"info", "error", "warning"})
# Gemini CLI's own rule for user text that is not conversation (isIgnoredUserContent).
_NOT_PROMPT: tuple[tuple[str, str], ...] = (
    ("/", "command"),
    ("?", "command"),
    ("<session_context>", "session_context"),
    ("<hook_context>", "hook_context"),
)
_WS = re.compile(r"[ \t\n\r]*")
_SLIMMED = "[slimmed]"
_MAX_DEPTH = 12
_RESULT_JSON_LIMIT = 20_000
_USAGE_KEYS = ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")


# --- replaying a recording --------------------------------------------------------------


@dataclass
class _Conversation:
    """The conversation a recording describes, as Gemini CLI would load it."""

    meta: dict[str, Any] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)
    records: dict[str, Record] = field(default_factory=dict)
    position: dict[str, int] = field(default_factory=dict)
    legacy: bool = False
    lines: int = 0
    skipped: int = 0
    truncated_bytes: int = 0
    ignored: dict[str, int] = field(default_factory=dict)
    rewound: int = 0

    def upsert(self, rec: Record) -> None:
        key = rec["id"]
        if key not in self.records:
            self.position[key] = len(self.order)
            self.order.append(key)
        self.records[key] = rec

    def rewind(self, key: Any) -> None:
        """Drop `key` and every later message; an unknown id drops them all (as Gemini does).

        Only the tail is ever removed, so the positions of the kept messages stay right.
        """
        at = self.position.get(key, 0) if isinstance(key, str) else 0
        for gone in self.order[at:]:
            del self.records[gone], self.position[gone]
        self.rewound += len(self.order) - at
        del self.order[at:]

    def replace_all(self, messages: list[Any]) -> None:
        self.order, self.records, self.position = [], {}, {}
        for msg in messages:
            if _is_message(msg):
                self.upsert(msg)

    def messages(self) -> list[Record]:
        return [self.records[key] for key in self.order]


def _is_message(rec: Any) -> bool:
    return isinstance(rec, dict) and isinstance(rec.get("id"), str)


def _is_metadata(rec: Record) -> bool:
    return isinstance(rec.get("sessionId"), str) and isinstance(rec.get("projectHash"), str)


def legacy_document(raw: bytes) -> Record | None:
    """The pre-v0.39 single JSON document, or None when `raw` is JSONL (or broken)."""
    head = raw.lstrip()[:1]
    first = raw.split(b"\n", 1)[0].strip()
    if head != b"{" or (first.startswith(b"{") and first.endswith(b"}")):
        return None  # a JSONL line is a whole object on its first line
    try:
        doc = json.loads(raw.decode("utf-8", "replace"))
    except (ValueError, RecursionError):
        return None
    return doc if isinstance(doc, dict) and isinstance(doc.get("messages"), list) else None


def replay(raw: bytes) -> _Conversation:
    doc = legacy_document(raw)
    if doc is not None:
        conv = _Conversation(legacy=True, lines=1)
        conv.meta = {k: v for k, v in doc.items() if k != "messages"}
        conv.replace_all(doc["messages"])
        return conv
    scanned = scan(raw)
    conv = _Conversation(lines=scanned.count, skipped=scanned.skipped, truncated_bytes=scanned.truncated_bytes)
    for line in scanned.lines:
        if line.rec is not None:
            _apply(conv, line.rec)
    return conv


def _apply(conv: _Conversation, rec: Record) -> None:
    """One recorded line, in Gemini CLI's own order of checks (loadConversationRecord)."""
    if isinstance(rec.get("$rewindTo"), str):
        conv.rewind(rec["$rewindTo"])
    elif _is_message(rec):
        conv.upsert(rec)
    elif isinstance(rec.get("$set"), dict):
        update = rec["$set"]
        if isinstance(update.get("messages"), list):
            conv.replace_all(update["messages"])
        conv.meta.update({k: v for k, v in update.items() if k != "messages"})
    elif _is_metadata(rec):
        conv.meta.update({k: v for k, v in rec.items() if k != "messages"})
        if isinstance(rec.get("messages"), list):
            conv.replace_all(rec["messages"])
    else:
        conv.ignored["unknown"] = conv.ignored.get("unknown", 0) + 1


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
    if isinstance(part.get("text"), str):
        return part["text"]
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


def _responses(content: Any) -> list[dict[str, Any]]:
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
    for response in _responses(rec.get("content")):
        call_id = text_of(response.get("id"))
        if call_id and call_id not in build.answered:
            _result(build, rec, call_id, _response_text(response), "error" in _response_body(response))
    shown = rec.get("displayContent") if rec.get("displayContent") is not None else rec.get("content")
    text = _text(shown)
    if not text.strip():
        return
    if _responses(rec.get("content")):
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
    _count_tokens(build.usage, rec.get("tokens"))


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
    if call_id and call_id not in build.answered and (status in _FINISHED or call.get("result") is not None):
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
        if isinstance(body.get(key), str):
            return body[key]
    if not body:
        return ""
    text = json.dumps(body, ensure_ascii=False, default=str)
    return text if len(text) <= _RESULT_JSON_LIMIT else text[: _RESULT_JSON_LIMIT - 1] + "…"


def _count_tokens(totals: dict[str, int], tokens: Any) -> None:
    """Gemini counts cached input inside `input` and thinking apart from `output`."""
    if not isinstance(tokens, dict):
        return
    value = {k: tokens[k] if isinstance(tokens.get(k), int) else 0 for k in ("input", "output", "cached", "thoughts")}
    totals["input_tokens"] += max(0, value["input"] - value["cached"])
    totals["cache_read_input_tokens"] += value["cached"]
    totals["output_tokens"] += value["output"] + value["thoughts"]


# --- the format -------------------------------------------------------------------------


def parse(raw: bytes, *, subagents: Mapping[str, bytes] | None = None) -> ParsedTranscript:
    """Parse a recording (whole file or JSONL segment). Sub-agent recordings are not woven in."""
    conv = replay(raw)
    messages, usage = build_messages(conv.messages())
    stats = {
        "lines": conv.lines,
        "skipped_lines": conv.skipped,
        "truncated_bytes": conv.truncated_bytes,
        "ignored_lines": conv.ignored,
        "format": "json" if conv.legacy else "jsonl",
        "rewound_messages": conv.rewound,
        "session": _session_facts(conv.meta),
    }
    return assemble(
        NAME,
        messages,
        stats,
        token_usage=usage,
        agent_version=None,  # Gemini CLI does not record its version in the chat file
        agent_session_id=text_of(conv.meta.get("sessionId")) or None,
        fallback_title=text_of(conv.meta.get("summary")).strip(),
    )


def _session_facts(meta: dict[str, Any]) -> dict[str, Any]:
    found = {k: meta[k] for k in ("projectHash", "kind", "summary") if isinstance(meta.get(k), str)}
    dirs = meta.get("directories")
    if isinstance(dirs, list):
        found["directories"] = [d for d in dirs if isinstance(d, str)]
    return found


def _is_prompt_record(rec: Record) -> bool:
    if rec.get("type") != "user" or _responses(rec.get("content")):
        return False
    shown = rec.get("displayContent") if rec.get("displayContent") is not None else rec.get("content")
    return not_prompt_label(_text(shown)) is None


def _jsonl_prompts(lines: list[Line]) -> list[int]:
    """Indexes of lines that first record a prompt (a later copy of the same id is not a turn)."""
    seen: set[str] = set()
    found = []
    for i, line in enumerate(lines):
        rec = line.rec
        if rec is None or not _is_message(rec) or isinstance(rec.get("$rewindTo"), str):
            continue
        if rec["id"] in seen:
            continue
        seen.add(rec["id"])
        if _is_prompt_record(rec):
            found.append(i)
    return found


def _pairs(records: list[Record | None]) -> list[tuple[tuple[str, ...], tuple[str, ...]]]:
    """(call ids, answered call ids) per line or message."""
    pairs: list[tuple[tuple[str, ...], tuple[str, ...]]] = []
    for rec in records:
        calls: list[str] = []
        done: list[str] = []
        if rec is not None and _is_message(rec):
            listed = rec.get("toolCalls")
            for call in listed if isinstance(listed, list) else []:
                call_id = text_of(call.get("id")) if isinstance(call, dict) else ""
                if call_id:
                    calls.append(call_id)
                    if call.get("status") in _FINISHED or call.get("result") is not None:
                        done.append(call_id)
            done.extend(text_of(r.get("id")) for r in _responses(rec.get("content")) if text_of(r.get("id")))
        pairs.append((tuple(calls), tuple(done)))
    return pairs


def turn_starts(raw: bytes) -> list[int]:
    if legacy_document(raw) is not None:
        return [offset for offset, rec in legacy_messages(raw) if _is_prompt_record(rec)]
    lines = scan(raw).lines
    return [lines[i].offset for i in _jsonl_prompts(lines)]


def cut_after_turn(raw: bytes, n: int) -> bytes:
    """The first `n` turns: a line prefix of a JSONL recording, never splitting a tool call.

    A pre-v0.39 JSON document cannot be cut as a prefix; its first `n` turns come back in the
    JSONL form Gemini CLI itself migrates such a file to when it resumes it (metadata line, then
    one line per message). `n` beyond the last turn returns `raw` unchanged.
    """
    doc = legacy_document(raw)
    if doc is not None:
        return _cut_legacy(raw, doc, n)
    lines = scan(raw).lines
    cut = safe_turn_cut(_jsonl_prompts(lines), _pairs([line.rec for line in lines]), n)
    return raw if cut is None else raw[: lines[cut].offset]


def answer_ends(raw: bytes) -> dict[str, int]:
    """call id -> where the JSONL line that first records its result ends ({} for a legacy
    JSON document: it has no line to cut after)."""
    if legacy_document(raw) is not None:
        return {}
    ends: dict[str, int] = {}
    lines = scan(raw).lines
    for line, (_, answered) in zip(lines, _pairs([line.rec for line in lines]), strict=True):
        for call_id in answered:
            ends.setdefault(call_id, line.offset + len(line.data))
    return ends


def cut_at(raw: bytes, offset: int) -> bytes:
    """JSONL: the lines up to the one holding byte `offset - 1`, moved on past unfinished calls.
    A pre-v0.39 JSON document has no line prefix to cut: it comes back whole."""
    if legacy_document(raw) is not None:
        return raw
    lines = scan(raw).lines
    pairs = _pairs([line.rec for line in lines])
    return raw[: forward_cut([line.offset for line in lines], pairs, offset, len(raw))]


def _cut_legacy(raw: bytes, doc: Record, n: int) -> bytes:
    messages = [m for m in doc["messages"] if _is_message(m)]
    starts = [i for i, m in enumerate(messages) if _is_prompt_record(m)]
    cut = safe_turn_cut(starts, _pairs(list(messages)), n)
    if cut is None:
        return raw
    meta = {k: v for k, v in doc.items() if k != "messages"}
    rows = [meta, *messages[:cut]]
    return "".join(json.dumps(row, ensure_ascii=False, separators=(",", ":")) + "\n" for row in rows).encode()


def legacy_messages(raw: bytes) -> list[tuple[int, Record]]:
    """(byte offset, message) for each entry of a legacy document's `messages` array.

    Walks the top-level object with the standard decoder (each value decoded once), so finding
    where every message starts stays linear in the document.
    """
    text = raw.decode("utf-8", "surrogateescape")
    decoder = json.JSONDecoder()
    found: list[tuple[int, int]] = []
    values: list[Any] = []
    try:
        pos = _skip(text, 0)
        if text[pos : pos + 1] != "{":
            return []
        pos = _skip(text, pos + 1)
        while pos < len(text) and text[pos] != "}":
            key, pos = decoder.raw_decode(text, pos)
            pos = _skip(text, _skip(text, pos) + 1)  # past ':'
            if key == "messages" and text[pos : pos + 1] == "[":
                pos = _walk_array(text, pos + 1, decoder, found, values)
            else:
                _, pos = decoder.raw_decode(text, pos)
            pos = _skip(text, pos)
            if text[pos : pos + 1] == ",":
                pos = _skip(text, pos + 1)
    except (ValueError, RecursionError, IndexError):
        return []
    return [(byte, rec) for (byte, _), rec in zip(_byte_offsets(text, found), values, strict=True) if _is_message(rec)]


def _walk_array(text: str, pos: int, decoder: json.JSONDecoder, found: list[tuple[int, int]], values: list[Any]) -> int:
    pos = _skip(text, pos)
    while text[pos] != "]":
        value, end = decoder.raw_decode(text, pos)
        found.append((pos, end))
        values.append(value)
        pos = _skip(text, end)
        if text[pos] == ",":
            pos = _skip(text, pos + 1)
    return pos + 1


def _skip(text: str, pos: int) -> int:
    match = _WS.match(text, pos)
    return match.end() if match else pos


def _byte_offsets(text: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Character offsets -> byte offsets, encoding each stretch between them once."""
    result, chars, size = [], 0, 0
    for start, end in spans:
        size += len(text[chars:start].encode("utf-8", "surrogateescape"))
        chars = start
        result.append((size, end))
    return result


def slim(raw: bytes, *, image_threshold: int = 8192) -> tuple[bytes, dict[str, int]]:
    """Big inline images (`inlineData` parts) become a marker with their type and size.

    JSONL lines without one stay byte-identical; a legacy JSON document with one is written back
    the way Gemini CLI writes it (two-space indent).
    """
    counts = {"images": 0, "bytes_saved": 0}
    doc = legacy_document(raw)
    if doc is not None:
        found = _slim_images(doc, image_threshold)
        if not found:
            return raw, counts
        counts["images"] = found
        result = (json.dumps(doc, ensure_ascii=False, indent=2) + ("\n" if raw.endswith(b"\n") else "")).encode(
            "utf-8", "surrogatepass"
        )
    else:
        result = b"".join(_slim_line(line, image_threshold, counts) for line in scan(raw).lines)
    counts["bytes_saved"] = len(raw) - len(result)
    return result, counts


def _slim_line(line: Line, threshold: int, counts: dict[str, int]) -> bytes:
    if line.rec is None or b'"inlineData"' not in line.data:
        return line.data
    found = _slim_images(line.rec, threshold)
    counts["images"] += found
    return dump_line(line.rec, line.data) if found else line.data


def _slim_images(rec: Any, threshold: int) -> int:
    def visit(node: dict[str, Any]) -> int:
        blob = node.get("inlineData")
        data = blob.get("data") if isinstance(blob, dict) else None
        if not isinstance(blob, dict) or not isinstance(data, str) or len(data) <= threshold:
            return 0
        blob.update(data=_SLIMMED, slimmed=True, original_size=base64_size(data))
        return 1

    return count_in_dicts(rec, visit, max_depth=_MAX_DEPTH)


def encode_project_dir(cwd: str) -> str:
    """`projectHash`: the SHA-256 of the project root, the directory name before v0.29.

    From v0.29 the directory is a short name kept in `~/.gemini/projects.json` (see
    `locate.gemini_project_dirs`); every recording still carries this hash.
    """
    return project_hash(cwd)


FORMAT = FunctionFormat(NAME, sys.modules[__name__], snapshots=True)  # `.json` chats before v0.39
