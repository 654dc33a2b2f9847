"""Fit a segment's metadata to the server's limits (docs/api.md "Limits"), so a huge commit keeps
its conversation: the server refuses a metadata part over its limits with a 400 or 413, and a
refused segment would stay `rejected` in the queue, the conversation never uploaded.

What is cut, and by how much, is said three times: at the end of a cut commit message (what a
reader of the session sees), in the metadata's `metadata_cut` notes, and by `status`.
"""

from __future__ import annotations

import json
from typing import Any

# The server's limits (sessions_app/serializers.py, SESSIONLEDGER_MAX_METADATA_BYTES' default).
MAX_COMMIT_MESSAGE = 100_000  # characters
MAX_FILES_TOUCHED = 10_000
MAX_PATH_CHARS = 1024
MAX_BRANCH_CHARS = 255
MAX_METADATA_BYTES = 1 << 20
METADATA_ROOM = MAX_METADATA_BYTES - 64 * 1024  # for the notes and anything a later step adds

NOTES = "metadata_cut"


def fit(metadata: dict[str, Any]) -> list[str]:
    """Cut `metadata` in place to the server's limits; one note per cut (none: nothing cut)."""
    notes = [note for note in (_message(metadata), _branch(metadata), _files(metadata)) if note]
    if notes:
        metadata[NOTES] = notes
    return notes


def _message(metadata: dict[str, Any]) -> str | None:
    message = metadata.get("commit_message")
    if not isinstance(message, str) or len(message) <= MAX_COMMIT_MESSAGE:
        return None
    note = f"commit message cut to its first {{:,}} of {len(message):,} characters"
    marker = f"\n\n[… Sessionledger: {note} …]"
    kept = MAX_COMMIT_MESSAGE - len(marker.format(MAX_COMMIT_MESSAGE))
    metadata["commit_message"] = message[:kept] + marker.format(kept)
    return note.format(kept)


def _branch(metadata: dict[str, Any]) -> str | None:
    branch = metadata.get("feature_branch")
    if not isinstance(branch, str) or len(branch) <= MAX_BRANCH_CHARS:
        return None
    metadata["feature_branch"] = branch[:MAX_BRANCH_CHARS]
    return f"branch name cut to its first {MAX_BRANCH_CHARS} of {len(branch):,} characters"


def _files(metadata: dict[str, Any]) -> str | None:
    """At most MAX_FILES_TOUCHED paths of at most MAX_PATH_CHARS, within the metadata's bytes."""
    files = metadata.get("files_touched")
    if not isinstance(files, list):
        return None
    room = METADATA_ROOM - _size({**metadata, "files_touched": []})
    kept: list[str] = []
    for path in files:
        if len(kept) == MAX_FILES_TOUCHED:
            break
        if not isinstance(path, str) or len(path) > MAX_PATH_CHARS:
            continue
        room -= _size(path) + 1
        if room < 0:
            break
        kept.append(path)
    if len(kept) == len(files):
        return None
    metadata["files_touched"] = kept
    return f"files_touched lists {len(kept):,} of the commit's {len(files):,} paths"


def _size(value: object) -> int:
    """Bytes of `value` as JSON, non-ASCII escaped: never less than what is sent."""
    return len(json.dumps(value, separators=(",", ":")))
