"""The text a file had before an edit, as Claude Code records it in the edit's result
(`toolUseResult.originalFile`; MultiEdit's `originalFileContents`): what `fork` restores a file
from when the commit lacks it (gitignored, or never added). Other agents record none.
"""

from __future__ import annotations

import json


def original_files(raw: bytes) -> dict[str, str]:
    """Tool-use id -> the file's text before that edit, as Claude Code recorded it in the result
    (`toolUseResult.originalFile`; MultiEdit's `originalFileContents`)."""
    found: dict[str, str] = {}
    for line in raw.splitlines():
        if b'"originalFile' not in line:  # most lines: skip the JSON parse
            continue
        try:
            record = json.loads(line)
        except ValueError:
            continue
        result = record.get("toolUseResult") if isinstance(record, dict) else None
        message = record.get("message") if isinstance(record, dict) else None
        if not isinstance(result, dict) or not isinstance(message, dict):
            continue
        text = result.get("originalFile", result.get("originalFileContents"))
        blocks = message.get("content")
        for block in blocks if isinstance(blocks, list) and isinstance(text, str) else []:
            tool_id = block.get("tool_use_id") if isinstance(block, dict) else None
            if isinstance(tool_id, str) and block.get("type") == "tool_result":
                found[tool_id] = str(text)
    return found
