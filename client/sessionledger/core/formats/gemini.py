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
import sys
from collections.abc import Mapping
from typing import Any

from .base import ParsedTranscript
from .gemini_messages import FINISHED, build_messages, is_prompt_record, responses
from .gemini_replay import Record, is_message, legacy_document, legacy_messages, replay
from .jsonlines import (
    FunctionFormat,
    Line,
    assemble,
    base64_size,
    count_in_dicts,
    dump_line,
    forward_cut,
    safe_turn_cut,
    scan,
    text_of,
)
from .locate import project_hash

NAME = "gemini"

_SLIMMED = "[slimmed]"
_MAX_DEPTH = 12


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


def _jsonl_prompts(lines: list[Line]) -> list[int]:
    """Indexes of lines that first record a prompt (a later copy of the same id is not a turn)."""
    seen: set[str] = set()
    found = []
    for i, line in enumerate(lines):
        rec = line.rec
        if rec is None or not is_message(rec) or isinstance(rec.get("$rewindTo"), str):
            continue
        if rec["id"] in seen:
            continue
        seen.add(rec["id"])
        if is_prompt_record(rec):
            found.append(i)
    return found


def _pairs(records: list[Record | None]) -> list[tuple[tuple[str, ...], tuple[str, ...]]]:
    """(call ids, answered call ids) per line or message."""
    pairs: list[tuple[tuple[str, ...], tuple[str, ...]]] = []
    for rec in records:
        calls: list[str] = []
        done: list[str] = []
        if rec is not None and is_message(rec):
            listed = rec.get("toolCalls")
            for call in listed if isinstance(listed, list) else []:
                call_id = text_of(call.get("id")) if isinstance(call, dict) else ""
                if call_id:
                    calls.append(call_id)
                    if call.get("status") in FINISHED or call.get("result") is not None:
                        done.append(call_id)
            done.extend(text_of(r.get("id")) for r in responses(rec.get("content")) if text_of(r.get("id")))
        pairs.append((tuple(calls), tuple(done)))
    return pairs


def turn_starts(raw: bytes) -> list[int]:
    if legacy_document(raw) is not None:
        return [offset for offset, rec in legacy_messages(raw) if is_prompt_record(rec)]
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
    messages = [m for m in doc["messages"] if is_message(m)]
    starts = [i for i, m in enumerate(messages) if is_prompt_record(m)]
    cut = safe_turn_cut(starts, _pairs(list(messages)), n)
    if cut is None:
        return raw
    meta = {k: v for k, v in doc.items() if k != "messages"}
    rows = [meta, *messages[:cut]]
    return "".join(json.dumps(row, ensure_ascii=False, separators=(",", ":")) + "\n" for row in rows).encode()


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
