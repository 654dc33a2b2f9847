"""Line scanning and small helpers shared by the Codex CLI and Gemini CLI formats.

Unlike `lines.scan` (Claude Code, where every record has a string `type`), a line here only has
to be a JSON object: Gemini CLI's metadata and `$set` lines have no `type`. Every line keeps its
byte offset and its exact bytes, so turn finding, cutting and slimming can hand untouched lines
back byte-identical. Nothing here raises on hostile input: a line that is not a JSON object is
counted, never fatal (see docs/agents.md, "Broken lines").
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from types import ModuleType
from typing import Any

from . import facts
from .base import ParsedTranscript

Record = dict[str, Any]

_MAX_TIMESTAMP = 64  # longer "timestamps" are not timestamps; never parse unbounded text


@dataclass
class Line:
    """One physical line: where it starts, its bytes (terminator kept) and its JSON object."""

    offset: int
    data: bytes
    rec: Record | None


@dataclass
class Scan:
    lines: list[Line] = field(default_factory=list)
    count: int = 0  # non-blank lines
    skipped: int = 0  # non-blank lines that are not a JSON object
    truncated_bytes: int = 0  # size of an unterminated, unparseable last line (a torn write)


def scan(raw: bytes) -> Scan:
    """Every line of `raw` in order; blank lines are kept (with `rec=None`) but not counted."""
    result = Scan()
    pos, size = 0, len(raw)
    while pos < size:
        end = raw.find(b"\n", pos)
        end = size if end < 0 else end + 1
        data = raw[pos:end]
        rec = _load(data)
        if data.strip():
            result.count += 1
            if rec is None:
                result.skipped += 1
                if not data.endswith(b"\n"):
                    result.truncated_bytes = len(data)
        result.lines.append(Line(pos, data, rec))
        pos = end
    return result


def _load(data: bytes) -> Record | None:
    if not data.strip():
        return None
    try:
        obj = json.loads(data.decode("utf-8", "replace"))
    except (ValueError, RecursionError):
        return None
    return obj if type(obj) is dict else None


def iso_utc(value: Any) -> str | None:
    """An ISO 8601 timestamp normalised to UTC with millisecond precision, or None.

    Naive timestamps are taken as UTC; anything that does not parse (or is absurdly long) is None.
    """
    if not isinstance(value, str) or not value or len(value) > _MAX_TIMESTAMP:
        return None
    try:
        stamp = datetime.fromisoformat(value)
    except ValueError:
        return None
    if stamp.tzinfo is None:
        stamp = stamp.replace(tzinfo=UTC)
    stamp = stamp.astimezone(UTC)
    return stamp.strftime("%Y-%m-%dT%H:%M:%S.") + f"{stamp.microsecond // 1000:03d}Z"


def line_id(prefix: str, data: bytes) -> str:
    """A stable id for a line without one: the same bytes give the same id in any segment."""
    return f"{prefix}-{hashlib.blake2b(data, digest_size=8).hexdigest()}"


class Ids:
    """Hands out message uuids, suffixing repeats so that every uuid in a parse is unique."""

    def __init__(self) -> None:
        self._seen: dict[str, int] = {}

    def take(self, wanted: str) -> str:
        count = self._seen.get(wanted, 0)
        self._seen[wanted] = count + 1
        return wanted if count == 0 else f"{wanted}#{count}"


def text_of(value: Any) -> str:
    """A string value, or "" for anything else (ids, names and texts are hostile input)."""
    return value if isinstance(value, str) else ""


def dump_line(rec: Record, original: bytes) -> bytes:
    """Compact JSON for a rewritten record, with the original line ending kept."""
    ending = original[len(original.rstrip(b"\r\n")) :]
    try:
        return json.dumps(rec, ensure_ascii=False, separators=(",", ":")).encode() + ending
    except UnicodeEncodeError:  # a lone surrogate: keep it escaped
        return json.dumps(rec, separators=(",", ":")).encode() + ending
    except (ValueError, RecursionError):
        return original


def base64_size(data: str) -> int:
    return max(0, len(data) * 3 // 4 - data[-2:].count("="))


Pairs = list[tuple[tuple[str, ...], tuple[str, ...]]]


def splitting_cuts(pairs: Pairs) -> list[bool]:
    """For every line index c: would keeping only lines[:c] separate a call from its output?

    `pairs[i]` is (call ids written on line i, call ids answered on line i). One pass over the
    lines plus one over the calls (a difference array), so checking every turn stays linear.
    """
    first_call: dict[str, int] = {}
    first_output: dict[str, int] = {}
    for i, (calls, outputs) in enumerate(pairs):
        for call in calls:
            first_call.setdefault(call, i)
        for output in outputs:
            first_output.setdefault(output, i)
    diff = [0] * (len(pairs) + 2)
    for call, at in first_call.items():
        answered = first_output.get(call)
        if answered is not None and answered > at:
            diff[at + 1] += 1
            diff[answered + 1] -= 1
    covered, depth = [], 0
    for value in diff[: len(pairs) + 1]:
        depth += value
        covered.append(depth > 0)
    return covered


def safe_turn_cut(starts: list[int], pairs: Pairs, n: int) -> int | None:
    """Index of the first line of the turn to cut before, moved on past call/output splits.

    None when the first `n` turns (plus any turns kept so no call loses its output) are the
    whole file.
    """
    if n < 1:
        raise ValueError(f"n must be >= 1 (turn 1 starts at the first prompt), got {n}")
    if n >= len(starts):
        return None
    covered = splitting_cuts(pairs)
    while n < len(starts) and covered[starts[n]]:
        n += 1
    return starts[n] if n < len(starts) else None


def forward_cut(offsets: list[int], pairs: Pairs, offset: int, size: int) -> int:
    """Where a cut right after byte `offset - 1` ends: rounded up to a line end, then moved on
    past any line that would separate a call from its output (`offsets`: each line's start)."""
    import bisect

    covered = splitting_cuts(pairs)
    index = bisect.bisect_left(offsets, max(0, offset))
    while index < len(offsets) and covered[index]:
        index += 1
    return offsets[index] if index < len(offsets) else size


def count_in_dicts(node: Any, visit: Callable[[dict[str, Any]], int], *, max_depth: int = 12, depth: int = 0) -> int:
    """Sum of `visit(d)` over every dict inside `node` (nesting bounded: hostile input)."""
    if depth > max_depth:
        return 0
    if isinstance(node, list):
        return sum(count_in_dicts(item, visit, max_depth=max_depth, depth=depth + 1) for item in node)
    if not isinstance(node, dict):
        return 0
    count = visit(node)
    for value in node.values():
        if isinstance(value, (dict, list)):
            count += count_in_dicts(value, visit, max_depth=max_depth, depth=depth + 1)
    return count


class FunctionFormat:
    """A `TranscriptFormat` (formats/base.py) whose methods are one module's functions of the same names."""

    def __init__(self, name: str, module: ModuleType, *, snapshots: bool = False) -> None:
        self.name = name
        self._module = module
        self.snapshots = snapshots
        self.injected_context: tuple[str, ...] = ()

    def parse(
        self,
        raw: bytes,
        *,
        subagents: Mapping[str, bytes] | None = None,
        tool_outputs: Mapping[str, bytes] | None = None,
    ) -> ParsedTranscript:
        """``tool_outputs`` (Claude Code's files under tool-results/) have no equivalent here: ignored."""
        parsed: ParsedTranscript = self._module.parse(raw, subagents=subagents)
        return parsed

    def turn_starts(self, raw: bytes) -> list[int]:
        starts: list[int] = self._module.turn_starts(raw)
        return starts

    def cut_after_turn(self, raw: bytes, n: int) -> bytes:
        cut: bytes = self._module.cut_after_turn(raw, n)
        return cut

    def slim(self, raw: bytes, *, image_threshold: int = 8192) -> tuple[bytes, dict[str, int]]:
        slimmed: tuple[bytes, dict[str, int]] = self._module.slim(raw, image_threshold=image_threshold)
        return slimmed

    def encode_project_dir(self, cwd: str) -> str:
        encoded: str = self._module.encode_project_dir(cwd)
        return encoded

    def cut_at(self, raw: bytes, offset: int) -> bytes:
        cut: bytes = self._module.cut_at(raw, offset)
        return cut

    def line_end(self, raw: bytes, uuid: str) -> int | None:
        """Steps inside a turn are Claude Code's only (docs/agents.md "Resume, fork, restore")."""
        return None

    def steps(self, raw: bytes) -> list[Any]:
        """Prompts and tool calls, each ending where the line it was read from ends (found by
        reading the lines one by one: a message's id is its line's, whatever surrounds it).
        A single-document file (Gemini's `.json`) is one line: its steps all end at its end."""
        from .steps import Step

        parsed = self.parse(raw)
        lines = scan(raw).lines
        if not any(line.rec is not None for line in lines):  # one JSON document: cut only at its end
            return [
                Step(m["kind"].replace("tool_use", "tool"), m["uuid"], len(raw), _label(m), m.get("timestamp"))
                for m in parsed.messages
                if m["kind"] in ("prompt", "tool_use")
            ]
        ends: dict[str, int] = {}  # a message's id is its line's, whatever surrounds the line
        for line in lines:
            for msg in self.parse(line.data).messages:
                ends.setdefault(msg["uuid"], line.offset + len(line.data))
        found = []
        for msg in parsed.messages:
            if msg["kind"] in ("prompt", "tool_use"):
                end = ends.get(msg["uuid"], len(raw))
                tool_id = (msg.get("tool") or {}).get("id")
                kind = "prompt" if msg["kind"] == "prompt" else "tool"
                found.append((end, Step(kind, msg["uuid"], end, _label(msg), msg.get("timestamp"), tool_id)))
        ordered = sorted(enumerate(found), key=lambda item: (item[1][0], item[0]))
        return [_ended(step, end) for _, (end, step) in ordered]


def _label(msg: dict[str, Any]) -> str:
    from .steps import call_summary

    if msg["kind"] == "prompt":
        return str(msg.get("content") or "")
    tool = msg.get("tool") or {}
    return f"{tool.get('name')}: {call_summary(tool.get('input'))}"


def _ended(step: Any, end: int) -> Any:
    from dataclasses import replace

    return replace(step, end=end)


def assemble(
    agent: str,
    messages: list[dict[str, Any]],
    stats: dict[str, Any],
    *,
    token_usage: dict[str, int],
    agent_version: str | None,
    agent_session_id: str | None,
    fallback_title: str = "",
    extra_files: list[str] | None = None,
) -> ParsedTranscript:
    """The parse result from built messages: turns, title and facts as `formats/facts.py` derives them."""
    turns = facts.number_and_turns(messages)
    files, counts = facts.tool_facts(messages)
    first, last = facts.time_span(messages)
    return ParsedTranscript(
        agent=agent,
        messages=messages,
        turns=turns,
        stats=stats,
        title=facts.title_from(turns, messages) or fallback_title[: facts.TITLE_LIMIT],
        prompts=[t["prompt"] for t in turns],
        last_assistant_text=facts.last_assistant_text(messages),
        files_touched=list(dict.fromkeys([*files, *(extra_files or [])])),
        tool_counts=counts,
        token_usage=token_usage,
        agent_version=agent_version,
        agent_session_id=agent_session_id,
        first_timestamp=first,
        last_timestamp=last,
    )
