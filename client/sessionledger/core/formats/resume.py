"""Make a captured Claude Code transcript resumable as a session file (fork, restore).

A captured transcript went through slimming and redaction before upload. Most of it can be
handed back to `claude --resume` byte for byte, but three things cannot (docs/claude-code.md §1.10–1.11):

- `sessionId` and `cwd` must name the new session and the directory it is resumed from;
- a thinking block whose text (or signature) the redactor changed no longer verifies, and the
  API refuses the whole conversation ("Invalid signature in thinking block"): such blocks are
  dropped. Which lines the redactor changed is known locally for segments uploaded from this
  machine (`changed(line)` → True/False); elsewhere (`None`) a `[REDACTED:` inside the block
  gives it away. An assistant line left without content is dropped, and the lines that hung
  off it are re-attached to its parent, so the parentUuid chain stays whole;
- an image the slimmer replaced by a marker is no longer valid base64: the API would refuse it,
  so the block becomes a short text saying what was there.

Everything else stays byte-identical. Top-level fields are rewritten in place (a small scanner
finds their value's bytes), never by re-serialising the line: thinking signatures, key order
and number formatting of the kept lines must not move.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .base import iter_lines, load_record

# A string token never fails to match (an unterminated one runs to the end of the line), so
# finditer never restarts inside a string: linear even for `{"a":"\"\"\"…` without its end.
_TOKEN = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*(?:"|\\?\Z)|[{}\[\]:,]', re.DOTALL)
_THINKING = frozenset({"thinking", "redacted_thinking"})
REDACTED_MARK = "[REDACTED:"
_LINK_KEYS = ("parentUuid", "logicalParentUuid")

Changed = Callable[[int], bool | None]


@dataclass
class ResumeReport:
    dropped_thinking: int = 0  # thinking blocks removed (their signature no longer verifies)
    dropped_lines: int = 0  # assistant lines that held nothing else
    relinked: int = 0  # lines re-attached past a dropped line
    images: int = 0  # slimmed images turned into a text note


def top_level_spans(line: bytes) -> dict[str, tuple[int, int]]:
    """Byte span of each top-level value of a JSON object line (strings with their quotes)."""
    spans: dict[str, tuple[int, int]] = {}
    depth, key, value_start, last_string = 0, "", -1, b""
    for match in _TOKEN.finditer(line):
        token = match.group()
        char = token[:1]
        if char == b'"':
            if depth == 1 and value_start < 0:
                last_string = token
        elif char in b"{[":
            depth += 1
        elif char in b"}]":
            if depth == 1 and value_start >= 0:
                spans[key] = _strip(line, value_start, match.start())
            depth -= 1
            if depth == 0:
                break
        elif depth == 1 and char == b":":
            key, value_start = _key(last_string), match.end()
        elif depth == 1 and char == b",":
            spans[key] = _strip(line, value_start, match.start())
            value_start = -1
    return spans


def _key(token: bytes) -> str:
    try:
        return str(json.loads(token))
    except ValueError:
        return ""


def _strip(line: bytes, start: int, end: int) -> tuple[int, int]:
    while start < end and line[start : start + 1].isspace():
        start += 1
    while end > start and line[end - 1 : end].isspace():
        end -= 1
    return start, end


def replace_values(line: bytes, values: dict[str, bytes], spans: dict[str, tuple[int, int]] | None = None) -> bytes:
    """`line` with the given top-level values (raw JSON bytes) put in place of the old ones."""
    spans = top_level_spans(line) if spans is None else spans
    edits = sorted((spans[key], value) for key, value in values.items() if key in spans)
    for (start, end), value in reversed(edits):
        line = line[:start] + value + line[end:]
    return line


def encode(value: Any) -> bytes:
    """A value as Claude Code writes JSON (compact, UTF-8)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


class _Rewriter:
    def __init__(self, session_id: str, cwd_from: str | None, cwd_to: str | None, changed: Changed) -> None:
        self.session_id = encode(session_id)
        self.cwd_from, self.cwd_to = cwd_from, cwd_to
        self.changed = changed
        self.dropped: dict[str, Any] = {}  # uuid of a dropped line -> the parent its children get
        self.report = ResumeReport()

    def line(self, index: int, line: bytes) -> bytes | None:
        if not line.strip():
            return line
        spans = top_level_spans(line)
        values: dict[str, bytes] = {}
        if b'"thinking"' in line or b'"redacted_thinking"' in line or (b'"slimmed"' in line and b'"image"' in line):
            message = self._content_edit(index, line, spans)
            if message is _DROP:
                return None
            if message is not None:
                values["message"] = encode(message)
        self._relink(line, spans, values)
        if values.get("leafUuid") == b"null":
            return None  # a resume-picker title pointing at nothing would hide the session
        if "sessionId" in spans:
            values["sessionId"] = self.session_id
        self._cwd(line, spans, values)
        return replace_values(line, values, spans) if values else line

    def _content_edit(self, index: int, line: bytes, spans: dict[str, tuple[int, int]]) -> Any:
        """The new `message` object, `_DROP` for a line left empty, None when nothing changes."""
        rec = load_record(line)
        message = rec.get("message") if rec else None
        if not isinstance(message, dict):
            return None
        content = message.get("content")
        if rec is None or not isinstance(content, list) or "message" not in spans:
            return None
        kept = [self._image(b) for b in content if not self._drop_thinking(rec, index, b)]
        if len(kept) == len(content) and all(a is b for a, b in zip(kept, content, strict=True)):
            return None
        if not kept and rec["type"] == "assistant":
            self._drop_line(rec)
            return _DROP
        return {**message, "content": kept}

    def _drop_thinking(self, rec: dict[str, Any], index: int, block: Any) -> bool:
        if rec["type"] != "assistant" or not isinstance(block, dict) or block.get("type") not in _THINKING:
            return False
        changed = self.changed(index)
        drop = changed if changed is not None else REDACTED_MARK in json.dumps(block, ensure_ascii=False)
        self.report.dropped_thinking += bool(drop)
        return bool(drop)

    def _image(self, block: Any) -> Any:
        """A slimmed image block becomes a text note; tool results are looked into."""
        if not isinstance(block, dict):
            return block
        if block.get("type") == "tool_result" and isinstance(block.get("content"), list):
            inner = [self._image(b) for b in block["content"]]
            changed = any(a is not b for a, b in zip(inner, block["content"], strict=True))
            return {**block, "content": inner} if changed else block
        source = block.get("source")
        if block.get("type") != "image" or not isinstance(source, dict) or source.get("slimmed") is not True:
            return block
        self.report.images += 1
        size = source.get("original_size")
        what = f"{source.get('media_type') or 'image'}, {size} bytes" if size else str(source.get("media_type"))
        return {"type": "text", "text": f"[image not kept by Sessionledger: {what}]"}

    def _drop_line(self, rec: dict[str, Any]) -> None:
        self.report.dropped_lines += 1
        uuid = rec.get("uuid")
        if isinstance(uuid, str):
            parent = rec.get("parentUuid")
            self.dropped[uuid] = self.dropped.get(parent, parent) if isinstance(parent, str) else parent

    def _relink(self, line: bytes, spans: dict[str, tuple[int, int]], values: dict[str, bytes]) -> None:
        if not self.dropped:
            return
        for key in (*_LINK_KEYS, "leafUuid"):
            if key not in spans:
                continue
            start, end = spans[key]
            try:
                old = json.loads(line[start:end])
            except ValueError:
                continue
            if isinstance(old, str) and old in self.dropped:
                values[key] = encode(self.dropped[old])
                self.report.relinked += 1

    def _cwd(self, line: bytes, spans: dict[str, tuple[int, int]], values: dict[str, bytes]) -> None:
        if not self.cwd_from or self.cwd_to is None or "cwd" not in spans:
            return
        start, end = spans["cwd"]
        try:
            old = json.loads(line[start:end])
        except ValueError:
            return
        if isinstance(old, str) and (old == self.cwd_from or old.startswith(self.cwd_from.rstrip("/") + "/")):
            values["cwd"] = encode(self.cwd_to + old[len(self.cwd_from) :])


_DROP: Any = object()


def rewrite_for_resume(
    raw: bytes,
    *,
    session_id: str,
    cwd_from: str | None = None,
    cwd_to: str | None = None,
    changed: Changed | None = None,
) -> tuple[bytes, ResumeReport]:
    """The transcript as a session file for `session_id`, resumed from `cwd_to` (see module doc).

    `cwd` values equal to or under `cwd_from` are moved under `cwd_to`; others stay as written.
    `changed(line index)` says whether the redactor changed that line (None: unknown).
    """
    rewriter = _Rewriter(session_id, cwd_from, cwd_to, changed or (lambda _index: None))
    out = []
    for index, (_, line) in enumerate(iter_lines(raw)):
        new = rewriter.line(index, line)
        if new is not None:
            out.append(new)
    return b"".join(out), rewriter.report


def first_cwd(raw: bytes) -> str | None:
    """The working directory the conversation was started in (the first line that names one)."""
    for _, line in iter_lines(raw):
        if b'"cwd"' not in line:
            continue
        rec = load_record(line)
        if rec and isinstance(rec.get("cwd"), str) and rec["cwd"]:
            return str(rec["cwd"])
    return None


NOT_CAPTURED = "[Sessionledger: the result of this tool call was not captured: the capture ended before it was written]"


def close_open_tool_calls(raw: bytes) -> tuple[bytes, int]:
    """Answer the tool calls the conversation ends on without a result, so `claude -r` loads it.

    A capture taken at a commit can end right after the assistant's `tool_use` (the hook ran
    before Claude Code wrote the result), and an unanswered tool_use makes the API refuse the
    whole conversation (docs/claude-code.md §1.11). One user line is appended, shaped as Claude Code
    writes tool results, hanging off the last assistant line, with an error result per open
    call. Returns (bytes, calls closed); bytes are unchanged when nothing is open.
    """
    uses: list[str] = []
    answered: set[str] = set()
    last: dict[str, Any] | None = None
    for _, line in iter_lines(raw):
        rec = load_record(line) if (b'"user"' in line or b'"assistant"' in line) else None
        if rec is None or rec["type"] not in ("user", "assistant") or rec.get("isSidechain") is True:
            continue
        last = rec
        if rec["type"] == "assistant":
            uses += _ids(rec, "tool_use", "id")
        elif results := _ids(rec, "tool_result", "tool_use_id"):
            answered.update(results)
        else:
            uses = []  # a prompt: the calls before it were answered or abandoned by Claude Code itself
    open_ids = [i for i in uses if i not in answered]
    if not open_ids or last is None:
        return raw, 0
    separator = b"" if not raw or raw.endswith(b"\n") else b"\n"
    return raw + separator + _closing_line(last, open_ids), len(open_ids)


def _ids(rec: dict[str, Any], block_type: str, key: str) -> list[str]:
    message = rec.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    blocks = content if isinstance(content, list) else []
    wanted = (b for b in blocks if isinstance(b, dict) and b.get("type") == block_type)
    return [b[key] for b in wanted if isinstance(b.get(key), str)]


def _closing_line(parent: dict[str, Any], open_ids: list[str]) -> bytes:
    import uuid

    keys = ("isSidechain", "userType", "cwd", "sessionId", "version", "gitBranch")
    envelope = {k: parent[k] for k in keys if k in parent}
    results = [{"tool_use_id": i, "type": "tool_result", "content": NOT_CAPTURED, "is_error": True} for i in open_ids]
    line = {
        "parentUuid": parent.get("uuid"),
        **envelope,
        "type": "user",
        "message": {"role": "user", "content": results},
        "uuid": str(uuid.uuid4()),
        "timestamp": parent.get("timestamp"),
        "toolUseResult": f"Error: {NOT_CAPTURED}",
    }
    return encode(line) + b"\n"
