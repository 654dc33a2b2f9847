"""An uploaded Agent Trace record is checked before it is stored; a refusal names the field.

First the shape every reader can afford (docs/security.md "Records and links a teammate cannot
forge"): nesting, strings and integers bounded, only values PostgreSQL's jsonb stores as they are.
Then three walls: the published JSON schema (Agent Trace v0.1.0, vendored next to this module),
the commit (the record's revision is the session's commit, every path is one of the commit's
files), and the file (every range lies within the line count the record declares for the file at
the commit, and the attributed lines are no more than the commit added).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

from django.conf import settings

from projects.errors import DomainError
from projects.models import Project
from sessionledger.core.attribution import VENDOR
from sessions_app.links import message_path
from sessions_app.models import Session

SCHEMA_FILE = Path(__file__).with_name("trace-record.schema.json")
STEP_KEY = f"{VENDOR}.step"
_ID = re.compile(r"[A-Za-z0-9_.:-]{1,100}")  # a message uuid (or another agent's line id)
CODE = "invalid_attribution"
# A record the client builds nests 7 deep and holds line numbers and counts; the bounds leave room
# for other tools while keeping every reader (a deep copy, the JSON encoder, jsonb) far from its limits.
MAX_DEPTH = 16
MAX_STRING = 4096  # characters of a key or a string (a path's limit in the API)
MAX_INTEGER = 2**31 - 1  # PostgreSQL's integer: the line totals are stored in one
_UNSTORABLE = re.compile(r"[\x00\ud800-\udfff]")  # NUL and lone surrogates: jsonb refuses them


def refuse(message: str, field: str) -> DomainError:
    return DomainError(CODE, f"Attribution refused: {message}", field=field)


@cache
def _validator() -> Any:
    from jsonschema import Draft202012Validator, FormatChecker

    schema = json.loads(SCHEMA_FILE.read_text())
    return Draft202012Validator(schema, format_checker=FormatChecker())


def parse(data: bytes) -> dict[str, Any]:
    limit = settings.SESSIONLEDGER_MAX_ATTRIBUTION_BYTES
    if len(data) > limit:
        raise DomainError.too_large(f"Attribution refused: over {limit:,} bytes.", limit=limit, field="attribution")
    try:
        record = json.loads(data)
    except (ValueError, UnicodeDecodeError, RecursionError):
        raise refuse("not valid JSON.", "attribution") from None
    if not isinstance(record, dict):
        raise refuse("a record is a JSON object.", "attribution")
    _check_shape(record)
    return record


def _check_shape(record: dict[str, Any]) -> None:
    """Refuse, naming the place, a value nested too deep, a string too long or unstorable, an
    integer beyond PostgreSQL's or a non-finite number. One pass over the values, no recursion."""
    stack: list[tuple[Any, tuple[str | int, ...]]] = [(record, ())]
    while stack:
        value, path = stack.pop()
        if len(path) > MAX_DEPTH and isinstance(value, (dict, list)):
            raise refuse(f"nested deeper than {MAX_DEPTH} levels.", _place(path))
        if isinstance(value, dict):
            for key, item in value.items():
                _check_scalar(key, path)
                stack.append((item, (*path, key)))
        elif isinstance(value, list):
            stack.extend((item, (*path, index)) for index, item in enumerate(value))
        else:
            _check_scalar(value, path)


def _check_scalar(value: Any, path: tuple[str | int, ...]) -> None:
    if isinstance(value, str) and (len(value) > MAX_STRING or _UNSTORABLE.search(value)):
        raise refuse(f"a string is over {MAX_STRING} characters or holds NUL or a lone surrogate.", _place(path))
    if isinstance(value, bool) or value is None:
        return
    if isinstance(value, int) and not -MAX_INTEGER <= value <= MAX_INTEGER:
        raise refuse(f"a number is beyond ±{MAX_INTEGER}.", _place(path))
    if isinstance(value, float) and not math.isfinite(value):
        raise refuse("a number is not finite.", _place(path))


def validate(record: dict[str, Any], session: Session) -> None:
    """Raise a DomainError naming the first offending field; return when the record may be stored."""
    error = next(iter(sorted(_validator().iter_errors(record), key=lambda e: [str(p) for p in e.absolute_path])), None)
    if error is not None:
        raise refuse(error.message[:300], _field(error.absolute_path) or "attribution")
    if not session.commit_hash:
        raise refuse("only a checkpoint's commit has an attribution.", "vcs.revision")
    if record.get("vcs", {}).get("revision") != session.commit_hash:
        raise refuse(f"the record is not about commit {session.commit_hash}.", "vcs.revision")
    _check_files(record, session)
    _check_steps(record)


def _place(path: tuple[str | int, ...]) -> str:
    return _field(path)[:300] or "attribution"


def _field(path: Any) -> str:
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def only_permalinks(record: dict[str, Any], project: Project) -> dict[str, Any]:
    """The record without the addresses that are not this server's message permalinks: a
    conversation's ``url`` and the entries of its ``related`` list (dropped, not refused). Those kept
    become relative paths (sessions_app/links.py ``message_path``)."""
    for _, conversation in _conversations(record):
        if "url" in conversation:
            path = message_path(project, conversation.pop("url"))
            if path:
                conversation["url"] = path
        related = [{**r, "url": message_path(project, r.get("url"))} for r in conversation.pop("related", [])]
        related = [r for r in related if r["url"]]
        if related:
            conversation["related"] = related
    return record


def _conversations(record: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    for i, entry in enumerate(record["files"]):
        for j, conversation in enumerate(entry["conversations"]):
            yield f"files[{i}].conversations[{j}]", conversation


def _check_files(record: dict[str, Any], session: Session) -> None:
    files = set(session.files_touched or [])
    vendor = record.get("metadata", {}).get(VENDOR)
    counts = vendor.get("line_counts") if isinstance(vendor, dict) else None
    if not isinstance(counts, dict):
        raise refuse("the file line counts are missing.", f"metadata.{VENDOR}.line_counts")
    attributed = 0
    for i, entry in enumerate(record["files"]):
        if entry["path"] not in files:
            raise refuse(
                f"{entry['path'][:200]!r} is not a file of commit {(session.commit_hash or '')[:12]}.",
                f"files[{i}].path",
            )
        lines = counts.get(entry["path"])
        if not isinstance(lines, int) or lines < 0:
            raise refuse("the file's line count is missing.", f"metadata.{VENDOR}.line_counts")
        attributed += _check_ranges(entry, i, lines)
    if attributed > MAX_INTEGER:
        raise refuse(f"over {MAX_INTEGER} lines attributed.", "files")
    added = (session.diff_stat or {}).get("insertions")
    if isinstance(added, int) and attributed > added:
        raise refuse(f"{attributed} lines attributed, the commit adds {added}.", "files")


def _check_ranges(entry: dict[str, Any], i: int, lines: int) -> int:
    total = 0
    for j, conversation in enumerate(entry["conversations"]):
        for k, span in enumerate(conversation["ranges"]):
            where = f"files[{i}].conversations[{j}].ranges[{k}]"
            if span["end_line"] < span["start_line"]:
                raise refuse("a range ends before it starts.", f"{where}.end_line")
            if span["end_line"] > lines:
                raise refuse(f"the range goes beyond the file's {lines} lines.", f"{where}.end_line")
            total += span["end_line"] - span["start_line"] + 1
    return total


def _check_steps(record: dict[str, Any]) -> None:
    """The implementation data `blame`, `why` and the Files view read: shapes they can trust."""
    vendor = record["metadata"][VENDOR]
    steps = vendor.get("steps", {})
    where = f"metadata.{VENDOR}"
    if not isinstance(steps, dict) or not all(_ID.fullmatch(k) and isinstance(v, dict) for k, v in steps.items()):
        raise refuse("steps map message ids to objects.", f"{where}.steps")
    if any(not isinstance(v.get("prompt", ""), str) or len(v.get("prompt", "")) > 100 for v in steps.values()):
        raise refuse("a step's prompt is a message id.", f"{where}.steps")
    for place, conversation in _conversations(record):
        step = conversation.get(STEP_KEY)
        if step is not None and (not isinstance(step, str) or step not in steps):
            raise refuse("the conversation's step is not one of the record's steps.", f"{place}.{STEP_KEY}")
    hashes = vendor.get("line_hashes", {})
    if not isinstance(hashes, dict) or not all(_pairs(v) for v in hashes.values()):
        raise refuse("line hashes are [line, hash] pairs per path.", f"{where}.line_hashes")


def _pairs(value: Any) -> bool:
    return isinstance(value, list) and all(
        isinstance(p, list) and len(p) == 2 and isinstance(p[0], int) and isinstance(p[1], str) and len(p[1]) <= 64
        for p in value
    )


def line_totals(record: dict[str, Any]) -> tuple[int, int]:
    """(added lines, lines the agent wrote) as the record's ranges count them."""
    added = ai = 0
    for _, conversation in _conversations(record):
        size = sum(s["end_line"] - s["start_line"] + 1 for s in conversation["ranges"])
        added += size
        ai += size if (conversation.get("contributor") or {}).get("type") == "ai" else 0
    return added, ai
