"""Format-independent pieces: the parse result, the format interface, byte-line helpers, and the
roles and kinds every agent's messages use (declared here once: the API, the UI forms, the MCP
server and the tests import them).

A format turns one agent's transcript bytes into the shared content document; everything else
agent-specific (where its files live, hooks, resume) is its adapter in `sessionledger.agents`.
The worker and the API only ever call a format through `formats.get_format(session.agent)`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

DOCUMENT_VERSION = "1.0"
_RESERVED_HEADER = frozenset({"version", "messages", "turns", "stats"})

Message = dict[str, Any]

# A message's `role` and `kind` (docs/agents.md "Common ground"). Thinking is role assistant,
# kind thinking; a tool's output is role tool (Claude Code: user lines holding tool_result).
ROLES: tuple[str, ...] = ("user", "assistant", "tool", "system")
KINDS: tuple[str, ...] = ("prompt", "text", "thinking", "tool_use", "tool_result", "summary", "system")


@dataclass
class ParsedTranscript:
    """The normalised form of one transcript segment (docs/design.md §2) plus the facts the worker stores.

    `messages`, `turns` and `stats` are exactly what goes into content.json; the other fields
    are derived once here so the worker, the CLI and the API cannot disagree about them.
    """

    agent: str
    messages: list[Message]
    turns: list[dict[str, Any]]
    stats: dict[str, Any]
    title: str = ""
    prompts: list[str] = field(default_factory=list)
    last_assistant_text: str = ""
    files_touched: list[str] = field(default_factory=list)
    tool_counts: dict[str, dict[str, int]] = field(default_factory=dict)
    token_usage: dict[str, int] = field(default_factory=dict)
    agent_version: str | None = None
    agent_session_id: str | None = None
    first_timestamp: str | None = None
    last_timestamp: str | None = None

    @property
    def message_count(self) -> int:
        return len(self.messages)

    @property
    def turn_count(self) -> int:
        return len(self.turns)

    def to_document(self, **header: Any) -> dict[str, Any]:
        """Build the content.json document; the caller supplies the session header fields.

        The parser owns version/messages/turns/stats, so a header trying to set them is a bug
        in the caller and raises instead of silently producing a mixed document.
        """
        clash = _RESERVED_HEADER & header.keys()
        if clash:
            raise ValueError(f"header may not set {sorted(clash)}")
        doc: dict[str, Any] = {"version": DOCUMENT_VERSION, **header}
        doc.setdefault("agent", self._agent_header())
        doc.update(messages=self.messages, turns=self.turns, stats=self.stats)
        return doc

    def _agent_header(self) -> dict[str, Any]:
        return {
            "name": self.agent,
            "version": self.agent_version,
            "session_id": self.agent_session_id,
        }


class TranscriptFormat(Protocol):
    """What one assistant's on-disk transcript format must offer (one module per agent)."""

    name: str
    # may its transcripts be captured as whole-file snapshots (segments from offset 0 that
    # supersede the earlier ones)? The server then keeps only the newest.
    snapshots: bool
    # how context the agent injects into the conversation (not typed by anyone) begins; the
    # session page folds such messages
    injected_context: tuple[str, ...]

    def parse(
        self,
        raw: bytes,
        *,
        subagents: Mapping[str, bytes] | None = None,
        tool_outputs: Mapping[str, bytes] | None = None,
    ) -> ParsedTranscript: ...

    def turn_starts(self, raw: bytes) -> list[int]: ...

    def cut_after_turn(self, raw: bytes, n: int) -> bytes: ...

    def cut_at(self, raw: bytes, offset: int) -> bytes: ...

    def line_end(self, raw: bytes, uuid: str) -> int | None: ...

    def steps(self, raw: bytes) -> list[Any]: ...

    def slim(self, raw: bytes, *, image_threshold: int = 8192) -> tuple[bytes, dict[str, int]]: ...

    def encode_project_dir(self, cwd: str) -> str: ...


def complete_lines(data: bytes, start: int = 0) -> int:
    """End offset of the last newline-terminated line at/after `start` (else `start`).

    Delta capture must never upload a half-written line: the assistant may be mid-append.
    """
    end = data.rfind(b"\n", start)
    return start if end < 0 else end + 1


def iter_lines(raw: bytes) -> Iterator[tuple[int, bytes]]:
    """Yield (offset, line) with the line's own terminator kept, so joins are byte-exact."""
    pos, size = 0, len(raw)
    while pos < size:
        end = raw.find(b"\n", pos)
        end = size if end < 0 else end + 1
        yield pos, raw[pos:end]
        pos = end


def load_record(line: bytes | str) -> dict[str, Any] | None:
    """Parse one JSONL line into a typed record, or None for anything unusable.

    A record must be a JSON object with a string `type`; everything else is a broken line.
    Never raises: bad UTF-8 is replaced and pathological nesting is treated as broken.
    """
    if isinstance(line, bytes):
        line = line.decode("utf-8", "replace")
    try:
        obj = json.loads(line)
    except (ValueError, RecursionError):
        return None
    if type(obj) is dict and type(obj.get("type")) is str:
        return obj
    return None
