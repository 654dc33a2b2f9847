"""Transcript formats: the one place that knows how an assistant writes its conversations.

Used by the client (offsets, turns, import, slimming), the API (cut for fork) and the worker
(parse into the docs/design.md §2 content document). Standard library only, and cheap to import: a
format module is loaded on first use, so the hook path that only needs `complete_lines`
pays for nothing else.

Adding an assistant = one module exposing `FORMAT` (see base.TranscriptFormat) plus one
entry in `FORMATS`.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any

from .base import ParsedTranscript, TranscriptFormat, complete_lines

__all__ = [
    "DEFAULT_AGENT",
    "FORMATS",
    "ParsedTranscript",
    "TranscriptFormat",
    "complete_lines",
    "cut_after_turn",
    "cut_at_offset",
    "encode_project_dir",
    "get_format",
    "injected_context",
    "list_steps",
    "parse_transcript",
    "slim",
    "step_line_end",
    "turn_starts",
]

DEFAULT_AGENT = "claude-code"

# agent name -> module that defines FORMAT
FORMATS: dict[str, str] = {
    "claude-code": "sessionledger.core.formats.claude_code",
    "codex": "sessionledger.core.formats.codex",
    "gemini": "sessionledger.core.formats.gemini",
}


def get_format(agent: str) -> TranscriptFormat:
    """The format object for an agent name; ValueError names the known agents."""
    module_name = FORMATS.get(agent) if isinstance(agent, str) else None
    if module_name is None:
        known = ", ".join(sorted(FORMATS))
        raise ValueError(f"unknown transcript format {agent!r} (known: {known})")
    fmt: TranscriptFormat = importlib.import_module(module_name).FORMAT
    return fmt


def injected_context() -> tuple[str, ...]:
    """How any agent's injected context begins (``TranscriptFormat.injected_context``), for folding it."""
    return tuple(prefix for name in FORMATS for prefix in get_format(name).injected_context)


def parse_transcript(
    raw: bytes,
    *,
    agent: str = DEFAULT_AGENT,
    subagents: Mapping[str, bytes] | None = None,
    tool_outputs: Mapping[str, bytes] | None = None,
) -> ParsedTranscript:
    """Parse transcript bytes (whole file or segment); `subagents` maps agent id -> bytes,
    `tool_outputs` a persisted tool output's file name -> its bytes (see `persisted`)."""
    return get_format(agent).parse(bytes(raw), subagents=subagents, tool_outputs=tool_outputs)


def turn_starts(raw: bytes, *, agent: str = DEFAULT_AGENT) -> list[int]:
    """Byte offsets (line starts) where each turn starts, in file order."""
    return get_format(agent).turn_starts(bytes(raw))


def cut_after_turn(raw: bytes, n: int, *, agent: str = DEFAULT_AGENT) -> bytes:
    """The first `n` turns (n >= 1), cut at a boundary safe to resume from."""
    return get_format(agent).cut_after_turn(bytes(raw), n)


def cut_at_offset(raw: bytes, offset: int, *, agent: str = DEFAULT_AGENT) -> bytes:
    """The transcript cut right after the line holding byte `offset - 1`, tool pairs kept whole."""
    return get_format(agent).cut_at(bytes(raw), offset)


def step_line_end(raw: bytes, uuid: str, *, agent: str = DEFAULT_AGENT) -> int | None:
    """Where the line of message `uuid` ends (None: not in these bytes)."""
    return get_format(agent).line_end(bytes(raw), uuid)


def list_steps(raw: bytes, *, agent: str = DEFAULT_AGENT) -> list[Any]:
    """The prompts and tool calls of a transcript, in order (see `steps.Step`)."""
    return get_format(agent).steps(bytes(raw))


def slim(raw: bytes, *, image_threshold: int = 8192, agent: str = DEFAULT_AGENT) -> tuple[bytes, dict[str, int]]:
    """Drop bulky progress payloads and large inline images; other lines stay byte-identical."""
    return get_format(agent).slim(bytes(raw), image_threshold=image_threshold)


def encode_project_dir(cwd: str, *, agent: str = DEFAULT_AGENT) -> str:
    """The assistant's per-project directory name for a working directory."""
    return get_format(agent).encode_project_dir(cwd)
