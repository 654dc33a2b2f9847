"""Readable text for content blocks: images, tool results, tool inputs.

The content document is read by people and searched; it must never carry base64 payloads or
whole tool inputs twice, so non-text blocks become short placeholders here.
"""

from __future__ import annotations

import json
from typing import Any

# Input keys that best say what a tool call does, in order of preference.
_SUMMARY_KEYS = (
    "command",
    "file_path",
    "notebook_path",
    "pattern",
    "url",
    "query",
    "description",
    "prompt",
    "path",
    "skill",
)
_SUMMARY_LIMIT = 2000
_JSON_SUMMARY_LIMIT = 200


def human_size(size: int) -> str:
    if size < 1024:
        return f"{size} B"
    if size < 1024 * 1024:
        return f"{round(size / 1024)} KB"
    return f"{size / (1024 * 1024):.1f} MB"


def image_placeholder(block: dict[str, Any]) -> str:
    """`[image: image/png, 12 KB]` — the size is the decoded size, also for slimmed images."""
    source = block.get("source")
    if not isinstance(source, dict):
        return "[image]"
    media_type = source.get("media_type") or "image"
    size = _image_size(source)
    return f"[image: {media_type}, {human_size(size)}]" if size is not None else f"[image: {media_type}]"


def _image_size(source: dict[str, Any]) -> int | None:
    original = source.get("original_size")
    if source.get("slimmed") and isinstance(original, int):
        return original
    data = source.get("data")
    if not isinstance(data, str):
        return None
    return base64_size(data)


def base64_size(data: str) -> int:
    """Decoded byte count of a base64 string without decoding it."""
    return max(0, len(data) * 3 // 4 - data[-2:].count("="))


def render_blocks(blocks: list[Any], sep: str = "\n\n") -> str:
    """Text of a block list: text verbatim, images and other blocks as placeholders."""
    parts: list[str] = []
    for block in blocks:
        if isinstance(block, dict):
            part = _render_block(block)
            if part:
                parts.append(part)
        elif isinstance(block, str) and block:
            parts.append(block)
    return sep.join(parts)


def _render_block(block: dict[str, Any]) -> str:
    kind = block.get("type")
    if kind == "text":
        text = block.get("text")
        return text if isinstance(text, str) else ""
    if kind == "image":
        return image_placeholder(block)
    if kind == "tool_result":
        return render_content(block.get("content"))
    return "" if kind is None else f"[{kind}]"


def render_content(content: Any) -> str:
    """A tool_result's content (a string or a list of text/image blocks) as text."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return render_blocks(content, "\n")
    return "" if content is None else json.dumps(content, ensure_ascii=False)


def tool_summary(tool_input: Any) -> str:
    """One line that says what the call does ("pytest -q", a path, a pattern…)."""
    if not isinstance(tool_input, dict):
        return "" if tool_input is None else str(tool_input)[:_JSON_SUMMARY_LIMIT]
    for key in _SUMMARY_KEYS:
        value = tool_input.get(key)
        if isinstance(value, str) and value:
            return value[:_SUMMARY_LIMIT]
    text = json.dumps(tool_input, ensure_ascii=False, default=str)
    return text if len(text) <= _JSON_SUMMARY_LIMIT else text[: _JSON_SUMMARY_LIMIT - 1] + "…"
