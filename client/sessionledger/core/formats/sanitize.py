"""Make a parsed record safe to store and to show; one bad value never fails a session.

A transcript line is written by whoever holds a token (docs/security.md). JSON can carry
values that parse fine but break what comes after the parser:

- `\\u0000` (NUL): PostgreSQL refuses it in text and jsonb, so the final write of the session
  would fail. Replaced by U+FFFD, like the undecodable bytes of a line.
- a lone surrogate (`\\ud800` without its pair): not encodable as UTF-8, so the content
  document could not be written. Replaced by U+FFFD.
- nesting deeper than `MAX_DEPTH`: a value json.loads accepted in the worker can still be
  too deep to decode again inside a web request (more stack in use there). The deeper part is
  kept as (shortened) JSON text.
- `NaN`, `Infinity` and numbers too large for a double (`1e999`): not JSON, so the messages
  API could not answer with them. Read as null (`load_line`).
- `timestamp`: parsed and written back as `YYYY-MM-DDTHH:MM:SS.mmmZ` (UTC); anything that is
  not a date and time becomes null and is counted, so no page or filter ever sees raw text
  where a time belongs.

The checks that decide whether a record needs the walk are substring counts on the line
(C speed), so the common line costs nothing but the timestamp parse.
"""

from __future__ import annotations

import json
import math
import re
from datetime import UTC, datetime
from enum import Enum
from functools import partial
from typing import Any, Final

REPLACEMENT = "\ufffd"
MAX_DEPTH = 48  # containers inside a record; real Claude Code lines stay under ~12
DEEP_TEXT_LIMIT = 2_000  # characters of JSON text kept for a subtree cut at MAX_DEPTH
TIMESTAMP_LIMIT = 64
_BAD_ESCAPE = re.compile(r"\\u(?:0000|[dD][89a-fA-F])")  # NUL or a surrogate, as JSON escapes it
_BAD_CHARS = re.compile("[\x00\ud800-\udfff]")
_CANONICAL = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z\Z")


class Invalid(Enum):
    """What `timestamp` returns for a value that is not a time (a sentinel type checkers can narrow)."""

    TIMESTAMP = "invalid timestamp"


INVALID: Final = Invalid.TIMESTAMP


def _finite(text: str) -> float | None:
    number = float(text)
    return number if math.isfinite(number) else None


# json.loads for transcript lines: values JSON cannot hold again come back as None.
load_line = partial(json.loads, parse_float=_finite, parse_constant=lambda _name: None)


def needs_repair(line: str) -> bool:
    """Whether the record parsed from `line` may hold NULs, lone surrogates or deep nesting."""
    return bool(_BAD_ESCAPE.search(line)) or line.count("{") + line.count("[") > MAX_DEPTH


def repair(record: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """(`record` with every string clean and nesting bounded, whether anything changed)."""
    changed = [False]
    return _clean(record, 0, changed), changed[0]


def _clean_text(text: str, changed: list[bool]) -> str:
    if _BAD_CHARS.search(text) is None:
        return text
    changed[0] = True
    return _BAD_CHARS.sub(REPLACEMENT, text)


def _clean(value: Any, depth: int, changed: list[bool]) -> Any:
    """Recursion is bounded by MAX_DEPTH: deeper values are replaced before descending."""
    if isinstance(value, str):
        return _clean_text(value, changed)
    if not isinstance(value, (dict, list)):
        return value
    if depth >= MAX_DEPTH:
        changed[0] = True
        return _flatten(value)
    if isinstance(value, list):
        return [_clean(item, depth + 1, changed) for item in value]
    return {_clean_text(key, changed): _clean(item, depth + 1, changed) for key, item in value.items()}


def _flatten(value: Any) -> str:
    """A subtree too deep to keep as structure: its JSON text, shortened (never raises)."""
    try:
        text = json.dumps(value, ensure_ascii=True)
    except (ValueError, RecursionError):
        text = "[nested too deeply]"
    return text if len(text) <= DEEP_TEXT_LIMIT else text[: DEEP_TEXT_LIMIT - 1] + "…"


def timestamp(value: Any) -> str | Invalid | None:
    """The canonical UTC form of a transcript timestamp, None when absent, INVALID when not a time."""
    if value is None:
        return None
    if not isinstance(value, str) or len(value) > TIMESTAMP_LIMIT:
        return INVALID
    try:
        moment = datetime.fromisoformat(value)
        moment = moment.astimezone(UTC) if moment.tzinfo else moment
    except (ValueError, OverflowError):
        return INVALID
    if _CANONICAL.match(value):
        return value
    return (
        f"{moment.year:04d}-{moment.month:02d}-{moment.day:02d}T{moment.hour:02d}:{moment.minute:02d}:"
        f"{moment.second:02d}.{moment.microsecond // 1000:03d}Z"
    )
