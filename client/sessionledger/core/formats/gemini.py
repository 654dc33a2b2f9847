"""Gemini CLI chat recordings (`~/.gemini/tmp/<project>/chats/session-<YYYY-MM-DDThh-mm>-<id8>.json[l]`).

Where the files are, resume and hooks: docs/agents.md ("Gemini CLI"). This docstring holds the format the
parser needs, from google-gemini/gemini-cli `chatRecordingService.ts` and `chatRecordingTypes.ts`
(commits and sources listed in docs/agents.md "Sources").

Versions: v0.2–v0.3 introduced the recording; v0.4–v0.38 write `session-….json`, one pretty-printed
document {sessionId, projectHash, startTime, lastUpdated, messages[], summary?, directories?, kind?},
rewritten whole on every change (captured as snapshots); v0.39+ write append-only `session-….jsonl`
(a `.json` is migrated when resumed). JSONL records, replayed in order as `loadConversationRecord` does:

- metadata `{sessionId, projectHash, startTime, lastUpdated, kind?, directories?}` (first line);
- a message: any object with a string `id`, `{id, timestamp, type, content, displayContent?}` plus, for
  `type: "gemini"`, `toolCalls[]`, `thoughts[]`, `tokens`, `model`. A later line with the same `id`
  replaces the message in place (tool calls gain `status`/`result`, tokens arrive);
- `{"$set": {…}}`: metadata update; `$set.messages` replaces the whole conversation (history sync after
  compression or masking);
- `{"$rewindTo": "<id>"}` (`/rewind`): drops that message and all later ones; an unknown id drops all.

Message types: `user` (`displayContent` is what the user typed when it differs, e.g. `@file` expanded),
`gemini` (the model), `info`/`error`/`warning` (shown, not sent). `content` is a `PartListUnion`: a
string, a Part or a list of `{text}` (`thought: true` for thinking), `{inlineData: {mimeType, data}}`,
`{fileData}`, `{functionCall}`, `{functionResponse: {id, name, response: {output | error}}}`.
`toolCalls[]`: `{id, name, args, result (parts), status (scheduled/executing/success/error/cancelled…),
timestamp, displayName, description, resultDisplay, agentId?}`: a call and its result live in the same
record. Newer versions also record each tool response as a synthetic `user` message of
`functionResponse` parts. `thoughts[]`: `{subject, description, timestamp}`. `tokens`: `{input, output,
cached, thoughts, tool, total}` per request. No Gemini version is recorded in the file.

Mapping of the loaded conversation: `user` → `prompt`, unless Gemini itself ignores it for resume
(`isIgnoredUserContent`: empty, starting with `/` or `?`, `<session_context>`, `<hook_context>`) →
`kind: system, meta: true, subtype: command|session_context|hook_context`; `functionResponse`-only user
messages → `tool_result`s for calls not already answered; `gemini` → one `thinking` per thought
(the subject in bold, a blank line, the description), `thinking` for thought parts, `text`, then per
call a `tool_use` and, once finished, its `tool_result` (`is_error` for `error` and `cancelled`); `info/error/warning` →
`kind: system` with that subtype. Tokens: input = `input - cached`, cache read = `cached`, output =
`output + thoughts`, kept per response as its messages' `usage` and summed for the session.

Turns: in JSONL a turn starts at the line that first records a prompt (a later copy is not a new turn);
after a `/rewind` the rewound prompt's line still counts, like Claude Code's abandoned branches. In a
legacy document, `turn_starts` gives each prompt object's byte offset.

Cuts: JSONL is cut as a line prefix before turn n+1's prompt, moved past any turn whose lines complete a
call begun earlier. A legacy document cannot be cut as a prefix: `cut_after_turn` returns the first n
turns in the JSONL form Gemini writes when it migrates a file, which Gemini resumes. Slimming replaces
only `inlineData` payloads over the threshold (`"[slimmed]"`, `slimmed`, `original_size`); superseded
copies of a message are kept, since a later segment may need them.
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
