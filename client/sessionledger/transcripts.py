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
    from binascii import crc32  # zlib's crc32, without loading the rest of zlib in the hook

    begin = max(start, end - CHECK_BYTES)
    handle.seek(begin)  # type: ignore[attr-defined]
    return crc32(handle.read(end - begin))  # type: ignore[attr-defined]


def tail_crc_of(data: bytes) -> int:
    """The checksum `complete_end` reports, computed on the segment bytes themselves."""
    from binascii import crc32

    return crc32(data[-CHECK_BYTES:])


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
    for line in head.split(b"\n", 50)[:50]:  # not every line of the megabyte: the first 50
        try:
            record = loads(line.decode("utf-8", "replace"))
        except ValueError:
            continue
        stamp = record.get("timestamp") if isinstance(record, dict) else None
        if isinstance(stamp, str) and (when := iso_to_epoch(stamp)) is not None:
            return when
    return None


def iso_to_epoch(text: str) -> float | None:
    """Epoch seconds of an ISO-8601 time (None when it is none). The agents' form,
    `2025-01-31T12:34:56.789Z` or with a `±HH:MM` offset, is read by hand: `datetime` (and
    `time.strptime`, which imports it) would cost a capture a millisecond or two."""
    if len(text) > 64:
        return None
    when = _utc_epoch(text)
    if when is not None:
        return when
    from datetime import datetime  # any other form ISO-8601 allows (no offset: local time)

    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def _utc_epoch(text: str) -> float | None:
    """`YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)` as epoch seconds, else None."""
    if not text.isascii():  # `isdigit` and `int` also take other scripts' digits
        return None
    if text.endswith("Z"):
        body, offset = text[:-1], 0
    elif len(text) > 25 and text[-6] in "+-" and text[-3] == ":" and text[-5:-3].isdigit() and text[-2:].isdigit():
        body, offset = text[:-6], (int(text[-5:-3]) * 3600 + int(text[-2:]) * 60) * (1 if text[-6] == "+" else -1)
    else:
        return None
    date, clock, fraction = body[:10], body[11:19], body[20:]
    if (
        len(body) < 19
        or body[10] not in "Tt "
        or date[4] + date[7] + clock[2] + clock[5] != "--::"
        or not (date[:4] + date[5:7] + date[8:] + clock[:2] + clock[3:5] + clock[6:]).isdigit()
        or (len(body) > 19 and (body[19] not in ".," or not fraction.isdigit()))
    ):
        return None
    year, month, day = int(date[:4]), int(date[5:7]), int(date[8:])
    hour, minute, second = int(clock[:2]), int(clock[3:5]), int(clock[6:])
    if not (1 <= month <= 12 and 1 <= day <= _days_in(year, month) and hour < 24 and minute < 60 and second < 60):
        return None
    seconds = _days_from_epoch(year, month, day) * 86400 + hour * 3600 + minute * 60 + second - offset
    return seconds + (int(fraction[:6].ljust(6, "0")) / 1e6 if fraction else 0.0)


def _days_in(year: int, month: int) -> int:
    if month == 2:
        return 29 if year % 4 == 0 and (year % 100 != 0 or year % 400 == 0) else 28
    return 30 if month in (4, 6, 9, 11) else 31


def _days_from_epoch(year: int, month: int, day: int) -> int:
    """Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's `days_from_civil`)."""
    year -= month <= 2
    era = year // 400
    year_of_era = year - era * 400
    day_of_year = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    day_of_era = year_of_era * 365 + year_of_era // 4 - year_of_era // 100 + day_of_year
    return era * 146097 + day_of_era - 719468
