"""Make a transcript cheaper to store without losing anything a reader or resume needs.

`progress` lines (hook/agent/bash progress; a sub-agent's progress repeats its whole
conversation) become small placeholders that keep the graph fields, so the parentUuid
chain stays intact: later lines hang off progress lines. Large inline base64 images are
replaced by a marker that keeps the media type and original size. Every other line is
passed through byte-identical (never re-serialised): thinking signatures must survive.
"""

from __future__ import annotations

import json
from typing import Any

from .base import iter_lines, load_record
from .render import base64_size

# Envelope keys a progress placeholder keeps: the DAG, sub-agent links, and identity.
_PROGRESS_KEYS = (
    "parentUuid",
    "logicalParentUuid",
    "isSidechain",
    "sessionId",
    "agentId",
    "version",
    "type",
    "toolUseID",
    "parentToolUseID",
    "timestamp",
    "uuid",
)
_MAX_DEPTH = 10  # images sit at most ~6 levels deep; bounded recursion on hostile input
SLIMMED_DATA = "[slimmed]"


def slim(raw: bytes, *, image_threshold: int = 8192) -> tuple[bytes, dict[str, int]]:
    """Return (slimmed bytes, counts {"progress", "images", "bytes_saved"})."""
    counts = {"progress": 0, "images": 0, "bytes_saved": 0}
    out = [_slim_line(line, image_threshold, counts) for _, line in iter_lines(raw)]
    result = b"".join(out)
    counts["bytes_saved"] = len(raw) - len(result)
    return result, counts


def _slim_line(line: bytes, threshold: int, counts: dict[str, int]) -> bytes:
    if b'"progress"' not in line and b"base64" not in line:
        return line  # cheap pre-check: most lines are neither
    rec = load_record(line)
    if rec is None:
        return line
    if rec["type"] == "progress":
        counts["progress"] += 1
        return _dump(_progress_placeholder(rec), line)
    images = _slim_images(rec, threshold, 0)
    if not images:
        return line
    counts["images"] += images
    return _dump(rec, line)


def _progress_placeholder(rec: dict[str, Any]) -> dict[str, Any]:
    small = {key: rec[key] for key in _PROGRESS_KEYS if key in rec}
    data = rec.get("data")
    slimmed: dict[str, Any] = {"type": data.get("type") if isinstance(data, dict) else None}
    if isinstance(data, dict) and isinstance(data.get("agentId"), str):
        slimmed["agentId"] = data["agentId"]  # sub-agent link (see subagents.py)
    slimmed["slimmed"] = True
    small["data"] = slimmed
    return small


def _slim_images(node: Any, threshold: int, depth: int) -> int:
    """Replace big base64 payloads in place; returns how many were replaced."""
    if depth > _MAX_DEPTH:
        return 0
    if isinstance(node, list):
        return sum(_slim_images(item, threshold, depth + 1) for item in node)
    if not isinstance(node, dict):
        return 0
    count = _slim_source(node, threshold) + _slim_read_result(node, threshold)
    for value in node.values():
        if isinstance(value, (dict, list)):
            count += _slim_images(value, threshold, depth + 1)
    return count


def _slim_source(node: dict[str, Any], threshold: int) -> int:
    """An API image block: {"type": "image", "source": {"type": "base64", "data": …}}."""
    source = node.get("source")
    if node.get("type") != "image" or not isinstance(source, dict):
        return 0
    data = source.get("data")
    if source.get("type") != "base64" or not isinstance(data, str) or len(data) <= threshold:
        return 0
    source.update(data=SLIMMED_DATA, slimmed=True, original_size=base64_size(data))
    return 1


def _slim_read_result(node: dict[str, Any], threshold: int) -> int:
    """The Read tool's own copy: toolUseResult {"type": "image", "file": {"base64": …}}."""
    file = node.get("file")
    if node.get("type") != "image" or not isinstance(file, dict):
        return 0
    data = file.get("base64")
    if not isinstance(data, str) or len(data) <= threshold:
        return 0
    file.update(base64=SLIMMED_DATA, slimmed=True, original_size=base64_size(data))
    return 1


def _dump(rec: dict[str, Any], original: bytes) -> bytes:
    """Compact JSON like Claude Code writes it, with the original line ending."""
    ending = original[len(original.rstrip(b"\r\n")) :]
    try:
        text = json.dumps(rec, ensure_ascii=False, separators=(",", ":"))
        return text.encode() + ending
    except UnicodeEncodeError:  # a lone surrogate escape: keep it escaped
        return json.dumps(rec, separators=(",", ":")).encode() + ending
    except (ValueError, RecursionError):
        return original
