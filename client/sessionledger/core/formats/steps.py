"""Steps: the points of a conversation people fork at, and a safe cut right after any of them.

A step is a human prompt, an assistant tool call, or (known from the captured segments, not
from the bytes) a commit captured inside a turn. Cutting "after a step" keeps every line up to
and including the step's line — the same rule as Claude Code's `--resume-session-at <uuid>`
("up to and including the message with this UUID", docs/claude-code.md §1.10) — plus the results of the
tool calls kept, so the cut never separates a tool_use from its tool_result (docs/claude-code.md §1.11). Trailing
snapshot/queue/progress lines and `summary` lines whose leaf was cut are left out, as for turns.
Every kept line is byte-identical. Linear in the size of the transcript.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from typing import Any

from .base import iter_lines, load_record
from .classify import block_text, is_prompt_record, render_prompt, user_content
from .turns import _drop_dangling_summaries, _drop_trailing_noise, _index


@dataclass(frozen=True)
class Step:
    """A prompt or a tool call: where its line ends in the transcript, and what it says."""

    kind: str  # "prompt" or "tool"
    uuid: str
    end: int  # byte offset just after the step's line
    label: str  # the prompt's text, or `Bash: git commit -m …`
    timestamp: str | None
    tool_id: str | None = None


def cut_at(raw: bytes, offset: int) -> bytes:
    """The transcript cut right after byte `offset` (rounded up to a line end), tool pairs kept."""
    return Cutter(raw).cut(offset)


class Cutter:
    """Cuts of one transcript at many points: the lines and their tool ids are indexed once."""

    def __init__(self, raw: bytes) -> None:
        self.lines = _index(raw)
        self.starts = [line.offset for line in self.lines]
        self.ids = [line.tool_ids() for line in self.lines]
        self.answered_at: dict[str, int] = {}
        for index, (_, results) in enumerate(self.ids):
            for tool_id in results:
                self.answered_at.setdefault(tool_id, index)

    def kept(self, offset: int) -> int:
        """How many lines a cut after `offset` keeps, before trailing noise is dropped."""
        keep = bisect.bisect_left(self.starts, offset)
        seen, need = 0, -1
        while True:
            for index in range(seen, keep):
                for tool_id in self.ids[index][0]:
                    need = max(need, self.answered_at.get(tool_id, -1))
            seen = keep
            if need < keep:
                return keep
            keep = need + 1

    def end(self, offset: int) -> int:
        """Where a cut after `offset` really ends, the results of its tool calls included."""
        keep = self.kept(offset)
        return self.lines[keep - 1].offset + len(self.lines[keep - 1].data) if keep else 0

    def cut(self, offset: int) -> bytes:
        kept = _drop_trailing_noise(self.lines[: self.kept(offset)])
        return b"".join(line.data for line in _drop_dangling_summaries(kept))


def line_end(raw: bytes, uuid: str) -> int | None:
    """The offset just after the (first) line whose `uuid` is `uuid`; None when there is none."""
    needle = f'"uuid":"{uuid}"'.encode()
    for offset, line in iter_lines(raw):
        if needle in line:
            rec = load_record(line)
            if rec is not None and rec.get("uuid") == uuid:
                return offset + len(line)
    return None


def steps(raw: bytes) -> list[Step]:
    """The prompts and tool calls of the main conversation (not sub-agents), in file order."""
    found: list[Step] = []
    seen: set[str] = set()
    for offset, line in iter_lines(raw):
        if b'"user"' not in line and b'"tool_use"' not in line:
            continue
        rec = load_record(line)
        uuid = rec.get("uuid") if rec else None
        if rec is None or not isinstance(uuid, str) or uuid in seen or rec.get("isSidechain") is True:
            continue
        step = _step(rec, uuid, offset + len(line))
        if step is not None:
            seen.add(uuid)
            found.append(step)
    return found


def _step(rec: dict[str, Any], uuid: str, end: int) -> Step | None:
    stamp = found if isinstance(found := rec.get("timestamp"), str) else None
    if rec["type"] == "user" and is_prompt_record(rec):
        text, _ = render_prompt(block_text(user_content(rec)))
        return Step("prompt", uuid, end, text or "[image]", stamp)
    if rec["type"] != "assistant":
        return None
    message = rec.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    for block in content if isinstance(content, list) else []:
        if isinstance(block, dict) and block.get("type") == "tool_use":
            label = f"{block.get('name')}: {call_summary(block.get('input'))}"
            tool_id = found if isinstance(found := block.get("id"), str) else None
            return Step("tool", uuid, end, label, stamp, tool_id)
    return None


def call_summary(tool_input: object) -> str:
    if isinstance(tool_input, dict):
        for key in ("command", "file_path", "pattern", "description", "prompt", "url"):
            value = tool_input.get(key)
            if isinstance(value, str) and value.strip():
                return " ".join(value.split())[:200]
    return ""
