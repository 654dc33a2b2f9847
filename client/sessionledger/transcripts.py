"""Transcript files on disk, whatever the agent: complete-line ends, byte ranges, timestamps.

Where an agent keeps its files and which one is current is its adapter's business
(`sessionledger.agents`).

The hook must not read a 5 MB delta to find where its last complete line ends: it reads
backwards from the end of the file in 64 KiB steps until it meets a newline (the same rule as
`formats.complete_lines`, which the detached uploader re-checks on the bytes it reads). What is
after the last newline is still being written and belongs to the next segment.
"""

from __future__ import annotations

CHUNK = 65536
CHECK_BYTES = 4096  # the bytes before a segment's end whose checksum the uploader re-verifies


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
