"""Turn raw JSONL bytes into records, counting what could not be used or had to be repaired.

This is the hot loop of the worker's parse (a 3 MB transcript has ~1,500 lines and most of
the time goes to json.loads), so it decodes once and does little per-line work beyond parsing:
two substring counts decide whether a record needs `sanitize.repair`, and its timestamp is
put in canonical form (see sanitize).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .sanitize import INVALID, load_line, needs_repair, repair, timestamp


@dataclass
class Scan:
    """Records in file order plus the line accounting that ends up in `stats`."""

    records: list[dict[str, Any]] = field(default_factory=list)
    lines: int = 0
    skipped: int = 0
    truncated_bytes: int = 0
    repaired: int = 0  # lines kept after replacing NULs / lone surrogates or flattening deep nesting
    invalid_timestamps: int = 0  # lines whose `timestamp` was not a time (now null)


def scan(raw: bytes) -> Scan:
    """Parse every non-blank line; broken lines are counted, never fatal.

    A final line without its newline that does not parse was cut mid-write by the capture:
    it counts as a skipped line like any other, and its size is reported as
    `truncated_bytes` so the reader can tell a torn tail from a corrupt file.
    """
    result = Scan()
    parts = raw.decode("utf-8", "replace").split("\n")
    tail = parts.pop()
    _parse_lines(parts, result)
    if tail.strip() and not _parse_tail(tail, result):
        result.truncated_bytes = len(raw) - (raw.rfind(b"\n") + 1)
    return result


def _parse_lines(parts: list[str], result: Scan) -> None:
    loads, records = load_line, result.records
    lines = skipped = 0
    for line in parts:
        if not line:
            continue
        lines += 1
        try:
            obj = loads(line)
        except (ValueError, RecursionError):
            if line.isspace():
                lines -= 1
            else:
                skipped += 1
            continue
        if type(obj) is dict and needs_repair(line):
            obj, changed = repair(obj)
            result.repaired += changed
        if type(obj) is dict and type(obj.get("type")) is str:
            records.append(obj)
            if "timestamp" in obj:
                _canonical_time(obj, result)
        else:
            skipped += 1
    result.lines += lines
    result.skipped += skipped


def _canonical_time(record: dict[str, Any], result: Scan) -> None:
    value = timestamp(record["timestamp"])
    if value is INVALID:
        result.invalid_timestamps += 1
        value = None
    record["timestamp"] = value


def _parse_tail(tail: str, result: Scan) -> bool:
    """Parse the unterminated last line; True when it was a usable record."""
    before = len(result.records)
    _parse_lines([tail], result)
    return len(result.records) > before
