"""Transcript files on disk: complete-line ends, sub-agent files, and finding the current one.

The hook must not read a 5 MB delta to find where its last complete line ends: it reads
backwards from the end of the file in 64 KiB steps until it meets a newline (the same rule as
`formats.complete_lines`, which the detached uploader re-checks on the bytes it reads). What is
after the last newline is still being written and belongs to the next segment.
"""

from __future__ import annotations

import os

from sessionledger import paths

CHUNK = 65536
CHECK_BYTES = 4096  # the bytes before a segment's end whose checksum the uploader re-verifies
SUBAGENT_PREFIX = "agent-"
SUFFIX = ".jsonl"


class TranscriptShrunk(Exception):
    """The file is shorter than the offset we captured up to: it was rewritten or replaced."""


def complete_end(path: str, start: int) -> tuple[int, int]:
    """(end of the last newline-terminated line at/after `start`, crc32 of the bytes before it)."""
    with open(path, "rb") as handle:
        size = handle.seek(0, 2)
        if size < start:
            raise TranscriptShrunk(f"{path} has {size} bytes, fewer than the captured {start}")
        end = _last_newline_end(handle, start, size)
        return end, _tail_crc(handle, start, end)


def _last_newline_end(handle: object, start: int, size: int) -> int:
    pos = size
    while pos > start:
        chunk_start = max(start, pos - CHUNK)
        handle.seek(chunk_start)  # type: ignore[attr-defined]
        index = handle.read(pos - chunk_start).rfind(b"\n")  # type: ignore[attr-defined]
        if index >= 0:
            return chunk_start + index + 1
        pos = chunk_start
    return start


def _tail_crc(handle: object, start: int, end: int) -> int:
    import zlib

    begin = max(start, end - CHECK_BYTES)
    handle.seek(begin)  # type: ignore[attr-defined]
    return zlib.crc32(handle.read(end - begin))  # type: ignore[attr-defined]


def tail_crc_of(data: bytes) -> int:
    """The checksum `complete_end` reports, computed on the segment bytes themselves."""
    import zlib

    return zlib.crc32(data[-CHECK_BYTES:])


def read_range(path: str, start: int, end: int) -> bytes:
    with open(path, "rb") as handle:
        handle.seek(start)
        data = handle.read(end - start)
    if len(data) != end - start:
        raise TranscriptShrunk(f"{path} ends before byte {end}")
    return data


def subagent_files(transcript: str) -> list[tuple[str, str]]:
    """(agent id, path) of the session's sub-agent transcripts, in both layouts Claude Code used.

    2.1.2 and later: `<session>/subagents/agent-<id>.jsonl` next to the transcript. Before:
    `agent-<id>.jsonl` beside the session file itself, shared with the other sessions of the
    project directory, so a file is this session's when its lines carry its `sessionId`
    (docs/client.md "Every byte of a session").
    """
    stem = session_id_of(transcript)
    directory = os.path.join(os.path.dirname(transcript), stem, "subagents")
    found = [(agent_id_of(name), os.path.join(directory, name)) for name in _agent_names(directory)]
    legacy = os.path.dirname(transcript)
    marker = b'"sessionId":"' + stem.encode("utf-8", "surrogateescape") + b'"'
    for name in _agent_names(legacy):
        path = os.path.join(legacy, name)
        if _head_has(path, marker):
            found.append((agent_id_of(name), path))
    return found


def _agent_names(directory: str) -> list[str]:
    try:
        names = sorted(os.listdir(directory))
    except OSError:
        return []
    return [name for name in names if is_agent_file(name)]


def is_agent_file(name: str) -> bool:
    return name.startswith(SUBAGENT_PREFIX) and name.endswith(SUFFIX)


def agent_id_of(name: str) -> str:
    return name[len(SUBAGENT_PREFIX) : -len(SUFFIX)]


def layout_path(transcript: str, path: str) -> str:
    """Where a sub-agent file sits relative to its session: `subagents/agent-<id>.jsonl` (2.1.2+)
    or `agent-<id>.jsonl` (beside the session file, older versions)."""
    name = os.path.basename(path)
    return name if os.path.dirname(path) == os.path.dirname(transcript) else f"subagents/{name}"


def _head_has(path: str, marker: bytes, limit: int = 65536) -> bool:
    try:
        with open(path, "rb") as handle:
            return marker in handle.read(limit)
    except OSError:
        return False


def first_timestamp(path: str, limit: int = 1 << 20) -> float | None:
    """Epoch seconds of the first line that has a `timestamp` (the conversation's start)."""
    from sessionledger.fastjson import loads

    try:
        with open(path, "rb") as handle:
            head = handle.read(limit)
    except OSError:
        return None
    for line in head.split(b"\n")[:50]:
        try:
            record = loads(line.decode("utf-8", "replace"))
        except ValueError:
            continue
        stamp = record.get("timestamp") if isinstance(record, dict) else None
        if isinstance(stamp, str) and (when := iso_to_epoch(stamp)) is not None:
            return when
    return None


def iso_to_epoch(text: str) -> float | None:
    from datetime import datetime

    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def session_id_of(path: str) -> str:
    name = os.path.basename(path)
    return name[: -len(SUFFIX)] if name.endswith(SUFFIX) else name


def project_dir(cwd: str) -> str:
    """`~/.claude/projects/<encoded cwd>` (reference §1.1)."""
    from sessionledger.formats import encode_project_dir

    return os.path.join(paths.claude_dir(), "projects", encode_project_dir(cwd))


def find_by_session(session_id: str) -> str | None:
    """The transcript of a session id, in any project directory."""
    root = os.path.join(paths.claude_dir(), "projects")
    try:
        projects = os.listdir(root)
    except OSError:
        return None
    for name in projects:
        candidate = os.path.join(root, name, session_id + SUFFIX)
        if os.path.isfile(candidate):
            return candidate
    return None


def find_current(cwd: str) -> str | None:
    """The transcript a command run from `cwd` belongs to.

    Inside Claude Code, Bash commands see `CLAUDE_CODE_SESSION_ID` (2.1.132+); otherwise the most
    recently written transcript of the working directory's project (or of its parents: Claude
    may have been started at the repository root).
    """
    session = os.environ.get("CLAUDE_CODE_SESSION_ID")
    if session and (found := find_by_session(session)):
        return found
    directory = os.path.abspath(cwd)
    while True:
        newest = _newest_transcript(project_dir(directory))
        if newest or os.path.dirname(directory) == directory:
            return newest
        directory = os.path.dirname(directory)


def _newest_transcript(directory: str) -> str | None:
    try:
        entries = [e for e in os.scandir(directory) if e.name.endswith(SUFFIX) and not is_agent_file(e.name)]
        entries = [e for e in entries if e.is_file()]
    except OSError:
        return None
    return max(entries, key=lambda e: e.stat().st_mtime).path if entries else None
