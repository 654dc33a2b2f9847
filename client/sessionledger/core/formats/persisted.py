"""Large tool outputs Claude Code keeps beside the transcript (2.1.2+, docs/claude-code.md §1.1).

A tool result over Claude Code's inline limit (50,000 characters since 2.1.51, 100,000 before)
is written to `<project>/<session-id>/tool-results/<tool-use-id>.txt`; the transcript keeps
a preview — `<persisted-output>` … `Full output saved to: <path>` … `Preview (first 2KB):` —
and `toolUseResult.persistedOutputPath`. The capture finds those references in a segment
(`referenced_names`); the parser puts the full output in place of the preview (`attach`);
fork and restore point the references at the files they write back (`relocate`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from .base import iter_lines

DIRECTORY = "tool-results"
_MARKERS = (b"persistedOutputPath", b"<persisted-output>")
# A name after `tool-results/` (or `tool-results\\` in an escaped Windows path): bounded, linear.
_NAME = re.compile(rb"tool-results(?:/|\\\\)([A-Za-z0-9_.-]{1,200})")
_TEXT_NAME = re.compile(r"tool-results[/\\]([A-Za-z0-9_.-]{1,200})")


def referenced_names(data: bytes) -> list[str]:
    """File names under `tool-results/` that the tool results of these JSONL bytes point at."""
    if b"tool-results" not in data:
        return []
    names: dict[str, None] = {}
    for _, line in iter_lines(data):
        if b"tool-results" in line and b'"tool_result"' in line and any(m in line for m in _MARKERS):
            for match in _NAME.finditer(line):
                name = match.group(1).decode("ascii")
                if name not in (".", ".."):
                    names[name] = None
    return list(names)


def attach(messages: list[dict[str, Any]], outputs: Mapping[str, bytes]) -> int:
    """Give each tool_result message whose preview names a captured file the full output.

    The message keeps what the transcript said under `persisted_output.preview`; `content`
    becomes the whole output (what the tool really returned). Returns how many were attached.
    """
    if not outputs:
        return 0
    attached = 0
    for msg in messages:
        if msg.get("kind") != "tool_result" or DIRECTORY not in msg.get("content", ""):
            continue
        name = _name_in(msg["content"], outputs, (msg.get("tool") or {}).get("id"))
        if name is None:
            continue
        data = outputs[name]
        msg["persisted_output"] = {"name": name, "bytes": len(data), "preview": msg["content"]}
        msg["content"] = data.decode("utf-8", "replace")
        attached += 1
    return attached


def _name_in(text: str, outputs: Mapping[str, bytes], tool_id: object) -> str | None:
    for match in _TEXT_NAME.finditer(text):
        if match.group(1) in outputs:
            return match.group(1)
    for suffix in (".txt", ".json"):
        if isinstance(tool_id, str) and f"{tool_id}{suffix}" in outputs:
            return f"{tool_id}{suffix}"
    return None


def relocate(raw: bytes, session_id: str, new_directory: str) -> bytes:
    """Point `…/<session_id>/tool-results/` references at `new_directory` (an absolute path).

    Lines without such a reference, and references already there, stay byte-identical. The old
    prefix runs back from `/<session_id>/tool-results/` to the start of the path (a quote or a
    space before it), found by a bounded backwards scan, never a regex over the whole line.
    """
    needle = f"/{session_id}/{DIRECTORY}/".encode()
    if needle not in raw:
        return raw
    target = json.dumps(new_directory.rstrip("/") + "/", ensure_ascii=False)[1:-1].encode()
    out = []
    for _, line in iter_lines(raw):
        out.append(_relocate_line(line, needle, target) if needle in line else line)
    return b"".join(out)


def _relocate_line(line: bytes, needle: bytes, target: bytes) -> bytes:
    pieces, pos = [], 0
    while (hit := line.find(needle, pos)) >= 0:
        start = _path_start(line, hit)
        pieces += [line[pos:start], target]
        pos = hit + len(needle)
    pieces.append(line[pos:])
    return b"".join(pieces)


def _path_start(line: bytes, hit: int, limit: int = 4096) -> int:
    start = hit
    floor = max(0, hit - limit)
    while start > floor and line[start - 1 : start] not in (b'"', b" ") and line[start - 2 : start] != b"\\n":
        start -= 1
    return start
