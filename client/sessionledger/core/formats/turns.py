"""Turn boundaries on raw bytes: where turns start, and a safe cut after turn n (docs/claude-code.md §1.8, §1.11).

Works on byte offsets and keeps every kept line byte-identical, because a cut transcript is
handed back to Claude Code (`claude --resume`): thinking signatures must survive untouched.

A turn starts at its prompt line, or earlier at the lines written just for that prompt and
right before it: the file-history snapshot of the prompt, queue operations, progress lines
and a `<local-command-caveat>` meta line (which precedes a typed slash command). Leaving that
caveat at the end of a cut file would tell the model to ignore the next message typed.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

from .base import iter_lines, load_record
from .classify import block_text, is_prompt_record, not_prompt_label, user_content

_NOISE_TYPES = frozenset({"file-history-snapshot", "queue-operation", "progress"})


@dataclass
class _Line:
    """One line, parsed only when asked: most lines never need to be (substring pre-checks)."""

    offset: int
    data: bytes

    @cached_property
    def rec(self) -> dict[str, Any] | None:
        return load_record(self.data) if self.data.strip() else None

    def tool_ids(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """(tool_use ids, answered tool_use ids) written on this line."""
        if b'"tool_' not in self.data or self.rec is None:
            return (), ()
        return _tool_ids(self.rec)


def turn_starts(raw: bytes) -> list[int]:
    """Byte offset of the first line of every turn, in file order."""
    lines = _index(raw)
    return [lines[i].offset for i in _start_positions(lines)]


def cut_after_turn(raw: bytes, n: int) -> bytes:
    """The first `n` turns: a line prefix of `raw`, cut before turn n+1.

    Trailing snapshot/queue/progress lines and `summary` lines whose leaf was cut are left
    out. If cutting before turn n+1 would separate a tool_use from a tool_result written
    after that point, later whole turns are kept too: an unpaired tool_use makes the API
    refuse the whole conversation. `n` beyond the last turn returns `raw` unchanged.
    """
    if n < 1:
        raise ValueError(f"n must be >= 1 (turn 1 starts at the first prompt), got {n}")
    lines = _index(raw)
    starts = _start_positions(lines)
    ids = [line.tool_ids() for line in lines] if len(starts) > n else []
    while n < len(starts) and _splits_tool_pair(ids, starts[n]):
        n += 1
    if n >= len(starts):
        return raw
    kept = _drop_trailing_noise(lines[: starts[n]])
    return b"".join(line.data for line in _drop_dangling_summaries(kept))


def _index(raw: bytes) -> list[_Line]:
    return [_Line(offset, data) for offset, data in iter_lines(raw)]


def _tool_ids(rec: dict[str, Any]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    message = rec.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, list):
        return (), ()
    if rec["type"] == "assistant":
        return _block_ids(content, "tool_use", "id"), ()
    if rec["type"] == "user":
        return (), _block_ids(content, "tool_result", "tool_use_id")
    return (), ()


def _block_ids(content: list[Any], block_type: str, key: str) -> tuple[str, ...]:
    return tuple(
        b[key] for b in content if isinstance(b, dict) and b.get("type") == block_type and isinstance(b.get(key), str)
    )


def _prompt_positions(lines: list[_Line]) -> list[int]:
    """Positions of real prompt lines; a replayed copy of a uuid is not a new turn."""
    seen: set[str] = set()
    positions = []
    for i, line in enumerate(lines):
        if b'"user"' not in line.data or b'"tool_result"' in line.data:
            continue  # structural markers: a quote inside a JSON string is escaped
        rec = line.rec
        if rec is None or rec["type"] != "user" or not is_prompt_record(rec):
            continue
        uuid = rec.get("uuid")
        if isinstance(uuid, str):
            if uuid in seen:
                continue
            seen.add(uuid)
        positions.append(i)
    return positions


def _start_positions(lines: list[_Line]) -> list[int]:
    """Each prompt position, moved back over that prompt's preamble lines."""
    starts: list[int] = []
    for prompt in _prompt_positions(lines):
        floor = starts[-1] + 1 if starts else 0
        start = prompt
        while start > floor and _is_preamble(lines[start - 1]):
            start -= 1
        starts.append(start)
    return starts


def _is_preamble(line: _Line) -> bool:
    rec = line.rec
    if rec is None:
        return not line.data.strip()
    if rec["type"] in _NOISE_TYPES:
        return True
    return rec["type"] == "user" and rec.get("isMeta") is True and _is_caveat(rec)


def _is_caveat(rec: dict[str, Any]) -> bool:
    return not_prompt_label(block_text(user_content(rec))) == "caveat"


def _splits_tool_pair(ids: list[tuple[tuple[str, ...], tuple[str, ...]]], cut: int) -> bool:
    """True when a tool_use before `cut` has its tool_result only after `cut`."""
    answered_before = {i for _, results in ids[:cut] for i in results}
    pending = {i for uses, _ in ids[:cut] for i in uses} - answered_before
    return bool(pending) and any(i in pending for _, results in ids[cut:] for i in results)


def _drop_trailing_noise(kept: list[_Line]) -> list[_Line]:
    end = len(kept)
    while end > 0 and _is_preamble(kept[end - 1]):
        end -= 1
    return kept[:end]


def _drop_dangling_summaries(kept: list[_Line]) -> list[_Line]:
    """`summary` lines must point at a kept line, or resume reports the session missing."""
    if not any(b'"summary"' in line.data and _is_summary(line.rec) for line in kept):
        return kept
    uuids = {line.rec["uuid"] for line in kept if line.rec and isinstance(line.rec.get("uuid"), str)}
    return [line for line in kept if not (_is_summary(line.rec) and _dangling(line.rec, uuids))]


def _is_summary(rec: dict[str, Any] | None) -> bool:
    return rec is not None and rec["type"] == "summary"


def _dangling(rec: dict[str, Any] | None, uuids: set[str]) -> bool:
    leaf = rec.get("leafUuid") if rec else None
    return not isinstance(leaf, str) or leaf not in uuids
