"""Make a segment fit the server's size limit without silently dropping anything (docs/design.md §7 "Size").

Tool outputs (a Bash stdout, a Read of a big file) are what makes segments huge, and they matter
least for understanding the conversation, so they are cut first: every output longer than a
common "water level" keeps its head and tail and gets a marker saying how many bytes were cut
(`\\n[… sessionledger truncated 123456 bytes …]\\n`). The level is the highest one that makes the
segment fit, so the largest outputs are cut and the rest stay whole. Base64 payloads (images,
documents) cannot be cut in half usefully and are replaced whole, the way `slim()` marks them.

Only when every tool output is down to `MIN_KEEP` bytes do other strings (prompts, assistant
text, tool inputs) get the same treatment, then everything down to bare markers; if even that
does not fit, ValueError. Lines are re-serialised (compact, like Claude Code writes them) only
when something in them was cut; all other lines stay byte-identical. Output is deterministic.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from sessionledger import agents
from sessionledger.agents.base import Agent

__all__ = ["MIN_KEEP", "FitResult", "fit_to_limit", "shorten_output"]

MIN_KEEP = 2048  # bytes of head + tail a text keeps before other strings are touched
_MARKER = "[… sessionledger truncated {} bytes …]"
_MARKER_ROOM = len(_MARKER.format(10**12).encode()) + 2  # marker with its two newlines, upper bound
_SNAP = 200  # move a cut up to this many characters to land on a line break
_ROUNDS = 8  # re-plans per phase when estimates were short (escapes, multi-byte characters)


@dataclass(frozen=True)
class FitResult:
    """The (possibly) truncated segment; `truncated_bytes` is the UTF-8 size of the text cut
    out (what the markers report) and `truncated_outputs` the number of strings cut."""

    data: bytes
    truncated_bytes: int
    truncated_outputs: int


@dataclass
class _Slot:
    """One string value of one line that may be cut."""

    index: int
    line: int
    parent: Any  # the dict or list holding it; `key` indexes it
    key: str | int
    text: str
    size: int  # UTF-8 bytes of its JSON string body, escapes included
    output: bool  # a tool output or a base64 payload: cut first
    base64: bool


def fit_to_limit(data: bytes, limit: int, agent: Agent | None = None) -> FitResult:
    """Return `data` unchanged when it fits in `limit` bytes, else cut the largest texts until
    it does (tool output first: the agent's adapter says which strings are, default Claude
    Code). Raises ValueError when even bare markers cannot fit."""
    if limit <= 0:
        raise ValueError(f"size limit must be positive, got {limit}")
    if len(data) <= limit:
        return FitResult(data, 0, 0)
    segment = _Segment(data, agent or agents.get(None))
    for fixed, water, floor in segment.phases():
        result = segment.fit(fixed, water, floor, limit)
        if result is not None:
            return result
    raise ValueError(f"segment of {len(data)} bytes cannot fit in {limit} bytes even with every string truncated")


def shorten_output(data: bytes, target: int) -> tuple[bytes, int]:
    """A saved tool output (plain bytes, not JSONL) in about `target` bytes: its head and tail
    around the same marker, cut at line breaks when near. (data, bytes cut); never below MIN_KEEP."""
    keep = max(MIN_KEEP, target - _MARKER_ROOM)
    if len(data) <= keep + _MARKER_ROOM:
        return data, 0
    text = data.decode("utf-8", "surrogateescape")
    share = int(keep * len(text) / len(data))
    head, tail = _snap_head(text, share - share // 2), _snap_tail(text, share // 2)
    dropped = len(text[head : len(text) - tail].encode("utf-8", "surrogateescape"))
    kept = text[:head] + "\n" + _MARKER.format(dropped) + "\n" + text[len(text) - tail :]
    return kept.encode("utf-8", "surrogateescape"), dropped


class _Segment:
    """Parsed lines, their cuttable strings, and rendering under a cut plan."""

    def __init__(self, data: bytes, agent: Agent) -> None:
        self.size = len(data)
        self.raw = data.splitlines(keepends=True)
        self.records: dict[int, Any] = {}
        self.slots: list[_Slot] = []
        for number, line in enumerate(self.raw):
            record = _load(line)
            if record is not None:
                self.records[number] = record
                self.slots.extend(_collect(record, number, len(self.slots), agent))

    def phases(self) -> Iterator[tuple[list[_Slot], list[_Slot], int]]:
        """(slots cut to the floor, slots sharing a water level, floor), mildest first."""
        outputs = [s for s in self.slots if s.output]
        others = [s for s in self.slots if not s.output]
        yield [], outputs, MIN_KEEP
        yield outputs, others, MIN_KEEP
        yield [], self.slots, 0

    def fit(self, fixed: list[_Slot], water: list[_Slot], floor: int, limit: int) -> FitResult | None:
        """Cut with the highest water level that fits, re-planning when estimates fall short."""
        target = self.size - limit
        for _ in range(_ROUNDS):
            level = _water_level(fixed, water, floor, target)
            if level is None:
                return None
            caps = {s.index: floor for s in fixed} | {s.index: level for s in water}
            result = self.render(caps)
            if len(result.data) <= limit:
                return result
            target += len(result.data) - limit + 64
        return None

    def render(self, caps: dict[int, int]) -> FitResult:
        """The segment with every slot cut to its cap (others restored to their original)."""
        changed: set[int] = set()
        cut_bytes = cut_count = 0
        for slot in self.slots:
            cap = caps.get(slot.index)
            if cap is not None and slot.size > cap + _MARKER_ROOM:
                cut_bytes += _cut(slot, cap)
                cut_count += 1
                changed.add(slot.line)
            else:
                _restore(slot)
        lines = [_dump(self.records[n], raw) if n in changed else raw for n, raw in enumerate(self.raw)]
        return FitResult(b"".join(lines), cut_bytes, cut_count)


def _water_level(fixed: list[_Slot], water: list[_Slot], floor: int, target: int) -> int | None:
    """The highest cap >= floor for `water` slots saving `target` bytes with `fixed` at the floor."""
    need = target - sum(_saving(s, floor) for s in fixed)
    water = [s for s in water if s.size > floor + _MARKER_ROOM]  # the rest can never save bytes
    top = max((s.size for s in water), default=floor)
    if need <= 0:
        return max(top, floor)
    if sum(_saving(s, floor) for s in water) < need:
        return None
    low, high = floor, top  # savings(low) >= need > savings(top) = 0
    while high - low > 1:
        middle = (low + high) // 2
        if sum(_saving(s, middle) for s in water) >= need:
            low = middle
        else:
            high = middle
    return low


def _saving(slot: _Slot, cap: int) -> int:
    """Estimated bytes saved by cutting `slot` to `cap` bytes (base64 payloads go whole)."""
    if slot.size <= cap + _MARKER_ROOM:
        return 0
    return slot.size - _MARKER_ROOM - (0 if slot.base64 else cap)


def _cut(slot: _Slot, cap: int) -> int:
    """Put the truncated text in place; returns the UTF-8 bytes cut out."""
    text = slot.text
    if slot.base64:
        dropped = len(text.encode("utf-8", "surrogatepass"))
        slot.parent[slot.key] = _MARKER.format(dropped)
        if isinstance(slot.parent, dict):  # the convention render.image_placeholder reads
            slot.parent.update(slimmed=True, original_size=max(0, len(text) * 3 // 4 - text[-2:].count("=")))
        return dropped
    keep = int(cap * len(text) / max(1, slot.size))  # characters, assuming uniform escaping
    head, tail = _snap_head(text, keep - keep // 2), _snap_tail(text, keep // 2)
    dropped = len(text[head : len(text) - tail].encode("utf-8", "surrogatepass"))
    before = "" if head == 0 or text[head - 1] == "\n" else "\n"  # the marker gets a line of its own
    slot.parent[slot.key] = text[:head] + before + _MARKER.format(dropped) + "\n" + text[len(text) - tail :]
    return dropped


def _restore(slot: _Slot) -> None:
    slot.parent[slot.key] = slot.text
    if slot.base64 and isinstance(slot.parent, dict) and slot.parent.get("slimmed") is True:
        slot.parent.pop("slimmed", None)
        slot.parent.pop("original_size", None)


def _snap_head(text: str, n: int) -> int:
    """End the head after a line break when one is near, so the kept part shows whole lines."""
    if n <= 0:
        return 0
    brk = text.rfind("\n", max(0, n - _SNAP), n)
    return brk + 1 if brk >= 0 else n


def _snap_tail(text: str, n: int) -> int:
    """Length of a tail of about `n` characters starting right after a line break if one is near."""
    if n <= 0:
        return 0
    start = len(text) - n
    brk = text.find("\n", start, start + _SNAP)
    return len(text) - (brk + 1) if brk >= 0 else n


def _collect(record: Any, line: int, first_index: int, agent: Agent) -> list[_Slot]:
    """Every string value of a record, flagged as tool output / base64 payload or not (the
    agent's adapter knows which keys hold them: `is_output`, `is_base64`)."""
    slots: list[_Slot] = []
    stack: list[tuple[Any, bool]] = [(record, False)]
    while stack:
        node, in_output = stack.pop()
        is_dict = isinstance(node, dict)
        items = node.items() if is_dict else enumerate(node)
        for key, value in items:
            output = in_output or (is_dict and agent.is_output(node, key))
            if isinstance(value, str):
                if len(value) > _MARKER_ROOM // 2:
                    b64 = is_dict and agent.is_base64(node, key)
                    size = len(json.dumps(value, ensure_ascii=False).encode("utf-8", "surrogatepass")) - 2
                    slots.append(_Slot(first_index + len(slots), line, node, key, value, size, output or b64, b64))
            elif isinstance(value, (dict, list)):
                stack.append((value, output))
    return slots


def _load(line: bytes) -> Any:
    try:
        record = json.loads(line)
    except (ValueError, RecursionError):
        return None
    return record if isinstance(record, (dict, list)) else None


def _dump(record: Any, original: bytes) -> bytes:
    """Compact JSON like Claude Code writes it, keeping the line's own ending."""
    ending = original[len(original.rstrip(b"\r\n")) :]
    try:
        text = json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode()
    except UnicodeEncodeError:  # a lone surrogate: keep it \u-escaped
        text = json.dumps(record, separators=(",", ":")).encode()
    return text + ending
